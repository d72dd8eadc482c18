//! The documentation's commands stay runnable: every `mcp-conform …` command
//! shown in a code block of README.md, CONTRIBUTING.md or docs/**/*.md is
//! parsed by the command line's own clap parser (and its check of what
//! stands before `--`), and the cheap ones that need no server (`explain`,
//! `show`, `--list`) are run. A renamed option or subcommand fails here
//! with the file and line of the command that uses it. The shared-finding
//! notes of the scenarios point at sections of docs/popular-servers.md that
//! exist, and that page's table of pinned servers says what their committed
//! verdicts say.

use std::path::{Path, PathBuf};

use clap::Parser;

use crate::common;

/// The command line of the binary itself, compiled into the tests so that
/// a command is parsed exactly as the binary parses it.
#[allow(dead_code, unused_imports)]
#[path = "../../src/cli/mod.rs"]
mod cli;

/// One command found in the documentation: where, and its words.
struct DocCommand {
    at: String,
    words: Vec<String>,
}

/// The Markdown files whose commands are checked.
fn documents() -> Vec<PathBuf> {
    let root = common::root();
    let mut files = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files
}

/// Splits a shell line into words: single and double quotes, backslash
/// escapes; stops at a comment or an operator (`|`, `>`, `&&`, `;`).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '#' if !in_word => break,
            '|' | '>' | ';' | '&' | '<' if !in_word => break,
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The `mcp-conform` commands in the fenced code blocks of `path`. A line
/// ending in `\` continues on the next. Lines of a block that only show
/// output are not commands: a command starts with `mcp-conform`, `$ `, an
/// installer (`uvx --from … mcp-conform`, `npx mcp-conform-harness`), or
/// a path to the binary, possibly after `run: ` (a workflow step).
fn commands_in(path: &Path) -> Vec<DocCommand> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path
        .strip_prefix(common::root())
        .unwrap_or(path)
        .display()
        .to_string();
    let mut out = Vec::new();
    let mut fenced = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            continue;
        }
        let (start, joined) = match pending.take() {
            Some((start, before)) => (start, format!("{before} {}", line.trim())),
            None => (i + 1, line.trim().to_string()),
        };
        if let Some(head) = joined.strip_suffix('\\') {
            pending = Some((start, head.trim_end().to_string()));
            continue;
        }
        if let Some(words) = command_words(&joined) {
            out.push(DocCommand {
                at: format!("{name}:{start}"),
                words,
            });
        }
    }
    out
}

/// The arguments after the program, if `line` runs mcp-conform.
fn command_words(line: &str) -> Option<Vec<String>> {
    let line = line.trim_start_matches("- ").trim();
    let line = line.strip_prefix("run:").map(str::trim).unwrap_or(line);
    let line = line.strip_prefix("$ ").unwrap_or(line);
    let words = shell_words(line);
    let mut rest = words.iter().skip_while(|w| is_env_assignment(w));
    let first = rest.next()?;
    let args: Vec<String> = match first.as_str() {
        "uvx" => {
            let tail: Vec<&String> = rest.collect();
            let at = tail.iter().position(|w| *w == "mcp-conform")?;
            tail[at + 1..].iter().map(|w| w.to_string()).collect()
        }
        "npx" => rest.skip(1).cloned().collect(),
        program if program == "mcp-conform" || program.ends_with("/mcp-conform") => {
            rest.cloned().collect()
        }
        _ => return None,
    };
    Some(args)
}

fn is_env_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
    })
}

/// What the binary would make of `args`: Ok, or the parser's complaint.
fn parse(args: &[String]) -> Result<cli::Cli, String> {
    let argv = std::iter::once("mcp-conform".to_string()).chain(args.iter().cloned());
    let parsed = cli::Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
    if parsed.command.is_none() {
        cli::argv::check(args)?;
    }
    Ok(parsed)
}

/// Every command the documentation shows: README.md alone shows the two
/// it starts with and more.
fn all_commands() -> Vec<DocCommand> {
    let commands: Vec<DocCommand> = documents().iter().flat_map(|p| commands_in(p)).collect();
    let in_readme = commands
        .iter()
        .filter(|c| c.at.starts_with("README.md:"))
        .count();
    assert!(
        in_readme >= 3,
        "README.md shows {in_readme} mcp-conform commands"
    );
    commands
}

fn every_documented_command_parses() {
    let commands = all_commands();
    assert!(
        commands.len() >= 30,
        "only {} commands found",
        commands.len()
    );
    let broken: Vec<String> = commands
        .iter()
        .filter_map(|c| {
            let args = c
                .words
                .iter()
                .filter(|w| *w != "--help" && *w != "-h")
                .cloned();
            let args: Vec<String> = args.collect();
            parse(&args).err().map(|e| {
                format!(
                    "{}: mcp-conform {}\n  {}",
                    c.at,
                    c.words.join(" "),
                    e.lines().next().unwrap_or("")
                )
            })
        })
        .collect();
    assert!(
        broken.is_empty(),
        "commands the CLI rejects:\n{}",
        broken.join("\n")
    );
}

/// The check itself catches a command the CLI does not know.
fn a_wrong_command_is_caught() {
    let words = |s: &str| shell_words(s);
    assert!(parse(&words("--report-dir out --no-such-option")).is_err());
    assert!(
        parse(&words("explian BASE-ERR-01")).is_ok(),
        "a server command named explian"
    );
    assert!(parse(&words("--report-json out.json stray -- ./server")).is_err());
    assert!(parse(&words("serve-reference --fault")).is_err());
    assert_eq!(
        command_words("$ MCP_X=1 mcp-conform -q -- python3 \"my server.py\" # comment"),
        Some(words("-q -- python3 'my server.py'"))
    );
    assert_eq!(command_words("conformance result: conforms"), None);
}

/// The commands that need no server and finish at once are run: each must
/// exit 0.
fn cheap_documented_commands_run() {
    let mut ran = 0;
    for c in all_commands() {
        let first = c.words.first().map(String::as_str);
        let cheap = matches!(first, Some("explain" | "show")) || c.words == ["--list"];
        if !cheap {
            continue;
        }
        let args: Vec<&str> = c.words.iter().map(String::as_str).collect();
        let out = common::cli(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: mcp-conform {}: {}",
            c.at,
            c.words.join(" "),
            common::text(&out.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 2, "only {ran} cheap commands ran");
}

/// GitHub's anchor of a Markdown heading: lower case, spaces to hyphens,
/// punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn shared_findings_point_at_sections_that_exist() {
    let doc = std::fs::read_to_string(common::root().join("docs/popular-servers.md"))
        .unwrap_or_else(|e| panic!("docs/popular-servers.md: {e}"));
    let anchors: Vec<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("## ").or_else(|| l.strip_prefix("### ")))
        .map(anchor)
        .collect();
    let scenarios = mcp_conform::builtin::scenarios().unwrap_or_else(|e| panic!("{e}"));
    let shared: Vec<_> = scenarios
        .iter()
        .filter_map(|s| s.shared_finding.as_ref().map(|f| (s, f)))
        .collect();
    for id in ["base/parse-error", "base/invalid-request"] {
        assert!(
            shared.iter().any(|(s, _)| s.id == id),
            "{id} says nothing of being shared"
        );
    }
    for (s, f) in shared {
        let section = f.see.trim_start_matches("docs/popular-servers.md#");
        assert!(
            anchors.iter().any(|a| a == section),
            "{}: shared_finding.see names #{section}, not a section of docs/popular-servers.md ({anchors:?})",
            s.id
        );
        assert!(
            doc.contains(&format!("**{},", s.id)),
            "docs/popular-servers.md does not explain {}",
            s.id
        );
    }
}

/// README.md's second command is the one CI runs last (.ci/run), and the
/// README stays short: two screens, the rest in the guide.
fn readme_shows_what_ci_runs_and_stays_short() {
    let readme = std::fs::read_to_string(common::root().join("README.md"))
        .unwrap_or_else(|e| panic!("README.md: {e}"));
    let ci = std::fs::read_to_string(common::root().join(".ci/run"))
        .unwrap_or_else(|e| panic!(".ci/run: {e}"));
    let last = ci
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let commands = readme
        .split("## The two commands")
        .nth(1)
        .and_then(|rest| rest.split("```").nth(1))
        .unwrap_or("");
    let shown: Vec<&str> = commands
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty() && *l != "sh")
        .collect();
    assert_eq!(shown.len(), 2, "README.md: the two commands: {shown:?}");
    assert_eq!(
        shown[1], last,
        "README.md's test command is not .ci/run's last line"
    );
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; the guide in docs/ takes the rest"
    );
}

/// The pinned servers' table of docs/popular-servers.md says, for every
/// server whose verdicts are committed under reports/peers/popular/, the
/// eras it speaks and the scenarios it fails and warns on, as the verdicts
/// have them (a table written once went stale as scenarios were added).
fn the_popular_servers_table_agrees_with_the_committed_verdicts() {
    let doc = std::fs::read_to_string(common::root().join("docs/popular-servers.md"))
        .unwrap_or_else(|e| panic!("docs/popular-servers.md: {e}"));
    let ids = regex::Regex::new(r"[a-z0-9-]+/[a-z0-9-]+").unwrap_or_else(|e| panic!("{e}"));
    let eras = regex::Regex::new(r"\d{4}-\d{2}-\d{2}").unwrap_or_else(|e| panic!("{e}"));
    let set = |re: &regex::Regex, text: &str| -> std::collections::BTreeSet<String> {
        re.find_iter(text).map(|m| m.as_str().to_string()).collect()
    };
    let mut checked = 0;
    let mut problems = Vec::new();
    for row in doc.lines().take_while(|l| !l.starts_with("## ")) {
        let cells: Vec<&str> = row.trim_matches('|').split(" | ").collect();
        let [server, _version, row_eras, failed, warned] = cells[..] else {
            continue;
        };
        let Some(file) = popular_verdicts_file(server) else {
            continue;
        };
        let verdicts =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let of = |outcome: &str| -> std::collections::BTreeSet<String> {
            verdicts
                .lines()
                .filter_map(|l| {
                    let mut words = l.split_whitespace();
                    let (_, id, o) = (words.next()?, words.next()?, words.next()?);
                    (o == outcome).then(|| id.to_string())
                })
                .collect()
        };
        let spoken: std::collections::BTreeSet<String> = verdicts
            .lines()
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .collect();
        for (what, table, committed) in [
            ("eras", set(&eras, row_eras), spoken),
            ("failed", set(&ids, failed), of("fail")),
            ("warned", set(&ids, warned), of("warn")),
        ] {
            if table != committed {
                problems.push(format!(
                    "{server}: the table's {what} {table:?}, the committed verdicts' {committed:?} ({})",
                    file.display()
                ));
            }
        }
        checked += 1;
    }
    assert!(
        checked >= 7,
        "only {checked} rows of the table name a server with committed verdicts"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The committed verdicts of the server a table row names (its first cell),
/// if tests/it/popular.rs commits them.
fn popular_verdicts_file(server: &str) -> Option<PathBuf> {
    let name = if server.contains("fastmcp") {
        "fastmcp-server".to_string()
    } else {
        let package = server.split('`').nth(1)?;
        package
            .trim_start_matches("@modelcontextprotocol/")
            .to_string()
    };
    let file = common::root()
        .join("reports/peers/popular")
        .join(format!("{name}.verdicts"));
    file.exists().then_some(file)
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        every_documented_command_parses,
        a_wrong_command_is_caught,
        cheap_documented_commands_run,
        shared_findings_point_at_sections_that_exist,
        the_popular_servers_table_agrees_with_the_committed_verdicts,
        readme_shows_what_ci_runs_and_stays_short
    ]
}
