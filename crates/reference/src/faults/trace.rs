//! Which faults one server has on, and the trace of those its code asked
//! about.

use super::Fault;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// The faults enabled in one server, and where to note each one its code
/// asks about. [`Faults::has`] is the only way to read them, so a trace
/// misses no fault that acts.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    on: BTreeSet<Fault>,
    trace: Option<FaultTrace>,
}

impl PartialEq for Faults {
    fn eq(&self, other: &Self) -> bool {
        self.on == other.on
    }
}

impl Eq for Faults {}

impl Faults {
    pub fn none() -> Self {
        Faults::default()
    }

    pub fn parse<S: AsRef<str>>(names: &[S]) -> Result<Self, super::UnknownFault> {
        names
            .iter()
            .map(|n| n.as_ref().parse())
            .collect::<Result<BTreeSet<_>, _>>()
            .map(|on| Faults { on, trace: None })
    }

    /// These faults, with every [`Faults::has`] noted in `trace`.
    pub fn traced(self, trace: FaultTrace) -> Self {
        Faults {
            trace: Some(trace),
            ..self
        }
    }

    /// Whether `fault` is on, without noting it: for building a decision
    /// that notes it when read (`assemble::policy`).
    pub(super) fn is_on(&self, fault: Fault) -> bool {
        self.on.contains(&fault)
    }

    /// Notes that the server's code reached `fault`.
    pub(super) fn note(&self, fault: Fault) {
        if let Some(trace) = &self.trace {
            trace.note(fault);
        }
    }

    /// Whether `fault` is on. Every fault acts only where the server's code
    /// asks this, which is what makes a [`FaultTrace`] complete.
    pub fn has(&self, fault: Fault) -> bool {
        if let Some(trace) = &self.trace {
            trace.note(fault);
        }
        self.on.contains(&fault)
    }
}

impl FromIterator<Fault> for Faults {
    fn from_iter<I: IntoIterator<Item = Fault>>(iter: I) -> Self {
        Faults {
            on: iter.into_iter().collect(),
            trace: None,
        }
    }
}

/// The faults a server's code asked about ([`Faults::has`]), on or not.
/// A conversation during which the server never asked about a fault goes
/// the same way with that fault on: the fault matrix runs a scenario
/// against a faulty server only when its conversation with the clean one
/// asked about that fault.
#[derive(Debug, Clone, Default)]
pub struct FaultTrace(Arc<Mutex<BTreeSet<Fault>>>);

impl FaultTrace {
    pub fn new() -> Self {
        FaultTrace::default()
    }

    fn note(&self, fault: Fault) {
        if let Ok(mut seen) = self.0.lock() {
            seen.insert(fault);
        }
    }

    /// The faults asked about so far.
    pub fn consulted(&self) -> BTreeSet<Fault> {
        self.0.lock().map(|seen| seen.clone()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_notes_every_fault_asked_about_on_or_off() {
        let trace = FaultTrace::new();
        let faults = Faults::parse(&["ignore-query"])
            .expect("a known fault")
            .traced(trace.clone());
        assert!(faults.has(Fault::IgnoreQuery));
        assert!(!faults.has(Fault::TagsAny));
        assert_eq!(
            trace.consulted(),
            BTreeSet::from([Fault::IgnoreQuery, Fault::TagsAny])
        );
    }
}
