//! Times the tree and the flat interpreter side by side on the benchmarks
//! of `../shared/bench` (Aptos builds; `clob` needs the Aptos framework
//! natives of movejit-aptos-natives and is skipped here), checking every
//! result against the manifest's checksum.
//!
//! `cargo run --release -p movejit-interp --example interp_compare [ITERS] [FILTER...]`

use movejit_interp::runtime::{GasMeter, InMemoryStorage, ModuleId, Type};
use movejit_interp::{Engine, EngineConfig, InterpreterKind};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn shared() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let mut argv = std::env::args().skip(1);
    let iters: usize = argv.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    let filter: Vec<String> = argv.collect();
    let bench = shared().join("bench");
    let manifest = std::fs::read_to_string(bench.join("benchmarks.jsonl")).expect("bench manifest");
    let kinds = [InterpreterKind::Tree, InterpreterKind::Flat];
    let engines: Vec<Engine> =
        kinds.iter().map(|k| Engine::new(EngineConfig { interpreter: *k, ..EngineConfig::aptos() })).collect();
    println!("{:<18} {:>12} {:>12} {:>8}  checksums", "benchmark", "tree ms", "flat ms", "tree/flat");
    let mut ratios = Vec::new();
    for line in manifest.lines().filter(|l| !l.trim().is_empty()) {
        let e: serde_json::Value = serde_json::from_str(line).expect("manifest line");
        let name = e["name"].as_str().unwrap_or("");
        if name == "clob" || (!filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str()))) {
            continue;
        }
        let mut storage = InMemoryStorage::default();
        for m in e["modules"].as_array().into_iter().flatten() {
            let bytes = std::fs::read(bench.join(m.as_str().unwrap_or(""))).expect("module");
            let cm = movejit_format::decode_module(&bytes).expect("decodes");
            storage.publish(ModuleId::new(*cm.address(), cm.name()), bytes);
        }
        let f = e["function"].as_str().unwrap_or("");
        let mut parts = f.rsplitn(3, "::");
        let (fname, mname, addr) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let module = ModuleId::new(movejit_format::AccountAddress::parse(addr).expect("address"), mname);
        let ty_args: Vec<Type> =
            e["type_args"].as_array().into_iter().flatten().filter_map(|t| Type::parse_tag(t.as_str()?)).collect();
        let hexes = |v: &serde_json::Value| -> Vec<Vec<u8>> {
            v.as_array()
                .into_iter()
                .flatten()
                .map(|h| hex::decode(h.as_str().unwrap_or("")).unwrap_or_default())
                .collect()
        };
        let (args, expected) = (hexes(&e["args"]), hexes(&e["expect_returns"]));
        let run = |engine: &Engine| -> (Duration, bool) {
            let mut session = engine.new_session(&storage);
            let mut gas = GasMeter::unmetered();
            let t = Instant::now();
            let r = session.execute_function(&module, fname, &ty_args, &args, &mut gas);
            let d = t.elapsed();
            (d, r.is_ok_and(|r| r.returns == expected))
        };
        // Warm up both (module loading, preparation), then alternate.
        let mut ok = [run(&engines[0]).1, run(&engines[1]).1];
        let mut times = [Vec::new(), Vec::new()];
        for _ in 0..iters {
            for (i, engine) in engines.iter().enumerate() {
                let (d, good) = run(engine);
                times[i].push(d);
                ok[i] &= good;
            }
        }
        let (t, fl) = (median(std::mem::take(&mut times[0])), median(std::mem::take(&mut times[1])));
        let ratio = t.as_secs_f64() / fl.as_secs_f64();
        ratios.push(ratio);
        println!(
            "{name:<18} {:>12.2} {:>12.2} {:>8.2}x  tree {} flat {}",
            t.as_secs_f64() * 1e3,
            fl.as_secs_f64() * 1e3,
            ratio,
            if ok[0] { "ok" } else { "WRONG" },
            if ok[1] { "ok" } else { "WRONG" }
        );
    }
    if !ratios.is_empty() {
        let geo = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
        println!("geomean tree/flat: {geo:.2}x over {} benchmarks", ratios.len());
    }
}
