//! Runtime types as Sui's `TypeTag`s: their BCS (what `hash_type_and_key`
//! hashes) and their size for gas.

use movejit_runtime::{ScalarKind, Type, VmError, VmResult};

/// Sui's type tags nest at most this deep (`MAX_TYPE_TAG_NESTING`).
const MAX_NESTING: usize = 60;

/// The BCS of `ty` as a `TypeTag` (Bool 0, U8 1, U64 2, U128 3, Address 4,
/// Signer 5, Vector 6, Struct 7, U16 8, U32 9, U256 10): the runtime's
/// writer, after checking the type is one Sui can tag within its nesting
/// limit.
pub fn type_tag_bcs(ty: &Type) -> VmResult<Vec<u8>> {
    check(ty, 0)?;
    let mut out = Vec::new();
    movejit_runtime::bcs::write_type_tag(&mut out, ty)?;
    Ok(out)
}

fn check(ty: &Type, depth: usize) -> VmResult<()> {
    if depth > MAX_NESTING {
        return Err(VmError::new(movejit_runtime::StatusCode::VM_MAX_TYPE_DEPTH_REACHED));
    }
    match ty {
        // Sui has no signed integers.
        t if ScalarKind::of_type(t).is_some_and(|k| !k.is_signed()) => Ok(()),
        Type::Signer => Ok(()),
        Type::Vector(e) => check(e, depth + 1),
        Type::Datatype(_, args) => args.iter().try_for_each(|a| check(a, depth + 1)),
        t => Err(VmError::invariant(format!("type {t} has no Sui type tag"))),
    }
}
