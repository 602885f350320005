//! Terminal output helpers.

pub mod warnings;
