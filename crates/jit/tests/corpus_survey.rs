//! Every function of the real module corpus goes through the compiler, in
//! a standalone engine (no interpreter session: global storage and natives
//! outside the stateless stdlib modules are refused): every non-generic
//! function, every closed generic instantiation the corpus' own calls name
//! (`FunctionInstantiation` entries whose type arguments contain no type
//! parameter), and the generic instantiations those reach in turn. Each
//! must compile or be reported as not supported yet; real code must never
//! be called malformed or break code generation.
//!
//! Prints, per corpus set, compiled / total for each of the three groups,
//! the compile time, and a histogram of why the rest do not compile (a
//! failure anywhere in an instance's call graph counts against it). Floors
//! on the compiled counts keep coverage from silently going down. The same
//! survey inside the engine (what `auto` / `jit` compile):
//! crates/engine/tests/corpus_engine.rs. Per-call p50 / p99 compile times
//! of the Aptos framework: the `compile_cost` bench of movejit-benches.

use movejit_engine::EngineConfig;
use movejit_jit::{CompileError, InstanceKey, JitConfig, JitEngine};
use movejit_testkit::survey::{survey, Corpus, Failure, Item, SETS};

/// Compiled counts today (non-generic, closed instantiations, reached from
/// those), per set of [`SETS`].
const FLOORS: [[usize; 3]; 10] = [
    [686, 380, 613],
    [37, 38, 149],
    [562, 13, 2],
    [530, 207, 107],
    [76, 9, 4],
    [79, 9, 4],
    [79, 9, 4],
    [79, 9, 4],
    [81, 9, 4],
    [81, 9, 4],
];

#[test]
fn corpus_functions_and_instantiations_compile_or_are_reported_unsupported() {
    let mut problems = Vec::new();
    let mut low = Vec::new();
    for ((set, deps, sui), floors) in SETS.iter().zip(FLOORS) {
        let corpus = Corpus::load(set, deps);
        let natives = if *sui { EngineConfig::sui().natives } else { EngineConfig::aptos().natives };
        let mut e = JitEngine::new(JitConfig { natives, ..JitConfig::default() }).unwrap();
        for m in &corpus.modules {
            // Module numbers are the corpus' own.
            e.add_module(m.clone()).unwrap();
        }
        let compile = |it: &Item| {
            let key = InstanceKey { module: it.module as u32, fdef: it.fdef, type_args: it.type_args.clone() };
            e.compile(&key).map_err(|err| match err {
                CompileError::Unsupported(m) => Failure::Unsupported(m),
                other => Failure::Problem(other.to_string()),
            })
        };
        let got = survey(set, &corpus, compile, &mut problems).compiled();
        if got.iter().zip(&floors).any(|(g, f)| g < f) {
            low.push(format!("{set}: compiled {got:?} below the floors {floors:?}"));
        }
    }
    for p in problems.iter().take(30) {
        println!("  PROBLEM {p}");
    }
    assert!(problems.is_empty(), "{} instances failed for reasons other than unsupported features", problems.len());
    assert!(low.is_empty(), "{low:?}");
}
