//! Metering cost: the shared kernels (smallest timed size) with gas metering
//! off and on (the runtime's default cost table, unlimited budget), on the
//! interpreter and on the JIT where it compiles the kernel. Groups
//! `metering/<name>`, functions `<executor>-off` / `<executor>-on`; every
//! result is checked.
//!
//! After criterion, a table of metered/unmetered median ratios measured in
//! this process with the two variants interleaved call by call.
//! `cargo bench -p movejit-benches --bench metering -- --quick [NAME]`.

use criterion::{BenchmarkId, Criterion};
use movejit_benches::executor::{prepare, Executor, Metering, Prepared};
use movejit_benches::manifest::{Program, Suite};
use movejit_benches::measure::Stats;
use movejit_benches::{criterion_filter, select, shared_dir};
use std::time::Duration;

struct Variant {
    executor: Executor,
    metering: Metering,
    prepared: Box<dyn Prepared>,
}

impl Variant {
    fn label(&self) -> String {
        let m = match self.metering {
            Metering::Off => "off",
            Metering::On => "on",
            Metering::Aptos => "aptos",
        };
        format!("{}-{m}", self.executor.name())
    }
}

fn checked_call(v: &mut Variant, program: &Program, name: &str) -> Duration {
    let c = v.prepared.call();
    match c.returns {
        Ok(r) if r == program.expect => Duration::from_nanos(c.ns),
        other => panic!("{name} {}: wrong result {other:?}", v.label()),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let benching = args.iter().any(|a| a == "--bench");
    let filter = criterion_filter(&args);
    let suite = Suite::load(&shared_dir().join("bench")).or_else(|_| Suite::bundled()).expect("a suite");
    let mut all = Vec::new();
    for b in select(&suite, &filter) {
        let program = suite.program(b, b.smallest_case()).unwrap_or_else(|e| panic!("{e}"));
        let mut variants = Vec::new();
        for executor in Executor::ALL {
            for metering in [Metering::Off, Metering::On] {
                match prepare(executor, &program, metering) {
                    Ok(prepared) => variants.push(Variant { executor, metering, prepared }),
                    Err(e) => eprintln!("{} {}: {e}", b.name, executor.name()),
                }
            }
        }
        all.push((b.name.clone(), program, variants));
    }

    let mut c = Criterion::default().configure_from_args();
    for (name, program, variants) in all.iter_mut() {
        let mut g = c.benchmark_group(format!("metering/{name}"));
        g.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
        for v in variants.iter_mut() {
            let label = v.label();
            g.bench_function(BenchmarkId::from_parameter(&label), |b| {
                b.iter_custom(|n| (0..n).map(|_| checked_call(v, program, name)).sum())
            });
        }
        g.finish();
    }
    c.final_summary();

    if benching {
        let rounds = 5;
        println!("\nmetering overhead (median of {rounds} interleaved calls; on/off = metered time / unmetered time)");
        println!(
            "{:<18} {:>12} {:>12} {:>9} {:>12} {:>12} {:>9}",
            "kernel", "interp off", "interp on", "on/off", "jit off", "jit on", "on/off"
        );
        for (name, program, variants) in all.iter_mut() {
            let mut samples: Vec<Vec<u64>> = vec![Vec::new(); variants.len()];
            for _ in 0..rounds {
                for (i, v) in variants.iter_mut().enumerate() {
                    samples[i].push(checked_call(v, program, name).as_nanos() as u64);
                }
            }
            let med = |ex: Executor, m: Metering| {
                variants
                    .iter()
                    .position(|v| v.executor == ex && v.metering == m)
                    .and_then(|i| Stats::of(&samples[i]))
                    .map(|s| s.median_ns as f64)
            };
            let ms = |x: Option<f64>| x.map(|x| format!("{:.3}", x / 1e6)).unwrap_or_else(|| "-".into());
            let ratio = |on: Option<f64>, off: Option<f64>| match (on, off) {
                (Some(a), Some(b)) if b > 0.0 => format!("{:.3}", a / b),
                _ => "-".into(),
            };
            let (io, ii) = (med(Executor::Interp, Metering::Off), med(Executor::Interp, Metering::On));
            let (jo, ji) = (med(Executor::Jit, Metering::Off), med(Executor::Jit, Metering::On));
            println!(
                "{:<18} {:>12} {:>12} {:>9} {:>12} {:>12} {:>9}",
                name,
                ms(io),
                ms(ii),
                ratio(ii, io),
                ms(jo),
                ms(ji),
                ratio(ji, jo)
            );
        }
    }
}
