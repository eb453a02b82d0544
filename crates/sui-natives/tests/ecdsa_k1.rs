//! `0x2::ecdsa_k1` with the vectors of Sui's `ecdsa_k1_tests.move`, through
//! the framework on tree, flat and jit.

mod common;

use common::*;
use movejit_sui_natives::{E_FAIL_TO_RECOVER_PUBKEY, E_INVALID_PUBKEY, E_INVALID_SIGNATURE};

fn hex(s: &str) -> Vec<u8> {
    ::hex::decode(s).expect("hex")
}

const PK: &str = "02337cca2171fdbfcfd657fa59881f46269f1e590b5ffab6023686c7ad2ecc2c1c";
const SIG_KECCAK: &str = "7e4237ebfbc36613e166bfc5f6229360a9c1949242da97ca04867e4de57b2df30c8340bcb320328cf46d71bda51fcb519e3ce53b348eec62de852e350edbd886";
const SIG_SHA256: &str = "e5847245b38548547f613aaea3421ad47f5b95a222366fb9f9b8c57568feb19c7077fc31e7d83e00acc1347d08c3e1ad50a4eeb6ab044f25c861ddc7be5b8f9f";

fn recover(sig: &[u8], msg: &[u8], hash: u8) -> Call {
    call("0x2::ecdsa_k1::secp256k1_ecrecover", &[], vec![bytes(sig), bytes(msg), vec![hash]])
}

fn verify(sig: &[u8], pk: &[u8], msg: &[u8], hash: u8) -> Call {
    call("0x2::ecdsa_k1::secp256k1_verify", &[], vec![bytes(sig), bytes(pk), bytes(msg), vec![hash]])
}

#[test]
fn sui_vectors() {
    let msg = b"Hello, world!";
    let pk = hex(PK);
    let rec = |s: &str, v: u8| [hex(s), vec![v]].concat();
    let short_pk = &pk[..31];
    let yes = Ok(vec![vec![1u8]]);
    let no = Ok(vec![vec![0u8]]);
    let rows: Vec<(Call, Outcome)> = vec![
        (recover(&rec(SIG_KECCAK, 0), msg, 0), Ok(vec![bytes(&pk)])),
        (recover(&rec(SIG_SHA256, 1), msg, 1), Ok(vec![bytes(&pk)])),
        (recover(&[0; 65], &[0], 1), abort(E_FAIL_TO_RECOVER_PUBKEY)),
        (recover(&hex(SIG_KECCAK), msg, 1), abort(E_INVALID_SIGNATURE)),
        (recover(&rec(SIG_KECCAK, 4), msg, 0), abort(E_INVALID_SIGNATURE)),
        // An unknown hash function fails to recover before the signature is read.
        (recover(&[0; 3], msg, 2), abort(E_FAIL_TO_RECOVER_PUBKEY)),
        (verify(&rec(SIG_KECCAK, 0), &pk, msg, 0), no.clone()),
        (verify(&hex(SIG_KECCAK), &pk, msg, 0), yes.clone()),
        (verify(&hex(SIG_SHA256), &pk, msg, 1), yes.clone()),
        (verify(&hex(SIG_SHA256), &pk, msg, 0), no.clone()),
        (verify(&hex(SIG_SHA256), short_pk, msg, 1), no.clone()),
        (verify(&hex(SIG_SHA256), &pk, msg, 2), no.clone()),
        (verify(&hex(SIG_SHA256), &pk, b"Farewell, world!", 1), no.clone()),
        (call("0x2::ecdsa_k1::decompress_pubkey", &[], vec![bytes(short_pk)]), abort(E_INVALID_PUBKEY)),
    ];
    let (calls, want): (Vec<_>, Vec<_>) = rows.into_iter().unzip();
    let run = Sui::new().run(&calls, &|_| {});
    for (i, (got, want)) in run.outcomes.iter().zip(&want).enumerate() {
        assert_eq!(got, want, "row {i}: {}", calls[i].function);
    }
}

/// The MetaMask example of `test_ecrecover_eth_address`: recover, decompress,
/// keccak256 of the 64 key bytes, last 20 bytes.
#[test]
fn eth_address_recovery() {
    let mut sig = hex("382a3e04daf88f322730f6a2972475fc5646ea8c4a7f3b5e83a90b10ba08a7364cd2f55348f2b6d210fbed7fc485abf19ecb2f3967e410d6349dd7dd1d4487751b");
    sig[64] -= 27;
    let msg = hex("19457468657265756d205369676e6564204d6573736167653a0a3533307836336639613932643864363162343861396666663864353830383034323561333031326430356338696777796b3472316f376f");
    let sui = Sui::new();
    let run = sui.run(&[recover(&sig, &msg, 0)], &|_| {});
    let pk = run.outcomes[0].clone().expect("recovered").remove(0);
    let run = sui.run(&[call("0x2::ecdsa_k1::decompress_pubkey", &[], vec![pk])], &|_| {});
    let full = run.outcomes[0].clone().expect("decompressed").remove(0);
    assert_eq!(full.len(), 66, "65 bytes behind a length byte");
    assert_eq!(full[1], 4);
    let hashed = movejit_sui_natives::keccak256(&full[2..]);
    assert_eq!(hashed[12..], hex("63f9a92d8d61b48a9fff8d58080425a3012d05c8")[..]);
}
