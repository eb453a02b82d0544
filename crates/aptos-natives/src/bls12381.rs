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
use movejit_runtime::{Value, VmError, VmResult};

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
        Ok(vec![Value::Bool(validate_pubkey(&pk))])
    });
    r.add("bls12381", "signature_subgroup_check_internal", |cx, _, mut args: Args| {
        let sig = bytes(&mut args)?;
        cx.gas.charge_native(sig.len())?;
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
            Ok(vec![Value::Bool(verify(&sig, &pk, &msg, check_pk_subgroup))])
        });
    }
    r.add("bls12381", "verify_proof_of_possession_internal", |cx, _, mut args: Args| {
        let pop_bytes = bytes(&mut args)?;
        let pk = bytes(&mut args)?;
        cx.gas.charge_native(pk.len() + pop_bytes.len())?;
        Ok(vec![Value::Bool(verify_proof_of_possession(&pk, &pop_bytes))])
    });
    r.add("bls12381", "aggregate_pubkeys_internal", |cx, _, mut args: Args| {
        let pks = wrapped_bytes(&mut args)?;
        cx.gas.charge_native(total(&pks))?;
        Ok(maybe_bytes(aggregate_pubkeys(&pks).as_ref().map(|b| &b[..])))
    });
    r.add("bls12381", "aggregate_signatures_internal", |cx, _, mut args: Args| {
        let sigs = wrapped_bytes(&mut args)?;
        cx.gas.charge_native(total(&sigs))?;
        Ok(maybe_bytes(aggregate_signatures(&sigs).as_ref().map(|b| &b[..])))
    });
    r.add("bls12381", "verify_aggregate_signature_internal", |cx, _, mut args: Args| {
        let msgs = bytes_list(&mut args)?;
        let pks = wrapped_bytes(&mut args)?;
        let aggsig = bytes(&mut args)?;
        cx.gas.charge_native(total(&msgs) + total(&pks) + aggsig.len())?;
        Ok(vec![Value::Bool(verify_aggregate(&aggsig, &pks, &msgs))])
    });
}
