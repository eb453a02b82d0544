//! movejit-diff: differential testing of movejit's executors. The same case
//! (modules, function, type arguments, BCS arguments) runs on the
//! reference interpreter and on the Cranelift JIT, and everything
//! observable must be identical: status, sub-status, abort code and
//! message, error location (module, function, offset), return values and
//! `&mut` arguments as BCS, the change set, and gas used — first with a
//! full budget, then with many tiny budgets that run out at different
//! points (both must stop with `OUT_OF_GAS` at the same place having used
//! the same gas).
//!
//! * [`exec`] runs a case on movejit-engine with executor `interp`, `jit`
//!   or `auto` (the engine's `--engine` choices) and converts the result;
//!   repeated runs get fresh interpreter sessions of one engine, whose
//!   shared code cache compiles each function once.
//! * [`harness`]: [`run_both`], [`run_both_with`] (with [`Options`]),
//!   [`assert_agree`] and the [`diff_test!`] macro.
//! * [`boundary`]: every integer instruction at every type over the edge
//!   values of its operands, checked against an oracle too.
//! * [`gen`]: random verifiable modules (`.masm` text assembled with
//!   movejit-masm, checked by movejit-verifier) and single-instruction
//!   programs; [`driver`] runs batches of them and keeps statistics;
//!   [`minimize`] shrinks a diverging module.
//!
//! # Routing an executor test through the harness
//!
//! Build a [`Case`] and either call [`assert_agree`] (panics with both
//! outcomes on a divergence) or declare a test with
//! `movejit_diff::diff_test!(name, case_expr);`. For a table, loop over the
//! cases and call [`run_both_with`], collecting divergences. A case executor
//! `jit` does not compile whole is compared on `auto` (mixed execution) and
//! reported as [`JitVerdict::Mixed`], or, when nothing of it compiles, run on
//! the interpreter alone and reported as [`JitVerdict::Unsupported`] — never
//! as a divergence; as the JIT grows the same tests compare more.
//!
//! Assumes the interpreter is the reference: it runs every case; modules
//! are verified before either executor sees them.

#![forbid(unsafe_code)]

pub mod args;
pub mod boundary;
pub mod case;
pub mod coverage;
pub mod driver;
pub mod exec;
pub mod gen;
pub mod harness;
pub mod minimize;
pub mod outcome;
pub mod rng;

pub use case::Case;
pub use exec::{Executor, Prepared, RunError, Schedule};
pub use harness::{assert_agree, gas_budgets, run_both, run_both_with, Compared, JitVerdict, Options};
pub use outcome::{Divergence, Loc, Outcome};
