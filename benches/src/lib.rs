//! The benchmark harness of movejit, shared by `movejit bench` and the
//! criterion benches of this crate.
//!
//! * [`manifest`]: suites in the format of `shared/bench/benchmarks.jsonl`
//!   (a folder holding `benchmarks.jsonl`, module paths relative to it;
//!   `.mv` files or `.masm` text assembled at load time), and the
//!   [`bundled`] suite compiled into the binary.
//! * [`executor`]: the one place that knows how each executor is driven
//!   (prepare modules + function, run once in a new session finished
//!   into a change set, the span a node pays and the one timed; return BCS
//!   returns).
//! * [`measure`]: warm-up, timed calls, result checks, median / min / max.
//! * [`native`]: native Rust controls of the shared benchmarks (same
//!   algorithm, same inputs, checked arithmetic like Move's).
//! * [`compile_cost`]: JIT compile time of every function of a corpus.
//! * [`stream`]: transaction streams (`streams.jsonl`): short transactions
//!   in sessions over one storage and one engine, as a node runs them.
//!
//! Assumes nothing about a manifest: malformed lines, paths, hex or modules
//! are reported as errors naming the benchmark, never a panic.

#![forbid(unsafe_code)]

pub mod bundled;
pub mod compile_cost;
pub mod executor;
pub mod manifest;
pub mod measure;
pub mod native;
pub mod stream;

use std::path::PathBuf;

/// `shared/` next to the repository root (the reference material); used by
/// the benches and tests of this crate.
pub fn shared_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared")
}

/// The free (filter) arguments of a criterion command line.
pub fn criterion_filter(args: &[String]) -> Vec<String> {
    const TAKES_VALUE: &[&str] = &[
        "--save-baseline",
        "-s",
        "--baseline",
        "-b",
        "--load-baseline",
        "--baseline-lenient",
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--plotting-backend",
        "--output-format",
        "--color",
        "-c",
        "--profile-time",
        "--format",
    ];
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
        } else if TAKES_VALUE.contains(&a.as_str()) {
            skip = true;
        } else if !a.starts_with('-') {
            out.push(a.clone());
        }
    }
    out
}

/// The benchmarks a criterion filter may select: those whose name is part
/// of a filter or contains one (all when none matches, e.g. for a filter
/// on the executor name).
pub fn select<'s>(suite: &'s manifest::Suite, filter: &[String]) -> Vec<&'s manifest::Benchmark> {
    let hit =
        |b: &manifest::Benchmark| filter.iter().any(|f| f.contains(b.name.as_str()) || b.name.contains(f.as_str()));
    let some: Vec<_> = suite.benchmarks.iter().filter(|b| hit(b)).collect();
    if some.is_empty() {
        suite.benchmarks.iter().collect()
    } else {
        some
    }
}
