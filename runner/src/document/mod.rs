//! The files cxlchar writes and reads, below every command that does: the params and
//! fleet documents ([`fleet`]; params.json's types are bench-core's `params`), their
//! loading and validation ([`load`]), and atomic writing with the output checks
//! ([`mod@write`]). Commands, consumers, exporters, plot and report sit above it.

pub mod fleet;
pub mod load;
pub mod shape;
pub mod write;
