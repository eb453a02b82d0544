//! The Sui corpus of `../shared/corpus/sui` through `movejit diff`'s path
//! for given modules (`args::module_files`, `load_given`, `cases_for`,
//! `run_both_with`), on every executor: the verified modules and link sets
//! as floors (the folder holds HEAD packages and older versions of the same
//! modules), and a deterministic subset of the cases compared on the JIT
//! with 0 divergences, Sui's natives and object effects included.

use movejit_diff::args::{cases_for, flavour_of, load_given, module_files};
use movejit_diff::rng::Rng;
use movejit_diff::{run_both_with, JitVerdict, Options};
use movejit_format::{StatusCode, StatusFlavour};
use std::path::PathBuf;

fn corpus(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/sui").join(sub)
}

/// One folder set: what must verify, and which share of its cases runs.
struct Row {
    name: &'static str,
    folders: &'static [&'static str],
    /// Floors: modules verified (each version once) and link sets.
    verified: usize,
    sets: usize,
    /// At most this many modules rejected (older versions that do not link
    /// against HEAD's dependencies: friend functions changed).
    rejected: usize,
    /// Every `stride`-th case runs (the cases of one seed, one round).
    stride: usize,
    /// Floors over the cases run: compared with executor `jit` compiling
    /// the whole call graph, executed to the end, with Sui object effects
    /// (new objects, transfers, events) compared.
    on_jit: usize,
    executed: usize,
    with_effects: usize,
}

const ROWS: &[Row] = &[
    Row {
        name: "HEAD packages",
        folders: &["move-stdlib", "sui-framework", "sui-system", "bridge", "deepbook"],
        verified: 110,
        sets: 1,
        rejected: 0,
        stride: 16,
        on_jit: 80,
        executed: 45,
        with_effects: 2,
    },
    Row {
        name: "whole folder, history included",
        folders: &[""],
        verified: 343,
        sets: 234,
        rejected: 58,
        stride: 64,
        on_jit: 72,
        executed: 44,
        with_effects: 2,
    },
];

#[test]
fn the_sui_corpus_runs_compiled_and_agrees_on_every_executor() {
    let opts = Options { gas_points: 2, ..Options::default() };
    let mut failures = Vec::new();
    for row in ROWS {
        let files: Vec<_> = row.folders.iter().flat_map(|f| module_files(&corpus(f)).expect("../shared")).collect();
        let flavour = flavour_of(files.iter().map(|(_, b)| b.as_slice()), None);
        assert_eq!(flavour, StatusFlavour::Sui, "{}: the flavour", row.name);
        let given = load_given(&files, flavour);
        let mut rng = Rng::new(15);
        let (mut cases, mut on_jit, mut executed, mut with_effects, mut ran, mut diverged) = (0, 0, 0, 0, 0, 0);
        for set in &given.sets {
            for &i in &set.tested {
                for case in cases_for(&set.modules, i, flavour, &mut rng).0 {
                    cases += 1;
                    if (cases - 1) % row.stride != 0 {
                        continue;
                    }
                    ran += 1;
                    match run_both_with(&case, &opts) {
                        Ok(c) => {
                            on_jit += usize::from(c.jit == JitVerdict::Agreed);
                            executed += usize::from(c.outcome.status == StatusCode::EXECUTED);
                            with_effects += usize::from(c.outcome.changes.iter().any(|(k, _)| {
                                k.starts_with("new object") || k.starts_with("transfer") || k.starts_with("event")
                            }));
                        }
                        Err(d) => {
                            diverged += 1;
                            println!("DIVERGENCE {}: {} — {d}", row.name, case.describe());
                        }
                    }
                }
            }
        }
        println!(
            "{}: {} verified, {} link sets, {} rejected; {} cases, {ran} run: {on_jit} on jit, {executed} executed, {with_effects} with object effects, {diverged} divergences",
            row.name,
            given.verified(),
            given.sets.len(),
            given.rejected.len(),
            cases
        );
        let checks = [
            ("verified", given.verified() >= row.verified),
            ("link sets", given.sets.len() >= row.sets),
            ("rejected", given.rejected.len() <= row.rejected),
            ("compared on jit", on_jit >= row.on_jit),
            ("executed", executed >= row.executed),
            ("object effects", with_effects >= row.with_effects),
            ("divergences", diverged == 0),
        ];
        failures.extend(checks.iter().filter(|(_, ok)| !ok).map(|(what, _)| format!("{}: {what}", row.name)));
    }
    assert!(failures.is_empty(), "{failures:?}");
}
