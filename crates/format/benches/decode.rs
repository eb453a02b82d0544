//! Decode and serialize throughput over every module of the shared corpus.
//!
//! `cargo bench -p movejit-format --bench decode -- --quick`
//!
//! Two groups: `wall` (criterion's usual wall-clock time) and `cpu`, which
//! times the benchmark thread's own CPU time (Linux `schedstat`), so the
//! numbers stay meaningful on a machine shared with other builds.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use movejit_format::{decode_module, serialize_module, CompiledModule};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const FOLDERS: &[&str] = &[
    "corpus/aptos",
    "corpus/aptos-workloads",
    "corpus/aptos-calibration",
    "corpus/sui",
    "corpus/versions",
    "bench/modules",
    "bench/modules_sui",
    "conformance/aptos/modules",
];

fn shared_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

fn mv_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            mv_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "mv") && !p.components().any(|c| c.as_os_str() == "scripts") {
            out.push(p);
        }
    }
}

fn corpus() -> Vec<Vec<u8>> {
    let mut paths = Vec::new();
    for f in FOLDERS {
        mv_files(&shared_dir().join(f), &mut paths);
    }
    paths.sort();
    paths.iter().map(|p| std::fs::read(p).expect("read module")).collect()
}

/// Nanoseconds this thread has spent on a CPU, if the kernel tells us.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Runs `f` `iters` times and returns the CPU time it took (wall time if
/// the CPU clock is unavailable).
fn cpu_time(iters: u64, mut f: impl FnMut()) -> Duration {
    let (cpu0, wall0) = (thread_cpu_ns(), Instant::now());
    for _ in 0..iters {
        f();
    }
    match (cpu0, thread_cpu_ns()) {
        (Some(a), Some(b)) => Duration::from_nanos(b.saturating_sub(a)),
        _ => wall0.elapsed(),
    }
}

fn bench(c: &mut Criterion) {
    let modules = corpus();
    assert!(!modules.is_empty(), "no corpus found under {}", shared_dir().display());
    let total: usize = modules.iter().map(Vec::len).sum();
    let decoded: Vec<CompiledModule> = modules.iter().map(|b| decode_module(b).expect("corpus decodes")).collect();
    let decode_all = || {
        for m in &modules {
            black_box(decode_module(black_box(m)).ok());
        }
    };
    let serialize_all = || {
        for m in &decoded {
            black_box(serialize_module(black_box(m)));
        }
    };
    println!("corpus: {} modules, {} bytes", modules.len(), total);

    let mut g = c.benchmark_group("wall");
    g.throughput(Throughput::Bytes(total as u64));
    g.bench_function("decode+bounds", |b| b.iter(decode_all));
    g.bench_function("serialize", |b| b.iter(serialize_all));
    g.finish();

    let mut g = c.benchmark_group("cpu");
    g.throughput(Throughput::Bytes(total as u64));
    g.bench_function("decode+bounds", |b| b.iter_custom(|n| cpu_time(n, decode_all)));
    g.bench_function("serialize", |b| b.iter_custom(|n| cpu_time(n, serialize_all)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
