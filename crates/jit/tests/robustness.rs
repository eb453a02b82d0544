//! Compiling code that breaks the verifier's guarantees must give a typed
//! error (or compile), never panic: every function of the conformance
//! modules, with its code mutated many ways, goes through the compiler.

use movejit_format::{decode_module, Bytecode, CompiledModule};
use movejit_jit::{JitConfig, JitEngine};
use std::path::PathBuf;

struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(code: &mut Vec<Bytecode>, rng: &mut XorShift) {
    let n = code.len();
    match rng.below(5) {
        0 if n > 1 => {
            code.remove(rng.below(n));
        }
        1 => {
            let a = rng.below(n);
            let b = rng.below(n);
            code.swap(a, b);
        }
        2 => {
            let ins = code[rng.below(n)].clone();
            code.insert(rng.below(n + 1), ins);
        }
        3 => {
            let t = rng.below(n + 2) as u16;
            code[rng.below(n)] = match rng.below(3) {
                0 => Bytecode::Branch(t),
                1 => Bytecode::BrTrue(t),
                _ => Bytecode::BrFalse(t),
            };
        }
        _ => {
            let l = rng.below(6) as u8;
            code[rng.below(n)] = match rng.below(4) {
                0 => Bytecode::StLoc(l),
                1 => Bytecode::CopyLoc(l),
                2 => Bytecode::Pop,
                _ => Bytecode::LdConst(movejit_format::ConstantPoolIndex(rng.below(4) as u16)),
            };
        }
    }
}

#[test]
fn mutated_code_never_panics_the_compiler() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/aptos/modules");
    let files =
        ["int_ops/int_ops.mv", "uint_ops/uint_ops.mv", "casts/casts.mv", "flow/flow.mv", "recursion/recursion.mv"];
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let (mut compiled, mut rejected) = (0usize, 0usize);
    let mut reasons = std::collections::BTreeMap::new();
    for f in files {
        let original: CompiledModule = decode_module(&std::fs::read(dir.join(f)).unwrap()).unwrap();
        for round in 0..6 {
            let mut m = original.clone();
            for fd in m.function_defs.iter_mut() {
                if let Some(code) = fd.code.as_mut() {
                    for _ in 0..=round {
                        mutate(&mut code.code, &mut rng);
                    }
                }
            }
            let mut e = JitEngine::new(JitConfig::default()).unwrap();
            let mi = e.add_module(m.clone()).unwrap();
            for fdef in 0..m.function_defs.len() {
                let name = m.function_name(movejit_format::FunctionDefinitionIndex(fdef as u16)).to_string();
                let key = e.instance_key(mi, &name, &[]).unwrap();
                match e.compile(&key) {
                    Ok(()) => compiled += 1,
                    Err(err) => {
                        rejected += 1;
                        let kind = format!("{err}");
                        let kind: String = kind.chars().take(60).collect();
                        *reasons.entry(kind).or_insert(0usize) += 1;
                    }
                }
            }
        }
    }
    println!("mutated functions: {compiled} compiled, {rejected} rejected with a typed error");
    for (r, n) in &reasons {
        println!("  {n:5} {r}");
    }
    let panics: usize = reasons.iter().filter(|(r, _)| r.contains("panicked")).map(|(_, n)| n).sum();
    assert_eq!(panics, 0, "the code generator panicked on some input");
    assert!(rejected > 100, "mutations should break most functions");
}
