//! I/O side of a run: targets, the executor of one scenario, the scheduler
//! and the event stream every reporter consumes.

pub mod baseline;
pub mod catalog_run;
pub mod events;
pub mod executor;
pub mod outcome;
pub mod policy;
pub mod pool;
pub mod probe;
pub mod property;
pub mod scheduler;
pub mod slow_calls;
pub mod target;
pub mod walks;

pub use events::{Event, RunInfo, Summary};
pub use executor::{run_scenario, RunConfig};
pub use outcome::{Finding, Outcome, ScenarioResult};
pub use policy::{RunPolicy, Verdict};
pub use target::Target;

/// How many cores the machine has (2 when it cannot tell): what job
/// counts and start-up patience are scaled by.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// How many groups, tags or tools a "for every" invariant checks at most
/// (`--sample-size`): enough to catch a server that gets membership wrong
/// in general, few enough that a catalog of 100,000 tools costs no more
/// than one of a few hundred.
pub const DEFAULT_SAMPLE_SIZE: usize = 64;
