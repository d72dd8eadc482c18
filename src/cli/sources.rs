//! `sources check SOURCE_ID --text FILE`: reads the new text and the
//! requirement catalog, prints what `mcp_conform::sources_check` finds.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Subcommand;

use mcp_conform::{requirements, sources, sources_check};

#[derive(Debug, Subcommand)]
pub enum SourcesCommand {
    /// Which requirements quoting SOURCE_ID still stand on a newer text of it: quotes still
    /// verbatim, quotes gone (with the new text's nearest passage, a similarity and a diff),
    /// and the new text's normative sentences no requirement quotes. Exit 1 when a quote is gone.
    Check {
        /// A source id of scenarios/sources.yaml (e.g. grouping-extension), or a `document` of --requirements.
        source: String,
        /// The newer text of the document (Markdown/MDX).
        #[arg(long, value_name = "FILE")]
        text: PathBuf,
        /// Check this requirement catalog instead of the built-in one.
        #[arg(long, value_name = "FILE")]
        requirements: Option<PathBuf>,
        /// Print JSON for scripts.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(command: &SourcesCommand) -> Result<u8> {
    let SourcesCommand::Check {
        source,
        text,
        requirements: catalog,
        json,
    } = command;
    let registry = match catalog {
        Some(path) => requirements::parse(&read(path)?)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
        None => requirements::all().map_err(|e| anyhow::anyhow!("{e}"))?,
    };
    let known = sources::find(source).is_some() || registry.iter().any(|r| &r.document == source);
    if !known {
        let ids: Vec<&str> = sources::all()
            .unwrap_or_default()
            .iter()
            .map(|s| s.id.as_str())
            .collect();
        bail!(
            "no source document {source:?}; the documents are: {}",
            ids.join(", ")
        );
    }
    let report = sources_check::check(source, &registry, &read(text)?);
    if *json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!(
            "{}",
            sources_check::render_text(&report, &text.display().to_string())
        );
    }
    Ok(if report.anything_gone() {
        super::EXIT_FAILURES
    } else {
        super::EXIT_OK
    })
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}
