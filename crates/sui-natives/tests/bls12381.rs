//! `0x2::bls12381` verification with the vectors of Sui's
//! `bls12381_tests.move` (min-sig, and a drand round for min-pk), through
//! the framework on tree, flat and jit.

mod common;

use common::*;

fn hex(s: &str) -> Vec<u8> {
    ::hex::decode(s).expect("hex")
}

const MIN_SIG_PK: &str = "8df101606f91f3cad7f54b8aff0f0f64c41c482d9b9f9fe81d2b607bc5f611bdfa8017cf04b47b44b222c356ef555fbd11058c52c077f5a7ec6a15ccfd639fdc9bd47d005a111dd6cdb8c02fe49608df55a3c9822986ad0b86bdea3abfdfe464";
const MIN_SIG_SIG: &str =
    "908e345f2e2803cd941ae88c218c96194233c9053fa1bca52124787d3cca141c36429d7652435a820c72992d5eee6317";
const DRAND_PK: &str =
    "868f005eb8e6e4ca0a47c8a77ceaa5309a47978a7c71bc5cce96366b5d7a569937c529eeda66c7293784a9402801af31";
const DRAND_SIG: &str = "a2cd8577944b84484ef557a7f92f0d5092779497cc470b1b97680b8f7c807d97250d310b801c7c2185c7c8a21032d45403b97530ca87bd8f05d0cf4ffceb4bcb9bf7184fb604967db7e9e6ea555bc51b25a9e41fbd51181f712aa73aaec749fe";
const DRAND_PREV: &str = "a96aace596906562dc525dba4dff734642d71b334d51324f9c9bcb5a3d6caf14b05cde91d6507bf4615cb4285e5b4efd1358ebc46b80b51e338f9dc46cca17cf2e046765ba857c04101a560887fa81aef101a5bb3b2350884558bd3adc72be37";

/// drand's message: sha256(previous signature ‖ round, big endian).
fn drand_message(round: u64) -> Vec<u8> {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(hex(DRAND_PREV));
    h.update(round.to_be_bytes());
    h.finalize().to_vec()
}

fn min_sig(sig: &[u8], pk: &[u8], msg: &[u8]) -> Call {
    call("0x2::bls12381::bls12381_min_sig_verify", &[], vec![bytes(sig), bytes(pk), bytes(msg)])
}

fn min_pk(sig: &[u8], pk: &[u8], msg: &[u8]) -> Call {
    call("0x2::bls12381::bls12381_min_pk_verify", &[], vec![bytes(sig), bytes(pk), bytes(msg)])
}

#[test]
fn sui_vectors() {
    let yes = Ok(vec![vec![1u8]]);
    let no = Ok(vec![vec![0u8]]);
    let (pk, sig) = (hex(MIN_SIG_PK), hex(MIN_SIG_SIG));
    let mut bad_sig = sig.clone();
    bad_sig[3] = 0;
    let (dpk, dsig) = (hex(DRAND_PK), hex(DRAND_SIG));
    let mut bad_dsig = dsig.clone();
    bad_dsig[0] = 0x11;
    bad_dsig[1] = 0x11;
    let round = 2373935;
    // The identity of G2 (compressed, infinity bit) decodes as a signature but verifies nothing.
    let mut g2_identity = vec![0u8; 96];
    g2_identity[0] = 0xc0;
    let rows: Vec<(Call, Outcome)> = vec![
        (min_sig(&sig, &pk, &hex("0101010101")), yes.clone()),
        (min_sig(&sig, &pk, &hex("0201010101")), no.clone()),
        (min_sig(&bad_sig, &pk[3..], &hex("0201010101")), no.clone()),
        (min_sig(&sig, &pk[3..], &hex("0201010101")), no.clone()),
        (min_pk(&dsig, &dpk, &drand_message(round)), yes.clone()),
        (min_pk(&bad_dsig, &dpk, &drand_message(round)), no.clone()),
        (min_pk(&dsig, &dpk, &drand_message(round + 1)), no.clone()),
        (min_pk(&dsig[1..], &dpk, &drand_message(round)), no.clone()),
        (min_pk(&dsig, &dpk[1..], &drand_message(round)), no.clone()),
        (min_pk(&g2_identity, &dpk, &drand_message(round)), no.clone()),
        // Signature and key swapped between schemes.
        (min_sig(&dsig, &dpk, &drand_message(round)), no.clone()),
    ];
    let (calls, want): (Vec<_>, Vec<_>) = rows.into_iter().unzip();
    let run = Sui::new().run(&calls, &|_| {});
    for (i, (got, want)) in run.outcomes.iter().zip(&want).enumerate() {
        assert_eq!(got, want, "row {i}: {}", calls[i].function);
    }
}
