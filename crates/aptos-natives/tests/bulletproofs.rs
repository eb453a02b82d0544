//! Bulletproofs range-proof verification with the vectors of the framework's
//! own Move tests (`ristretto255_bulletproofs.move`: commitments A and B,
//! the 64-bit proof of A and the batch proof of A and B under the
//! `AptosBulletproofs` tag, mutated proofs, unsupported ranges and batch
//! sizes, empty proofs): called directly over a session's point store, and
//! through `verify_range_proof_pedersen` on the tree and flat interpreters
//! and the JIT.

mod common;

use common::framework::{bool_bcs, bytes_arg, Framework, Outcome};
use movejit_aptos_natives::{aptos_registry, FRAMEWORK};
use movejit_engine::runtime::natives::{with_extensions, NativeContext, NativeExtensions, TypeInfo};
use movejit_engine::runtime::{
    GasMeter, Layout, Memory, RefRoot, Reference, StatusCode, Type, Value, VmError, VmResult,
};

const A_COMM: &str = "0a665260a4e42e575882c2cdcb3d0febd6cf168834f6de1e9e61e7b2e53dbf14";
const B_COMM: &str = "748c244d880a1de3970a3d01670a04db6b74b9741bfec8732e512312384a6515";
const A_RANGE_PROOF_PEDERSEN: &str = "d8d422d3fb9511d1942b78e3ec1a8c82fe1c01a0a690c55a4761e7e825633a753cca816667d2cbb716fe04a9c199cad748c2d4e59de4ed04fedf5f04f4341a74ae75b63c1997fd65d5fb3a8c03ad8771abe2c0a4f65d19496c11d948d6809503eac4d996f2c6be4e64ebe2df31102c96f106695bdf489dc9290c93b4d4b5411fb6298d0c33afa57e2e1948c38ef567268a661e7b1c099272e29591e717930a06a2c6e0e2d56aedea3078fd59334634f1a4543069865409eba074278f191039083102a9a0621791a9be09212a847e22061e083d7a712b05bca7274b25e4cb1201c679c4957f0842d7661fa1d3f5456a651e89112628b456026f8ad3a7abeaba3fec8031ec8b0392c0aa6c96205f7b21b0c2d6b5d064bd5bd1a1d91c41625d910688fa0dca35ec0f0e31a45792f8d6a330be970a22e1e0773111a083de893c89419ee7de97295978de90bcdf873a2826746809e64f9143417dbed09fa1c124e673febfed65c137cc45fabda963c96b64645802d1440cba5e58717e539f55f3321ab0c0f60410fba70070c5db500fee874265a343a2a59773fd150bcae09321a5166062e176e2e76bef0e3dd1a9250bcb7f4c971c10f0b24eb2a94e009b72c1fc21ee4267881e27b4edba8bed627ddf37e0c53cd425bc279d0c50d154d136503e54882e9541820d6394bd52ca2b438fd8c517f186fec0649c4846c4e43ce845d80e503dee157ce55392188039a7efc78719107ab989db8d9363b9dfc1946f01a84dbca5e742ed5f30b07ac61cf17ce2cf2c6a49d799ed3968a63a3ccb90d9a0e50960d959f17f202dd5cf0f2c375a8a702e063d339e48c0227e7cf710157f63f13136d8c3076c672ea2c1028fc1825366a145a4311de6c2cc46d3144ae3d2bc5808819b9817be3fce1664ecb60f74733e75e97ca8e567d1b81bdd4c56c7a340ba00";
const AB_BATCH_RANGE_PROOF_PEDERSEN: &str = "103086c56ead10712514d2807c5605cb5f3a090566196549b5f03bedd7c1f450b4619bca9b00f87b2e039e844c24f9f2512901eea7f8f322f218f58c37186e1bd40ae74942f69b18f6806a536b2ab0793ab8e646eafc6e31d5219545dfcbb21334230c4e063e682d1f37fdfe7258d1735af1ba4764ca182803ef4566ddd386143550b83b8d686514988ee05bb7b4180f3b296a0a9711976365b678b537e2190c49cecded1d209ecec733e5cb85d5427f1f2ef1a44ebac41fdbf822692bd68b012515065faab0611aaabe87c1facbe68e648f2e2a0de6e5e81490dfa178546d0e1ec7a7c7ee6eb1e72f0e62b6a81abf23d4e4f946e5c5b28ca287d7ee30c72667ec1203ea9314a4ef182e3ed8a49700cb2452c3765fd29611e2abb5d8aa1970387452cd473383707a0b8e2eb46ba6826654e03ba5f73b56a0ae30012dc723576e76b280339600decef76eda350232ee9e53b373d745b958a19c8b4e7133f4b846727dab188441bb7d2484a73a9a83c1c94e7bea0ea0253418d3d5a751e63f940106e597772d169a01d93b495d10c08725c5d8cdef24306a164a2e1fa1b19eb0217239bbc661e0f1ead2bf3ecc3f178b6b49c61aa2c45f4832ba9ebc2744b79b413081e824b0978cab1934d29760f77751450e409da17941ff693b7dbc0b45d0659aeca05e1e92572fcd4c4d5846e7963e25cce6d54fc4a963da031747695a8e2000469e22e682e1b3f141891121d189504db63b4ab40e0d4c59f0b945b8188b79f0eb4916723a757bcfc787863ff28c5555c8ad93df81bba7b2ff9c164e180331a8b24cff4a9de0d2a8b71f73d24521781f0ced1a064698af138c00160c87eb7ffca5ab1d9a1bec5144c648c5f51a6093dbe8ed88a2fcaab4d5412c60ebb25827d8cab48787f705c5781e2ecd82939d3b3f864c21701fcecbc57b196db7c055273e86ac654a24016abd8ba7c6e87610a0e1b70ff57378992b2d5d45c963829b0aa9323b0dde3f02382e583cb3733c187b46903ed629820ec8043a8c18df42dc0a";
/// The framework's Pedersen bases: the ristretto255 base point and `hash_to_point_base`.
const BASE_POINT: &str = "e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76";
const HASH_BASE_POINT: &str = "8c9240b456a9e6dc65c377a1048d745f94a08cdb7f44cbcd7b46f34048871134";
const DST: &[u8] = b"AptosBulletproofs";
/// `features::BULLETPROOFS_NATIVES`.
const BULLETPROOFS_NATIVES: u64 = 24;

fn hex(s: &str) -> Vec<u8> {
    hex::decode(s).expect("hex")
}

/// `proof` with its middle byte incremented (the framework tests' mutation).
fn mutated(proof: &str) -> Vec<u8> {
    let mut p = hex(proof);
    let mid = p.len() / 2;
    p[mid] = p[mid].wrapping_add(1);
    p
}

struct NoTypes;

impl TypeInfo for NoTypes {
    fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
        Err(VmError::invariant(format!("no layout for {ty}")))
    }
}

/// Calls native `0x1::module::function` with `args` on `mem`.
fn call(mem: &mut Memory, module: &str, function: &str, args: Vec<Value>) -> VmResult<Vec<Value>> {
    let registry = aptos_registry();
    let f = registry.get(&FRAMEWORK, module, function).unwrap_or_else(|| panic!("{module}::{function} registered"));
    let mut gas = GasMeter::unmetered();
    let mut cx = NativeContext { mem, gas: &mut gas, types: &NoTypes };
    f(&mut cx, &[], args)
}

fn point_ref(mem: &mut Memory, handle: u64) -> Value {
    mem.locals.push(Value::Struct(vec![Value::U64(handle)]));
    Value::Ref(Reference::new(RefRoot::Local(mem.locals.len() as u32 - 1)))
}

/// (commitments, proof, bits, batch, want: Ok(verifies) | Err(abort code))
type Row = (Vec<&'static str>, Vec<u8>, u64, bool, Result<bool, u64>);

#[test]
fn range_proofs_as_the_framework_tests_expect() {
    let rows: Vec<Row> = vec![
        (vec![A_COMM], hex(A_RANGE_PROOF_PEDERSEN), 64, false, Ok(true)),
        (vec![A_COMM], mutated(A_RANGE_PROOF_PEDERSEN), 64, false, Ok(false)),
        (vec![B_COMM], hex(A_RANGE_PROOF_PEDERSEN), 64, false, Ok(false)),
        (vec![A_COMM], hex(A_RANGE_PROOF_PEDERSEN), 32, false, Ok(false)),
        (vec![A_COMM], hex(A_RANGE_PROOF_PEDERSEN), 10, false, Err(0x01_0003)),
        (vec![A_COMM], vec![], 64, false, Err(0x01_0001)),
        (vec![A_COMM, B_COMM], hex(AB_BATCH_RANGE_PROOF_PEDERSEN), 64, true, Ok(true)),
        (vec![A_COMM, B_COMM], mutated(AB_BATCH_RANGE_PROOF_PEDERSEN), 64, true, Ok(false)),
        (vec![B_COMM, A_COMM], hex(AB_BATCH_RANGE_PROOF_PEDERSEN), 64, true, Ok(false)),
        (vec![A_COMM, B_COMM], hex(AB_BATCH_RANGE_PROOF_PEDERSEN), 10, true, Err(0x01_0003)),
        (vec![A_COMM, B_COMM, A_COMM], hex(AB_BATCH_RANGE_PROOF_PEDERSEN), 64, true, Err(0x01_0004)),
        (vec![A_COMM], vec![], 64, true, Err(0x01_0001)),
    ];
    for (comms, proof, bits, batch, want) in rows {
        let mut ext = NativeExtensions::new();
        let got = with_extensions(&mut ext, || -> VmResult<Vec<Value>> {
            let mut mem = Memory::default();
            let mut handles = Vec::new();
            for p in [BASE_POINT, HASH_BASE_POINT] {
                let r = call(&mut mem, "ristretto255", "point_decompress_internal", vec![Value::from_bytes(&hex(p))])?;
                handles.push(r[0].as_u64()?);
            }
            let val = point_ref(&mut mem, handles[0]);
            let rand = point_ref(&mut mem, handles[1]);
            let tail = [val, rand, Value::from_bytes(&proof), Value::U64(bits), Value::from_bytes(DST)];
            if batch {
                let c = Value::Vector(comms.iter().map(|c| Value::from_bytes(&hex(c))).collect());
                let r1 = call(
                    &mut mem,
                    "ristretto255_bulletproofs",
                    "verify_batch_range_proof_internal",
                    [vec![c.clone()], tail.to_vec()].concat(),
                );
                let r2 = call(
                    &mut mem,
                    "confidential_range_proofs",
                    "verify_batch_range_proof_internal",
                    [vec![c], tail.to_vec()].concat(),
                );
                assert_eq!(
                    r1.as_ref().map_err(|e| e.sub_status),
                    r2.as_ref().map_err(|e| e.sub_status),
                    "same native under both modules"
                );
                r1
            } else {
                call(
                    &mut mem,
                    "ristretto255_bulletproofs",
                    "verify_range_proof_internal",
                    [vec![Value::from_bytes(&hex(comms[0]))], tail.to_vec()].concat(),
                )
            }
        });
        let got = match got {
            Ok(v) => Ok(v == vec![Value::Bool(true)]),
            Err(e) if e.status == StatusCode::ABORTED => Err(e.sub_status.expect("code")),
            Err(e) => panic!("{e:?}"),
        };
        assert_eq!(got, want, "{} commitments, {bits} bits, batch {batch}", comms.len());
    }
}

const WRAPPER: &str = "
module 0xcafe::bulletproof_calls

public fun verify(comm: vector<u8>, proof: vector<u8>, bits: u64, dst: vector<u8>): bool
    local c: 0x1::ristretto255_pedersen::Commitment
    local p: 0x1::ristretto255_bulletproofs::RangeProof
    move_loc comm
    call 0x1::ristretto255_pedersen::new_commitment_from_bytes
    call 0x1::option::destroy_some<0x1::ristretto255_pedersen::Commitment>
    st_loc c
    move_loc proof
    call 0x1::ristretto255_bulletproofs::range_proof_from_bytes
    st_loc p
    borrow_loc c
    borrow_loc p
    move_loc bits
    move_loc dst
    call 0x1::ristretto255_bulletproofs::verify_range_proof_pedersen
    ret
";

#[test]
fn framework_range_proof_verification_agrees_on_every_executor() {
    let mut fw = Framework::with_wrapper(WRAPPER);
    fw.enable_features(&[BULLETPROOFS_NATIVES]);
    let u = |x: u64| x.to_le_bytes().to_vec();
    let rows: Vec<(&str, Vec<u8>, u64, Outcome)> = vec![
        (A_COMM, hex(A_RANGE_PROOF_PEDERSEN), 64, Ok(vec![bool_bcs(true)])),
        (A_COMM, mutated(A_RANGE_PROOF_PEDERSEN), 64, Ok(vec![bool_bcs(false)])),
        (B_COMM, hex(A_RANGE_PROOF_PEDERSEN), 64, Ok(vec![bool_bcs(false)])),
        // `test_unsupported_ranges`, `test_empty_range_proof`.
        (A_COMM, hex(A_RANGE_PROOF_PEDERSEN), 10, Err((StatusCode::ABORTED, Some(0x01_0003)))),
        (A_COMM, vec![], 64, Err((StatusCode::ABORTED, Some(0x01_0001)))),
    ];
    for (comm, proof, bits, want) in rows {
        let got = fw.call_everywhere(
            "0xcafe::bulletproof_calls::verify",
            &[bytes_arg(&hex(comm)), bytes_arg(&proof), u(bits), bytes_arg(DST)],
        );
        assert_eq!(got, want, "{bits} bits");
    }
    // Without the feature: invalid_state(E_NATIVE_FUN_NOT_AVAILABLE) (`test_bulletproof_feature_disabled`).
    let plain = Framework::with_wrapper(WRAPPER);
    let got = plain.call_everywhere(
        "0xcafe::bulletproof_calls::verify",
        &[bytes_arg(&hex(A_COMM)), bytes_arg(&hex(A_RANGE_PROOF_PEDERSEN)), u(64), bytes_arg(DST)],
    );
    assert_eq!(got, Err((StatusCode::ABORTED, Some(0x03_0007))));
}
