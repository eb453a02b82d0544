//! `0x1::secp256k1::ecdsa_recover_internal(message, recovery_id, signature)`:
//! the signer's 64-byte raw public key (uncompressed, without the `0x04`
//! prefix) and `true`, or `(vector[], false)` when nothing recovers. Over
//! libsecp256k1 0.7, as Aptos: a message that is not 32 bytes, a recovery
//! id above 3 or a signature that is not 64 bytes of `r < n`, `s < n`
//! aborts with `NFE_DESERIALIZE`.

use crate::args::{pop, Args, Registrar};
use movejit_runtime::gas::native::NativeParam as P;
use movejit_runtime::{GasMeter, Value, VmError, VmResult};

const BASE: P = P::named("aptos_framework.secp256k1.base");
const ECDSA_RECOVER: P = P::named("aptos_framework.secp256k1.ecdsa_recover");

/// `error::invalid_argument(1)`.
pub const NFE_DESERIALIZE: u64 = 0x01_0001;

/// Recovers the raw public key, `Ok(None)` when the signature recovers
/// none, charging Aptos's gas: the base, then (once the inputs parse) the
/// recovery.
fn ecdsa_recover(gas: &mut GasMeter, msg: &[u8], recovery_id: u8, sig: &[u8]) -> VmResult<Option<[u8; 64]>> {
    gas.charge_aptos_native(&[(BASE, 1)])?;
    let deserialize = |_| VmError::abort(NFE_DESERIALIZE);
    let msg = libsecp256k1::Message::parse_slice(msg).map_err(deserialize)?;
    let rid = libsecp256k1::RecoveryId::parse(recovery_id).map_err(deserialize)?;
    let sig = libsecp256k1::Signature::parse_standard_slice(sig).map_err(deserialize)?;
    gas.charge_aptos_native(&[(ECDSA_RECOVER, 1)])?;
    Ok(libsecp256k1::recover(&msg, &sig, &rid).ok().map(|pk| {
        let full = pk.serialize();
        let mut raw = [0u8; 64];
        raw.copy_from_slice(&full[1..]);
        raw
    }))
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    r.add("secp256k1", "ecdsa_recover_internal", |cx, _, mut args: Args| {
        let sig = pop(&mut args)?.to_bytes()?;
        let rid = match pop(&mut args)? {
            Value::U8(x) => x,
            v => return Err(VmError::invariant(format!("secp256k1: expected u8, got {v:?}"))),
        };
        let msg = pop(&mut args)?.to_bytes()?;
        cx.gas.charge_native(msg.len() + sig.len())?;
        Ok(match ecdsa_recover(cx.gas, &msg, rid, &sig)? {
            Some(pk) => vec![Value::from_bytes(&pk), Value::Bool(true)],
            None => vec![Value::from_bytes(&[]), Value::Bool(false)],
        })
    });
}
