//! Malformed input is normal input: every cryptography native given
//! arbitrary bytes (deterministic pseudo-random, lengths around and far
//! from the valid ones) returns a value or a typed error, never panics,
//! and gives the same answer twice.

use movejit_aptos_natives::{aptos_registry, FRAMEWORK};
use movejit_engine::runtime::natives::{with_extensions, NativeContext, NativeExtensions, TypeInfo};
use movejit_engine::runtime::{GasMeter, Layout, Memory, RefRoot, Reference, Type, Value, VmError, VmResult};

struct NoTypes;

impl TypeInfo for NoTypes {
    fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
        Err(VmError::invariant(format!("no layout for {ty}")))
    }
}

/// xorshift64*: reproducible bytes without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
    fn len(&mut self, valid: usize) -> usize {
        match self.next() % 6 {
            0 => 0,
            1 => valid,
            2 => valid.saturating_sub(1),
            3 => valid + 1,
            4 => (self.next() % 700) as usize,
            _ => valid * (1 + (self.next() % 3) as usize) + (self.next() % 5) as usize,
        }
    }
}

/// Runs `module::function` on `args` with `mem`, twice (in fresh
/// extensions), and checks both runs agree.
fn run(module: &str, function: &str, make: &dyn Fn(&mut Memory) -> Vec<Value>) -> VmResult<Vec<Value>> {
    let registry = aptos_registry();
    let f = registry.get(&FRAMEWORK, module, function).unwrap_or_else(|| panic!("{module}::{function}"));
    let once = || {
        let mut ext = NativeExtensions::new();
        with_extensions(&mut ext, || {
            let mut mem = Memory::default();
            let mut gas = GasMeter::unmetered();
            // Two points in the session's store, for natives that take point handles.
            for _ in 0..2 {
                let setup = registry.get(&FRAMEWORK, "ristretto255", "point_identity_internal").expect("identity");
                let mut cx = NativeContext { mem: &mut mem, gas: &mut gas, types: &NoTypes };
                setup(&mut cx, &[], vec![]).expect("identity");
            }
            let args = make(&mut mem);
            let mut cx = NativeContext { mem: &mut mem, gas: &mut gas, types: &NoTypes };
            f(&mut cx, &[], args)
        })
    };
    let (a, b) = (once(), once());
    assert_eq!(
        a.as_ref().map_err(|e| (e.status, e.sub_status)),
        b.as_ref().map_err(|e| (e.status, e.sub_status)),
        "{function} twice"
    );
    a
}

fn point_ref(mem: &mut Memory, handle: u64) -> Value {
    mem.locals.push(Value::Struct(vec![Value::U64(handle)]));
    Value::Ref(Reference::new(RefRoot::Local(mem.locals.len() as u32 - 1)))
}

#[test]
fn crypto_natives_never_panic_on_arbitrary_bytes() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // (module, function, valid lengths of its byte arguments)
    let byte_natives: &[(&str, &str, &[usize])] = &[
        ("ed25519", "public_key_validate_internal", &[32]),
        ("ed25519", "signature_verify_strict_internal", &[64, 32, 16]),
        ("multi_ed25519", "public_key_validate_internal", &[97]),
        ("multi_ed25519", "public_key_validate_v2_internal", &[97]),
        ("multi_ed25519", "signature_verify_strict_internal", &[132, 97, 16]),
        ("bls12381", "validate_pubkey_internal", &[48]),
        ("bls12381", "signature_subgroup_check_internal", &[96]),
        ("bls12381", "verify_normal_signature_internal", &[96, 48, 16]),
        ("bls12381", "verify_multisignature_internal", &[96, 48, 16]),
        ("bls12381", "verify_signature_share_internal", &[96, 48, 16]),
        ("bls12381", "verify_proof_of_possession_internal", &[48, 96]),
        ("ristretto255", "point_is_canonical_internal", &[32]),
        ("ristretto255", "point_decompress_internal", &[32]),
        ("ristretto255", "new_point_from_sha512_internal", &[64]),
        ("ristretto255", "scalar_is_canonical_internal", &[32]),
        ("ristretto255", "scalar_from_sha512_internal", &[64]),
        ("ristretto255", "scalar_reduced_from_32_bytes_internal", &[32]),
        ("ristretto255", "scalar_uniform_from_64_bytes_internal", &[64]),
        ("ristretto255", "new_point_from_64_uniform_bytes_internal", &[64]),
        ("consensus_config", "validator_txn_enabled_internal", &[200]),
    ];
    let mut outcomes = 0;
    for (module, function, lens) in byte_natives {
        for _ in 0..60 {
            let args: Vec<Vec<u8>> = lens
                .iter()
                .map(|&l| {
                    let n = rng.len(l);
                    rng.bytes(n)
                })
                .collect();
            let _ = run(module, function, &|_| args.iter().map(|a| Value::from_bytes(a)).collect());
            outcomes += 1;
        }
    }
    // secp256k1: recovery ids around 0..=3.
    for _ in 0..60 {
        let (m, s) = (rng.len(32), rng.len(64));
        let (msg, sig, rid) = (rng.bytes(m), rng.bytes(s), (rng.next() % 6) as u8);
        let _ = run("secp256k1", "ecdsa_recover_internal", &|_| {
            vec![Value::from_bytes(&msg), Value::U8(rid), Value::from_bytes(&sig)]
        });
        outcomes += 1;
    }
    // Bulletproofs over the two stored points, any proof bytes, bit lengths and batch sizes.
    for _ in 0..80 {
        let n = rng.len(672);
        let proof = rng.bytes(n);
        let bits = [8u64, 16, 32, 64, 10, 0][(rng.next() % 6) as usize];
        let comms: Vec<Vec<u8>> =
            (0..[1usize, 2, 3, 4, 16][(rng.next() % 5) as usize]).map(|_| rng.bytes(32)).collect();
        let tail = |mem: &mut Memory| {
            vec![
                point_ref(mem, 0),
                point_ref(mem, 1),
                Value::from_bytes(&proof),
                Value::U64(bits),
                Value::from_bytes(b"AptosBulletproofs"),
            ]
        };
        let _ = run("ristretto255_bulletproofs", "verify_range_proof_internal", &|mem| {
            [vec![Value::from_bytes(&comms[0])], tail(mem)].concat()
        });
        let _ = run("ristretto255_bulletproofs", "verify_batch_range_proof_internal", &|mem| {
            [vec![Value::Vector(comms.iter().map(|c| Value::from_bytes(c)).collect())], tail(mem)].concat()
        });
        outcomes += 2;
    }
    // BLS aggregation over arbitrary keys / signatures.
    for _ in 0..40 {
        let k = (rng.next() % 4) as usize;
        let items: Vec<Value> = (0..k)
            .map(|_| {
                let n = rng.len(48);
                Value::Struct(vec![Value::from_bytes(&rng.bytes(n))])
            })
            .collect();
        let _ = run("bls12381", "aggregate_pubkeys_internal", &|_| vec![Value::Vector(items.clone())]);
        let _ = run("bls12381", "aggregate_signatures_internal", &|_| vec![Value::Vector(items.clone())]);
        outcomes += 2;
    }
    eprintln!("crypto natives run on arbitrary bytes without a panic: {outcomes} inputs, each twice");
}
