//! Compile cost of the Aptos framework corpus (`shared/corpus/aptos`): every
//! non-generic function JIT-compiled in one engine, standalone and as an
//! engine session compiles it (global storage and Aptos natives; unmetered
//! and metered); total time, per-call p50 / p99, machine-code size, and the
//! functions the JIT cannot compile yet by error kind.
//! Decoding and verification are done first and not timed.
//!
//! `cargo bench -p movejit-benches --bench compile_cost [-- DIR]` (a custom
//! harness: the walk runs three times, each in a fresh engine, and the run
//! with the median total is reported). Under `cargo test --benches` it
//! compiles one small folder once.

use movejit_benches::compile_cost::{
    compile_all_with, load_verified, module_files, quantile, CompileMode, CorpusCompile,
};
use movejit_benches::{criterion_filter, shared_dir};
use movejit_jit::JitConfig;
use std::time::Instant;

fn ms(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

fn report(r: &CorpusCompile, load_ns: u64) {
    let ok: Vec<u64> = r.compiled().map(|f| f.ns).collect();
    let failed = r.functions.len() - ok.len();
    println!(
        "modules: {} decoded and verified ({} rejected), load+verify {}",
        r.modules,
        r.rejected_modules.len(),
        ms(load_ns)
    );
    for (path, why) in &r.rejected_modules {
        println!("  rejected {path}: {why}");
    }
    println!(
        "functions: {} non-generic with code; {} generic (not instantiated), {} native",
        r.functions.len(),
        r.generic,
        r.native
    );
    println!("compiled: {} of {} ({} not yet)", ok.len(), r.functions.len(), failed);
    println!("total compile time (all calls): {}", ms(r.total_ns()));
    println!("  of which successful calls: {}", ms(ok.iter().sum()));
    let q = |p| quantile(&ok, p).map(ms).unwrap_or_else(|| "-".into());
    println!("per compiled function (incl. callees compiled with it): p50 {}, p99 {}, max {}", q(0.5), q(0.99), q(1.0));
    let sizes: Vec<u64> = r.compiled().map(|f| f.code_bytes).collect();
    let kib = |b: u64| format!("{:.1} KiB", b as f64 / 1024.0);
    let qs = |p| quantile(&sizes, p).map(|b| format!("{b} B")).unwrap_or_else(|| "-".into());
    println!(
        "code size: {} machine code in total; per compiled function (incl. callees compiled with it): p50 {}, p99 {}, max {}",
        kib(r.code_bytes()),
        qs(0.5),
        qs(0.99),
        qs(1.0)
    );
    let instrs = r.instructions();
    println!(
        "bytes per bytecode instruction: {} ({} bytecode instructions compiled; trampolines and stubs counted in the bytes)",
        if instrs == 0 { "-".to_string() } else { format!("{:.1}", r.code_bytes() as f64 / instrs as f64) },
        instrs
    );
    println!("not compiled, by error kind:");
    for (kind, n) in r.failures_by_kind() {
        println!("  {n:>6}  {kind}");
    }
    let mut slowest: Vec<_> = r.compiled().collect();
    slowest.sort_by_key(|f| std::cmp::Reverse(f.ns));
    println!("slowest compiled:");
    for f in slowest.iter().take(5) {
        println!("  {}  {}", ms(f.ns), f.name);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let benching = args.iter().any(|a| a == "--bench");
    let dir = criterion_filter(&args)
        .into_iter()
        .next()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| shared_dir().join(if benching { "corpus/aptos" } else { "corpus/aptos/MoveStdlib" }));
    let files = module_files(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let t = Instant::now();
    let (modules, rejected) = load_verified(&files);
    let load_ns = t.elapsed().as_nanos() as u64;
    let runs = if benching { 3 } else { 1 };
    // `MOVEJIT_BASELINE_ABOVE=N`: the tier policy to measure
    // (`JitConfig::baseline_above`; 0 = everything on the baseline tier);
    // `MOVEJIT_UNCHECKED_COPY_MAX_LEN=N`: which functions are split
    // (`JitConfig::unchecked_copy_max_len`; 0 = none).
    let baseline_above = std::env::var("MOVEJIT_BASELINE_ABOVE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(JitConfig::default().baseline_above);
    for mode in CompileMode::ALL {
        let mut reports: Vec<CorpusCompile> = (0..runs)
            .map(|_| {
                let unchecked_copy_max_len = std::env::var("MOVEJIT_UNCHECKED_COPY_MAX_LEN")
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(JitConfig::default().unchecked_copy_max_len);
                let config = JitConfig { baseline_above, unchecked_copy_max_len, ..mode.config() };
                let mut r = compile_all_with(modules.clone(), config).unwrap_or_else(|e| panic!("{e}"));
                r.rejected_modules = rejected.clone();
                r
            })
            .collect();
        reports.sort_by_key(|r| r.total_ns());
        println!();
        println!(
            "== {}: compile cost of {} ({} files; {runs} run(s), median shown)",
            mode.name(),
            dir.display(),
            files.len()
        );
        if runs > 1 {
            println!("totals of the runs: {}", reports.iter().map(|r| ms(r.total_ns())).collect::<Vec<_>>().join(", "));
        }
        report(&reports[reports.len() / 2], load_ns);
    }
}
