//! Parallel sessions over one engine: fib, sort_quick and clob (the shared
//! suite, smallest timed size) on the interpreter, the JIT and auto, with
//! 1, 2 and 4 threads calling together for a fixed wall time. Each call is
//! a new, independent session over the engine (as a node runs
//! transactions on many threads); every result is checked. Prints calls/s
//! and the ratio to one thread: with no shared writes on the call path,
//! 2 threads on 2 free cores give close to 2×.
//!
//! `cargo bench -p movejit-benches --bench threads [-- --quick] [NAME...]`;
//! `--quick` (or `MOVEJIT_THREADS_QUICK=1`) shortens each row from 2 s to
//! 0.5 s; names filter benchmarks (`fib`, `clob`) or executors (`interp`,
//! `jit`, `auto`).

use movejit_benches::executor::{load, Loaded, Metering};
use movejit_benches::manifest::Suite;
use movejit_benches::shared_dir;
use movejit_engine::ExecutorKind;
use std::sync::Barrier;
use std::time::{Duration, Instant};

const BENCHMARKS: [&str; 3] = ["fib", "sort_quick", "clob"];
const EXECUTORS: [(&str, ExecutorKind); 3] =
    [("interp", ExecutorKind::Interpreter), ("jit", ExecutorKind::Jit), ("auto", ExecutorKind::Auto)];
const THREADS: [usize; 3] = [1, 2, 4];

/// Calls made by `threads` threads together on `loaded` for `wall`, each
/// call in a new session, every result checked; returns calls per second.
fn throughput(loaded: &Loaded, expect: &[Vec<u8>], threads: usize, wall: Duration, what: &str) -> f64 {
    let start = Barrier::new(threads);
    let counts: Vec<(u64, Duration)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    let t = Instant::now();
                    let mut calls = 0u64;
                    while t.elapsed() < wall {
                        let c = loaded.call(&mut Metering::Off.meter());
                        match c.returns {
                            Ok(r) if r == expect => calls += 1,
                            other => panic!("{what}: wrong result {other:?}"),
                        }
                    }
                    (calls, t.elapsed())
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("a worker thread panicked")).collect()
    });
    let calls: u64 = counts.iter().map(|c| c.0).sum();
    let longest = counts.iter().map(|c| c.1).max().unwrap_or(wall);
    calls as f64 / longest.as_secs_f64()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick") || std::env::var_os("MOVEJIT_THREADS_QUICK").is_some();
    let filter: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let chosen = |name: &str| filter.is_empty() || filter.iter().any(|f| *f == name);
    let by_bench = filter.iter().any(|f| BENCHMARKS.contains(&f.as_str()));
    let by_executor = filter.iter().any(|f| EXECUTORS.iter().any(|(n, _)| n == f));
    let wall = if quick { Duration::from_millis(500) } else { Duration::from_secs(2) };
    let dir = shared_dir().join("bench");
    let suite = match Suite::load(&dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("threads: {e} (needs the shared suite)");
            return;
        }
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("threads: one engine, a new session per call, {} ms per row, {cores} cores", wall.as_millis());
    println!(
        "{:<12} {:<7} {:>12} {:>12} {:>12} {:>7} {:>7}",
        "benchmark", "engine", "1 thr /s", "2 thr /s", "4 thr /s", "2/1", "4/1"
    );
    for name in BENCHMARKS {
        if by_bench && !chosen(name) {
            continue;
        }
        let Some(b) = suite.benchmarks.iter().find(|b| b.name == name) else {
            eprintln!("{name}: not in {}", suite.label());
            continue;
        };
        let program = match suite.program(b, b.smallest_case()) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{e}");
                continue;
            }
        };
        for (ex, kind) in EXECUTORS {
            if by_executor && !chosen(ex) {
                continue;
            }
            let loaded = match load(kind, &program, Metering::Off) {
                Ok(l) => l,
                Err(e) => {
                    println!("{name:<12} {ex:<7} {e}");
                    continue;
                }
            };
            let what = format!("{name} on {ex}");
            let rates: Vec<f64> =
                THREADS.iter().map(|&n| throughput(&loaded, &program.expect, n, wall, &what)).collect();
            println!(
                "{name:<12} {ex:<7} {:>12.1} {:>12.1} {:>12.1} {:>6.2}x {:>6.2}x",
                rates[0],
                rates[1],
                rates[2],
                rates[1] / rates[0],
                rates[2] / rates[0]
            );
        }
    }
}
