//! The reference interpreter of movejit: an executor beneath the product
//! API of `movejit-engine` (`Engine`, `Session`), which is what hosts,
//! tools and tests use.
//!
//! What it offers: [`EngineState`] (one per engine, `Send + Sync`: the
//! loader's module cache and warm module sets, prepared function instances, entry
//! plans, layouts) and [`SessionState`] (one per session over a
//! [`Resolver`](movejit_runtime::Resolver): the loaded module set, the
//! global-storage cache, the flat interpreter's caches, the session's
//! compiled code). movejit-engine drives them: loading
//! ([`SessionState::load_module`], [`SessionState::load_type`]), entry calls
//! ([`SessionState::execute_function`], [`SessionState::execute_script`]),
//! which return an [`ExecutionResult`], and the change set
//! ([`SessionState::finish`]). Compiled code reaches the session through the
//! runtime's seam traits (`runtime::compiled`), which `SessionState`
//! implements (`flat/seam.rs`).
//!
//! What it may assume: the configuration (`movejit_runtime::EngineConfig`)
//! is the engine's and does not change while it lives; modules come from a
//! resolver and are loaded by movejit-loader (decoded, linked, verified)
//! before any of their code runs; compiled code, when attached, is a
//! `CompiledCodeFactory` that follows jit-abi.md (same results, gas and
//! errors as interpreting). Nothing else about the JIT is known here.
//!
//! The interpreter runs prepared ops over the flat values of
//! `movejit_runtime::flat` that the JIT shares (`flat/`; references as
//! addresses), so interpreted and compiled frames exchange values as they
//! are. It is the semantic reference: the conformance tests check it
//! against the Aptos and Sui VMs' recorded results. (An older interpreter
//! over tree values was removed: a second implementation of every change,
//! gas included, that the recorded results already cross-check.)
//!
//! Tests: `tests/common/mod.rs` holds the executor test table (the Aptos
//! oracle cases, case → expected outcome) behind a `CaseExecutor` trait, so
//! the same table runs on any executor and `compare_executors` diffs two of
//! them; `conformance_aptos.rs` and `conformance_sui.rs` replay the shared
//! conformance data through movejit-engine's API with the interpreter as
//! executor (movejit-engine's `robustness.rs` calls every plain-argument
//! function of the corpus on every executor). Benchmarks are timed by
//! `movejit bench` (crate `movejit-benches`).

// Unsafe code only where the interpreter works on flat memory by address
// (`flat::exec`, the loop; `flat::seam`, the slots compiled code passes),
// each module allowing it explicitly: `runtime::flat::mem`'s functions that
// read or write through an address are `unsafe fn`, and so are the seam's
// (`SeamSlot::new`, `GlobalStore::move_from` / `move_to`): no safe function
// reachable from here dereferences an address safe code could make.
#![deny(unsafe_code)]

mod engine;
mod flat;
mod fxhash;
#[cfg(test)]
mod globals_tests;

pub use engine::{EngineState, ExecutionResult, SessionState, JIT_NOT_COMPILED};
pub use movejit_loader::EUSER_TYPE_LOADING_FAILURE;
// The flat interpreter names the executor kind from the crate root.
use movejit_runtime::ExecutorKind;
