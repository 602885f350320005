//! A condition that may distort results, with how to fix it (the `warnings` of
//! params.json). Raised by the environment capture, the DRAM checks and the families.

use serde::{Deserialize, Serialize};

/// A condition that may distort results, with how to fix it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Warning {
    /// Stable identifier (`governor`, `smt`, `thp`, `placement`, ...).
    pub code: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it (may be empty when nothing can be done).
    pub remediation: String,
}
