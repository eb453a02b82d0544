//! Times the interpreter on shared/bench/benchmarks.jsonl (reference sizes)
//! and prints ms per call (median of 5) next to the Aptos VM's figure.
//! Time is the thread's CPU time (Linux `/proc/thread-self/schedstat`) so a
//! loaded machine distorts it less; wall time elsewhere.
//! `cargo run --release -p movejit-interp --example bench [NAME...]`

use movejit_interp::runtime::{GasMeter, InMemoryStorage, ModuleId, Type};
use movejit_interp::{Engine, EngineConfig};
use serde_json::Value as Json;
use std::path::PathBuf;
use std::time::Instant;

/// Nanoseconds this thread has run on a CPU, if the kernel says.
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

fn main() {
    let mut root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    root.pop();
    root.pop();
    let dir = root.join("../shared/bench");
    let only: Vec<String> = std::env::args().skip(1).collect();
    let text = std::fs::read_to_string(dir.join("benchmarks.jsonl")).expect("benchmarks.jsonl");
    let engine = Engine::new(EngineConfig::aptos());
    println!("{:<20} {:>10} {:>12} {:>8}  result", "benchmark", "interp ms", "Aptos VM ms", "ratio");
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let b: Json = serde_json::from_str(line).expect("json");
        let name = b["name"].as_str().unwrap_or("");
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let mut storage = InMemoryStorage::default();
        let mut ok = true;
        for m in b["modules"].as_array().into_iter().flatten() {
            let p = dir.join(m.as_str().unwrap_or(""));
            let bytes = std::fs::read(&p).unwrap_or_default();
            match movejit_format::decode_module(&bytes) {
                Ok(cm) => storage.publish(ModuleId::new(*cm.address(), cm.name()), bytes),
                Err(e) => {
                    println!("{name:<20} cannot decode {}: {e}", p.display());
                    ok = false;
                }
            }
        }
        if !ok {
            continue;
        }
        let f = b["function"].as_str().unwrap_or("");
        let mut parts = f.rsplitn(3, "::");
        let fname = parts.next().unwrap_or("");
        let mname = parts.next().unwrap_or("");
        let addr = parts.next().and_then(movejit_format::AccountAddress::parse).unwrap_or_default();
        let module = ModuleId::new(addr, mname);
        let ty_args: Vec<Type> = b["type_args"].as_array().into_iter().flatten().filter_map(|t| t.as_str().and_then(Type::parse_tag)).collect();
        let args: Vec<Vec<u8>> = b["args"].as_array().into_iter().flatten().map(|a| hex::decode(a.as_str().unwrap_or("")).unwrap_or_default()).collect();
        let expect: Vec<String> = b["expect_returns"].as_array().into_iter().flatten().filter_map(|x| x.as_str().map(String::from)).collect();
        let mut times = Vec::new();
        let mut verdict = String::new();
        for _ in 0..5 {
            let mut session = engine.new_session(&storage);
            let mut gas = GasMeter::unmetered();
            let (t0, c0) = (Instant::now(), cpu_ns());
            let r = session.execute_function(&module, fname, &ty_args, &args, &mut gas);
            let wall = t0.elapsed().as_secs_f64() * 1e3;
            times.push(match (c0, cpu_ns()) {
                (Some(a), Some(b)) => (b - a) as f64 / 1e6,
                _ => wall,
            });
            verdict = match r {
                Ok(r) if r.returns.iter().map(hex::encode).collect::<Vec<_>>() == expect => "ok".into(),
                Ok(r) => format!("WRONG {:?}", r.returns.iter().map(hex::encode).collect::<Vec<_>>()),
                Err(e) => format!("ERROR {} {:?}", e.status, e.message),
            };
            if verdict != "ok" {
                break;
            }
        }
        times.sort_by(|a, b| a.total_cmp(b));
        let med = times[times.len() / 2];
        let aptos = b["aptos_vm_exec_ns_median"].as_f64().map(|n| n / 1e6);
        println!(
            "{name:<20} {med:>10.1} {:>12} {:>8}  {verdict}",
            aptos.map(|a| format!("{a:.1}")).unwrap_or("-".into()),
            aptos.map(|a| format!("{:.2}x", med / a)).unwrap_or("-".into())
        );
    }
}
