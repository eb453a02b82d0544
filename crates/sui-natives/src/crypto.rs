//! `0x2::ed25519::ed25519_verify` (ZIP215 rules, as fastcrypto's
//! ed25519-consensus verifies), `0x2::hmac::hmac_sha3_256` and
//! `0x2::protocol_config::is_feature_enabled`.

use crate::args::{pop, Args, Registrar};
use crate::object_runtime::ObjectRuntime;
use movejit_runtime::natives::NativeContext;
use movejit_runtime::{Value, VmResult};

/// The bytes of a `&vector<u8>` argument.
fn pop_bytes_ref(cx: &NativeContext<'_>, args: &mut Args) -> VmResult<Vec<u8>> {
    let r = pop(args)?;
    Ok(cx.deref(&r)?.to_bytes()?)
}

/// Whether `signature` (64 bytes) by `public_key` (32 bytes, a valid
/// point encoding) signs `msg`; malformed inputs are `false`.
pub fn ed25519_verify(signature: &[u8], public_key: &[u8], msg: &[u8]) -> bool {
    let Ok(sig) = ed25519_consensus::Signature::try_from(signature) else { return false };
    let Ok(key) = ed25519_consensus::VerificationKey::try_from(public_key) else { return false };
    key.verify(&sig, msg).is_ok()
}

/// HMAC-SHA3-256 (`None` never happens: HMAC takes keys of any length).
pub fn hmac_sha3_256(key: &[u8], msg: &[u8]) -> Option<[u8; 32]> {
    use hmac::Mac;
    let mut mac = hmac::Hmac::<sha3::Sha3_256>::new_from_slice(key).ok()?;
    mac.update(msg);
    Some(mac.finalize().into_bytes().into())
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    r.add("ed25519", "ed25519_verify", |cx, _, mut args: Args| {
        let msg = pop_bytes_ref(cx, &mut args)?;
        let public_key = pop_bytes_ref(cx, &mut args)?;
        let signature = pop_bytes_ref(cx, &mut args)?;
        cx.gas.charge_native(msg.len())?;
        Ok(vec![Value::Bool(ed25519_verify(&signature, &public_key, &msg))])
    });
    r.add("hmac", "hmac_sha3_256", |cx, _, mut args: Args| {
        let msg = pop_bytes_ref(cx, &mut args)?;
        let key = pop_bytes_ref(cx, &mut args)?;
        cx.gas.charge_native(msg.len() + key.len())?;
        let mac = hmac_sha3_256(&key, &msg).ok_or_else(|| movejit_runtime::VmError::invariant("HMAC key"))?;
        Ok(vec![Value::from_bytes(&mac)])
    });
    // Unknown or non-UTF-8 names are disabled, as in Sui.
    r.add("protocol_config", "is_feature_enabled", |cx, _, mut args: Args| {
        let name = pop(&mut args)?.to_bytes()?;
        cx.with_extensions(|ext, _| {
            let on =
                std::str::from_utf8(&name).is_ok_and(|n| ext.get_or_default::<ObjectRuntime>().features.contains(n));
            Ok(vec![Value::Bool(on)])
        })
    });
}
