//! `0x2::ecdsa_k1`: secp256k1 public-key recovery, key decompression and
//! verification, over libsecp256k1 as fastcrypto runs it (recovery takes
//! any `s`; verification wants low `s`; keys parse compressed,
//! uncompressed or hybrid; recovered keys are compressed).

use crate::args::{pop, Args, Registrar};
use movejit_runtime::natives::NativeContext;
use movejit_runtime::{Value, VmError, VmResult};
use secp256k1::ecdsa::{RecoverableSignature, RecoveryId, Signature};
use secp256k1::{Message, PublicKey, Secp256k1};

pub const E_FAIL_TO_RECOVER_PUBKEY: u64 = 0;
pub const E_INVALID_SIGNATURE: u64 = 1;
pub const E_INVALID_PUBKEY: u64 = 2;

/// The `hash` argument: how the message is digested.
const KECCAK256: u8 = 0;
const SHA256: u8 = 1;

fn digest(hash: u8, msg: &[u8]) -> Option<Message> {
    let d: [u8; 32] = match hash {
        KECCAK256 => crate::hash::keccak256(msg),
        SHA256 => {
            use sha2::Digest;
            sha2::Sha256::digest(msg).into()
        }
        _ => return None,
    };
    Some(Message::from_digest(d))
}

/// The compressed public key that signed `msg` (digested by `hash`), or
/// the abort code.
pub fn secp256k1_ecrecover(signature: &[u8], msg: &[u8], hash: u8) -> Result<[u8; 33], u64> {
    let message = digest(hash, msg).ok_or(E_FAIL_TO_RECOVER_PUBKEY)?;
    let sig = (|| {
        let (rs, v) = match signature {
            [rs @ .., v] if rs.len() == 64 => (rs, *v),
            _ => return None,
        };
        let id = RecoveryId::from_i32(i32::from(v)).ok()?;
        RecoverableSignature::from_compact(rs, id).ok()
    })()
    .ok_or(E_INVALID_SIGNATURE)?;
    let pk = Secp256k1::verification_only().recover_ecdsa(&message, &sig).map_err(|_| E_FAIL_TO_RECOVER_PUBKEY)?;
    Ok(pk.serialize())
}

/// The 65-byte uncompressed form of a public key.
pub fn decompress_pubkey(key: &[u8]) -> Result<[u8; 65], u64> {
    PublicKey::from_slice(key).map(|pk| pk.serialize_uncompressed()).map_err(|_| E_INVALID_PUBKEY)
}

/// Whether the 64-byte `signature` by `public_key` signs `msg`; malformed
/// inputs and unknown hash functions are `false`.
pub fn secp256k1_verify(signature: &[u8], public_key: &[u8], msg: &[u8], hash: u8) -> bool {
    let Some(message) = digest(hash, msg) else { return false };
    if signature.len() != 64 {
        return false;
    }
    let Ok(sig) = Signature::from_compact(signature) else { return false };
    let Ok(pk) = PublicKey::from_slice(public_key) else { return false };
    Secp256k1::verification_only().verify_ecdsa(&message, &sig, &pk).is_ok()
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
    r.add("ecdsa_k1", "secp256k1_ecrecover", |cx, _, mut args: Args| {
        let hash = pop_u8(&mut args)?;
        let msg = pop_bytes_ref(cx, &mut args)?;
        let signature = pop_bytes_ref(cx, &mut args)?;
        cx.gas.charge_native(msg.len())?;
        match secp256k1_ecrecover(&signature, &msg, hash) {
            Ok(pk) => Ok(vec![Value::from_bytes(&pk)]),
            Err(code) => Err(VmError::abort(code)),
        }
    });
    r.add("ecdsa_k1", "decompress_pubkey", |cx, _, mut args: Args| {
        let key = pop_bytes_ref(cx, &mut args)?;
        cx.gas.charge_native(0)?;
        match decompress_pubkey(&key) {
            Ok(pk) => Ok(vec![Value::from_bytes(&pk)]),
            Err(code) => Err(VmError::abort(code)),
        }
    });
    r.add("ecdsa_k1", "secp256k1_verify", |cx, _, mut args: Args| {
        let hash = pop_u8(&mut args)?;
        let msg = pop_bytes_ref(cx, &mut args)?;
        let public_key = pop_bytes_ref(cx, &mut args)?;
        let signature = pop_bytes_ref(cx, &mut args)?;
        cx.gas.charge_native(msg.len())?;
        Ok(vec![Value::Bool(secp256k1_verify(&signature, &public_key, &msg, hash))])
    });
}
