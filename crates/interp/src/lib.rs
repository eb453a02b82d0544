//! The reference interpreter of movejit: an [`Engine`] (shared, `Send +
//! Sync`: configuration and a content-addressed cache of decoded, verified
//! modules) and [`Session`]s (one per sequence of calls over a
//! [`Resolver`](movejit_runtime::Resolver)) that execute Move functions one
//! instruction at a time in a plain loop over explicit frames.
//!
//! The interpreter runs prepared ops over the flat values of
//! `movejit_runtime::flat` that the JIT shares (`flat/`; references as
//! addresses), so interpreted and compiled frames exchange values as they
//! are. It is the semantic reference: the conformance tests check it
//! against the Aptos and Sui VMs' recorded results. (An older interpreter
//! over tree values was removed: a second implementation of every change,
//! gas included, that the recorded results already cross-check.)
//!
//! Every module is verified (movejit-verifier) before any of its code runs.
//! Values, BCS, natives, gas and errors come from movejit-runtime, which the
//! JIT will share.
//!
//! Tests: `tests/common/mod.rs` holds the executor test table (the Aptos
//! oracle cases, case → expected outcome) behind a `CaseExecutor` trait, so
//! the same table runs on any executor and `compare_executors` diffs two of
//! them; `conformance_aptos.rs` and `conformance_sui.rs` replay the shared
//! conformance data (movejit-engine's `robustness.rs` calls every
//! plain-argument function of the corpus on every executor). Benchmarks are timed by `movejit bench` (crate `movejit-benches`).

// Unsafe code only where the interpreter works on flat memory by address
// (`flat::exec`, the loop; `flat::seam`, the slots compiled code passes),
// each module allowing it explicitly: `runtime::flat::mem`'s functions that
// read or write through an address are `unsafe fn`.
#![deny(unsafe_code)]

mod engine;
mod flat;
mod fxhash;
#[cfg(test)]
mod globals_tests;
pub mod loader;

pub use engine::{
    Engine, EngineConfig, ExecutionResult, ExecutorKind, JitOptions, Session, EUSER_TYPE_LOADING_FAILURE,
    JIT_NOT_COMPILED,
};
pub use movejit_runtime as runtime;
