//! The reference interpreter of movejit: an [`Engine`] (shared, `Send +
//! Sync`: configuration and a content-addressed cache of decoded, verified
//! modules) and [`Session`]s (one per sequence of calls over a
//! [`Resolver`](movejit_runtime::Resolver)) that execute Move functions one
//! instruction at a time in a plain loop over explicit frames.
//!
//! Two interpreters implement the same semantics, selected by
//! [`EngineConfig::interpreter`] ([`InterpreterKind`]; the environment
//! variable `MOVEJIT_INTERPRETER=flat|tree` sets the default): the flat one
//! (the default; `flat/`: prepared ops over the flat values of
//! `movejit_runtime::flat` that the JIT shares, references as addresses)
//! and the tree one (`interpreter.rs`: values as a tree of Rust values),
//! kept as a cross-check. The conformance and robustness tests run both.
//!
//! Every module is verified (movejit-verifier) before any of its code runs.
//! Values, BCS, natives, gas and errors come from movejit-runtime, which the
//! JIT will share.
//!
//! Tests: `tests/common/mod.rs` holds the executor test table (the Aptos
//! oracle cases, case → expected outcome) behind a `CaseExecutor` trait, so
//! the same table runs on any executor and `compare_executors` diffs two of
//! them; `conformance_aptos.rs` and `conformance_sui.rs` replay the shared
//! conformance data; `robustness.rs` calls every plain-argument function of
//! the corpus. Benchmarks are timed by `movejit bench` (crate `movejit-benches`).

#![forbid(unsafe_code)]

mod engine;
mod flat;
mod fxhash;
#[cfg(test)]
mod globals_tests;
mod interpreter;
pub mod loader;

pub use engine::{
    Engine, EngineConfig, ExecutionResult, ExecutorKind, InterpreterKind, JitOptions, Session,
    EUSER_TYPE_LOADING_FAILURE, JIT_NOT_COMPILED,
};
pub use movejit_runtime as runtime;
