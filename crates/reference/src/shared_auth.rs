//! The `pd-shared-auth` fault: progressive-disclosure authorizations kept in
//! a file in the temp directory, shared by every server process serving the
//! same catalog — the way a server backed by a shared cache would leak them
//! across sessions.

use std::collections::HashSet;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// Entries older than this are cleared when a process starts, so one test
/// run's leaks do not survive into an unrelated later run.
const STALE_AFTER: Duration = Duration::from_secs(60);

#[derive(Debug, Clone)]
pub struct SharedAuth {
    path: PathBuf,
}

impl SharedAuth {
    pub fn for_catalog(catalog_name: &str) -> Self {
        let safe: String = catalog_name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(64)
            .collect();
        let path = std::env::temp_dir().join(format!("mcp-conform-pd-auth-{safe}.txt"));
        let auth = SharedAuth { path };
        auth.clear_if_stale();
        auth
    }

    fn clear_if_stale(&self) {
        let stale = fs::metadata(&self.path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age > STALE_AFTER);
        if stale {
            let _ = fs::remove_file(&self.path);
        }
    }

    /// Appends names; failures only lose the (deliberately faulty) sharing.
    pub fn add(&self, names: &[String]) {
        let Ok(mut file) = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
        else {
            tracing::warn!(path = %self.path.display(), "cannot open shared authorization file");
            return;
        };
        let lines: String = names.iter().map(|n| format!("{n}\n")).collect();
        let _ = file.write_all(lines.as_bytes());
    }

    pub fn names(&self) -> HashSet<String> {
        fs::read_to_string(&self.path)
            .map(|s| s.lines().map(str::to_string).collect())
            .unwrap_or_default()
    }

    pub fn contains(&self, name: &str) -> bool {
        self.names().contains(name)
    }
}
