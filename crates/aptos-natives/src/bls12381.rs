//! `0x1::bls12381`: BLS signatures over BLS12-381 (public keys in G1,
//! signatures in G2, "min-pk"), with aptos-crypto's rules on top of blst:
//! keys and signatures deserialize from compressed (48 / 96 bytes) or
//! uncompressed (96 / 192 bytes) encodings; signature verification checks
//! the signature's subgroup but not the key's, except `verify_normal_signature`,
//! which subgroup-checks the key first; proofs of possession check both.
//! Malformed input is a `false` (or `(vector[], false)`) result.

use crate::args::{pop, Args, Registrar};
use blst::min_pk::{AggregatePublicKey, AggregateSignature, PublicKey, Signature};
use blst::BLST_ERROR;
use movejit_runtime::gas::native::NativeParam as P;
use movejit_runtime::{Value, VmError, VmResult};

const BASE: P = P::named("aptos_framework.bls12381.base");
const PER_PUBKEY_DESERIALIZE: P = P::named("aptos_framework.bls12381.per_pubkey_deserialize");
const PER_PUBKEY_AGGREGATE: P = P::named("aptos_framework.bls12381.per_pubkey_aggregate");
const PER_SIG_DESERIALIZE: P = P::named("aptos_framework.bls12381.per_sig_deserialize");
const PER_SIG_AGGREGATE: P = P::named("aptos_framework.bls12381.per_sig_aggregate");
const PER_SIG_SUBGROUP_CHECK: P = P::named("aptos_framework.bls12381.per_sig_subgroup_check");
const PER_SIG_VERIFY: P = P::named("aptos_framework.bls12381.per_sig_verify");
const PER_POP_VERIFY: P = P::named("aptos_framework.bls12381.per_pop_verify");
const PER_PAIRING: P = P::named("aptos_framework.bls12381.per_pairing");
const PER_MSG_HASHING: P = P::named("aptos_framework.bls12381.per_msg_hashing");
const PER_BYTE_HASHING: P = P::named("aptos_framework.bls12381.per_byte_hashing");

/// A native's Aptos charges, in Aptos's order, up to where it returns
/// early (these natives never abort after a charge: charging the terms
/// together ends the same way).
type Terms = Vec<(P, u64)>;

/// Deserializing `items` one by one up to the first that fails: how many
/// Aptos charges for (that one included).
fn deserialized<T>(items: &[Vec<u8>], parse: impl Fn(&[u8]) -> Option<T>) -> (u64, bool) {
    let ok = items.iter().take_while(|b| parse(b).is_some()).count();
    ((ok + 1).min(items.len()) as u64, ok == items.len())
}

/// `validate_pubkey_internal`: deserializing, then the subgroup check
/// (which Aptos prices as a second deserialization).
fn validate_pubkey_terms(pk: &[u8]) -> Terms {
    let mut t = vec![(BASE, 1), (PER_PUBKEY_DESERIALIZE, 1)];
    if public_key(pk).is_some() {
        t.push((PER_PUBKEY_DESERIALIZE, 1));
    }
    t
}

fn subgroup_check_terms(sig: &[u8]) -> Terms {
    let mut t = vec![(BASE, 1), (PER_SIG_DESERIALIZE, 1)];
    if signature(sig).is_some() {
        t.push((PER_SIG_SUBGROUP_CHECK, 1));
    }
    t
}

/// `verify_*_signature_internal` (as `verify`).
fn verify_terms(sig: &[u8], pk: &[u8], msg: &[u8], check_pk_subgroup: bool) -> Terms {
    let mut t = vec![(BASE, 1), (PER_PUBKEY_DESERIALIZE, 1)];
    let Some(key) = public_key(pk) else { return t };
    if check_pk_subgroup {
        t.push((PER_PUBKEY_DESERIALIZE, 1));
        if key.validate().is_err() {
            return t;
        }
    }
    t.push((PER_SIG_DESERIALIZE, 1));
    if signature(sig).is_some() {
        t.extend([(PER_SIG_VERIFY, 1), (PER_MSG_HASHING, 1), (PER_BYTE_HASHING, msg.len() as u64)]);
    }
    t
}

fn pop_terms(pk: &[u8], pop: &[u8]) -> Terms {
    let mut t = vec![(BASE, 1), (PER_PUBKEY_DESERIALIZE, 1)];
    if public_key(pk).is_some() {
        t.push((PER_SIG_DESERIALIZE, 1));
        if signature(pop).is_some() {
            t.push((PER_POP_VERIFY, 1));
        }
    }
    t
}

/// `aggregate_pubkeys_internal` / `aggregate_signatures_internal`.
fn aggregate_terms<T>(items: &[Vec<u8>], parse: impl Fn(&[u8]) -> Option<T>, keys: bool) -> Terms {
    let mut t = vec![(BASE, 1)];
    if items.is_empty() {
        return t;
    }
    let (deserialize, aggregate) =
        if keys { (PER_PUBKEY_DESERIALIZE, PER_PUBKEY_AGGREGATE) } else { (PER_SIG_DESERIALIZE, PER_SIG_AGGREGATE) };
    let (looked_at, all) = deserialized(items, parse);
    t.push((deserialize, looked_at));
    if all {
        t.push((aggregate, items.len() as u64));
    }
    t
}

fn verify_aggregate_terms(aggsig: &[u8], pks: &[Vec<u8>], msgs: &[Vec<u8>]) -> Terms {
    let mut t = vec![(BASE, 1)];
    if pks.len() != msgs.len() {
        return t;
    }
    let (looked_at, all) = deserialized(pks, public_key);
    t.push((PER_PUBKEY_DESERIALIZE, looked_at));
    if !all {
        return t;
    }
    t.push((PER_SIG_DESERIALIZE, 1));
    if signature(aggsig).is_some() {
        let bytes: usize = msgs.iter().map(Vec::len).sum();
        t.extend([
            (PER_PAIRING, msgs.len() as u64 + 1),
            (PER_MSG_HASHING, msgs.len() as u64),
            (PER_BYTE_HASHING, bytes as u64),
        ]);
    }
    t
}

/// Domain separation tag of signatures (proof-of-possession scheme).
pub const DST_BLS_SIG_IN_G2_WITH_POP: &[u8] = b"BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_";
/// Domain separation tag of proofs of possession.
pub const DST_BLS_POP_IN_G2: &[u8] = b"BLS_POP_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_";

fn public_key(b: &[u8]) -> Option<PublicKey> {
    PublicKey::from_bytes(b).ok()
}

fn signature(b: &[u8]) -> Option<Signature> {
    Signature::from_bytes(b).ok()
}

/// `validate_pubkey_internal`: decodes, not the identity, in the prime-order subgroup.
pub fn validate_pubkey(pk: &[u8]) -> bool {
    public_key(pk).is_some_and(|k| k.validate().is_ok())
}

/// `signature_subgroup_check_internal`: decodes, not the identity, in the subgroup.
pub fn signature_subgroup_check(sig: &[u8]) -> bool {
    signature(sig).is_some_and(|s| s.validate(true).is_ok())
}

/// Verifies `sig` on `msg` under `pk` (signature subgroup-checked; the key
/// only when `check_pk_subgroup`).
pub fn verify(sig: &[u8], pk: &[u8], msg: &[u8], check_pk_subgroup: bool) -> bool {
    let Some(pk) = public_key(pk) else { return false };
    if check_pk_subgroup && pk.validate().is_err() {
        return false;
    }
    let Some(sig) = signature(sig) else { return false };
    sig.verify(true, msg, DST_BLS_SIG_IN_G2_WITH_POP, &[], &pk, false) == BLST_ERROR::BLST_SUCCESS
}

/// `verify_proof_of_possession_internal`: a signature on the key's compressed
/// encoding under the PoP tag, key and signature both subgroup-checked.
pub fn verify_proof_of_possession(pk: &[u8], pop: &[u8]) -> bool {
    let Some(pk) = public_key(pk) else { return false };
    let Some(pop) = signature(pop) else { return false };
    pop.verify(true, &pk.to_bytes(), DST_BLS_POP_IN_G2, &[], &pk, true) == BLST_ERROR::BLST_SUCCESS
}

/// `aggregate_pubkeys_internal`: the compressed sum, if there is at least
/// one key and all decode.
pub fn aggregate_pubkeys(pks: &[Vec<u8>]) -> Option<[u8; 48]> {
    let keys: Option<Vec<PublicKey>> = pks.iter().map(|b| public_key(b)).collect();
    let keys = keys?;
    let refs: Vec<&PublicKey> = keys.iter().collect();
    AggregatePublicKey::aggregate(&refs, false).ok().map(|a| a.to_public_key().to_bytes())
}

/// `aggregate_signatures_internal`: the compressed sum, if there is at
/// least one signature and all decode.
pub fn aggregate_signatures(sigs: &[Vec<u8>]) -> Option<[u8; 96]> {
    let sigs: Option<Vec<Signature>> = sigs.iter().map(|b| signature(b)).collect();
    let sigs = sigs?;
    let refs: Vec<&Signature> = sigs.iter().collect();
    AggregateSignature::aggregate(&refs, false).ok().map(|a| a.to_signature().to_bytes())
}

/// `verify_aggregate_signature_internal`: `aggsig` on `msgs[i]` under `pks[i]`.
pub fn verify_aggregate(aggsig: &[u8], pks: &[Vec<u8>], msgs: &[Vec<u8>]) -> bool {
    if pks.len() != msgs.len() {
        return false;
    }
    let keys: Option<Vec<PublicKey>> = pks.iter().map(|b| public_key(b)).collect();
    let Some(keys) = keys else { return false };
    let Some(sig) = signature(aggsig) else { return false };
    let key_refs: Vec<&PublicKey> = keys.iter().collect();
    let msg_refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
    sig.aggregate_verify(true, &msg_refs, DST_BLS_SIG_IN_G2_WITH_POP, &key_refs, false) == BLST_ERROR::BLST_SUCCESS
}

fn bytes(args: &mut Args) -> VmResult<Vec<u8>> {
    Ok(pop(args)?.to_bytes()?)
}

/// A `vector<S>` of one-field structs holding bytes (`PublicKeyWithPoP`, `Signature`).
fn wrapped_bytes(args: &mut Args) -> VmResult<Vec<Vec<u8>>> {
    pop(args)?
        .into_vec()?
        .into_iter()
        .map(|s| match s {
            Value::Struct(mut f) if f.len() == 1 => Ok(f.remove(0).to_bytes()?),
            v => Err(VmError::invariant(format!("bls12381: expected a bytes struct, got {v:?}"))),
        })
        .collect()
}

fn bytes_list(args: &mut Args) -> VmResult<Vec<Vec<u8>>> {
    pop(args)?.into_vec()?.iter().map(|m| Ok(m.to_bytes()?)).collect()
}

fn total(items: &[Vec<u8>]) -> usize {
    items.iter().map(Vec::len).sum()
}

/// `(bytes, true)` or `(vector[], false)`.
fn maybe_bytes(b: Option<&[u8]>) -> Vec<Value> {
    match b {
        Some(b) => vec![Value::from_bytes(b), Value::Bool(true)],
        None => vec![Value::from_bytes(&[]), Value::Bool(false)],
    }
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    r.add("bls12381", "validate_pubkey_internal", |cx, _, mut args: Args| {
        let pk = bytes(&mut args)?;
        cx.gas.charge_native(pk.len())?;
        cx.gas.charge_aptos_native(&validate_pubkey_terms(&pk))?;
        Ok(vec![Value::Bool(validate_pubkey(&pk))])
    });
    r.add("bls12381", "signature_subgroup_check_internal", |cx, _, mut args: Args| {
        let sig = bytes(&mut args)?;
        cx.gas.charge_native(sig.len())?;
        cx.gas.charge_aptos_native(&subgroup_check_terms(&sig))?;
        Ok(vec![Value::Bool(signature_subgroup_check(&sig))])
    });
    for (name, check_pk_subgroup) in [
        ("verify_normal_signature_internal", true),
        ("verify_multisignature_internal", false),
        ("verify_signature_share_internal", false),
    ] {
        r.add("bls12381", name, move |cx, _, mut args: Args| {
            let msg = bytes(&mut args)?;
            let pk = bytes(&mut args)?;
            let sig = bytes(&mut args)?;
            cx.gas.charge_native(msg.len() + pk.len() + sig.len())?;
            cx.gas.charge_aptos_native(&verify_terms(&sig, &pk, &msg, check_pk_subgroup))?;
            Ok(vec![Value::Bool(verify(&sig, &pk, &msg, check_pk_subgroup))])
        });
    }
    r.add("bls12381", "verify_proof_of_possession_internal", |cx, _, mut args: Args| {
        let pop_bytes = bytes(&mut args)?;
        let pk = bytes(&mut args)?;
        cx.gas.charge_native(pk.len() + pop_bytes.len())?;
        cx.gas.charge_aptos_native(&pop_terms(&pk, &pop_bytes))?;
        Ok(vec![Value::Bool(verify_proof_of_possession(&pk, &pop_bytes))])
    });
    r.add("bls12381", "aggregate_pubkeys_internal", |cx, _, mut args: Args| {
        let pks = wrapped_bytes(&mut args)?;
        cx.gas.charge_native(total(&pks))?;
        cx.gas.charge_aptos_native(&aggregate_terms(&pks, public_key, true))?;
        Ok(maybe_bytes(aggregate_pubkeys(&pks).as_ref().map(|b| &b[..])))
    });
    r.add("bls12381", "aggregate_signatures_internal", |cx, _, mut args: Args| {
        let sigs = wrapped_bytes(&mut args)?;
        cx.gas.charge_native(total(&sigs))?;
        cx.gas.charge_aptos_native(&aggregate_terms(&sigs, signature, false))?;
        Ok(maybe_bytes(aggregate_signatures(&sigs).as_ref().map(|b| &b[..])))
    });
    r.add("bls12381", "verify_aggregate_signature_internal", |cx, _, mut args: Args| {
        let msgs = bytes_list(&mut args)?;
        let pks = wrapped_bytes(&mut args)?;
        let aggsig = bytes(&mut args)?;
        cx.gas.charge_native(total(&msgs) + total(&pks) + aggsig.len())?;
        cx.gas.charge_aptos_native(&verify_aggregate_terms(&aggsig, &pks, &msgs))?;
        Ok(vec![Value::Bool(verify_aggregate(&aggsig, &pks, &msgs))])
    });
}
