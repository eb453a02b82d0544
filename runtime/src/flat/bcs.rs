//! BCS of flat values, byte-exact with the tree encoding of
//! `crate::bcs` (same depth limit, same errors).

use super::layout::{FlatLayout, Shape};
use super::raw;
use super::value::{variant, FlatValue};
use crate::bcs::{write_uleb, Reader};
use crate::error::{VmError, VmResult};
use movejit_format::StatusCode;
use std::sync::Arc;

const MAX_DEPTH: usize = 128;

fn ser_err(m: &str) -> VmError {
    VmError::new(StatusCode::VALUE_SERIALIZATION_ERROR).with_message(m)
}
pub(crate) fn de_err() -> VmError {
    VmError::new(StatusCode::VALUE_DESERIALIZATION_ERROR)
}

/// Appends the BCS of the value in `slot` to `out`.
pub(crate) fn serialize_into(out: &mut Vec<u8>, l: &FlatLayout, slot: &[u8]) -> VmResult<()> {
    write(out, l, slot, 0)
}

/// The BCS of a value.
pub fn serialize(v: &FlatValue) -> VmResult<Vec<u8>> {
    // The flat size: exact for scalars and flat structs (no regrowth on a
    // short call's results), a first guess otherwise.
    let mut out = Vec::with_capacity(v.layout().size as usize);
    write(&mut out, v.layout(), v.bytes(), 0)?;
    Ok(out)
}

fn write(out: &mut Vec<u8>, l: &FlatLayout, slot: &[u8], depth: usize) -> VmResult<()> {
    if depth > MAX_DEPTH {
        return Err(VmError::new(StatusCode::VM_MAX_VALUE_DEPTH_REACHED));
    }
    match &l.shape {
        // Scalars and addresses: their flat bytes are their BCS.
        Shape::Bool
        | Shape::U8
        | Shape::U16
        | Shape::U32
        | Shape::U64
        | Shape::U128
        | Shape::U256
        | Shape::I8
        | Shape::I16
        | Shape::I32
        | Shape::I64
        | Shape::I128
        | Shape::I256
        | Shape::Address
        | Shape::Signer => out.extend_from_slice(slot),
        Shape::Vector(e) => {
            let n = raw::vec_len(slot);
            write_uleb(out, n);
            let data = raw::vec_data(slot, e.size);
            if matches!(e.shape, Shape::U8 | Shape::Bool) {
                out.extend_from_slice(data);
            } else {
                for c in data.chunks_exact(e.size as usize) {
                    write(out, e, c, depth + 1)?;
                }
            }
        }
        Shape::Struct(fs) => {
            for f in fs {
                write(out, &f.layout, &slot[f.offset as usize..(f.offset + f.layout.size) as usize], depth + 1)?;
            }
        }
        Shape::Enum(vs) => {
            let fs = variant(vs, slot).ok_or_else(|| ser_err("bad variant"))?;
            write_uleb(out, u16::from_le_bytes([slot[0], slot[1]]) as u64);
            for f in fs {
                write(out, &f.layout, &slot[f.offset as usize..(f.offset + f.layout.size) as usize], depth + 1)?;
            }
        }
        // Closures take the tree encoding's path (function name, type tags,
        // captured layouts and values).
        Shape::Closure => {
            let c = raw::closure_ref(slot).ok_or_else(|| ser_err("empty function value"))?;
            let v = crate::values::Value::Closure(Box::new(super::native_bridge::closure_to_value(c)?));
            out.extend_from_slice(&crate::bcs::serialize(&v, &crate::layout::Layout::Function)?);
        }
        Shape::Reference(_) => return Err(ser_err("a reference is not serializable")),
    }
    Ok(())
}

/// Reads a whole byte string as a value of `layout` (trailing bytes are an
/// error: `VALUE_DESERIALIZATION_ERROR`, as `crate::bcs::deserialize`).
pub fn deserialize(bytes: &[u8], layout: Arc<FlatLayout>) -> VmResult<FlatValue> {
    read_whole(Reader::new(bytes), layout)
}

/// An entry-function argument: a signer as `00` + address, every error
/// `FAILED_TO_DESERIALIZE_ARGUMENT` (as the interpreter reports it).
pub fn deserialize_arg(bytes: &[u8], layout: Arc<FlatLayout>) -> VmResult<FlatValue> {
    let mut r = Reader::new(bytes);
    r.signer_as_enum = true;
    read_whole(r, layout).map_err(|_| VmError::bad_argument())
}

fn read_whole(mut r: Reader<'_>, layout: Arc<FlatLayout>) -> VmResult<FlatValue> {
    // A partially read value is still a valid value (zeroed memory is), so
    // dropping `v` on error frees whatever was read.
    let mut v = FlatValue::zeroed(layout);
    let (layout, slot) = v.parts_mut();
    read_into(&mut r, layout, slot, 0)?;
    if r.remaining() != 0 {
        return Err(de_err());
    }
    Ok(v)
}

/// Reads one value into `slot`, which must hold no live value and be zeroed.
/// On error the slot holds a valid (partial) value the caller must drop.
pub(crate) fn read_into(r: &mut Reader<'_>, l: &FlatLayout, slot: &mut [u8], depth: usize) -> VmResult<()> {
    if depth > MAX_DEPTH {
        return Err(de_err());
    }
    match &l.shape {
        Shape::Bool => match r.take(1)?[0] {
            b @ (0 | 1) => slot[0] = b,
            _ => return Err(de_err()),
        },
        Shape::U8
        | Shape::U16
        | Shape::U32
        | Shape::U64
        | Shape::U128
        | Shape::U256
        | Shape::I8
        | Shape::I16
        | Shape::I32
        | Shape::I64
        | Shape::I128
        | Shape::I256
        | Shape::Address => slot.copy_from_slice(r.take(slot.len())?),
        Shape::Signer => {
            if r.signer_as_enum && r.take(1)?[0] != 0 {
                return Err(de_err());
            }
            slot.copy_from_slice(r.take(32)?)
        }
        Shape::Vector(e) => {
            let n = r.uleb()?;
            // Every element takes at least one byte: bound before allocating.
            if n > r.remaining() as u64 {
                return Err(de_err());
            }
            if n == 0 {
                return Ok(());
            }
            raw::vec_reserve(slot, n, e.size, e.align).map_err(|e| match e.status {
                StatusCode::MEMORY_LIMIT_EXCEEDED => e,
                _ => de_err(),
            })?;
            if matches!(e.shape, Shape::U8) {
                raw::vec_data_mut(slot, e.size)[..n as usize].copy_from_slice(r.take(n as usize)?);
                raw::vec_set_len(slot, n);
                return Ok(());
            }
            let stride = e.size as usize;
            for i in 0..n {
                let at = i as usize * stride;
                let res = read_into(r, e, &mut raw::vec_data_mut(slot, e.size)[at..at + stride], depth + 1);
                // Count the element even when it failed half-way, so the
                // caller's drop frees what it holds.
                raw::vec_set_len(slot, i + 1);
                res?;
            }
        }
        Shape::Struct(fs) => {
            for f in fs {
                read_into(r, &f.layout, &mut slot[f.offset as usize..(f.offset + f.layout.size) as usize], depth + 1)?;
            }
        }
        Shape::Enum(vs) => {
            let tag = r.uleb()?;
            let fs = vs.get(tag as usize).ok_or_else(de_err)?;
            slot[..2].copy_from_slice(&(tag as u16).to_le_bytes());
            for f in fs {
                read_into(r, &f.layout, &mut slot[f.offset as usize..(f.offset + f.layout.size) as usize], depth + 1)?;
            }
        }
        Shape::Closure => match crate::bcs::read_value(r, &crate::layout::Layout::Function, depth)? {
            crate::values::Value::Closure(c) => {
                raw::closure_put(slot, std::sync::Arc::new(super::native_bridge::closure_from_value(&c)?))
            }
            _ => return Err(de_err()),
        },
        Shape::Reference(_) => return Err(de_err()),
    }
    Ok(())
}
