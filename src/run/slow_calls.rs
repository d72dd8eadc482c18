//! Requests that outlasted the call budget once in a run (a tool that works
//! for longer than `--call-budget-ms`, such as a long-running demonstration).
//! Asked again by a later scenario, such a request is not sent: its item is
//! not exercised, as it was the first time, and the run does not wait out
//! the budget again. On server-everything, its long-running tool, called by
//! three scenarios in each of two eras, was half of the run's wall time.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

/// The requests of a run that did not answer within the call budget, each
/// with the scenario that found it.
#[derive(Debug, Default)]
pub struct SlowCalls(Mutex<HashMap<String, String>>);

impl SlowCalls {
    /// What a request is known by: a tool call by its tool (its slowness is
    /// the tool's work, whatever the arguments), anything else by its
    /// method and params.
    pub fn key(method: &str, params: Option<&Value>) -> String {
        let tool = params.and_then(|p| p.get("name")).and_then(Value::as_str);
        match tool {
            Some(name) if method == "tools/call" => format!("tools/call {name}"),
            _ => format!(
                "{method} {}",
                params.map_or_else(String::new, Value::to_string)
            ),
        }
    }

    /// The scenario in which this request outlasted the budget, if one did.
    pub fn found_by(&self, key: &str) -> Option<String> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .cloned()
    }

    /// Remembers that the request outlasted the budget in `scenario`.
    pub fn record(&self, key: String, scenario: &str) {
        let mut slow = self.0.lock().unwrap_or_else(|e| e.into_inner());
        slow.entry(key).or_insert_with(|| scenario.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_is_known_by_its_name_and_the_first_scenario_is_kept() {
        let slow = SlowCalls::default();
        let call = |args| json!({"name": "sleepy", "arguments": args});
        let key = SlowCalls::key("tools/call", Some(&call(json!({"s": 1}))));
        assert_eq!(
            key,
            SlowCalls::key("tools/call", Some(&call(json!({"s": 2}))))
        );
        assert_ne!(
            key,
            SlowCalls::key("tools/call", Some(&json!({"name": "quick"})))
        );
        assert_ne!(
            SlowCalls::key("resources/read", Some(&json!({"uri": "a"}))),
            SlowCalls::key("resources/read", Some(&json!({"uri": "b"})))
        );
        assert_eq!(slow.found_by(&key), None);
        slow.record(key.clone(), "core/tools-call");
        slow.record(key.clone(), "core/progress-unrequested");
        assert_eq!(slow.found_by(&key).as_deref(), Some("core/tools-call"));
    }
}
