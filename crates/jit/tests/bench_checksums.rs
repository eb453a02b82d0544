//! The shared benchmarks (`../shared/bench`): every benchmark the JIT can
//! compile today must return the expected checksum, at every size; prints
//! JIT time per call next to the real Aptos VM's figure.

use movejit_engine::runtime::{GasMeter, InMemoryStorage, ModuleId};
use movejit_engine::{Engine, EngineConfig};
use movejit_format::{decode_module, AccountAddress};
use movejit_jit::{CompileError, ExecError, JitConfig, JitEngine, Outcome};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Instant;

#[test]
fn compiled_benchmarks_return_their_checksums() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench");
    let text = std::fs::read_to_string(dir.join("benchmarks.jsonl")).expect("manifest");
    let (mut ran, mut skipped) = (Vec::new(), Vec::new());
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let b: Value = serde_json::from_str(line).unwrap();
        let name = b["name"].as_str().unwrap();
        let mut e = JitEngine::new(JitConfig::default()).unwrap();
        let mut storage = InMemoryStorage::default();
        for m in b["modules"].as_array().unwrap() {
            let bytes = std::fs::read(dir.join(m.as_str().unwrap())).unwrap();
            let module = decode_module(&bytes).unwrap();
            storage.publish(ModuleId::new(*module.address(), module.name()), bytes);
            e.add_module(module).unwrap();
        }
        let interp = Engine::new(EngineConfig::aptos());
        let f: Vec<&str> = b["function"].as_str().unwrap().split("::").collect();
        let m = e.module_index(&AccountAddress::parse(f[0]).unwrap(), f[1]).unwrap();
        let key = e.instance_key(m, f[2], &[]).unwrap();
        if let Err(err) = e.compile(&key) {
            assert!(matches!(err, CompileError::Unsupported(_)), "{name}: {err}");
            skipped.push(format!("{name} ({err})"));
            continue;
        }
        let mut sizes = vec![b.clone()];
        sizes.extend(b["scaling"].as_array().cloned().unwrap_or_default());
        for s in sizes {
            let args: Vec<Vec<u8>> =
                s["args"].as_array().unwrap().iter().map(|a| hex::decode(a.as_str().unwrap()).unwrap()).collect();
            let want: Vec<String> =
                s["expect_returns"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect();
            let mut times = Vec::new();
            for _ in 0..3 {
                let t = Instant::now();
                let out: Outcome = match e.execute(&key, &args, None) {
                    Ok(o) => o,
                    Err(ExecError::Compile(err)) => panic!("{name}: {err}"),
                    Err(err) => panic!("{name}: {err}"),
                };
                times.push(t.elapsed().as_secs_f64() * 1e3);
                let got: Vec<String> = out.returns.iter().map(hex::encode).collect();
                assert_eq!(got, want, "{name} {:?}: {:?}", s["arg_values"], out);
            }
            times.sort_by(|a, b| a.partial_cmp(b).unwrap());
            // The reference interpreter on the same call, once (same checksum).
            let t = Instant::now();
            let mut session = interp.new_session(&storage);
            let r = session
                .execute_function(
                    &ModuleId::new(AccountAddress::parse(f[0]).unwrap(), f[1]),
                    f[2],
                    &[],
                    &args,
                    &mut GasMeter::unmetered(),
                )
                .expect("interpreter runs the benchmark");
            let interp_ms = t.elapsed().as_secs_f64() * 1e3;
            assert_eq!(r.returns.iter().map(hex::encode).collect::<Vec<_>>(), want, "{name}: interpreter");
            let aptos = s["aptos_vm_exec_ns_median"].as_f64().unwrap_or(f64::NAN) / 1e6;
            ran.push(format!(
                "{name} {}: JIT {:.3} ms, interpreter {:.1} ms, Aptos VM {:.1} ms",
                s["arg_values"], times[1], interp_ms, aptos
            ));
        }
    }
    for r in &ran {
        println!("{r}");
    }
    println!("not compiled yet: {}", skipped.len());
    for s in &skipped {
        println!("  {s}");
    }
    assert!(!ran.is_empty());
}
