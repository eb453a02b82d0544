//! The signature natives (`ed25519`, `multi_ed25519`, `secp256k1`)
//! with published test vectors: called directly through the registry, and
//! through the real framework's Move functions on the tree and flat
//! interpreters and the JIT (all must agree, gas included).

mod common;

use common::framework::{bool_bcs, bytes_arg, Framework};
use movejit_aptos_natives::{aptos_registry, FRAMEWORK};
use movejit_engine::runtime::natives::{NativeContext, TypeInfo};
use movejit_engine::runtime::{GasMeter, Layout, Memory, StatusCode, Type, Value, VmError, VmResult};

struct NoTypes;

impl TypeInfo for NoTypes {
    fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
        Err(VmError::invariant(format!("no layout for {ty}")))
    }
}

/// Calls native `0x1::module::function` with `args` on a fresh memory.
fn native(module: &str, function: &str, args: Vec<Value>) -> VmResult<Vec<Value>> {
    let registry = aptos_registry();
    let f = registry.get(&FRAMEWORK, module, function).unwrap_or_else(|| panic!("{module}::{function} registered"));
    let mut mem = Memory::default();
    let mut gas = GasMeter::unmetered();
    let mut cx = NativeContext { mem: &mut mem, gas: &mut gas, types: &NoTypes };
    f(&mut cx, &[], args)
}

fn hex(s: &str) -> Vec<u8> {
    hex::decode(s).expect("hex")
}

/// RFC 8032 section 7.1, tests 1, 2, 3 and SHA(abc): (secret key, public
/// key, message, signature).
const RFC8032: [(&str, &str, &str, &str); 4] = [
    (
        "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        "",
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
    ),
    (
        "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
        "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
        "72",
        "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
    ),
    (
        "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
        "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
        "af82",
        "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
    ),
    (
        "833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42",
        "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
        "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
        "dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b58909351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704",
    ),
];

/// The order of the prime subgroup, little endian.
const L: [u8; 32] = [
    0xED, 0xD3, 0xF5, 0x5C, 0x1A, 0x63, 0x12, 0x58, 0xD6, 0x9C, 0xF7, 0xA2, 0xDE, 0xF9, 0xDE, 0x14, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
];

/// `s + L` in place of `s`: the same signature to a lax verifier, malleated to a strict one.
fn malleate_s(sig: &[u8]) -> Vec<u8> {
    let mut out = sig.to_vec();
    let mut carry = 0u16;
    for i in 0..32 {
        let v = u16::from(out[32 + i]) + u16::from(L[i]) + carry;
        out[32 + i] = v as u8;
        carry = v >> 8;
    }
    out
}

/// The identity point (small order) and a point of order 8 (small order),
/// compressed; `FE..FF 7F` is not on the curve.
const IDENTITY: &str = "0100000000000000000000000000000000000000000000000000000000000000";
const ORDER_8: &str = "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a";
const NOT_ON_CURVE: &str = "0200000000000000000000000000000000000000000000000000000000000000";

/// (signature, public key, message, verifies).
type Row = (Vec<u8>, Vec<u8>, Vec<u8>, bool);

/// Ed25519 rows.
fn ed25519_rows() -> Vec<Row> {
    let mut rows = Vec::new();
    for (_, pk, msg, sig) in RFC8032 {
        let (pk, msg, sig) = (hex(pk), hex(msg), hex(sig));
        rows.push((sig.clone(), pk.clone(), msg.clone(), true));
        // Another message.
        let mut other = msg.clone();
        other.push(0);
        rows.push((sig.clone(), pk.clone(), other, false));
        // A flipped bit of R, of s.
        let mut r = sig.clone();
        r[0] ^= 1;
        rows.push((r, pk.clone(), msg.clone(), false));
        let mut s = sig.clone();
        s[40] ^= 1;
        rows.push((s, pk.clone(), msg.clone(), false));
        // s + L: rejected by the strict s < L check.
        rows.push((malleate_s(&sig), pk.clone(), msg.clone(), false));
        // Wrong lengths are `false`, not aborts, at the native level.
        rows.push((sig[..63].to_vec(), pk.clone(), msg.clone(), false));
        rows.push((sig.clone(), pk[..31].to_vec(), msg.clone(), false));
    }
    // Small-order keys and R: rejected although [s]B = R + [k]A holds
    // (A = identity, R = identity, s = 0).
    let mut zero_sig = hex(IDENTITY);
    zero_sig.extend([0u8; 32]);
    rows.push((zero_sig.clone(), hex(IDENTITY), b"any".to_vec(), false));
    rows.push((zero_sig, hex(ORDER_8), b"any".to_vec(), false));
    rows.push((hex(RFC8032[0].3), hex(NOT_ON_CURVE), vec![], false));
    rows
}

#[test]
fn ed25519_verify_strict_on_rfc8032_vectors() {
    // The vectors are what they claim: the key derives from the secret.
    for (sk, pk, _, _) in RFC8032 {
        let secret = ed25519_dalek::SecretKey::from_bytes(&hex(sk)).expect("secret");
        assert_eq!(ed25519_dalek::PublicKey::from(&secret).as_bytes().to_vec(), hex(pk));
    }
    for (sig, pk, msg, ok) in ed25519_rows() {
        let r = native(
            "ed25519",
            "signature_verify_strict_internal",
            vec![Value::from_bytes(&sig), Value::from_bytes(&pk), Value::from_bytes(&msg)],
        );
        assert_eq!(
            r.expect("verify"),
            vec![Value::Bool(ok)],
            "sig {} pk {} msg {}",
            hex::encode(&sig),
            hex::encode(&pk),
            hex::encode(&msg)
        );
    }
}

#[test]
fn ed25519_public_key_validation() {
    let mut rows: Vec<(Vec<u8>, bool)> = RFC8032.iter().map(|r| (hex(r.1), true)).collect();
    rows.extend([
        (hex(IDENTITY), false),
        (hex(ORDER_8), false),
        (hex(NOT_ON_CURVE), false),
        // Wrong length: `false` (ED25519_PUBKEY_VALIDATE_RETURN_FALSE_WRONG_LENGTH), no abort.
        (vec![0u8; 31], false),
        (vec![], false),
        (hex(&format!("{}00", RFC8032[0].1)), false),
    ]);
    for (pk, ok) in rows {
        let r = native("ed25519", "public_key_validate_internal", vec![Value::from_bytes(&pk)]);
        assert_eq!(r.expect("validate"), vec![Value::Bool(ok)], "{}", hex::encode(&pk));
    }
}

/// A MultiEd25519 key of the RFC 8032 keys 0..n with `threshold`.
fn multi_key(n: usize, threshold: u8) -> Vec<u8> {
    let mut out: Vec<u8> = RFC8032[..n].iter().flat_map(|r| hex(r.1)).collect();
    out.push(threshold);
    out
}

/// Signatures of `msg` by keys `signers` (indices into RFC8032) with the bitmap.
fn multi_sig(signers: &[usize], msg: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut bitmap = [0u8; 4];
    for &i in signers {
        let secret = ed25519_dalek::SecretKey::from_bytes(&hex(RFC8032[i].0)).expect("secret");
        let public = ed25519_dalek::PublicKey::from(&secret);
        let sig = ed25519_dalek::ExpandedSecretKey::from(&secret).sign(msg, &public);
        out.extend(sig.to_bytes());
        bitmap[i / 8] |= 0x80 >> (i % 8);
    }
    out.extend(bitmap);
    out
}

/// MultiEd25519 rows.
fn multi_rows() -> Vec<Row> {
    let msg = b"multi".to_vec();
    let key = multi_key(4, 2);
    let mut rows = vec![
        (multi_sig(&[0, 2], &msg), key.clone(), msg.clone(), true),
        (multi_sig(&[0, 1, 3], &msg), key.clone(), msg.clone(), true),
        // Below the threshold.
        (multi_sig(&[1], &msg), key.clone(), msg.clone(), false),
        (multi_sig(&[1], &msg), multi_key(4, 1), msg.clone(), true),
        // A signer beyond the keys.
        (multi_sig(&[0, 3], &msg), multi_key(3, 2), msg.clone(), false),
        // Another message.
        (multi_sig(&[0, 2], &msg), key.clone(), b"other".to_vec(), false),
        // Bad threshold bytes: zero, above n.
        (multi_sig(&[0, 2], &msg), multi_key(4, 0), msg.clone(), false),
        (multi_sig(&[0, 2], &msg), multi_key(4, 5), msg.clone(), false),
    ];
    // Bitmap naming other signers than those who signed.
    let mut swapped = multi_sig(&[0, 2], &msg);
    let n = swapped.len();
    swapped[n - 4] = 0b1010_0000 >> 1;
    rows.push((swapped, key.clone(), msg.clone(), false));
    // Bitmap count differing from the number of signatures.
    let mut extra_bit = multi_sig(&[0, 2], &msg);
    let n = extra_bit.len();
    extra_bit[n - 1] = 1;
    rows.push((extra_bit, key.clone(), msg.clone(), false));
    // Missing bitmap byte, malleated s of one signature.
    let s = multi_sig(&[0, 2], &msg);
    rows.push((s[..s.len() - 1].to_vec(), key.clone(), msg.clone(), false));
    let mut malleated = malleate_s(&s[..64]);
    malleated.extend_from_slice(&s[64..]);
    rows.push((malleated, key.clone(), msg.clone(), false));
    // A small-order sub-key that does not sign: the others still verify.
    let mut with_torsion = hex(IDENTITY);
    with_torsion.extend(&multi_key(2, 1)[..64]);
    with_torsion.push(1);
    let mut sig = multi_sig(&[0], &msg);
    let n = sig.len();
    sig[n - 4] = 0b0100_0000;
    rows.push((sig, with_torsion, msg, true));
    rows
}

#[test]
fn multi_ed25519_verify_strict() {
    for (sig, pk, msg, ok) in multi_rows() {
        let r = native(
            "multi_ed25519",
            "signature_verify_strict_internal",
            vec![Value::from_bytes(&sig), Value::from_bytes(&pk), Value::from_bytes(&msg)],
        );
        assert_eq!(r.expect("verify"), vec![Value::Bool(ok)], "sig {} pk {}", hex::encode(&sig), hex::encode(&pk));
    }
}

#[test]
fn multi_ed25519_key_validation_v1_and_v2() {
    let torsion_with_threshold_1 = {
        let mut b = hex(IDENTITY);
        b.push(1);
        b
    };
    // (key, v1, v2). v1 ignores the threshold byte (framework test
    // `bugfix_validated_pk_from_zero_subpks`: one byte validates under v1 only).
    let rows: Vec<(Vec<u8>, bool, bool)> = vec![
        (multi_key(3, 2), true, true),
        (multi_key(4, 4), true, true),
        (vec![1u8], true, false),
        (multi_key(3, 0), true, false),
        (multi_key(3, 4), true, false),
        (multi_key(1, 1)[..32].to_vec(), true, false),
        (torsion_with_threshold_1, false, false),
        ([hex(RFC8032[0].1), hex(NOT_ON_CURVE), vec![1]].concat(), false, false),
        ([vec![0x11u8; 33 * 32], vec![1]].concat(), false, false),
    ];
    for (pk, v1, v2) in rows {
        for (f, want) in [("public_key_validate_internal", v1), ("public_key_validate_v2_internal", v2)] {
            let r = native("multi_ed25519", f, vec![Value::from_bytes(&pk)]);
            assert_eq!(r.expect("validate"), vec![Value::Bool(want)], "{f} {}", hex::encode(&pk));
        }
    }
}

/// Wrapper calling the framework's signature checks (their arguments are references).
const ED25519_WRAPPER: &str = "
module 0xcafe::crypto_calls

public fun ed25519_verify(sig: vector<u8>, pk: vector<u8>, msg: vector<u8>): bool
    local s: 0x1::ed25519::Signature
    local k: 0x1::ed25519::UnvalidatedPublicKey
    move_loc sig
    call 0x1::ed25519::new_signature_from_bytes
    st_loc s
    move_loc pk
    call 0x1::ed25519::new_unvalidated_public_key_from_bytes
    st_loc k
    borrow_loc s
    borrow_loc k
    move_loc msg
    call 0x1::ed25519::signature_verify_strict
    ret

public fun multi_verify(sig: vector<u8>, pk: vector<u8>, msg: vector<u8>): bool
    local s: 0x1::multi_ed25519::Signature
    local k: 0x1::multi_ed25519::UnvalidatedPublicKey
    move_loc sig
    call 0x1::multi_ed25519::new_signature_from_bytes
    st_loc s
    move_loc pk
    call 0x1::multi_ed25519::new_unvalidated_public_key_from_bytes
    st_loc k
    borrow_loc s
    borrow_loc k
    move_loc msg
    call 0x1::multi_ed25519::signature_verify_strict
    ret
";

#[test]
fn framework_ed25519_functions_agree_on_every_executor() {
    let fw = Framework::with_wrapper(ED25519_WRAPPER);
    let args = |sig: &[u8], pk: &[u8], msg: &[u8]| vec![bytes_arg(sig), bytes_arg(pk), bytes_arg(msg)];
    let mut checked = 0;
    for (sig, pk, msg, ok) in ed25519_rows() {
        let out = fw.call_everywhere("0xcafe::crypto_calls::ed25519_verify", &args(&sig, &pk, &msg));
        // The Move constructors check lengths first: error::invalid_argument(E_WRONG_SIGNATURE_SIZE / E_WRONG_PUBKEY_SIZE).
        let want = match (sig.len(), pk.len()) {
            (64, 32) => Ok(vec![bool_bcs(ok)]),
            (64, _) => Err((StatusCode::ABORTED, Some(0x1_0001))),
            _ => Err((StatusCode::ABORTED, Some(0x1_0002))),
        };
        assert_eq!(out, want, "ed25519_verify sig {} pk {}", hex::encode(&sig), hex::encode(&pk));
        checked += 1;
    }
    for (sig, pk, msg, ok) in multi_rows() {
        let out = fw.call_everywhere("0xcafe::crypto_calls::multi_verify", &args(&sig, &pk, &msg));
        // Signatures must be 64 * k + 4 bytes (E_WRONG_SIGNATURE_SIZE = 2);
        // keys 32 * n + 1 bytes with n <= 32 (E_WRONG_PUBKEY_SIZE = 1).
        let want =
            if sig.len() % 64 != 4 { Err((StatusCode::ABORTED, Some(0x1_0002))) } else { Ok(vec![bool_bcs(ok)]) };
        assert_eq!(out, want, "multi_verify sig {} pk {}", hex::encode(&sig), hex::encode(&pk));
        checked += 1;
    }
    // Validation through the framework's constructors (value arguments: called directly).
    let some = |pk: &[u8]| {
        let mut b = vec![1u8];
        b.extend(bytes_arg(pk));
        b
    };
    let validated: Vec<(&str, Vec<u8>, Vec<u8>)> = vec![
        ("0x1::ed25519::new_validated_public_key_from_bytes", hex(RFC8032[1].1), some(&hex(RFC8032[1].1))),
        ("0x1::ed25519::new_validated_public_key_from_bytes", hex(ORDER_8), vec![0]),
        ("0x1::ed25519::new_validated_public_key_from_bytes", vec![7; 31], vec![0]),
        ("0x1::multi_ed25519::new_validated_public_key_from_bytes", multi_key(3, 2), some(&multi_key(3, 2))),
        // Framework test `test_validated_pk_from_small_order_subpk`.
        ("0x1::multi_ed25519::new_validated_public_key_from_bytes", [hex(IDENTITY), vec![1]].concat(), vec![0]),
    ];
    for (f, pk, want) in validated {
        assert_eq!(fw.call_everywhere(f, &[bytes_arg(&pk)]), Ok(vec![want]), "{f}({})", hex::encode(&pk));
        checked += 1;
    }
    eprintln!("framework ed25519 / multi_ed25519 calls checked on tree, flat and jit: {checked}");
}

/// `secp256k1.move`'s `test_ecdsa_recover` signature (sk 0123..ef) on sha2_256("test aptos secp256k1").
const SECP_SIG: &str = "f7ad936da03f948c14c542020e3c5f4e02aaacd1f20427c11aa6e2fbf8776477646bba0e1a37f9e7c777c423a1d2849baafd7ff6a9930814a43c3f80d59db56f";
/// The same with one nibble flipped: still recovers, another key.
const SECP_SIG_OTHER: &str = "f7ad936da03f948c14c542020e3c5f4e02aaacd1f20427c11aa6e2fbf8776477646bba0e1a37f9e7c7f7c423a1d2849baafd7ff6a9930814a43c3f80d59db56f";
/// Flipped so that nothing recovers.
const SECP_SIG_NONE: &str = "ffad936da03f948c14c542020e3c5f4e02aaacd1f20427c11aa6e2fbf8776477646bba0e1a37f9e7c7f7c423a1d2849baafd7ff6a9930814a43c3f80d59db56f";
const SECP_PK: &str = "4646ae5047316b4230d0086c8acec687f00b1cd9d1dc634f6cb358ac0a9a8ffffe77b4dd0a4bfb95851f3b7355c781dd60f8418fc8a65d14907aff47c903a559";

fn secp_msg() -> Vec<u8> {
    use sha2::Digest;
    sha2::Sha256::digest(b"test aptos secp256k1").to_vec()
}

#[test]
fn secp256k1_recovery_as_the_framework_tests_expect() {
    // (message, recovery id, signature, Ok(Some(key)) | Ok(None) | Err(abort code))
    type Row = (Vec<u8>, u8, Vec<u8>, Result<Option<Vec<u8>>, u64>);
    let rows: Vec<Row> = vec![
        (secp_msg(), 0, hex(SECP_SIG), Ok(Some(hex(SECP_PK)))),
        (secp_msg(), 0, hex(SECP_SIG_NONE), Ok(None)),
        // Message not 32 bytes, recovery id above 3, signature not 64 bytes or r >= n: NFE_DESERIALIZE.
        (secp_msg()[..31].to_vec(), 0, hex(SECP_SIG), Err(0x1_0001)),
        (secp_msg(), 4, hex(SECP_SIG), Err(0x1_0001)),
        (secp_msg(), 0, hex(SECP_SIG)[..63].to_vec(), Err(0x1_0001)),
        (secp_msg(), 0, vec![0xff; 64], Err(0x1_0001)),
    ];
    for (msg, rid, sig, want) in rows {
        let r = native(
            "secp256k1",
            "ecdsa_recover_internal",
            vec![Value::from_bytes(&msg), Value::U8(rid), Value::from_bytes(&sig)],
        );
        let got = match r {
            Ok(v) if v == vec![Value::from_bytes(&[]), Value::Bool(false)] => Ok(None),
            Ok(v) if v.len() == 2 && v[1] == Value::Bool(true) => Ok(Some(v[0].to_bytes().expect("bytes"))),
            Ok(v) => panic!("unexpected {v:?}"),
            Err(e) if e.status == StatusCode::ABORTED => Err(e.sub_status.expect("code")),
            Err(e) => panic!("{e:?}"),
        };
        assert_eq!(got, want, "sig {} rid {rid}", hex::encode(&sig));
    }
    // The flipped signature recovers a key, not the signer's.
    let r = native(
        "secp256k1",
        "ecdsa_recover_internal",
        vec![Value::from_bytes(&secp_msg()), Value::U8(0), Value::from_bytes(&hex(SECP_SIG_OTHER))],
    )
    .expect("recover");
    assert_eq!(r[1], Value::Bool(true));
    assert_ne!(r[0], Value::from_bytes(&hex(SECP_PK)));
}

const SECP_WRAPPER: &str = "
module 0xcafe::secp_calls

public fun recover(msg: vector<u8>, rid: u8, sig: vector<u8>): 0x1::option::Option<0x1::secp256k1::ECDSARawPublicKey>
    local s: 0x1::secp256k1::ECDSASignature
    move_loc sig
    call 0x1::secp256k1::ecdsa_signature_from_bytes
    st_loc s
    move_loc msg
    move_loc rid
    borrow_loc s
    call 0x1::secp256k1::ecdsa_recover
    ret
";

#[test]
fn framework_secp256k1_recover_agrees_on_every_executor() {
    let fw = Framework::with_wrapper(SECP_WRAPPER);
    let some = |pk: &[u8]| [vec![1u8], bytes_arg(pk)].concat();
    let rows: Vec<(Vec<u8>, u8, Vec<u8>, common::framework::Outcome)> = vec![
        (secp_msg(), 0, hex(SECP_SIG), Ok(vec![some(&hex(SECP_PK))])),
        (secp_msg(), 0, hex(SECP_SIG_NONE), Ok(vec![vec![0]])),
        // `test_bad_ecdsa_recovery_id`: the Move wrapper's E_BAD_RECOVERY_ID (invalid_argument(2)).
        (b"test aptos secp256k1".to_vec(), 4, hex(SECP_SIG), Err((StatusCode::ABORTED, Some(65538)))),
        // A 20-byte message reaches the native: NFE_DESERIALIZE.
        (b"test aptos secp256k1".to_vec(), 0, hex(SECP_SIG), Err((StatusCode::ABORTED, Some(0x1_0001)))),
    ];
    for (msg, rid, sig, want) in rows {
        let got = fw.call_everywhere("0xcafe::secp_calls::recover", &[bytes_arg(&msg), vec![rid], bytes_arg(&sig)]);
        assert_eq!(got, want, "sig {} rid {rid}", hex::encode(&sig));
    }
}
