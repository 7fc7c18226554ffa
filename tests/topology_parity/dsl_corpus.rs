//! The DSL twins of `TopologyParityDsl.programs` (same names, same operations, same order).

use super::Program;

/// The DSL programs.
pub fn programs() -> Vec<Program> {
    vec![]
}
