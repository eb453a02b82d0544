//! Executors compared run by run at many gas balances: every executor
//! must stop at the same charge as the interpreter (what a run is compared
//! on is the caller's: status, location, gas, memory...).

use movejit_engine::{new_engine, Engine, EngineConfig, ExecutorKind};
use std::fmt::Debug;

/// The interpreter (the reference, first), `auto` and the JIT, each built
/// from `config` with its executor set.
pub fn every_executor(config: &EngineConfig) -> Vec<(&'static str, Engine)> {
    [("interp", ExecutorKind::Interpreter), ("auto", ExecutorKind::Auto), ("jit", ExecutorKind::Jit)]
        .into_iter()
        .map(|(label, executor)| (label, new_engine(EngineConfig { executor, ..config.clone() })))
        .collect()
}

/// What [`agree_at_balances`] found.
#[derive(Debug)]
pub struct Agreement<C> {
    /// Each balance with the reference's (the first engine's) result.
    pub reference: Vec<(u64, C)>,
    /// Runs in which the last engine ran compiled code.
    pub compiled_runs: usize,
    /// Each run of another engine that differs from the reference's.
    pub diffs: Vec<String>,
}

impl<C> Agreement<C> {
    /// Fails, printing the first differences, unless every engine agreed.
    pub fn assert_agreed(&self) {
        for d in self.diffs.iter().take(12) {
            eprintln!("DIFF {d}");
        }
        assert!(self.diffs.is_empty(), "the executors disagree in {} runs", self.diffs.len());
    }
}

/// Runs `run(engine, balance)` on every engine (labelled; the first is the
/// reference) at each balance; `run` answers what is compared and how
/// many function instances ran compiled.
pub fn agree_at_balances<C: PartialEq + Debug>(
    engines: &[(&str, Engine)],
    balances: impl IntoIterator<Item = u64>,
    mut run: impl FnMut(&Engine, u64) -> (C, usize),
) -> Agreement<C> {
    let mut out = Agreement { reference: Vec::new(), compiled_runs: 0, diffs: Vec::new() };
    for balance in balances {
        let mut results: Vec<(C, usize)> = engines.iter().map(|(_, e)| run(e, balance)).collect();
        out.compiled_runs += usize::from(results.last().is_some_and(|r| r.1 > 0));
        let (want, _) = results.remove(0);
        for ((label, _), (got, _)) in engines.iter().skip(1).zip(&results) {
            if *got != want {
                out.diffs.push(format!("{label} at {balance}:\n  got  {got:?}\n  want {want:?}"));
            }
        }
        out.reference.push((balance, want));
    }
    out
}
