//! Loading scenario files: a file or a folder of them, or texts already
//! read; the files of a large catalog are loaded on several threads.

use std::path::{Path, PathBuf};

use super::{load_among, LoadError, LoadErrors};
use crate::scenario::model::Scenario;
use crate::scenario::source::Position;

/// Loads every `*.yaml` / `*.yml` scenario under `path` (a file or a directory),
/// skipping `requirements.yaml` and `sources.yaml`. Files are loaded in sorted path order.
pub fn load_path(path: &Path) -> Result<Vec<Scenario>, LoadErrors> {
    let files = if path.is_dir() {
        let mut files = Vec::new();
        collect_files(path, &mut files).map_err(|e| io_error(path, &e))?;
        files.sort();
        files
    } else {
        vec![path.to_path_buf()]
    };
    let sources: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .map(|text| (f.display().to_string(), text))
                .map_err(|e| io_error(f, &e))
        })
        .collect::<Result<_, _>>()?;
    load_sources(&sources)
}

fn io_error(path: &Path, e: &std::io::Error) -> LoadErrors {
    LoadErrors(vec![LoadError {
        file: path.display().to_string(),
        position: Position { line: 1, col: 1 },
        message: format!("cannot read: {e}"),
    }])
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_files(&path, out)?;
        } else if is_scenario_file(&path) {
            out.push(path);
        }
    }
    Ok(())
}

fn is_scenario_file(path: &Path) -> bool {
    let ext = path.extension().and_then(|e| e.to_str());
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    matches!(ext, Some("yaml" | "yml"))
        && !matches!(name, "requirements.yaml" | "sources.yaml")
        && !name.starts_with('.')
}

/// Loads many (name, text) sources; ids must be unique across all of them.
pub fn load_sources(sources: &[(String, String)]) -> Result<Vec<Scenario>, LoadErrors> {
    let mut scenarios = Vec::new();
    let mut errors = Vec::new();
    for loaded in load_each(sources) {
        match loaded {
            Ok(s) => scenarios.push(s),
            Err(LoadErrors(mut e)) => errors.append(&mut e),
        }
    }
    let mut seen: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    for s in &scenarios {
        if let Some(first) = seen.insert(&s.id, &s.origin) {
            errors.push(LoadError {
                file: s.origin.clone(),
                position: Position { line: 1, col: 1 },
                message: format!("scenario id '{}' is already used by {first}", s.id),
            });
        }
    }
    if errors.is_empty() {
        Ok(scenarios)
    } else {
        Err(LoadErrors(errors))
    }
}

/// Files per loading thread below which one thread does it all.
const FILES_PER_THREAD: usize = 16;

/// `load_str` of every source, in order. Parsing the YAML, checking it and
/// compiling its CEL is pure CPU work, and the whole built-in catalog takes
/// long enough to show in a run's wall time, so it is spread over the cores.
fn load_each(sources: &[(String, String)]) -> Vec<Result<Scenario, LoadErrors>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(sources.len() / FILES_PER_THREAD)
        .max(1);
    let load_chunk = |chunk: &[(String, String)]| -> Vec<Result<Scenario, LoadErrors>> {
        // Identical expressions of the chunk's files are compiled once.
        let mut programs = crate::scenario::helpers::programs();
        chunk
            .iter()
            .map(|(name, text)| load_among(&mut programs, name, text))
            .collect()
    };
    if threads == 1 {
        return load_chunk(sources);
    }
    let chunk = sources.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = sources
            .chunks(chunk)
            .map(|part| scope.spawn(move || load_chunk(part)))
            .collect();
        handles
            .into_iter()
            .zip(sources.chunks(chunk))
            // A panicking loader is a bug; loading that chunk again on this
            // thread surfaces the same panic with its message.
            .flat_map(|(h, part)| h.join().unwrap_or_else(|_| load_chunk(part)))
            .collect()
    })
}
