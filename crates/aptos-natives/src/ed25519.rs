//! `0x1::ed25519` and `0x1::multi_ed25519`: public-key validation and
//! strict signature verification with Aptos's rules.
//!
//! Verification is ed25519-dalek 1.0.1's `verify_strict` (the version
//! aptos-crypto uses): `s` must be canonical (`s < L`, checked first, as
//! Aptos does), `R` and `A` must decompress and not be of small order, and
//! `[s]B - [k]A` must equal `R` as a point. Malformed input is a `false`
//! result, never an abort, except where Aptos aborts.
//!
//! Feature flags are those of a current Aptos network:
//! `ED25519_PUBKEY_VALIDATE_RETURN_FALSE_WRONG_LENGTH` is on (a key of the
//! wrong length validates to `false`), and the multi-key validators are the
//! "gas fix" v1 and the threshold-checking v2.

use crate::args::{pop, Args, Registrar};
use curve25519_dalek_ng::edwards::CompressedEdwardsY;
use movejit_runtime::gas::native::NativeParam as P;
use movejit_runtime::{Value, VmResult};

// Aptos prices Ed25519 and MultiEd25519 with the `signature.*` parameters.
const BASE: P = P::named("aptos_framework.signature.base");
const PER_PUBKEY_DESERIALIZE: P = P::named("aptos_framework.signature.per_pubkey_deserialize");
const PER_PUBKEY_SMALL_ORDER_CHECK: P = P::named("aptos_framework.signature.per_pubkey_small_order_check");
const PER_SIG_DESERIALIZE: P = P::named("aptos_framework.signature.per_sig_deserialize");
const PER_SIG_STRICT_VERIFY: P = P::named("aptos_framework.signature.per_sig_strict_verify");
const PER_MSG_HASHING_BASE: P = P::named("aptos_framework.signature.per_msg_hashing_base");
const PER_MSG_BYTE_HASHING: P = P::named("aptos_framework.signature.per_msg_byte_hashing");

/// A native's Aptos charges, in the order Aptos makes them: (parameter,
/// count) terms, stopping where Aptos returns early. These natives never
/// abort after a charge, so charging them together ends the same way.
type Terms = Vec<(P, u64)>;

/// `ed25519::public_key_validate_internal`: deserializing the key, then
/// (when it decompresses) the small-order check.
fn validate_terms(key: &[u8]) -> Terms {
    let mut t = vec![(BASE, 1), (PER_PUBKEY_DESERIALIZE, 1)];
    let decompresses =
        <[u8; PUBLIC_KEY_LENGTH]>::try_from(key).is_ok_and(|b| CompressedEdwardsY(b).decompress().is_some());
    if decompresses {
        t.push((PER_PUBKEY_SMALL_ORDER_CHECK, 1));
    }
    t
}

/// `multi_ed25519::public_key_validate[_v2]_internal`: per sub-key checked,
/// up to and including the first invalid one (`v2`: after a well-formed
/// threshold; `v1`: at most 32 keys).
fn multi_validate_terms(key: &[u8], v2: bool) -> Terms {
    let mut t = vec![(BASE, 1)];
    let n = key.len() / PUBLIC_KEY_LENGTH;
    let checked = if v2 { check_and_get_threshold(key, PUBLIC_KEY_LENGTH).is_some() } else { n <= MAX_NUM_OF_KEYS };
    if checked {
        let valid = num_valid_sub_keys(key);
        let looked_at = (valid + 1).min(n) as u64;
        t.extend([(PER_PUBKEY_DESERIALIZE, looked_at), (PER_PUBKEY_SMALL_ORDER_CHECK, looked_at)]);
    }
    t
}

/// `signature_verify_strict_internal` (`multi`: of MultiEd25519): the key's
/// and the signature's deserialization, then hashing and verifying per
/// signature, each only when the step before succeeded.
fn verify_terms(signature: &[u8], public_key: &[u8], msg: &[u8], multi: bool) -> Terms {
    let (keys, sigs) = if multi {
        ((public_key.len() / PUBLIC_KEY_LENGTH) as u64, (signature.len() / SIGNATURE_LENGTH) as u64)
    } else {
        (1, 1)
    };
    let mut t = vec![(BASE, 1), (PER_PUBKEY_DESERIALIZE, keys)];
    let key_parses = if multi { multi_public_key_parses(public_key) } else { parse_public_key(public_key).is_some() };
    if !key_parses {
        return t;
    }
    t.push((PER_SIG_DESERIALIZE, sigs));
    let sig_parses = if multi { multi_signature_parses(signature) } else { parse_signature(signature).is_some() };
    if sig_parses {
        t.extend([
            (PER_SIG_STRICT_VERIFY, sigs),
            (PER_MSG_HASHING_BASE, sigs),
            (PER_MSG_BYTE_HASHING, (msg.len() as u64).saturating_mul(sigs)),
        ]);
    }
    t
}

pub const PUBLIC_KEY_LENGTH: usize = 32;
pub const SIGNATURE_LENGTH: usize = 64;
/// Most sub-keys of a MultiEd25519 key.
pub const MAX_NUM_OF_KEYS: usize = 32;
/// Bytes of a multi-signature's signer bitmap.
pub const BITMAP_NUM_OF_BYTES: usize = 4;

/// The order of the prime subgroup, little endian.
const L: [u8; 32] = [
    0xED, 0xD3, 0xF5, 0x5C, 0x1A, 0x63, 0x12, 0x58, 0xD6, 0x9C, 0xF7, 0xA2, 0xDE, 0xF9, 0xDE, 0x14, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
];

/// Whether the little-endian scalar `s` is below `L`.
fn s_is_canonical(s: &[u8]) -> bool {
    for i in (0..32).rev() {
        match s[i].cmp(&L[i]) {
            std::cmp::Ordering::Less => return true,
            std::cmp::Ordering::Greater => return false,
            std::cmp::Ordering::Equal => {}
        }
    }
    false
}

/// `public_key_validate_internal`: 32 bytes that decompress to a point
/// outside the small-order subgroup.
pub fn public_key_is_valid(bytes: &[u8]) -> bool {
    let Ok(b) = <[u8; PUBLIC_KEY_LENGTH]>::try_from(bytes) else { return false };
    CompressedEdwardsY(b).decompress().is_some_and(|p| !p.is_small_order())
}

/// A parsed public key (decompresses; small order is rejected by `verify`).
fn parse_public_key(bytes: &[u8]) -> Option<ed25519_dalek::PublicKey> {
    ed25519_dalek::PublicKey::from_bytes(bytes).ok()
}

/// A parsed signature: 64 bytes with a canonical `s`.
fn parse_signature(bytes: &[u8]) -> Option<ed25519_dalek::Signature> {
    if bytes.len() != SIGNATURE_LENGTH || !s_is_canonical(&bytes[32..]) {
        return None;
    }
    ed25519_dalek::Signature::from_bytes(bytes).ok()
}

fn verify(sig: &ed25519_dalek::Signature, pk: &ed25519_dalek::PublicKey, msg: &[u8]) -> bool {
    pk.verify_strict(msg, sig).is_ok()
}

/// `ed25519::signature_verify_strict_internal(signature, public_key, message)`.
pub fn signature_verify_strict(signature: &[u8], public_key: &[u8], msg: &[u8]) -> bool {
    match (parse_public_key(public_key), parse_signature(signature)) {
        (Some(pk), Some(sig)) => verify(&sig, &pk, msg),
        _ => false,
    }
}

/// aptos-crypto's `check_and_get_threshold`: `n` keys of `key_size` bytes
/// then one threshold byte, `1 <= n <= 32`, `1 <= threshold <= n`.
fn check_and_get_threshold(bytes: &[u8], key_size: usize) -> Option<(u8, usize)> {
    let threshold = *bytes.last()?;
    let n = bytes.len() / key_size;
    if n == 0 || n > MAX_NUM_OF_KEYS || bytes.len() % key_size != 1 || threshold == 0 || usize::from(threshold) > n {
        return None;
    }
    Some((threshold, n))
}

/// How many leading 32-byte sub-keys are valid (stops at the first invalid one).
fn num_valid_sub_keys(bytes: &[u8]) -> usize {
    bytes.chunks_exact(PUBLIC_KEY_LENGTH).take_while(|k| public_key_is_valid(k)).count()
}

/// `multi_ed25519::public_key_validate_internal` (v1 with Aptos's gas fix):
/// every whole 32-byte chunk is a valid key and there are at most 32 of
/// them; the threshold byte is not looked at (kept as Aptos has it).
pub fn multi_public_key_validate_v1(bytes: &[u8]) -> bool {
    let n = bytes.len() / PUBLIC_KEY_LENGTH;
    n <= MAX_NUM_OF_KEYS && num_valid_sub_keys(bytes) == n
}

/// `multi_ed25519::public_key_validate_v2_internal`: a well-formed
/// threshold and every sub-key valid.
pub fn multi_public_key_validate_v2(bytes: &[u8]) -> bool {
    match check_and_get_threshold(bytes, PUBLIC_KEY_LENGTH) {
        Some((_, n)) => num_valid_sub_keys(bytes) == n,
        None => false,
    }
}

fn bitmap_bit(bitmap: [u8; BITMAP_NUM_OF_BYTES], i: usize) -> bool {
    bitmap[i / 8] & (0x80 >> (i % 8)) != 0
}

/// A MultiEd25519 key deserializes: a well-formed threshold, every sub-key
/// decompresses.
fn multi_public_key_parses(public_key: &[u8]) -> bool {
    check_and_get_threshold(public_key, PUBLIC_KEY_LENGTH).is_some()
        && public_key.chunks_exact(PUBLIC_KEY_LENGTH).all(|k| parse_public_key(k).is_some())
}

/// A MultiEd25519 signature deserializes: whole signatures (each with a
/// canonical `s`) and a bitmap with one bit per signature.
fn multi_signature_parses(signature: &[u8]) -> bool {
    let k = signature.len() / SIGNATURE_LENGTH;
    if k == 0 || k > MAX_NUM_OF_KEYS || signature.len() % SIGNATURE_LENGTH != BITMAP_NUM_OF_BYTES {
        return false;
    }
    let ones: u32 = signature[signature.len() - BITMAP_NUM_OF_BYTES..].iter().map(|b| b.count_ones()).sum();
    ones as usize == k && signature.chunks_exact(SIGNATURE_LENGTH).all(|s| parse_signature(s).is_some())
}

/// `multi_ed25519::signature_verify_strict_internal`: the signatures
/// (`64 * k` bytes, then a 4-byte bitmap with `k` bits set) of the keys the
/// bitmap names, at least `threshold` of them, each verifying strictly.
pub fn multi_signature_verify_strict(signature: &[u8], public_key: &[u8], msg: &[u8]) -> bool {
    // The key: threshold well formed, every sub-key decompresses.
    let Some((threshold, _)) = check_and_get_threshold(public_key, PUBLIC_KEY_LENGTH) else { return false };
    let keys: Option<Vec<_>> = public_key.chunks_exact(PUBLIC_KEY_LENGTH).map(parse_public_key).collect();
    let Some(keys) = keys else { return false };
    // The signature: whole signatures plus the bitmap, one bit per signature.
    let k = signature.len() / SIGNATURE_LENGTH;
    if k == 0 || k > MAX_NUM_OF_KEYS || signature.len() % SIGNATURE_LENGTH != BITMAP_NUM_OF_BYTES {
        return false;
    }
    let mut bitmap = [0u8; BITMAP_NUM_OF_BYTES];
    bitmap.copy_from_slice(&signature[signature.len() - BITMAP_NUM_OF_BYTES..]);
    let ones: u32 = bitmap.iter().map(|b| b.count_ones()).sum();
    if ones as usize != k {
        return false;
    }
    let sigs: Option<Vec<_>> = signature.chunks_exact(SIGNATURE_LENGTH).map(parse_signature).collect();
    let Some(sigs) = sigs else { return false };
    // Verification: the last signer must be a key, enough signers.
    let last = (0..MAX_NUM_OF_KEYS).rev().find(|&i| bitmap_bit(bitmap, i));
    if !matches!(last, Some(i) if i < keys.len()) || ones < u32::from(threshold) {
        return false;
    }
    let signers = (0..MAX_NUM_OF_KEYS).filter(|&i| bitmap_bit(bitmap, i));
    sigs.iter().zip(signers).all(|(sig, i)| keys.get(i).is_some_and(|pk| verify(sig, pk, msg)))
}

fn bytes_arg(args: &mut Args) -> VmResult<Vec<u8>> {
    Ok(pop(args)?.to_bytes()?)
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    r.add("ed25519", "public_key_validate_internal", |cx, _, mut args: Args| {
        let key = bytes_arg(&mut args)?;
        cx.gas.charge_native(key.len())?;
        cx.gas.charge_aptos_native(&validate_terms(&key))?;
        Ok(vec![Value::Bool(public_key_is_valid(&key))])
    });
    type Check = fn(&[u8]) -> bool;
    let validators: [(&str, Check, bool); 2] = [
        ("public_key_validate_internal", multi_public_key_validate_v1, false),
        ("public_key_validate_v2_internal", multi_public_key_validate_v2, true),
    ];
    for (name, check, v2) in validators {
        r.add("multi_ed25519", name, move |cx, _, mut args: Args| {
            let key = bytes_arg(&mut args)?;
            cx.gas.charge_native(key.len())?;
            cx.gas.charge_aptos_native(&multi_validate_terms(&key, v2))?;
            Ok(vec![Value::Bool(check(&key))])
        });
    }
    type Verify = fn(&[u8], &[u8], &[u8]) -> bool;
    let verifiers: [(&str, Verify); 2] =
        [("ed25519", signature_verify_strict), ("multi_ed25519", multi_signature_verify_strict)];
    for (module, verify) in verifiers {
        r.add(module, "signature_verify_strict_internal", move |cx, _, mut args: Args| {
            let msg = bytes_arg(&mut args)?;
            let key = bytes_arg(&mut args)?;
            let sig = bytes_arg(&mut args)?;
            cx.gas.charge_native(msg.len() + key.len() + sig.len())?;
            cx.gas.charge_aptos_native(&verify_terms(&sig, &key, &msg, module == "multi_ed25519"))?;
            Ok(vec![Value::Bool(verify(&sig, &key, &msg))])
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_s_is_strictly_below_l() {
        let mut below = L;
        below[0] -= 1;
        let mut above = L;
        above[31] += 1;
        for (s, ok) in [(L, false), (below, true), (above, false), ([0; 32], true), ([0xff; 32], false)] {
            assert_eq!(s_is_canonical(&s), ok, "{s:02x?}");
        }
    }

    #[test]
    fn thresholds_as_aptos_crypto_checks_them() {
        let keys = |n: usize, t: u8| {
            let mut b = vec![7u8; n * PUBLIC_KEY_LENGTH];
            b.push(t);
            b
        };
        assert_eq!(check_and_get_threshold(&keys(3, 2), 32), Some((2, 3)));
        assert_eq!(check_and_get_threshold(&keys(32, 32), 32), Some((32, 32)));
        for bad in [keys(0, 1), keys(3, 0), keys(3, 4), keys(33, 1), vec![], vec![0u8; 64]] {
            assert_eq!(check_and_get_threshold(&bad, 32), None, "{} bytes", bad.len());
        }
    }
}
