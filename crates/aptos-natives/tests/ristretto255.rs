//! `ristretto255` natives with the vectors of the framework's own Move tests
//! (`ristretto255.move`: scalar constants X, Y, A, B and their products,
//! sums and inverses, points A, B, A + B, hash-to-point and multi-scalar
//! results, the 10,000-point limit) and RFC 9496's encodings of small
//! multiples of the base point (Appendix A.1) and invalid encodings: called
//! directly, and through the framework's Move functions on the tree and
//! flat interpreters and the JIT (results and gas identical).

mod common;

use common::framework::{bytes_arg, Framework, Outcome};
use movejit_aptos_natives::{aptos_registry, run_transaction, FRAMEWORK};
use movejit_engine::runtime::natives::{NativeContext, NativeExtensions, TypeInfo};
use movejit_engine::runtime::{GasMeter, Layout, Memory, StatusCode, Type, Value, VmError, VmResult};

fn hex(s: &str) -> Vec<u8> {
    hex::decode(s).expect("hex")
}

// The framework's test constants.
const L_MINUS_ONE: &str = "ecd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010";
const ORDER_ELL: &str = "edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010";
const L_PLUS_ONE: &str = "eed3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010";
const L_PLUS_TWO: &str = "efd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010";
const ZERO: &str = "0000000000000000000000000000000000000000000000000000000000000000";
const ONE: &str = "0100000000000000000000000000000000000000000000000000000000000000";
const TWO: &str = "0200000000000000000000000000000000000000000000000000000000000000";
const X: &str = "4e5ab4345d4708845913b4641bc27d5252a585101bcc4244d449f4a879d9f204";
const X_INV: &str = "1cdc17fce0e9a5bbd9247e56bb016347bbba31edd5a9bb96d50bcd7a3f962a0f";
const Y: &str = "907633fe1c4b66a4a28d2dd7678386c353d0de5455d4fc9de8ef7ac31f35bb05";
const X_TIMES_Y: &str = "6c3374a1894f62210aaa2fe186a6f92ce0aa75c2779581c295fc08179a73940c";
const REDUCED_X_PLUS_2_TO_256_TIMES_X: &str = "d89ab38bd279024745639ed817ad3f64cc005b32db9939f91c521fc564a5c008";
const REDUCED_2_256_MINUS_1: &str = "1c95988d7431ecd670cf7d73f45befc6feffffffffffffffffffffffffffff0f";
const ALL_ONES: &str = "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff";
const A: &str = "1a0e978a90f6622d3747023f8ad8264da758aa1b88e040d1589e7b7f2376ef09";
const B: &str = "dbfd97afd38a06f0138d0527efb28ead5b7109b486465913bf3aa472a8ed4e0d";
const A_TIMES_B: &str = "2ab50e383d7c210f74d5387330735f18315112d10dfb98fcce1e2620c0c01402";
const A_PLUS_B: &str = "083839dd491e57c5743710c39a91d6e502cab3cf0e279ae417d91ff2cb633e07";
const A_TIMES_BASE_POINT: &str = "96d52d9262ee1e1aae79fbaee8c1d9068b0d01bf9a4579e618090c3d1088ae10";
const A_POINT: &str = "e87feda199d72b83de4f5b2d45d34805c57019c6c59c42cb70ee3d19aa996f75";
const B_POINT: &str = "fa0b3624b081c62f364d0b2839dcc76d7c3ab0e27e31beb2b9ed766575f28e76";
const A_PLUS_B_POINT: &str = "70cf3753475b9ff33e2f84413ed6b5052073bccc0a0a81789d3e5675dc258056";
const BASE_POINT: &str = "e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76";
/// `a * A_POINT + b * BASE_POINT` (`test_basepoint_double_mul`).
const BASEPOINT_DOUBLE_MUL: &str = "be5d615d8b8f996723cdc6e1895b8b6d312cc75d1ffb0259873b99396a38c05a";
/// `sum sha512-scalar(i) * sha512-point(i)` for i in "1".."5" (`test_multi_scalar_mul_many`).
const MSM_MANY: &str = "c4a98fbe6bd0f315a0c150858aec8508be397443093e955ef982e299c1318928";
const SHA512_MSG: &str = "To really appreciate architecture, you may even need to commit a murder";
const SHA512_POINT: &str = "baaa91eb43e5e2f12ffc96347e14bc458fdb1772b2232b08977ee61ea9f84e31";
const UNIFORM_64: &str = "baaa91eb43e5e2f12ffc96347e14bc458fdb1772b2232b08977ee61ea9f84e31e87feda199d72b83de4f5b2d45d34805c57019c6c59c42cb70ee3d19aa996f75";
const UNIFORM_64_POINT: &str = "4a8e429f906478654232d7ae180ad60854754944ac67f38e20d8fa79e4b7d71e";

/// RFC 9496 A.1: `i * B` for i in 0..16.
const SMALL_MULTIPLES: [&str; 16] = [
    "0000000000000000000000000000000000000000000000000000000000000000",
    "e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76",
    "6a493210f7499cd17fecb510ae0cea23a110e8d5b901f8acadd3095c73a3b919",
    "94741f5d5d52755ece4f23f044ee27d5d1ea1e2bd196b462166b16152a9d0259",
    "da80862773358b466ffadfe0b3293ab3d9fd53c5ea6c955358f568322daf6a57",
    "e882b131016b52c1d3337080187cf768423efccbb517bb495ab812c4160ff44e",
    "f64746d3c92b13050ed8d80236a7f0007c3b3f962f5ba793d19a601ebb1df403",
    "44f53520926ec81fbd5a387845beb7df85a96a24ece18738bdcfa6a7822a176d",
    "903293d8f2287ebe10e2374dc1a53e0bc887e592699f02d077d5263cdd55601c",
    "02622ace8f7303a31cafc63f8fc48fdc16e1c8c8d234b2f0d6685282a9076031",
    "20706fd788b2720a1ed2a5dad4952b01f413bcf0e7564de8cdc816689e2db95f",
    "bce83f8ba5dd2fa572864c24ba1810f9522bc6004afe95877ac73241cafdab42",
    "e4549ee16b9aa03099ca208c67adafcafa4c3f3e4e5303de6026e3ca8ff84460",
    "aa52e000df2e16f55fb1032fc33bc42742dad6bd5a8fc0be0167436c5948501f",
    "46376b80f409b29dc2b5f6f0c52591990896e5716f41477cd30085ab7f10301e",
    "e0c418f7c8d9c4cdd7395b93ea124f3ad99021bb681dfc3302a9d99a2e53e64e",
];

/// Encodings no canonical point has: s >= p, s negative (odd), high bit set.
const BAD_ENCODINGS: [&str; 4] = [
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "0100000000000000000000000000000000000000000000000000000000000000",
    "00ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
];

struct NoTypes;

impl TypeInfo for NoTypes {
    fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
        Err(VmError::invariant(format!("no layout for {ty}")))
    }
}

/// Calls native `0x1::ristretto255::function` on a fresh memory (points go
/// to the installed extensions, if any).
fn native(function: &str, args: Vec<Value>) -> VmResult<Vec<Value>> {
    let registry = aptos_registry();
    let f = registry.get(&FRAMEWORK, "ristretto255", function).unwrap_or_else(|| panic!("{function} registered"));
    let mut mem = Memory::default();
    let mut gas = GasMeter::unmetered();
    let mut cx = NativeContext { mem: &mut mem, gas: &mut gas, types: &NoTypes };
    f(&mut cx, &[], args)
}

fn bytes(v: &Value) -> String {
    hex::encode(v.to_bytes().expect("bytes"))
}

fn abort_code(r: &VmResult<Vec<Value>>) -> Option<u64> {
    match r {
        Err(e) if e.status == StatusCode::ABORTED => e.sub_status,
        _ => None,
    }
}

#[test]
fn scalar_natives_match_the_framework_tests() {
    let v = |s: &str| Value::from_bytes(&hex(s));
    // (native, arguments, result bytes)
    let rows: Vec<(&str, Vec<Value>, &str)> = vec![
        ("scalar_sub_internal", vec![v(ZERO), v(ONE)], L_MINUS_ONE),
        ("scalar_sub_internal", vec![v(TWO), v(ONE)], ONE),
        ("scalar_sub_internal", vec![v(ONE), v(TWO)], L_MINUS_ONE),
        ("scalar_add_internal", vec![v(L_MINUS_ONE), v(ONE)], ZERO),
        ("scalar_add_internal", vec![v(ONE), v(ONE)], TWO),
        ("scalar_add_internal", vec![v(A), v(B)], A_PLUS_B),
        ("scalar_mul_internal", vec![v(X), v(ONE)], X),
        ("scalar_mul_internal", vec![v(X), v(Y)], X_TIMES_Y),
        ("scalar_mul_internal", vec![v(A), v(B)], A_TIMES_B),
        ("scalar_invert_internal", vec![v(X)], X_INV),
        ("scalar_invert_internal", vec![v(ONE)], ONE),
        ("scalar_neg_internal", vec![v(ONE)], L_MINUS_ONE),
        ("scalar_from_u64_internal", vec![Value::U64(2)], TWO),
        ("scalar_from_u128_internal", vec![Value::U128(2)], TWO),
        ("scalar_reduced_from_32_bytes_internal", vec![v(L_PLUS_TWO)], TWO),
        ("scalar_reduced_from_32_bytes_internal", vec![v(ALL_ONES)], REDUCED_2_256_MINUS_1),
        (
            "scalar_uniform_from_64_bytes_internal",
            vec![Value::from_bytes(&[hex(X), hex(X)].concat())],
            REDUCED_X_PLUS_2_TO_256_TIMES_X,
        ),
        // B_SCALAR is sha512-to-scalar of "bello!".
        ("scalar_from_sha512_internal", vec![Value::from_bytes(b"bello!")], B),
    ];
    for (f, args, want) in rows {
        let r = native(f, args.clone()).unwrap_or_else(|e| panic!("{f}: {e:?}"));
        assert_eq!(r.len(), 1, "{f}");
        assert_eq!(bytes(&r[0]), want, "{f}({args:?})");
    }
    // `test_scalar_from_sha2_512`.
    let text = "To really appreciate architecture, you may even need to commit a murder.\
        While the programs used for The Manhattan Transcripts are of the most extreme\
        nature, they also parallel the most common formula plot: the archetype of\
        murder. Other phantasms were occasionally used to underline the fact that\
        perhaps all architecture, rather than being about functional standards, is\
        about love and death.";
    let r = native("scalar_from_sha512_internal", vec![Value::from_bytes(text.as_bytes())]).expect("sha512");
    let want: [u8; 32] = [
        21, 88, 208, 252, 63, 122, 210, 152, 154, 38, 15, 23, 16, 167, 80, 150, 192, 221, 77, 226, 62, 25, 224, 148,
        239, 48, 176, 10, 185, 69, 168, 11,
    ];
    assert_eq!(r, vec![Value::from_bytes(&want)]);
    // `test_scalar_from_canonical_bytes`, `test_scalar_to_bytes`.
    let high_bit = "0000000000000000000000000000000000000000000000000000000000000080";
    for (s, ok) in [
        ("00", false),
        (ZERO, true),
        ("1010101010101010101010101010101010101010101010101010101010101010", false),
        (L_MINUS_ONE, true),
        (ORDER_ELL, false),
        (L_PLUS_ONE, false),
        (L_PLUS_TWO, false),
        (high_bit, false),
    ] {
        let r = native("scalar_is_canonical_internal", vec![Value::from_bytes(&hex(s))]).expect("is_canonical");
        assert_eq!(r, vec![Value::Bool(ok)], "{s}");
    }
    // Scalars the Move side never passes: invariant violations, not aborts.
    let r = native("scalar_add_internal", vec![v(ORDER_ELL), v(ONE)]);
    assert_eq!(r.map_err(|e| e.status), Err(StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR));
    let r = native("scalar_reduced_from_32_bytes_internal", vec![Value::from_bytes(&[1; 31])]);
    assert_eq!(r.map_err(|e| e.status), Err(StatusCode::INTERNAL_TYPE_ERROR));
}

#[test]
fn point_encodings_and_handles() {
    let mut ext = NativeExtensions::new();
    let r = run_transaction(&mut ext, || {
        for (i, enc) in SMALL_MULTIPLES.iter().enumerate() {
            let r = native("point_decompress_internal", vec![Value::from_bytes(&hex(enc))])?;
            assert_eq!(r, vec![Value::U64(i as u64), Value::Bool(true)], "{enc}");
            assert_eq!(
                native("point_is_canonical_internal", vec![Value::from_bytes(&hex(enc))])?,
                vec![Value::Bool(true)]
            );
        }
        for enc in BAD_ENCODINGS.iter().map(|e| hex(e)).chain([vec![0u8; 31], vec![0u8; 33]]) {
            let r = native("point_decompress_internal", vec![Value::from_bytes(&enc)])?;
            assert_eq!(r, vec![Value::U64(u64::MAX), Value::Bool(false)], "{}", hex::encode(&enc));
            assert_eq!(native("point_is_canonical_internal", vec![Value::from_bytes(&enc)])?, vec![Value::Bool(false)]);
        }
        // i * B through basepoint_mul, compressed back; clones get the next handles.
        for (i, enc) in SMALL_MULTIPLES.iter().enumerate() {
            let mut s = [0u8; 32];
            s[0] = i as u8;
            let h = native("basepoint_mul_internal", vec![Value::from_bytes(&s)])?;
            assert_eq!(h, vec![Value::U64(16 + 2 * i as u64)]);
            assert_eq!(compress(h[0].as_u64()?)?, *enc, "{i} * B");
            let clone = native("point_clone_internal", vec![h[0].clone()])?;
            assert_eq!(clone, vec![Value::U64(17 + 2 * i as u64)]);
            assert_eq!(compress(17 + 2 * i as u64)?, *enc, "clone of {i} * B");
        }
        // Unknown handles abort with E_INVALID_POINT_HANDLE; in-place
        // operations on one handle twice with E_POINT_DUPLICATE_HANDLE.
        let r = native("point_clone_internal", vec![Value::U64(1 << 40)]);
        assert_eq!(abort_code(&r), Some(0x0A_0001));
        for (a, b, in_place, code) in [
            (0, 0, true, Some(0x0A_0003)),
            (0, 0, false, None),
            (0, 999, true, Some(0x0A_0001)),
            (999, 1, false, Some(0x0A_0001)),
        ] {
            let mut mem = Memory::default();
            let (ra, rb) = (point_ref(&mut mem, a), point_ref(&mut mem, b));
            let registry = aptos_registry();
            let f = registry.get(&FRAMEWORK, "ristretto255", "point_add_internal").expect("add");
            let mut gas = GasMeter::unmetered();
            let mut cx = NativeContext { mem: &mut mem, gas: &mut gas, types: &NoTypes };
            let r = f(&mut cx, &[], vec![Value::Ref(ra), Value::Ref(rb), Value::Bool(in_place)]);
            assert_eq!(abort_code(&r), code, "add({a}, {b}, in place {in_place})");
        }
        Ok(())
    });
    r.expect("transaction");
}

/// `point_compress_internal` of a handle of the installed store, as hex.
fn compress(handle: u64) -> VmResult<String> {
    let mut mem = Memory::default();
    let r = point_ref(&mut mem, handle);
    let registry = aptos_registry();
    let f = registry.get(&FRAMEWORK, "ristretto255", "point_compress_internal").expect("compress");
    let mut gas = GasMeter::unmetered();
    let mut cx = NativeContext { mem: &mut mem, gas: &mut gas, types: &NoTypes };
    Ok(bytes(&f(&mut cx, &[], vec![Value::Ref(r)])?[0]))
}

/// A `&RistrettoPoint` into `mem` (a new local holding `RistrettoPoint { handle }`).
fn point_ref(mem: &mut Memory, handle: u64) -> movejit_engine::runtime::Reference {
    mem.locals.push(Value::Struct(vec![Value::U64(handle)]));
    movejit_engine::runtime::Reference::new(movejit_engine::runtime::RefRoot::Local(mem.locals.len() as u32 - 1))
}

/// Calls into the framework's `ristretto255` (most of its functions take
/// references): scalars in and out as bytes, points in and out compressed.
const WRAPPER: &str = "
module 0xcafe::ristretto_calls
use 0x1::ristretto255 as r
use 0x1::option

fun sc(b: vector<u8>): r::Scalar
    move_loc b
    call r::new_scalar_from_bytes
    call option::destroy_some<r::Scalar>
    ret

fun pt(b: vector<u8>): r::RistrettoPoint
    move_loc b
    call r::new_point_from_bytes
    call option::destroy_some<r::RistrettoPoint>
    ret

fun c(p: &r::RistrettoPoint): vector<u8>
    move_loc p
    call r::point_compress
    call r::compressed_point_to_bytes
    ret

public fun scalar_mul(a: vector<u8>, b: vector<u8>): r::Scalar
    local x: r::Scalar
    local y: r::Scalar
    move_loc a
    call sc
    st_loc x
    move_loc b
    call sc
    st_loc y
    borrow_loc x
    borrow_loc y
    call r::scalar_mul
    ret

public fun scalar_add(a: vector<u8>, b: vector<u8>): r::Scalar
    local x: r::Scalar
    local y: r::Scalar
    move_loc a
    call sc
    st_loc x
    move_loc b
    call sc
    st_loc y
    borrow_loc x
    borrow_loc y
    call r::scalar_add
    ret

public fun scalar_sub(a: vector<u8>, b: vector<u8>): r::Scalar
    local x: r::Scalar
    local y: r::Scalar
    move_loc a
    call sc
    st_loc x
    move_loc b
    call sc
    st_loc y
    borrow_loc x
    borrow_loc y
    call r::scalar_sub
    ret

public fun scalar_invert(a: vector<u8>): option::Option<r::Scalar>
    local x: r::Scalar
    move_loc a
    call sc
    st_loc x
    borrow_loc x
    call r::scalar_invert
    ret

public fun scalar_neg_twice(a: vector<u8>): (r::Scalar, r::Scalar)
    local x: r::Scalar
    local y: r::Scalar
    move_loc a
    call sc
    st_loc x
    borrow_loc x
    call r::scalar_neg
    st_loc y
    borrow_loc y
    call r::scalar_neg
    move_loc y
    ret

public fun basepoint_mul(s: vector<u8>): vector<u8>
    local x: r::Scalar
    local p: r::RistrettoPoint
    move_loc s
    call sc
    st_loc x
    borrow_loc x
    call r::basepoint_mul
    st_loc p
    borrow_loc p
    call c
    ret

public fun point_mul(a: vector<u8>, s: vector<u8>): vector<u8>
    local p: r::RistrettoPoint
    local x: r::Scalar
    local q: r::RistrettoPoint
    move_loc a
    call pt
    st_loc p
    move_loc s
    call sc
    st_loc x
    borrow_loc p
    borrow_loc x
    call r::point_mul
    st_loc q
    borrow_loc q
    call c
    ret

public fun point_add(a: vector<u8>, b: vector<u8>): vector<u8>
    local p: r::RistrettoPoint
    local q: r::RistrettoPoint
    local s: r::RistrettoPoint
    move_loc a
    call pt
    st_loc p
    move_loc b
    call pt
    st_loc q
    borrow_loc p
    borrow_loc q
    call r::point_add
    st_loc s
    borrow_loc s
    call c
    ret

public fun point_sub(a: vector<u8>, b: vector<u8>): vector<u8>
    local p: r::RistrettoPoint
    local q: r::RistrettoPoint
    local s: r::RistrettoPoint
    move_loc a
    call pt
    st_loc p
    move_loc b
    call pt
    st_loc q
    borrow_loc p
    borrow_loc q
    call r::point_sub
    st_loc s
    borrow_loc s
    call c
    ret

public fun point_add_assign(a: vector<u8>, b: vector<u8>): (vector<u8>, bool)
    local p: r::RistrettoPoint
    local q: r::RistrettoPoint
    move_loc a
    call pt
    st_loc p
    move_loc b
    call pt
    st_loc q
    mut_borrow_loc p
    borrow_loc q
    call r::point_add_assign
    pop
    borrow_loc p
    call c
    borrow_loc p
    borrow_loc q
    call r::point_equals
    ret

public fun point_neg(a: vector<u8>): (vector<u8>, vector<u8>, bool)
    local p: r::RistrettoPoint
    local n: r::RistrettoPoint
    move_loc a
    call pt
    st_loc p
    borrow_loc p
    call r::point_neg
    st_loc n
    mut_borrow_loc p
    call r::point_neg_assign
    pop
    borrow_loc n
    call c
    borrow_loc p
    call c
    borrow_loc p
    borrow_loc n
    call r::point_equals
    ret

public fun basepoint_double_mul(a: vector<u8>, p: vector<u8>, b: vector<u8>): vector<u8>
    local x: r::Scalar
    local q: r::RistrettoPoint
    local y: r::Scalar
    local s: r::RistrettoPoint
    move_loc a
    call sc
    st_loc x
    move_loc p
    call pt
    st_loc q
    move_loc b
    call sc
    st_loc y
    borrow_loc x
    borrow_loc q
    borrow_loc y
    call r::basepoint_double_mul
    st_loc s
    borrow_loc s
    call c
    ret

public fun double_scalar_mul(a: vector<u8>, p: vector<u8>, b: vector<u8>, q: vector<u8>): vector<u8>
    local x: r::Scalar
    local pp: r::RistrettoPoint
    local y: r::Scalar
    local qq: r::RistrettoPoint
    local s: r::RistrettoPoint
    move_loc a
    call sc
    st_loc x
    move_loc p
    call pt
    st_loc pp
    move_loc b
    call sc
    st_loc y
    move_loc q
    call pt
    st_loc qq
    borrow_loc x
    borrow_loc pp
    borrow_loc y
    borrow_loc qq
    call r::double_scalar_mul
    st_loc s
    borrow_loc s
    call c
    ret

public fun from_sha512(m: vector<u8>): vector<u8>
    local p: r::RistrettoPoint
    move_loc m
    call r::new_point_from_sha2_512
    st_loc p
    borrow_loc p
    call c
    ret

public fun from_64_uniform(m: vector<u8>): vector<u8>
    local p: r::RistrettoPoint
    move_loc m
    call r::new_point_from_64_uniform_bytes
    call option::destroy_some<r::RistrettoPoint>
    st_loc p
    borrow_loc p
    call c
    ret

public fun msm_hashed(m1: vector<u8>, m2: vector<u8>, m3: vector<u8>, m4: vector<u8>, m5: vector<u8>): vector<u8>
    local ps: vector<r::RistrettoPoint>
    local ss: vector<r::Scalar>
    local s: r::RistrettoPoint
    copy_loc m1
    call r::new_point_from_sha2_512
    copy_loc m2
    call r::new_point_from_sha2_512
    copy_loc m3
    call r::new_point_from_sha2_512
    copy_loc m4
    call r::new_point_from_sha2_512
    copy_loc m5
    call r::new_point_from_sha2_512
    vec_pack <r::RistrettoPoint>, 5
    st_loc ps
    move_loc m1
    call r::new_scalar_from_sha2_512
    move_loc m2
    call r::new_scalar_from_sha2_512
    move_loc m3
    call r::new_scalar_from_sha2_512
    move_loc m4
    call r::new_scalar_from_sha2_512
    move_loc m5
    call r::new_scalar_from_sha2_512
    vec_pack <r::Scalar>, 5
    st_loc ss
    borrow_loc ps
    borrow_loc ss
    call r::multi_scalar_mul
    st_loc s
    borrow_loc s
    call c
    ret

public fun msm_basepoints(a: vector<u8>, b: vector<u8>, n: u64): vector<u8>
    local ps: vector<r::RistrettoPoint>
    local ss: vector<r::Scalar>
    local s: r::RistrettoPoint
    call r::basepoint
    call r::basepoint
    vec_pack <r::RistrettoPoint>, 2
    st_loc ps
    move_loc a
    call sc
    move_loc b
    call sc
    vec_pack <r::Scalar>, 2
    st_loc ss
    copy_loc n
    ld_u64 2
    lt
    br_false L0
    mut_borrow_loc ss
    vec_pop_back <r::Scalar>
    pop
L0: copy_loc n
    ld_u64 1
    lt
    br_false L1
    mut_borrow_loc ps
    vec_pop_back <r::RistrettoPoint>
    pop
L1: borrow_loc ps
    borrow_loc ss
    call r::multi_scalar_mul
    st_loc s
    borrow_loc s
    call c
    ret

public fun identities(n: u64): u64
    local i: u64
    ld_u64 0
    st_loc i
L0: copy_loc i
    copy_loc n
    lt
    br_false L1
    call r::point_identity
    pop
    move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L1: move_loc i
    ret
";

/// `features::BULLETPROOFS_NATIVES`.
const BULLETPROOFS_NATIVES: u64 = 24;

#[test]
fn framework_ristretto255_functions_agree_on_every_executor() {
    let fw = Framework::with_wrapper(WRAPPER);
    let b = |s: &str| bytes_arg(&hex(s));
    let ok = |items: Vec<Vec<u8>>| -> Outcome { Ok(items) };
    let scalar = |s: &str| b(s);
    let point = |s: &str| b(s);
    let u = |x: u64| x.to_le_bytes().to_vec();
    let aborted = |code: u64| -> Outcome { Err((StatusCode::ABORTED, Some(code))) };
    let none = vec![0u8];
    let some = |s: &str| [vec![1u8], b(s)].concat();
    let mut rows: Vec<(&str, Vec<Vec<u8>>, Outcome)> = vec![
        ("scalar_mul", vec![b(X), b(Y)], ok(vec![scalar(X_TIMES_Y)])),
        ("scalar_mul", vec![b(A), b(B)], ok(vec![scalar(A_TIMES_B)])),
        ("scalar_add", vec![b(A), b(B)], ok(vec![scalar(A_PLUS_B)])),
        ("scalar_add", vec![b(L_MINUS_ONE), b(ONE)], ok(vec![scalar(ZERO)])),
        ("scalar_sub", vec![b(ONE), b(TWO)], ok(vec![scalar(L_MINUS_ONE)])),
        ("scalar_invert", vec![b(X)], ok(vec![some(X_INV)])),
        ("scalar_invert", vec![b(ZERO)], ok(vec![none.clone()])),
        ("scalar_neg_twice", vec![b(X)], ok(vec![scalar(X), scalar(&hex::encode(neg(&hex(X))))])),
        // A non-canonical scalar never reaches the natives: option::destroy_some aborts (EOPTION_NOT_SET).
        ("scalar_mul", vec![b(ORDER_ELL), b(ONE)], aborted(0x4_0001)),
        ("basepoint_mul", vec![b(A)], ok(vec![point(A_TIMES_BASE_POINT)])),
        ("point_mul", vec![b(BASE_POINT), b(A)], ok(vec![point(A_TIMES_BASE_POINT)])),
        ("point_add", vec![b(A_POINT), b(B_POINT)], ok(vec![point(A_PLUS_B_POINT)])),
        ("point_sub", vec![b(A_PLUS_B_POINT), b(B_POINT)], ok(vec![point(A_POINT)])),
        ("point_add_assign", vec![b(A_POINT), b(B_POINT)], ok(vec![point(A_PLUS_B_POINT), vec![0]])),
        ("point_neg", vec![b(A_POINT)], ok(vec![point(&neg_point(A_POINT)), point(&neg_point(A_POINT)), vec![1]])),
        ("basepoint_double_mul", vec![b(A), b(A_POINT), b(B)], ok(vec![point(BASEPOINT_DOUBLE_MUL)])),
        // Gated on the BULLETPROOFS_NATIVES feature: invalid_state(E_NATIVE_FUN_NOT_AVAILABLE) without it.
        ("double_scalar_mul", vec![b(A), b(A_POINT), b(B), b(BASE_POINT)], aborted(0x3_0005)),
        ("from_sha512", vec![bytes_arg(SHA512_MSG.as_bytes())], ok(vec![point(SHA512_POINT)])),
        ("from_64_uniform", vec![b(UNIFORM_64)], ok(vec![point(UNIFORM_64_POINT)])),
        (
            "msm_hashed",
            ["1", "2", "3", "4", "5"].iter().map(|m| bytes_arg(m.as_bytes())).collect(),
            ok(vec![point(MSM_MANY)]),
        ),
        ("msm_basepoints", vec![b(A), b(ZERO), u(2)], ok(vec![point(A_TIMES_BASE_POINT)])),
        // Different sizes, no scalars, no points: E_DIFFERENT_NUM_POINTS_AND_SCALARS, E_ZERO_SCALARS ... as invalid_argument.
        ("msm_basepoints", vec![b(A), b(B), u(1)], aborted(0x1_0001)),
        ("identities", vec![u(10_000)], ok(vec![u(10_000)])),
        // `test_num_points_limit_exceeded`.
        ("identities", vec![u(10_001)], aborted(0x09_0004)),
    ];
    // RFC 9496 A.1 through basepoint_mul.
    for (i, enc) in SMALL_MULTIPLES.iter().enumerate() {
        let mut s = [0u8; 32];
        s[0] = i as u8;
        rows.push(("basepoint_mul", vec![bytes_arg(&s)], ok(vec![point(enc)])));
    }
    for (f, args, want) in rows {
        let got = fw.call_everywhere(&format!("0xcafe::ristretto_calls::{f}"), &args);
        assert_eq!(got, want, "{f}");
    }
    // With the feature on (`test_basepoint_double_mul`).
    let mut fw_bulletproofs = Framework::with_wrapper(WRAPPER);
    fw_bulletproofs.enable_features(&[BULLETPROOFS_NATIVES]);
    let args = vec![b(A), b(A_POINT), b(B), b(BASE_POINT)];
    let got = fw_bulletproofs.call_everywhere("0xcafe::ristretto_calls::double_scalar_mul", &args);
    assert_eq!(got, ok(vec![point(BASEPOINT_DOUBLE_MUL)]), "double_scalar_mul with bulletproofs on");
    // Direct calls of value-taking framework functions: invalid encodings are None.
    for enc in BAD_ENCODINGS {
        assert_eq!(
            fw.call_everywhere("0x1::ristretto255::new_point_from_bytes", &[b(enc)]),
            ok(vec![none.clone()]),
            "{enc}"
        );
    }
    // The first point of a session has handle 0.
    let first = [vec![1u8], 0u64.to_le_bytes().to_vec()].concat();
    assert_eq!(fw.call_everywhere("0x1::ristretto255::new_point_from_bytes", &[b(A_POINT)]), ok(vec![first]));
    assert_eq!(
        fw.call_everywhere("0x1::ristretto255::new_scalar_from_sha2_512", &[bytes_arg(b"bello!")]),
        ok(vec![scalar(B)])
    );
}

/// `-s mod L` of a canonical scalar.
fn neg(s: &[u8]) -> Vec<u8> {
    let r = native("scalar_neg_internal", vec![Value::from_bytes(s)]).expect("neg");
    r[0].to_bytes().expect("bytes")
}

/// `-P` of a compressed point, computed on the natives.
fn neg_point(p: &str) -> String {
    let mut ext = NativeExtensions::new();
    run_transaction(&mut ext, || {
        let h = native("point_decompress_internal", vec![Value::from_bytes(&hex(p))])?;
        let mut mem = Memory::default();
        let r = point_ref(&mut mem, h[0].as_u64()?);
        let registry = aptos_registry();
        let mut gas = GasMeter::unmetered();
        let mut cx = NativeContext { mem: &mut mem, gas: &mut gas, types: &NoTypes };
        let f = registry.get(&FRAMEWORK, "ristretto255", "point_neg_internal").expect("neg");
        let n = f(&mut cx, &[], vec![Value::Ref(r), Value::Bool(false)])?;
        let r2 = point_ref(cx.mem, n[0].as_u64()?);
        let compress = registry.get(&FRAMEWORK, "ristretto255", "point_compress_internal").expect("compress");
        let c = compress(&mut cx, &[], vec![Value::Ref(r2)])?;
        Ok(bytes(&c[0]))
    })
    .expect("neg point")
}
