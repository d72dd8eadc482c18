//! Injectable faults: each one is a small, honest deviation a real
//! implementer could make, so that every scenario can be shown to catch
//! something.
//!
//! The handlers implement the drafts and the MCP specification and know
//! nothing of faults. A fault is declared once ([`Fault`], with `declare!`)
//! in the module of its profile, beside the code that makes it act, in one
//! of two ways:
//! - it bends a decision (a status code, whether a check runs): a named
//!   [`crate::policy::Decision`] that `assemble::policy` turns on;
//! - it rewrites what the server answers or builds (an id, an entry, a
//!   page) or what a transport writes (stdout's bytes, a POST's response,
//!   a session id): [`FaultLayer`] implements the server's `Layer` and its
//!   transports' `Wire` by handing each method to the module whose faults
//!   act there.
//!
//! Either way the fault code asks [`Faults::has`] (or reads a decision)
//! only where its fault can act, so a [`FaultTrace`] names just the
//! conversations a fault can change.

use std::fmt;
use std::str::FromStr;
use std::sync::LazyLock;

mod assemble;
mod layer;
mod trace;

pub use assemble::{policy, Config};
pub use layer::{At, AtMut, FaultLayer};
pub use trace::{FaultTrace, Faults};

use crate::error::RpcError;
use serde_json::Value;

/// The faults that only rewrite a handler's answer (or error), applied by
/// `dispatch` right after the handler ran: `params` are the request's.
fn rewrite_answer(
    ctx: &mut AtMut<'_, '_>,
    params: Option<&Value>,
    answer: &mut Result<Value, RpcError>,
) {
    match ctx.method {
        "initialize" | "server/discover" | "ping" => {
            base::rewrite_answer(&ctx.at(), params, answer)
        }
        "tools/call" => tools::rewrite_call(&ctx.at(), answer),
        _ => primitives::rewrite_answer(ctx, params, answer),
    }
}

/// One documented defect: its `--fault` name, what it does, the
/// requirements (id prefixes) whose scenarios catch it, and the extra
/// `serve-reference` options it needs to act (most need none).
#[derive(Clone, Copy)]
pub struct Fault {
    name: &'static str,
    help: &'static str,
    breaks: &'static [&'static str],
    options: &'static [&'static str],
}

/// Declares a module's faults beside the code that acts on them: each one
/// becomes an associated constant `Fault::Name`, and the module's list
/// `DECLARED` joins [`Fault::all`].
macro_rules! declare {
    ($($variant:ident = $name:literal
        breaks [$($req:literal),* $(,)?]
        $(serve with [$($opt:literal),* $(,)?])?
        : $help:literal;)*) => {
        #[allow(non_upper_case_globals)]
        impl $crate::faults::Fault {
            $(pub const $variant: $crate::faults::Fault = $crate::faults::Fault::declared(
                $name,
                $help,
                &[$($req),*],
                &[$($($opt),*)?],
            );)*
        }

        /// The faults this module declares.
        pub(super) const DECLARED: &[$crate::faults::Fault] = &[$($crate::faults::Fault::$variant,)*];
    };
}

// Each module lists its faults with `declare!`, so it comes after the macro.
pub mod base;
pub mod category;
pub mod client_input;
pub mod envelope;
pub mod filter;
pub mod grouping;
pub mod http;
pub mod paging;
pub mod primitives;
pub mod progressive;
pub mod search;
pub mod stdio;
pub mod tools;

/// Every module's faults.
const MODULES: &[&[Fault]] = &[
    base::DECLARED,
    category::DECLARED,
    client_input::DECLARED,
    envelope::DECLARED,
    filter::DECLARED,
    grouping::DECLARED,
    http::DECLARED,
    paging::DECLARED,
    primitives::DECLARED,
    progressive::DECLARED,
    search::DECLARED,
    stdio::DECLARED,
    tools::DECLARED,
];

impl Fault {
    const fn declared(
        name: &'static str,
        help: &'static str,
        breaks: &'static [&'static str],
        options: &'static [&'static str],
    ) -> Fault {
        Fault {
            name,
            help,
            breaks,
            options,
        }
    }

    /// Every fault, ordered by name.
    pub fn all() -> &'static [Fault] {
        static ALL: LazyLock<Vec<Fault>> = LazyLock::new(|| {
            let mut all: Vec<Fault> = MODULES.iter().flat_map(|m| m.iter().copied()).collect();
            all.sort();
            all
        });
        &ALL
    }

    /// The `--fault` name.
    pub fn name(self) -> &'static str {
        self.name
    }

    /// One line on what the fault does.
    pub fn help(self) -> &'static str {
        self.help
    }

    /// The requirements (id prefixes) whose scenarios catch this fault.
    pub fn breaks(self) -> &'static [&'static str] {
        self.breaks
    }

    /// The `serve-reference` options without which the fault cannot act.
    pub fn options(self) -> &'static [&'static str] {
        self.options
    }
}

// A fault is its name: names are unique (a unit test checks it).
impl PartialEq for Fault {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Fault {}

impl PartialOrd for Fault {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Fault {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name.cmp(other.name)
    }
}

impl std::hash::Hash for Fault {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl fmt::Debug for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fault({})", self.name)
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown fault {0:?}; `--fault help` lists them")]
pub struct UnknownFault(pub String);

impl FromStr for Fault {
    type Err = UnknownFault;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Fault::all()
            .iter()
            .copied()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownFault(s.to_string()))
    }
}

/// The params of each notification of `method` that the request caused, to
/// rewrite in place.
fn notification_params<'a>(
    ctx: &'a mut AtMut<'_, '_>,
    method: &'a str,
) -> impl Iterator<Item = &'a mut Value> + 'a {
    ctx.after
        .iter_mut()
        .filter(move |m| m["method"] == method)
        .filter_map(|m| m.get_mut("params"))
}

/// The text printed by `--fault help`.
pub fn help_text() -> String {
    let width = Fault::all()
        .iter()
        .map(|f| f.name().len())
        .max()
        .unwrap_or(0);
    let mut out = String::from("Faults (--fault NAME, repeatable):\n");
    for f in Fault::all() {
        out.push_str(&format!("  {:width$}  {}\n", f.name(), f.help()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = BTreeSet::new();
        for f in Fault::all() {
            assert_eq!(f.name().parse::<Fault>(), Ok(*f));
            assert!(seen.insert(f.name()));
        }
        assert!(Faults::parse(&["nope"]).is_err());
        let set = Faults::parse(&["wrong-id", "pd-no-auth"]).expect("known");
        assert!(set.has(Fault::WrongId) && !set.has(Fault::IgnoreQuery));
        assert_eq!(help_text().lines().count(), Fault::all().len() + 1);
        assert!(Fault::all().iter().all(|f| !f.breaks().is_empty()));
    }
}
