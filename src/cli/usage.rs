//! Mistakes in what the user asked for. Each is printed once, as one
//! `error: …` line (scenario files: one line per problem with its
//! `file:line:col`, then a count), and ends the process with EXIT_USAGE.

use mcp_conform::scenario::load::LoadErrors;

use super::EXIT_USAGE;

#[derive(Debug)]
pub enum Usage {
    /// What is wrong, and how to put it right.
    Message(String),
    /// Problems in scenario files: nothing is run.
    Scenarios(LoadErrors),
}

impl Usage {
    /// Prints the mistake to stderr; the exit code it ends the process with.
    pub fn report(&self) -> u8 {
        match self {
            Usage::Message(text) => eprintln!("error: {text}"),
            Usage::Scenarios(errors) => {
                eprintln!("{errors}");
                eprintln!(
                    "error: {} problem(s) in scenario files; nothing was run",
                    errors.0.len()
                );
            }
        }
        EXIT_USAGE
    }

    /// The same mistake, said of an option: "--mcp-schema FILE: …".
    pub fn of_option(option: &str, value: &str, e: impl Into<Usage>) -> Usage {
        match e.into() {
            Usage::Message(text) => Usage::Message(format!("{option} {value}: {text}")),
            other => other,
        }
    }
}

impl From<String> for Usage {
    fn from(text: String) -> Self {
        Usage::Message(text)
    }
}

/// The whole cause chain on one line.
impl From<anyhow::Error> for Usage {
    fn from(e: anyhow::Error) -> Self {
        Usage::Message(format!("{e:#}"))
    }
}

impl From<LoadErrors> for Usage {
    fn from(errors: LoadErrors) -> Self {
        Usage::Scenarios(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_names_itself_and_its_value_before_the_mistake() {
        let u = Usage::of_option("--mcp-schema", "s.json", anyhow::anyhow!("not JSON"));
        match u {
            Usage::Message(text) => assert_eq!(text, "--mcp-schema s.json: not JSON"),
            Usage::Scenarios(_) => panic!("a message was expected"),
        }
    }

    #[test]
    fn an_error_chain_is_one_line() {
        let e = anyhow::anyhow!("denied").context("cannot read x.yaml");
        match Usage::from(e) {
            Usage::Message(text) => assert_eq!(text, "cannot read x.yaml: denied"),
            Usage::Scenarios(_) => panic!("a message was expected"),
        }
    }
}
