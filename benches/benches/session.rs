//! Fixed costs of a transaction on a warm engine, per executor:
//!
//! * `session/load_clob`: a new session over a warm engine loading clob's
//!   modules (the `clob` benchmark of `shared/bench`: 46 modules), then
//!   dropped. The engine and the store are made once and one session loads
//!   the modules first, so this measures what every later transaction pays
//!   before its first instruction.
//! * `session/call`: one short conformance call end to end, as `movejit
//!   bench` times it: new session, the call, finishing into a change set.
//!
//! `cargo bench -p movejit-benches --bench session`.

use criterion::{BenchmarkId, Criterion};
use movejit_benches::executor::{prepare, published, Executor, Metering};
use movejit_benches::manifest::Suite;
use movejit_benches::shared_dir;
use movejit_engine::runtime::ModuleId;

/// The short conformance call of `session/call`.
const SHORT_CALL: &str = "abort_msg.lit_ok";

fn load_clob(c: &mut Criterion) {
    let suite = Suite::load(&shared_dir().join("bench")).unwrap_or_else(|e| panic!("{e}"));
    let Some(clob) = suite.benchmarks.iter().find(|b| b.name == "clob") else {
        eprintln!("no clob benchmark in shared/bench: skipped");
        return;
    };
    let program = suite.program(clob, clob.smallest_case()).unwrap_or_else(|e| panic!("{e}"));
    let id = ModuleId::new(program.address, &program.module);
    let mut group = c.benchmark_group("session/load_clob");
    for ex in Executor::ALL {
        let (engine, storage) = published(ex.kind(), &program);
        engine.new_session(&storage).load_module(&id).unwrap_or_else(|e| panic!("clob loads: {e:?}"));
        group.bench_function(BenchmarkId::from_parameter(ex.name()), |b| {
            b.iter(|| {
                let mut session = engine.new_session(&storage);
                session.load_module(&id).expect("warm load");
                session
            })
        });
    }
    group.finish();
}

fn short_call(c: &mut Criterion) {
    let suite = Suite::load(&shared_dir().join("conformance/aptos")).unwrap_or_else(|e| panic!("{e}"));
    let Some(bench) = suite.benchmarks.iter().find(|b| b.name == SHORT_CALL) else {
        eprintln!("no {SHORT_CALL} in shared/conformance/aptos: skipped");
        return;
    };
    let program = suite.program(bench, bench.smallest_case()).unwrap_or_else(|e| panic!("{e}"));
    let mut group = c.benchmark_group("session/call");
    for ex in Executor::ALL {
        let mut p = prepare(ex, &program, Metering::Off).unwrap_or_else(|e| panic!("{ex:?}: {e}"));
        group.bench_function(BenchmarkId::new(SHORT_CALL, ex.name()), |b| {
            b.iter(|| {
                let c = p.call();
                assert_eq!(c.returns.as_ref().ok(), Some(&program.expect), "{SHORT_CALL} on {ex:?}");
                c
            })
        });
    }
    group.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    load_clob(&mut c);
    short_call(&mut c);
    c.final_summary();
}
