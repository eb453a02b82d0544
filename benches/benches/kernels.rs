//! The shared benchmark kernels (`shared/bench`, at their smallest timed
//! size) on the interpreter and the JIT, next to their native Rust controls,
//! in one criterion run; each benchmark is a group `kernel/<name>` with the
//! functions `interp`, `jit` (where the JIT compiles it) and `native` (where
//! a control exists). Every call's result is checked.
//!
//! After criterion, a side-by-side table of medians measured in this same
//! process (alternating executors, so machine noise hits them alike) gives
//! the ratios to native code. `cargo bench -p movejit-benches --bench
//! kernels -- --quick`; pass a name to filter (criterion's filter).

use criterion::{BenchmarkId, Criterion};
use movejit_benches::executor::{prepare, Executor, Metering, Prepared};
use movejit_benches::manifest::{Benchmark, Program, Suite};
use movejit_benches::measure::Stats;
use movejit_benches::{criterion_filter, native, select, shared_dir};
use std::time::{Duration, Instant};

fn suite() -> Suite {
    let dir = shared_dir().join("bench");
    match Suite::load(&dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}; using the bundled suite");
            Suite::bundled().expect("the bundled suite loads")
        }
    }
}

/// Runs one call and panics on a wrong result: a benchmark of a wrong
/// engine means nothing.
fn checked_call(p: &mut dyn Prepared, expect: &[Vec<u8>], what: &str) -> Duration {
    let c = p.call();
    match c.returns {
        Ok(r) if r == expect => Duration::from_nanos(c.ns),
        other => panic!("{what}: wrong result {other:?}"),
    }
}

fn native_call(kernel: &str, program: &Program) -> Duration {
    let t = Instant::now();
    let r = native::run(kernel, &program.args);
    let d = t.elapsed();
    assert_eq!(r.as_ref().ok(), program.expect.first(), "native {kernel}");
    d
}

struct Prepared2 {
    bench: Benchmark,
    program: Program,
    executors: Vec<(Executor, Box<dyn Prepared>)>,
}

fn prepare_all(suite: &Suite, filter: &[String]) -> Vec<Prepared2> {
    let mut out = Vec::new();
    for b in select(suite, filter) {
        let program = suite.program(b, b.smallest_case()).unwrap_or_else(|e| panic!("{e}"));
        let mut executors = Vec::new();
        for ex in Executor::ALL {
            match prepare(ex, &program, Metering::Off) {
                Ok(p) => executors.push((ex, p)),
                Err(e) => eprintln!("{} {}: {e}", b.name, ex.name()),
            }
        }
        out.push(Prepared2 { bench: b.clone(), program, executors });
    }
    out
}

fn kernels(c: &mut Criterion, all: &mut [Prepared2]) {
    for p in all.iter_mut() {
        let mut g = c.benchmark_group(format!("kernel/{}", p.bench.name));
        g.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
        let size = p.program.args.iter().map(hex::encode).collect::<Vec<_>>().join(",");
        for (ex, prepared) in p.executors.iter_mut() {
            let expect = &p.program.expect;
            let what = format!("{} on {}", p.bench.name, ex.name());
            g.bench_function(BenchmarkId::new(ex.name(), &size), |b| {
                b.iter_custom(|n| (0..n).map(|_| checked_call(prepared.as_mut(), expect, &what)).sum())
            });
        }
        if let Some(k) = p.bench.native_control() {
            let program = &p.program;
            g.bench_function(BenchmarkId::new("native", &size), |b| {
                b.iter_custom(|n| (0..n).map(|_| native_call(&k, program)).sum())
            });
        }
        g.finish();
    }
}

/// Medians of `rounds` calls per executor, interleaved.
fn side_by_side(all: &mut [Prepared2], rounds: usize) {
    println!(
        "\nside by side (median of {rounds} interleaved calls per column, smallest size; x/y = speedup of x over y)"
    );
    println!(
        "{:<18} {:>12} {:>12} {:>12} {:>11} {:>11} {:>12} {:>12}",
        "kernel", "native ms", "interp ms", "jit ms", "native/jit", "jit/interp", "Aptos VM ms", "native ref"
    );
    for p in all.iter_mut() {
        let mut interp = Vec::new();
        let mut jit = Vec::new();
        let mut nat = Vec::new();
        for _ in 0..rounds {
            for (ex, prepared) in p.executors.iter_mut() {
                let d = checked_call(prepared.as_mut(), &p.program.expect, &p.bench.name).as_nanos() as u64;
                match ex {
                    Executor::Interp => interp.push(d),
                    // Only the two of Executor::ALL are prepared here.
                    Executor::Jit | Executor::Auto => jit.push(d),
                }
            }
            if let Some(k) = &p.bench.native_control() {
                nat.push(native_call(k, &p.program).as_nanos() as u64);
            }
        }
        let med = |v: &[u64]| Stats::of(v).map(|s| s.median_ns as f64);
        let (n, i, j) = (med(&nat), med(&interp), med(&jit));
        let f = |x: Option<f64>| x.map(|x| format!("{:.3}", x / 1e6)).unwrap_or_else(|| "-".into());
        let r = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.3}x", a / b),
            _ => "-".into(),
        };
        let case = p.bench.smallest_case();
        println!(
            "{:<18} {:>12} {:>12} {:>12} {:>11} {:>11} {:>12} {:>12}",
            p.bench.name,
            f(n),
            f(i),
            f(j),
            r(j, n),
            r(i, j),
            f(case.aptos_vm_exec_ns_median),
            f(case.native_rust_ns_median),
        );
    }
}

fn main() {
    // Criterion's filter is the first free argument; prepare only what it selects.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filter = criterion_filter(&args);
    let benching = args.iter().any(|a| a == "--bench");
    let suite = suite();
    let mut all = prepare_all(&suite, &filter);
    let mut c = Criterion::default().configure_from_args();
    kernels(&mut c, &mut all);
    c.final_summary();
    // `cargo test --benches` runs this binary without `--bench`: smoke only.
    if benching {
        side_by_side(&mut all, 5);
    }
}
