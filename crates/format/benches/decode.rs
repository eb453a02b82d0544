//! Decode and serialize throughput over every module of the shared corpus.
//!
//! `cargo bench -p movejit-format --bench decode -- --quick`

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use movejit_format::{decode_module, serialize_module, CompiledModule};
use std::path::{Path, PathBuf};

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
    let Ok(entries) = std::fs::read_dir(dir) else { return };
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

fn bench(c: &mut Criterion) {
    let modules = corpus();
    assert!(!modules.is_empty(), "no corpus found under {}", shared_dir().display());
    let total: usize = modules.iter().map(Vec::len).sum();
    let decoded: Vec<CompiledModule> = modules.iter().map(|b| decode_module(b).expect("corpus decodes")).collect();

    let mut g = c.benchmark_group(format!("corpus ({} modules, {} bytes)", modules.len(), total));
    g.throughput(Throughput::Bytes(total as u64));
    g.bench_function("decode+bounds", |b| {
        b.iter(|| {
            for m in &modules {
                black_box(decode_module(black_box(m)).ok());
            }
        })
    });
    g.bench_function("serialize", |b| {
        b.iter(|| {
            for m in &decoded {
                black_box(serialize_module(black_box(m)));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
