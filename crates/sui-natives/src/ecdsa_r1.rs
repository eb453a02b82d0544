//! `0x2::ecdsa_r1`: secp256r1 public-key recovery and verification as
//! fastcrypto runs them (keys and signatures parsed by p256; verification
//! wants low `s`; recovered keys are compressed).

use crate::args::{pop, Args, Registrar};
use ecdsa::RecoveryId;
use movejit_runtime::natives::NativeContext;
use movejit_runtime::{Value, VmError, VmResult};
use p256::ecdsa::signature::hazmat::PrehashVerifier;
use p256::ecdsa::{Signature, VerifyingKey};

pub const E_R1_FAIL_TO_RECOVER_PUBKEY: u64 = 0;
pub const E_R1_INVALID_SIGNATURE: u64 = 1;

fn digest(hash: u8, msg: &[u8]) -> Option<[u8; 32]> {
    match hash {
        0 => Some(crate::hash::keccak256(msg)),
        1 => {
            use sha2::Digest;
            Some(sha2::Sha256::digest(msg).into())
        }
        _ => None,
    }
}

/// The compressed public key that signed `msg` (digested by `hash`: 0
/// keccak256, 1 sha256), or the abort code.
pub fn secp256r1_ecrecover(signature: &[u8], msg: &[u8], hash: u8) -> Result<[u8; 33], u64> {
    let prehash = digest(hash, msg).ok_or(E_R1_FAIL_TO_RECOVER_PUBKEY)?;
    let (rs, v) = match signature {
        [rs @ .., v] if rs.len() == 64 => (rs, *v),
        _ => return Err(E_R1_INVALID_SIGNATURE),
    };
    let id = RecoveryId::from_byte(v).ok_or(E_R1_INVALID_SIGNATURE)?;
    let sig = Signature::from_slice(rs).map_err(|_| E_R1_INVALID_SIGNATURE)?;
    let vk = VerifyingKey::recover_from_prehash(&prehash, &sig, id).map_err(|_| E_R1_FAIL_TO_RECOVER_PUBKEY)?;
    let point = vk.to_encoded_point(true);
    point.as_bytes().try_into().map_err(|_| E_R1_FAIL_TO_RECOVER_PUBKEY)
}

/// Whether the 64-byte `signature` (low `s`) by `public_key` signs `msg`;
/// malformed inputs and unknown hash functions are `false`.
pub fn secp256r1_verify(signature: &[u8], public_key: &[u8], msg: &[u8], hash: u8) -> bool {
    let Some(prehash) = digest(hash, msg) else { return false };
    if signature.len() != 64 {
        return false;
    }
    let Ok(sig) = Signature::from_slice(signature) else { return false };
    if sig.normalize_s().is_some() {
        return false;
    }
    let Ok(vk) = VerifyingKey::from_sec1_bytes(public_key) else { return false };
    vk.verify_prehash(&prehash, &sig).is_ok()
}

fn pop_bytes_ref(cx: &NativeContext<'_>, args: &mut Args) -> VmResult<Vec<u8>> {
    let r = pop(args)?;
    Ok(cx.deref(&r)?.to_bytes()?)
}

fn pop_u8(args: &mut Args) -> VmResult<u8> {
    match pop(args)? {
        Value::U8(h) => Ok(h),
        v => Err(VmError::invariant(format!("expected u8, got {v:?}"))),
    }
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    r.add("ecdsa_r1", "secp256r1_ecrecover", |cx, _, mut args: Args| {
        let hash = pop_u8(&mut args)?;
        let msg = pop_bytes_ref(cx, &mut args)?;
        let signature = pop_bytes_ref(cx, &mut args)?;
        cx.gas.charge_native(msg.len())?;
        match secp256r1_ecrecover(&signature, &msg, hash) {
            Ok(pk) => Ok(vec![Value::from_bytes(&pk)]),
            Err(code) => Err(VmError::abort(code)),
        }
    });
    r.add("ecdsa_r1", "secp256r1_verify", |cx, _, mut args: Args| {
        let hash = pop_u8(&mut args)?;
        let msg = pop_bytes_ref(cx, &mut args)?;
        let public_key = pop_bytes_ref(cx, &mut args)?;
        let signature = pop_bytes_ref(cx, &mut args)?;
        cx.gas.charge_native(msg.len())?;
        Ok(vec![Value::Bool(secp256r1_verify(&signature, &public_key, &msg, hash))])
    });
}
