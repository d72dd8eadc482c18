//! JSON equality by value: objects by their members whatever the key
//! order, numbers by numeric value (`7` is `7.0`).

use serde_json::Value;

/// Scalars equal by value (numbers by [`number_eq`]); other values as
/// `serde_json` compares them.
pub fn scalar_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => number_eq(x, y),
        _ => a == b,
    }
}

/// Numbers are equal by value: `7 == 7.0`, but an integer beyond 2^53 is
/// never equal to the double nearest to it (9007199254740993 ≠ 9007199254740992.0),
/// which is exactly the defect a large-id check must see.
fn number_eq(x: &serde_json::Number, y: &serde_json::Number) -> bool {
    match (integral_value(x), integral_value(y)) {
        (Some(a), Some(b)) => a == b,
        (None, None) => x.as_f64() == y.as_f64(),
        _ => false,
    }
}

/// The integer a number is equal to, if any: an integer's own value, or a
/// float with no fraction within 2^100 (which bounds every i64/u64 and
/// keeps the cast exact). Two numbers with no such integer compare as
/// doubles; [`number_eq`] and the set helpers' hashing both go by it.
pub fn integral_value(n: &serde_json::Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Some(i128::from(u));
    }
    n.as_f64()
        .filter(|f| f.is_finite() && f.fract() == 0.0 && f.abs() < 2f64.powi(100))
        .map(|f| f as i128)
}

/// Deep equality with numbers compared by value.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => scalar_eq(a, b),
    }
}
