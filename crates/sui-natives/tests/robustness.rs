//! Every cryptography entry point on pseudo-random inputs (lengths around
//! and far from the valid ones, all hash selectors, valid signatures with
//! one byte changed) returns a value or an abort code, deterministically,
//! and never panics.

use movejit_sui_natives as sui;

/// xorshift64*: reproducible inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn bytes(&mut self, near: &[usize]) -> Vec<u8> {
        let pick = self.next() as usize;
        let base = near[pick % near.len()];
        let len = match self.next() % 4 {
            0 => base,
            1 => base.saturating_sub(1),
            2 => base + 1,
            _ => (self.next() % 300) as usize,
        };
        (0..len).map(|_| self.next() as u8).collect()
    }
}

fn hex(s: &str) -> Vec<u8> {
    ::hex::decode(s).expect("hex")
}

#[test]
fn cryptography_never_panics_and_is_deterministic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let k1_sig = hex("7e4237ebfbc36613e166bfc5f6229360a9c1949242da97ca04867e4de57b2df30c8340bcb320328cf46d71bda51fcb519e3ce53b348eec62de852e350edbd886");
    let k1_pk = hex("02337cca2171fdbfcfd657fa59881f46269f1e590b5ffab6023686c7ad2ecc2c1c");
    for i in 0..1500 {
        let mut sig = rng.bytes(&[48, 64, 65, 96]);
        let pk = rng.bytes(&[32, 33, 48, 65, 96]);
        let msg = rng.bytes(&[0, 13, 64, 136]);
        let hash = (rng.next() % 4) as u8;
        // Every tenth row: a valid signature and key with one byte flipped.
        let (sig, pk) = if i % 10 == 0 {
            let mut s = k1_sig.clone();
            let at = rng.next() as usize % s.len();
            s[at] ^= 1 << (rng.next() % 8);
            (s, k1_pk.clone())
        } else {
            if sig.len() == 65 {
                sig[64] %= 5;
            }
            (sig, pk)
        };
        let a = (
            sui::secp256k1_ecrecover(&sig, &msg, hash),
            sui::decompress_pubkey(&pk),
            sui::secp256k1_verify(&sig, &pk, &msg, hash),
            sui::secp256r1_ecrecover(&sig, &msg, hash),
            sui::secp256r1_verify(&sig, &pk, &msg, hash),
            sui::ed25519_verify(&sig, &pk, &msg),
            sui::hmac_sha3_256(&pk, &msg),
            sui::bls12381_min_sig_verify(&sig, &pk, &msg),
            sui::bls12381_min_pk_verify(&sig, &pk, &msg),
        );
        let b = (
            sui::secp256k1_ecrecover(&sig, &msg, hash),
            sui::decompress_pubkey(&pk),
            sui::secp256k1_verify(&sig, &pk, &msg, hash),
            sui::secp256r1_ecrecover(&sig, &msg, hash),
            sui::secp256r1_verify(&sig, &pk, &msg, hash),
            sui::ed25519_verify(&sig, &pk, &msg),
            sui::hmac_sha3_256(&pk, &msg),
            sui::bls12381_min_sig_verify(&sig, &pk, &msg),
            sui::bls12381_min_pk_verify(&sig, &pk, &msg),
        );
        assert_eq!(a, b, "row {i}");
        if let Err(code) = a.0 {
            assert!(code <= sui::E_INVALID_SIGNATURE, "row {i}: ecrecover abort {code}");
        }
        if let Err(code) = a.3 {
            assert!(code <= sui::E_R1_INVALID_SIGNATURE, "row {i}: r1 ecrecover abort {code}");
        }
        assert!(a.6.is_some(), "HMAC takes every key");
        if i % 10 == 0 {
            assert!(!a.2 || sig == k1_sig, "row {i}: a changed signature verified");
        }
    }
}
