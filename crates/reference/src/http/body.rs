//! Request bodies, read with the same cap as a stdio line so that the two
//! transports accept the same messages.

use axum::body::Body;
use axum::http::{header, HeaderMap};
use futures::StreamExt;

#[derive(Debug, PartialEq, Eq)]
pub enum BodyError {
    TooLarge { limit: usize },
    Broken(String),
}

/// The whole body, or why not. A `Content-Length` over the cap is refused
/// before reading anything.
pub async fn read(headers: &HeaderMap, body: Body, limit: usize) -> Result<Vec<u8>, BodyError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(BodyError::TooLarge { limit });
    }
    let capacity = declared.map_or(0, |n| n as usize).min(limit);
    let mut out = Vec::with_capacity(capacity);
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| BodyError::Broken(e.to_string()))?;
        if out.len() + chunk.len() > limit {
            return Err(BodyError::TooLarge { limit });
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// Whether a `Content-Type` (if any) announces JSON. An absent header is
/// tolerated: curl-like clients often omit it and the body decides.
pub fn is_json(headers: &HeaderMap) -> bool {
    let Some(ct) = headers.get(header::CONTENT_TYPE) else {
        return true;
    };
    let Ok(ct) = ct.to_str() else {
        return false;
    };
    let essence = ct.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
        || essence
            .to_ascii_lowercase()
            .strip_prefix("application/")
            .is_some_and(|sub| sub.ends_with("+json"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[tokio::test]
    async fn caps_the_body() {
        let h = HeaderMap::new();
        assert_eq!(read(&h, Body::from("abcd"), 4).await, Ok(b"abcd".to_vec()));
        assert_eq!(
            read(&h, Body::from("abcde"), 4).await,
            Err(BodyError::TooLarge { limit: 4 })
        );
        let mut h = HeaderMap::new();
        h.insert(header::CONTENT_LENGTH, HeaderValue::from_static("99"));
        assert_eq!(
            read(&h, Body::from("ab"), 4).await,
            Err(BodyError::TooLarge { limit: 4 })
        );
    }

    #[test]
    fn recognises_json_content_types() {
        let with = |v: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static(v));
            is_json(&h)
        };
        assert!(is_json(&HeaderMap::new()));
        assert!(with("application/json"));
        assert!(with("Application/JSON; charset=utf-8"));
        assert!(with("application/vnd.api+json"));
        assert!(!with("text/plain"));
        assert!(!with("application/x-www-form-urlencoded"));
    }
}
