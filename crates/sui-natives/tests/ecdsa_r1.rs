//! `0x2::ecdsa_r1` with the vectors of Sui's `ecdsa_r1_tests.move` (plus
//! high-`s`, wrong-hash and malformed rows), through the framework on
//! tree, flat and jit.

mod common;

use common::*;
use movejit_sui_natives::{E_R1_FAIL_TO_RECOVER_PUBKEY, E_R1_INVALID_SIGNATURE};

fn hex(s: &str) -> Vec<u8> {
    ::hex::decode(s).expect("hex")
}

const PK: &str = "0227322b3a891a0a280d6bc1fb2cbb23d28f54906fd6407f5f741f6def5762609a";
const SIG_KECCAK: &str = "209841acabd0fdf6d25fa0948b2f5c6c74f930eede89c6fce59502218a3134a147535921bf0cdf5d1990f6f0b3dadb8c05069ddc531db057d325857ce198a529";
const SIG_SHA256: &str = "26d84720652d8bc4ddd1986434a10b3b7b69f0e35a17c6a5987e6d1cba69652f4384a342487642df5e44592d304bea0ceb0fae2e347fa3cec5ce1a8144cfbbb2";

/// The P-256 group order n.
const N: &str = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551";

/// (r, n - s): the same signature with a high `s`.
fn high_s(sig: &[u8]) -> Vec<u8> {
    let n = hex(N);
    let s = &sig[32..64];
    let mut out = vec![0u8; 32];
    let mut borrow = 0i16;
    for i in (0..32).rev() {
        let mut d = n[i] as i16 - s[i] as i16 - borrow;
        borrow = if d < 0 { 1 } else { 0 };
        if d < 0 {
            d += 256;
        }
        out[i] = d as u8;
    }
    [sig[..32].to_vec(), out].concat()
}

fn recover(sig: &[u8], msg: &[u8], hash: u8) -> Call {
    call("0x2::ecdsa_r1::secp256r1_ecrecover", &[], vec![bytes(sig), bytes(msg), vec![hash]])
}

fn verify(sig: &[u8], pk: &[u8], msg: &[u8], hash: u8) -> Call {
    call("0x2::ecdsa_r1::secp256r1_verify", &[], vec![bytes(sig), bytes(pk), bytes(msg), vec![hash]])
}

#[test]
fn sui_vectors() {
    let msg = b"Hello, world!";
    let pk = hex(PK);
    let rec = |s: &str, v: u8| [hex(s), vec![v]].concat();
    let yes = Ok(vec![vec![1u8]]);
    let no = Ok(vec![vec![0u8]]);
    let rows: Vec<(Call, Outcome)> = vec![
        (recover(&rec(SIG_KECCAK, 0), msg, 0), Ok(vec![bytes(&pk)])),
        (recover(&rec(SIG_SHA256, 0), msg, 1), Ok(vec![bytes(&pk)])),
        (recover(&hex(SIG_SHA256), msg, 1), abort(E_R1_INVALID_SIGNATURE)),
        (recover(&rec(SIG_SHA256, 4), msg, 1), abort(E_R1_INVALID_SIGNATURE)),
        (recover(&[0; 65], msg, 1), abort(E_R1_INVALID_SIGNATURE)),
        (recover(&rec(SIG_SHA256, 0), msg, 2), abort(E_R1_FAIL_TO_RECOVER_PUBKEY)),
        (verify(&rec(SIG_KECCAK, 0), &pk, msg, 0), no.clone()),
        (verify(&rec(SIG_KECCAK, 1), &pk, msg, 0), no.clone()),
        (verify(&hex(SIG_KECCAK), &pk, msg, 0), yes.clone()),
        (verify(&hex(SIG_SHA256), &pk, msg, 1), yes.clone()),
        (verify(&hex(SIG_SHA256), &pk, msg, 0), no.clone()),
        (verify(&hex(SIG_SHA256), &pk, msg, 2), no.clone()),
        (verify(&high_s(&hex(SIG_SHA256)), &pk, msg, 1), no.clone()),
        (verify(&hex(SIG_KECCAK), &pk[..32], msg, 0), no.clone()),
    ];
    let (calls, want): (Vec<_>, Vec<_>) = rows.into_iter().unzip();
    let run = Sui::new().run(&calls, &|_| {});
    for (i, (got, want)) in run.outcomes.iter().zip(&want).enumerate() {
        assert_eq!(got, want, "row {i}: {}", calls[i].function);
    }
}
