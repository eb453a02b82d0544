//! `0x2::bls12381`: BLS signature verification, min-sig (signatures in G1)
//! and min-pk (signatures in G2), as fastcrypto runs it over blst: the key
//! must be a valid subgroup point other than the identity, the signature a
//! subgroup point (the identity allowed), checked once at decoding.

use crate::args::{pop, Args, Registrar};
use blst::BLST_ERROR;
use movejit_runtime::natives::NativeContext;
use movejit_runtime::{Value, VmResult};

const MIN_SIG_DST: &[u8] = b"BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_";
const MIN_PK_DST: &[u8] = b"BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_NUL_";

/// `bls12381_min_sig_verify`: a 48-byte G1 signature, a 96-byte G2 key.
pub fn bls12381_min_sig_verify(signature: &[u8], public_key: &[u8], msg: &[u8]) -> bool {
    use blst::min_sig::{PublicKey, Signature};
    let Ok(sig) = Signature::sig_validate(signature, false) else { return false };
    let Ok(pk) = PublicKey::key_validate(public_key) else { return false };
    sig.verify(false, msg, MIN_SIG_DST, &[], &pk, false) == BLST_ERROR::BLST_SUCCESS
}

/// `bls12381_min_pk_verify`: a 96-byte G2 signature, a 48-byte G1 key.
pub fn bls12381_min_pk_verify(signature: &[u8], public_key: &[u8], msg: &[u8]) -> bool {
    use blst::min_pk::{PublicKey, Signature};
    let Ok(sig) = Signature::sig_validate(signature, false) else { return false };
    let Ok(pk) = PublicKey::key_validate(public_key) else { return false };
    sig.verify(false, msg, MIN_PK_DST, &[], &pk, false) == BLST_ERROR::BLST_SUCCESS
}

fn pop_bytes_ref(cx: &NativeContext<'_>, args: &mut Args) -> VmResult<Vec<u8>> {
    let r = pop(args)?;
    Ok(cx.deref(&r)?.to_bytes()?)
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    type Verify = fn(&[u8], &[u8], &[u8]) -> bool;
    let natives: [(&str, Verify); 2] =
        [("bls12381_min_sig_verify", bls12381_min_sig_verify), ("bls12381_min_pk_verify", bls12381_min_pk_verify)];
    for (name, verify) in natives {
        r.add("bls12381", name, move |cx, _, mut args: Args| {
            let msg = pop_bytes_ref(cx, &mut args)?;
            let public_key = pop_bytes_ref(cx, &mut args)?;
            let signature = pop_bytes_ref(cx, &mut args)?;
            cx.gas.charge_native(msg.len())?;
            Ok(vec![Value::Bool(verify(&signature, &public_key, &msg))])
        });
    }
}
