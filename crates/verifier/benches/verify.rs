//! Time to verify whole frameworks: every module of the Aptos framework and
//! of the Sui framework, each against the rest of its framework.

use criterion::{criterion_group, criterion_main, Criterion};
use movejit_format::{decode_module, CompiledModule};
use movejit_verifier::{verify_module, VerifierConfig};
use std::path::{Path, PathBuf};

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

fn load(dir: &Path, skip: &str) -> Vec<CompiledModule> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != skip) {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "mv") {
                if let Ok(m) = decode_module(&std::fs::read(&p).unwrap_or_default()) {
                    out.push(m);
                }
            }
        }
    }
    out
}

fn verify_all(mods: &[CompiledModule], config: &VerifierConfig) -> usize {
    let deps: Vec<&CompiledModule> = mods.iter().collect();
    mods.iter().filter(|m| verify_module(m, &deps, config).is_ok()).count()
}

/// This process's user+system CPU time in milliseconds (Linux /proc), so
/// results can be read on a loaded machine.
fn cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields 14 and 15 (utime, stime) are 11 and 12 after the command name.
    (ticks(11) + ticks(12)) * 10.0
}

fn cpu_time_per_pass(mods: &[CompiledModule], config: &VerifierConfig) -> f64 {
    let runs = 5;
    let t0 = cpu_ms();
    for _ in 0..runs {
        verify_all(mods, config);
    }
    (cpu_ms() - t0) / runs as f64
}

fn frameworks(c: &mut Criterion) {
    let aptos = load(&shared().join("corpus/aptos"), "");
    let sui = load(&shared().join("corpus/sui"), "history");
    // `sui_protocol` adds Sui's package rules (id leak, ...) and limits.
    let (ac, sc, sp) = (VerifierConfig::aptos(), VerifierConfig::sui(), VerifierConfig::sui_protocol());
    assert_eq!(verify_all(&aptos, &ac), aptos.len());
    assert_eq!(verify_all(&sui, &sc), sui.len());
    assert_eq!(verify_all(&sui, &sp), sui.len());
    eprintln!(
        "CPU time per full verification: aptos framework ({} modules) {:.0} ms, sui framework ({} modules) {:.0} ms, with Sui's package rules {:.0} ms",
        aptos.len(),
        cpu_time_per_pass(&aptos, &ac),
        sui.len(),
        cpu_time_per_pass(&sui, &sc),
        cpu_time_per_pass(&sui, &sp)
    );
    let mut g = c.benchmark_group("verify");
    g.sample_size(10);
    g.bench_function(format!("aptos_framework_{}_modules", aptos.len()), |b| b.iter(|| verify_all(&aptos, &ac)));
    g.bench_function(format!("sui_framework_{}_modules", sui.len()), |b| b.iter(|| verify_all(&sui, &sc)));
    g.bench_function(format!("sui_framework_{}_modules_package_rules", sui.len()), |b| {
        b.iter(|| verify_all(&sui, &sp))
    });
    g.finish();
}

criterion_group!(benches, frameworks);
criterion_main!(benches);
