//! A function too big to compile cheaply (issue 16): 64,850 bytecode
//! instructions (`ld_u64 1; add` after `ld_u64 0`, in blocks of 2,000
//! pairs, as the verifier's per-block push limit wants). On every executor,
//! unmetered and metered, the call returns the interpreter's result (or,
//! on `jit`, reports that it did not compile) after a bounded compile: the
//! lowering stops at `MAX_IR_INSTS` IR instructions instead of handing a
//! million of them to Cranelift (measured before: 6-18 s and 350-620 MB).
//! With a compile budget, the budget holds.

use movejit_engine::runtime::{AccountAddress, CostTable, GasMeter, InMemoryStorage, ModuleId};
use movejit_engine::{new_engine_with_cache, EngineConfig, ExecutorKind, JitOptions, JIT_NOT_COMPILED};
use std::time::{Duration, Instant};

const PAIRS: usize = 32_400;

fn big_module() -> Vec<u8> {
    let mut src = String::from("module 0xcafe::big\npublic fun f(): u64\n    local acc: u64\n    ld_u64 0\n");
    for i in 0..PAIRS {
        src.push_str("    ld_u64 1\n    add\n");
        if i % 2000 == 1999 {
            src.push_str(&format!("    st_loc acc\n    branch L{i}\nL{i}: move_loc acc\n"));
        }
    }
    src.push_str("    ret\n");
    match movejit_masm::assemble(&src) {
        Ok(movejit_masm::Assembled::Module(m)) => {
            assert!(m.function_defs[0].code.as_ref().is_some_and(|c| c.code.len() > 64_000));
            movejit_format::serialize_module(&m)
        }
        Ok(_) => panic!("expected a module"),
        Err(e) => panic!("assemble: {e}"),
    }
}

/// The peak resident memory of this process (Linux), in bytes.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

#[test]
fn a_65k_instruction_function_costs_a_bounded_compile_on_every_executor() {
    // One source of truth for the default, seen from both crates.
    assert_eq!(JitOptions::default().max_ir_insts, movejit_jit::MAX_IR_INSTS);
    let id = ModuleId::new(AccountAddress::from_u64(0xcafe), "big");
    let mut st = InMemoryStorage::default();
    st.publish(id.clone(), big_module());
    let want = (PAIRS as u64).to_le_bytes().to_vec();
    let budgets = [None, Some(Duration::from_millis(100))];
    for executor in [ExecutorKind::Interpreter, ExecutorKind::Auto, ExecutorKind::Jit] {
        for budget in budgets {
            for metered in [false, true] {
                let jit = JitOptions { compile_budget: budget, ..JitOptions::default() };
                let (engine, cache) = new_engine_with_cache(EngineConfig { executor, jit, ..EngineConfig::aptos() });
                let mut gas =
                    if metered { GasMeter::new(CostTable::default(), u64::MAX >> 8) } else { GasMeter::unmetered() };
                let t = Instant::now();
                let r = engine.new_session(&st).execute_function(&id, "f", &[], &[], &mut gas).map(|o| o.returns);
                let took = t.elapsed();
                let what = format!("{executor:?}, budget {budget:?}, metered {metered}");
                match (&r, executor) {
                    (Ok(rets), _) => assert_eq!(rets, &vec![want.clone()], "{what}"),
                    (Err(e), ExecutorKind::Jit) => {
                        assert!(e.message.as_deref().is_some_and(|m| m.starts_with(JIT_NOT_COMPILED)), "{what}: {e:?}")
                    }
                    (Err(e), _) => panic!("{what}: {e:?}"),
                }
                let compile = cache.map(|c| c.stats()).map_or(Duration::ZERO, |s| {
                    assert_eq!(s.compiled, 0, "{what}: too big to compile: {s:?}");
                    s.compile_time
                });
                println!("{what}: {took:?} in all, compile {compile:?}, peak RSS {:?} MB", peak_rss().map(|b| b >> 20));
                // Measured: a few ms of lowering; bounds far above it on a
                // loaded machine, far below the 6-18 s it took before.
                let bound = budget.map_or(Duration::from_millis(1500), |b| b + Duration::from_millis(50));
                assert!(compile <= bound, "{what}: compile {compile:?} over {bound:?}");
                assert!(took < Duration::from_secs(5), "{what}: {took:?}");
            }
        }
    }
    // Interpreting it holds tens of MB; compiling it held 350-620 MB.
    if let Some(peak) = peak_rss() {
        assert!(peak < 256 << 20, "peak RSS {} MB", peak >> 20);
    }
}
