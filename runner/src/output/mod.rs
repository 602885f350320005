//! Terminal output helpers.

pub mod markup;
pub mod table;
pub mod text;
pub mod warnings;
