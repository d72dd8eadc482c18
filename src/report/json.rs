//! The JSON report (`--report-json`), described by schemas/report.schema.json.

use super::data::ReportData;

/// The report as pretty JSON text.
pub fn render(data: &ReportData) -> String {
    serde_json::to_string_pretty(data).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// Reads a JSON report back (for `merge`).
pub fn parse(text: &str) -> Result<ReportData, serde_json::Error> {
    serde_json::from_str(text)
}
