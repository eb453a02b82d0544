//! The JIT's corpus survey (crates/jit/tests/survey) through the engine's
//! seam: what the `auto` and `jit` executors compile inside an interpreter
//! session (`JitFactory` with the engine's own settings and the natives an
//! Aptos host registers; each instance is compiled unmetered and metered,
//! as the engine does). Every non-generic
//! function, closed instantiation and instance reached from those must
//! compile or be reported as not supported yet; floors on the compiled
//! counts keep coverage from silently going down.

use movejit_engine::{EngineConfig, JitFactory};
use movejit_runtime::compiled::{CompiledCodeFactory, ModuleSource};
use movejit_runtime::ModuleId;
use movejit_testkit::survey::{survey, Corpus, Failure, Item, SETS};
use std::collections::HashMap;

/// Compiled counts today (non-generic, closed instantiations, reached
/// from those), per set of `SETS`: everything. A call of a native no
/// registry provides compiles to the interpreter's `MISSING_DEPENDENCY` at
/// that call, closures read from storage or returned by natives are called
/// through the session's interpreter, and a callee that does not compile is
/// an interpreter stub (it no longer fails its callers).
const FLOORS: [[usize; 3]; 10] = [
    [1899, 1047, 1357],
    [144, 114, 327],
    [618, 13, 2],
    [905, 432, 239],
    [76, 9, 4],
    [79, 9, 4],
    [79, 9, 4],
    [79, 9, 4],
    [81, 9, 4],
    [81, 9, 4],
];

struct Modules<'c> {
    by_id: HashMap<ModuleId, &'c movejit_format::CompiledModule>,
}

impl ModuleSource for Modules<'_> {
    fn module(&self, id: &ModuleId) -> Option<&movejit_format::CompiledModule> {
        self.by_id.get(id).copied()
    }
}

const UNSUPPORTED: &str = "not supported by the JIT yet: ";

#[test]
fn corpus_compiles_through_the_engine_or_is_reported_unsupported() {
    let mut problems = Vec::new();
    let mut low = Vec::new();
    for ((set, deps, sui), floors) in SETS.iter().zip(FLOORS) {
        let corpus = Corpus::load(set, deps);
        let ids: Vec<ModuleId> = corpus.modules.iter().map(|m| ModuleId::new(*m.address(), m.name())).collect();
        let source = Modules { by_id: ids.iter().cloned().zip(&corpus.modules).collect() };
        // The natives an Aptos / Sui host registers.
        let config = if *sui {
            EngineConfig::sui()
        } else {
            EngineConfig { natives: movejit_aptos_natives::aptos_registry(), ..EngineConfig::aptos() }
        };
        let factory = JitFactory::new(&config);
        let mut session = factory.new_session();
        let compile = |it: &Item| {
            session.compile(&source, &ids[it.module], it.fdef, &it.type_args).map_err(|why| {
                match why.strip_prefix(UNSUPPORTED) {
                    Some(m) => Failure::Unsupported(m.to_string()),
                    None => Failure::Problem(why),
                }
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
