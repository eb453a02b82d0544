//! `0x1::ristretto255_bulletproofs::verify_range_proof_internal` and
//! `verify_batch_range_proof_internal` (also registered as
//! `confidential_range_proofs::verify_batch_range_proof_internal`, as
//! Aptos does): Bulletproofs range proofs (the `bulletproofs` crate Aptos
//! uses, generators for 64 bits and batches of 16) over Pedersen bases
//! given as ristretto255 point handles, with a Merlin transcript labelled
//! by the caller's domain-separation tag.
//!
//! Abort codes are Aptos's: a bit length other than 8, 16, 32, 64
//! `NFE_RANGE_NOT_SUPPORTED`, a batch size other than 1, 2, 4, 8, 16
//! `NFE_BATCH_SIZE_NOT_SUPPORTED`, unknown base handles the
//! `NFE_INVALID_POINT_VERIFY_*` codes, proof bytes that do not parse
//! `NFE_DESERIALIZE_RANGE_PROOF`. A proof that does not verify is `false`.
//!
//! Gap: crates.io's merlin 3.0.0 only takes `'static` transcript labels
//! (Aptos patches merlin to take any slice; the transcript is the same), so
//! each distinct domain-separation tag is interned once for the process;
//! past [`MAX_INTERNED_DST_BYTES`] of distinct tags, new ones fail with
//! `VM_EXTENSION_ERROR`.

use crate::args::{pop, pop_u64, Args, Registrar};
use crate::ristretto255::{handle_of, with_points};
use bulletproofs::{BulletproofGens, PedersenGens, RangeProof};
use curve25519_dalek_ng::ristretto::CompressedRistretto;
use merlin::Transcript;
use movejit_runtime::gas::native::NativeParam as P;
use movejit_runtime::natives::NativeContext;
use movejit_runtime::{Value, VmError, VmResult};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// `error::invalid_argument(1..4)`.
pub const NFE_DESERIALIZE_RANGE_PROOF: u64 = 0x01_0001;
pub const NFE_RANGE_NOT_SUPPORTED: u64 = 0x01_0003;
pub const NFE_BATCH_SIZE_NOT_SUPPORTED: u64 = 0x01_0004;
/// `error::internal(1..4)`: unknown randomness / value base handles.
pub const NFE_INVALID_POINT_VERIFY_RAND_BASE: u64 = 0x0A_0001;
pub const NFE_INVALID_POINT_VERIFY_VAL_BASE: u64 = 0x0A_0002;
pub const NFE_INVALID_POINT_VERIFY_BATCH_RAND_BASE: u64 = 0x0A_0003;
pub const NFE_INVALID_POINT_VERIFY_BATCH_VAL_BASE: u64 = 0x0A_0004;

const BASE: P = P::named("aptos_framework.bulletproofs.base");
const PER_BYTE_DESERIALIZE: P = P::named("aptos_framework.bulletproofs.per_byte_rangeproof_deserialize");
const PER_BIT_VERIFY: P = P::named("aptos_framework.bulletproofs.per_bit_rangeproof_verify");

/// A batch verification's price, by (batch size, bits): one parameter
/// each (`verify.base_batch_<size>_bits_<bits>`); `None` for shapes Aptos
/// does not support (checked before, so never charged).
fn batch_price(batch: usize, bits: usize) -> Option<P> {
    macro_rules! table {
        ($(($b:literal, $n:literal)),*) => {
            match (batch, bits) {
                $(($b, $n) => Some(const { P::named(concat!(
                    "aptos_framework.bulletproofs.verify.base_batch_", $b, "_bits_", $n
                )) }),)*
                _ => None,
            }
        };
    }
    table!(
        (1, 8),
        (1, 16),
        (1, 32),
        (1, 64),
        (2, 8),
        (2, 16),
        (2, 32),
        (2, 64),
        (4, 8),
        (4, 16),
        (4, 32),
        (4, 64),
        (8, 8),
        (8, 16),
        (8, 32),
        (8, 64),
        (16, 8),
        (16, 16),
        (16, 32),
        (16, 64)
    )
}

/// Largest range, in bits.
pub const MAX_RANGE_BITS: usize = 64;
/// Largest batch.
const MAX_BATCH: usize = 16;

fn generators() -> &'static BulletproofGens {
    static GENS: OnceLock<BulletproofGens> = OnceLock::new();
    GENS.get_or_init(|| BulletproofGens::new(MAX_RANGE_BITS, MAX_BATCH))
}

/// Bytes of distinct domain-separation tags kept for the process (the Move
/// wrappers cap a tag at 256 bytes).
pub const MAX_INTERNED_DST_BYTES: usize = 1 << 20;

/// Interned tags and their total size.
#[derive(Default)]
struct Tags {
    labels: HashMap<Vec<u8>, &'static [u8]>,
    bytes: usize,
}

/// `dst` as a `'static` label (merlin 3.0.0's `Transcript::new` wants one).
fn interned(dst: &[u8]) -> VmResult<&'static [u8]> {
    static TAGS: OnceLock<Mutex<Tags>> = OnceLock::new();
    let mut tags = TAGS
        .get_or_init(Default::default)
        .lock()
        .map_err(|_| VmError::invariant("bulletproofs: tag table poisoned"))?;
    if let Some(label) = tags.labels.get(dst) {
        return Ok(label);
    }
    if tags.bytes + dst.len() > MAX_INTERNED_DST_BYTES {
        return Err(crate::args::extension_error("bulletproofs: too many distinct domain-separation tags"));
    }
    let label: &'static [u8] = Box::leak(dst.to_vec().into_boxed_slice());
    tags.bytes += dst.len();
    tags.labels.insert(dst.to_vec(), label);
    Ok(label)
}

/// A 32-byte compressed point (the Move side only passes compressed points).
fn compressed(b: Vec<u8>) -> VmResult<CompressedRistretto> {
    <[u8; 32]>::try_from(b)
        .map(CompressedRistretto)
        .map_err(|_| VmError::invariant("bulletproofs: a commitment is not 32 bytes"))
}

/// The Pedersen bases behind the `val_base` / `rand_base` handles.
fn bases(cx: &mut NativeContext<'_>, val: u64, rand: u64, codes: (u64, u64)) -> VmResult<PedersenGens> {
    with_points(cx, |points| {
        let rand = *points.get(rand).map_err(|_| VmError::abort(codes.0))?;
        let val = *points.get(val).map_err(|_| VmError::abort(codes.1))?;
        Ok(PedersenGens { B: val, B_blinding: rand })
    })
}

/// The arguments after the commitment(s): (val_base, rand_base, proof, bits, dst), popped.
struct Common {
    val: u64,
    rand: u64,
    proof: Vec<u8>,
    bits: usize,
    dst: Vec<u8>,
}

fn pop_common(cx: &NativeContext<'_>, args: &mut Args) -> VmResult<Common> {
    let dst = pop(args)?.to_bytes()?;
    let bits = usize::try_from(pop_u64(args)?).unwrap_or(usize::MAX);
    let proof = pop(args)?.to_bytes()?;
    let rand = pop(args)?;
    let rand = handle_of(cx.deref(&rand)?)?;
    let val = pop(args)?;
    let val = handle_of(cx.deref(&val)?)?;
    Ok(Common { val, rand, proof, bits, dst })
}

fn check_bits(bits: usize) -> VmResult<()> {
    if matches!(bits, 8 | 16 | 32 | 64) {
        Ok(())
    } else {
        Err(VmError::abort(NFE_RANGE_NOT_SUPPORTED))
    }
}

fn parse_proof(b: &[u8]) -> VmResult<RangeProof> {
    RangeProof::from_bytes(b).map_err(|_| VmError::abort(NFE_DESERIALIZE_RANGE_PROOF))
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    r.add("ristretto255_bulletproofs", "verify_range_proof_internal", |cx, _, mut args: Args| {
        let c = pop_common(cx, &mut args)?;
        let comm = compressed(pop(&mut args)?.to_bytes()?)?;
        check_bits(c.bits)?;
        let pg = bases(cx, c.val, c.rand, (NFE_INVALID_POINT_VERIFY_RAND_BASE, NFE_INVALID_POINT_VERIFY_VAL_BASE))?;
        cx.gas.charge_native(c.proof.len())?;
        // Aptos: deserializing the proof, then (once it parses) per bit verified.
        cx.gas.charge_aptos_native(&[(BASE, 1), (PER_BYTE_DESERIALIZE, c.proof.len() as u64)])?;
        let proof = parse_proof(&c.proof)?;
        cx.gas.charge_aptos_native(&[(PER_BIT_VERIFY, c.bits as u64)])?;
        let mut t = Transcript::new(interned(&c.dst)?);
        Ok(vec![Value::Bool(proof.verify_single(generators(), &pg, &mut t, &comm, c.bits).is_ok())])
    });
    for module in ["ristretto255_bulletproofs", "confidential_range_proofs"] {
        r.add(module, "verify_batch_range_proof_internal", |cx, _, mut args: Args| {
            let c = pop_common(cx, &mut args)?;
            let comms =
                pop(&mut args)?.into_vec()?.iter().map(|v| compressed(v.to_bytes()?)).collect::<VmResult<Vec<_>>>()?;
            check_bits(c.bits)?;
            if !matches!(comms.len(), 1 | 2 | 4 | 8 | 16) {
                return Err(VmError::abort(NFE_BATCH_SIZE_NOT_SUPPORTED));
            }
            let pg = bases(
                cx,
                c.val,
                c.rand,
                (NFE_INVALID_POINT_VERIFY_BATCH_RAND_BASE, NFE_INVALID_POINT_VERIFY_BATCH_VAL_BASE),
            )?;
            cx.gas.charge_native(c.proof.len() + 32 * comms.len())?;
            if let Some(price) = batch_price(comms.len(), c.bits) {
                cx.gas.charge_aptos_native(&[(price, 1)])?;
            }
            let proof = parse_proof(&c.proof)?;
            let mut t = Transcript::new(interned(&c.dst)?);
            Ok(vec![Value::Bool(proof.verify_multiple(generators(), &pg, &mut t, &comms, c.bits).is_ok())])
        });
    }
}
