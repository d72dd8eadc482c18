//! Command-line mistakes the parser cannot see, checked against the raw
//! arguments: a value after a flag that takes none (`--json out.json -- ./server`
//! would otherwise start `out.json -- ./server`), and our own options given
//! after `--`, where they go to the server.

use clap::{ArgAction, CommandFactory};

use super::Cli;

/// One option of ours: its long name, whether it takes a value, and the
/// value's name.
struct Opt {
    long: String,
    short: Option<char>,
    flag: bool,
    value_name: String,
}

fn options() -> Vec<Opt> {
    Cli::command()
        .get_arguments()
        .filter_map(|a| {
            let long = a.get_long()?.to_string();
            let flag = matches!(
                a.get_action(),
                ArgAction::SetTrue | ArgAction::SetFalse | ArgAction::Count
            );
            let value_name = a
                .get_value_names()
                .and_then(|v| v.first())
                .map(|v| v.to_string())
                .unwrap_or_else(|| "VALUE".into());
            Some(Opt {
                long,
                short: a.get_short(),
                flag,
                value_name,
            })
        })
        .collect()
}

/// The option `token` names (`--json`, `--json=x`, `-q`), if it is ours.
fn ours<'a>(token: &str, opts: &'a [Opt]) -> Option<&'a Opt> {
    if let Some(long) = token.strip_prefix("--") {
        let name = long.split('=').next().unwrap_or(long);
        return opts.iter().find(|o| o.long == name);
    }
    let mut chars = token.strip_prefix('-')?.chars();
    let (c, rest) = (chars.next()?, chars.next());
    if rest.is_some() {
        return None;
    }
    opts.iter().find(|o| o.short == Some(c))
}

/// A value-taking option whose name holds `flag`'s (`--json` → `--report-json FILE`).
fn intended(flag: &Opt, opts: &[Opt]) -> Option<String> {
    opts.iter()
        .find(|o| !o.flag && o.long.split('-').any(|part| part == flag.long))
        .map(|o| format!("--{} {}", o.long, o.value_name))
}

/// Whether a word reads as an http(s) URL, which `--url` takes.
pub fn is_url(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// Checks the arguments of a run (`raw` without the program name). With a
/// `--` separator, everything before it must be our options (and their
/// values): a stray word there is a usage error. Returns warnings for our
/// options found after `--`, which the server receives.
pub fn check(raw: &[String]) -> Result<Vec<String>, String> {
    let Some(sep) = raw.iter().position(|a| a == "--") else {
        return Ok(Vec::new());
    };
    let opts = options();
    let mut i = 0;
    while i < sep {
        let token = &raw[i];
        let Some(opt) = ours(token, &opts) else {
            if is_url(token) {
                return Err(format!(
                    "`{token}` is a URL: test a Streamable HTTP server with `--url {token}` (the command after `--` then launches it)"
                ));
            }
            if !token.starts_with('-') {
                return Err(format!(
                    "`{token}` before `--` is neither an option nor its value; the server command goes after `--`"
                ));
            }
            // An unknown option: the parser says so.
            i += 1;
            continue;
        };
        let inline = token.contains('=');
        if opt.flag {
            if let Some(next) = raw
                .get(i + 1)
                .filter(|n| i + 1 < sep && !n.starts_with('-'))
            {
                let hint = intended(opt, &opts)
                    .map(|o| format!("; did you mean `{o}`?"))
                    .unwrap_or_default();
                return Err(format!(
                    "`{token}` takes no value, but `{next}` follows it before `--`{hint}"
                ));
            }
            i += 1;
        } else {
            i += if inline { 1 } else { 2 };
        }
    }
    let warnings = raw[sep + 1..]
        .iter()
        .filter(|t| t.starts_with("--") && ours(t, &opts).is_some())
        .map(|t| {
            let name = t.split('=').next().unwrap_or(t);
            format!(
                "warning: `{name}` comes after `--`, so it was passed to the server, not read by mcp-conform; put it before `--` if it was meant for mcp-conform"
            )
        })
        .collect();
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_value_after_a_flag_is_a_usage_error_naming_the_intended_option() {
        let e = check(&args("--json out.json -- ./server")).unwrap_err();
        assert_eq!(
            e,
            "`--json` takes no value, but `out.json` follows it before `--`; did you mean `--report-json FILE`?"
        );
        let e = check(&args("-q x -- ./server")).unwrap_err();
        assert!(e.starts_with("`-q` takes no value, but `x`"), "{e}");
    }

    #[test]
    fn a_stray_word_before_the_separator_is_a_usage_error() {
        let e = check(&args("--strict out.json extra -- ./server")).unwrap_err();
        assert!(e.contains("`out.json`"), "{e}");
        let e = check(&args("./server -- x")).unwrap_err();
        assert!(e.contains("`./server` before `--`"), "{e}");
    }

    #[test]
    fn a_url_before_the_separator_names_the_url_option() {
        let e = check(&args("http://127.0.0.1:3000/mcp -- ./server")).unwrap_err();
        assert_eq!(
            e,
            "`http://127.0.0.1:3000/mcp` is a URL: test a Streamable HTTP server with `--url http://127.0.0.1:3000/mcp` (the command after `--` then launches it)"
        );
    }

    #[test]
    fn options_with_values_and_no_separator_pass() {
        assert_eq!(
            check(&args(
                "--report-json r.json -p base --timeout-ms=9 -q -- ./server"
            )),
            Ok(Vec::new())
        );
        assert_eq!(check(&args("--json out.json ./server")), Ok(Vec::new()));
    }

    #[test]
    fn our_options_after_the_separator_are_warned_about() {
        let w = check(&args("-q -- ./server --report-json x.json --port 3")).unwrap_or_default();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("`--report-json` comes after `--`, so it was passed to the server"),
            "{w:?}"
        );
    }
}
