//! Terminal output helpers.

pub mod table;
pub mod warnings;
