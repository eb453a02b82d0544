//! The library side of the `movejit` command: `movejit run`'s whole call
//! path and its `--json` output ([`run::Runner`], [`run::Ran::json`]), so
//! tests replay calls in-process exactly as the command makes them.

pub mod files;
pub mod out;
pub mod run;
