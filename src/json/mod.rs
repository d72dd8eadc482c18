//! JSON values as the matcher and the expression engine both see them:
//! equality by value, what is read of a value, and a value cut down to what
//! is read of it. A leaf: it names no other module of the harness.

mod eq;
mod prune;
mod read_tree;

pub use eq::{integral_value, json_eq, scalar_eq};
pub use prune::{prune, pruned_copy};
pub use read_tree::ReadTree;
