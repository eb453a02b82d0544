//! Runtime types as Sui's `TypeTag`s: their BCS (what `hash_type_and_key`
//! hashes) and their size for gas.

use movejit_runtime::{Type, VmError, VmResult};

/// Sui's type tags nest at most this deep (`MAX_TYPE_TAG_NESTING`).
const MAX_NESTING: usize = 60;

/// The BCS of `ty` as a `TypeTag` (Bool 0, U8 1, U64 2, U128 3, Address 4,
/// Signer 5, Vector 6, Struct 7, U16 8, U32 9, U256 10).
pub fn type_tag_bcs(ty: &Type) -> VmResult<Vec<u8>> {
    let mut out = Vec::new();
    write(ty, &mut out, 0)?;
    Ok(out)
}

fn uleb(mut n: usize, out: &mut Vec<u8>) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn write(ty: &Type, out: &mut Vec<u8>, depth: usize) -> VmResult<()> {
    if depth > MAX_NESTING {
        return Err(VmError::new(movejit_runtime::StatusCode::VM_MAX_TYPE_DEPTH_REACHED));
    }
    match ty {
        Type::Bool => out.push(0),
        Type::U8 => out.push(1),
        Type::U64 => out.push(2),
        Type::U128 => out.push(3),
        Type::Address => out.push(4),
        Type::Signer => out.push(5),
        Type::Vector(e) => {
            out.push(6);
            write(e, out, depth + 1)?;
        }
        Type::Datatype(id, args) => {
            out.push(7);
            out.extend_from_slice(&id.address.0);
            for s in [&id.module, &id.name] {
                uleb(s.len(), out);
                out.extend_from_slice(s.as_bytes());
            }
            uleb(args.len(), out);
            for a in args {
                write(a, out, depth + 1)?;
            }
        }
        Type::U16 => out.push(8),
        Type::U32 => out.push(9),
        Type::U256 => out.push(10),
        t => return Err(VmError::invariant(format!("type {t} has no Sui type tag"))),
    }
    Ok(())
}
