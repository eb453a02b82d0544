//! Compile cost against function size (issue 16): a straight-line function
//! of N × (`ld_u64 1; add`) compiled by a fresh JIT engine, unmetered and
//! metered, on each tier (optimizing only, baseline only, the
//! default policy); compile time, machine code and bytes per bytecode instruction.
//!
//! `cargo bench -p movejit-benches --bench long_function [-- PAIRS...]`
//! (default 500, 2000, 8000 pairs: 1k, 4k, 16k instructions). Under
//! `cargo test --benches` it compiles one small function.

use movejit_benches::compile_cost::{compile_straight_line, CompileMode};
use movejit_benches::criterion_filter;
use movejit_jit::{JitConfig, BASELINE_ABOVE};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let benching = args.iter().any(|a| a == "--bench");
    let mut sizes: Vec<usize> = criterion_filter(&args).iter().filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = if benching { vec![500, 2000, 8000] } else { vec![100] };
    }
    println!(
        "{:<20} {:<10} {:>8} {:>12} {:>12} {:>10}  result",
        "mode", "tier", "instrs", "compile", "code", "B/instr"
    );
    let tiers = [("optimizing", usize::MAX), ("baseline", 0), ("default", BASELINE_ABOVE)];
    for mode in [CompileMode::Session, CompileMode::SessionMetered] {
        for (tier, baseline_above) in tiers {
            for &pairs in &sizes {
                let config = JitConfig { baseline_above, ..mode.config() };
                let r = compile_straight_line(pairs, config).unwrap_or_else(|e| panic!("{e}"));
                println!(
                    "{:<20} {:<10} {:>8} {:>9.1} ms {:>9.1} KB {:>10.1}  {}",
                    mode.name(),
                    tier,
                    r.instructions,
                    r.ns as f64 / 1e6,
                    r.code_bytes as f64 / 1e3,
                    r.code_bytes as f64 / r.instructions as f64,
                    match &r.result {
                        Ok(()) => "compiled".to_string(),
                        Err(e) => e.clone(),
                    }
                );
            }
        }
    }
}
