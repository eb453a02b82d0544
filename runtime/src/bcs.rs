//! BCS encoding of values by their layout, in both directions, byte-exact
//! with the Move VM (closures included).

use crate::error::{VmError, VmResult};
use crate::layout::Layout;
use crate::storage::ModuleId;
use crate::types::Type;
use crate::values::{ClosureValue, FunctionId, Value};
use ethnum::{I256, U256};
use movejit_format::{AccountAddress, StatusCode};
use std::sync::Arc;

fn ser_err(m: &str) -> VmError {
    VmError::new(StatusCode::VALUE_SERIALIZATION_ERROR).with_message(m)
}
fn de_err() -> VmError {
    VmError::new(StatusCode::VALUE_DESERIALIZATION_ERROR)
}

pub fn write_uleb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// Serializes `v` (no references) with layout `l`.
pub fn serialize(v: &Value, l: &Layout) -> VmResult<Vec<u8>> {
    let mut out = Vec::new();
    write_value(&mut out, v, l, 0)?;
    Ok(out)
}

const MAX_DEPTH: usize = 128;

fn write_value(out: &mut Vec<u8>, v: &Value, l: &Layout, depth: usize) -> VmResult<()> {
    if depth > MAX_DEPTH {
        return Err(VmError::new(StatusCode::VM_MAX_VALUE_DEPTH_REACHED));
    }
    match (v, l) {
        (Value::Bool(b), Layout::Bool) => out.push(*b as u8),
        (Value::U8(x), Layout::U8) => out.push(*x),
        (Value::U16(x), Layout::U16) => out.extend_from_slice(&x.to_le_bytes()),
        (Value::U32(x), Layout::U32) => out.extend_from_slice(&x.to_le_bytes()),
        (Value::U64(x), Layout::U64) => out.extend_from_slice(&x.to_le_bytes()),
        (Value::U128(x), Layout::U128) => out.extend_from_slice(&x.to_le_bytes()),
        (Value::U256(x), Layout::U256) => out.extend_from_slice(&x.to_le_bytes()),
        (Value::I8(x), Layout::I8) => out.extend_from_slice(&x.to_le_bytes()),
        (Value::I16(x), Layout::I16) => out.extend_from_slice(&x.to_le_bytes()),
        (Value::I32(x), Layout::I32) => out.extend_from_slice(&x.to_le_bytes()),
        (Value::I64(x), Layout::I64) => out.extend_from_slice(&x.to_le_bytes()),
        (Value::I128(x), Layout::I128) => out.extend_from_slice(&x.to_le_bytes()),
        (Value::I256(x), Layout::I256) => out.extend_from_slice(&x.to_le_bytes()),
        (Value::Address(a), Layout::Address) => out.extend_from_slice(&a.0),
        (Value::Struct(f), Layout::Signer) if f.len() == 1 => match &f[0] {
            Value::Address(a) => out.extend_from_slice(&a.0),
            _ => return Err(ser_err("bad signer")),
        },
        (Value::Vector(elems), Layout::Vector(el)) => {
            write_uleb(out, elems.len() as u64);
            for e in elems {
                write_value(out, e, el, depth + 1)?;
            }
        }
        (Value::Struct(fields), Layout::Struct(fl)) if fields.len() == fl.len() => {
            for (f, l) in fields.iter().zip(fl) {
                write_value(out, f, l, depth + 1)?;
            }
        }
        (Value::Variant(tag, fields), Layout::Enum(vl)) => {
            let fl = vl.get(*tag as usize).ok_or_else(|| ser_err("bad variant"))?;
            if fl.len() != fields.len() {
                return Err(ser_err("variant arity"));
            }
            write_uleb(out, *tag as u64);
            for (f, l) in fields.iter().zip(fl) {
                write_value(out, f, l, depth + 1)?;
            }
        }
        (Value::Closure(c), Layout::Function) => write_closure(out, c, depth)?,
        (v, l) => return Err(ser_err(&format!("value {v:?} does not fit layout {l:?}"))),
    }
    Ok(())
}

fn write_str(out: &mut Vec<u8>, s: &str) {
    write_uleb(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn write_closure(out: &mut Vec<u8>, c: &ClosureValue, depth: usize) -> VmResult<()> {
    if !c.serializable {
        return Err(VmError::invariant("closure over a function that is neither public nor persistent"));
    }
    write_uleb(out, 5 + 2 * c.captured.len() as u64);
    out.extend_from_slice(&1u16.to_le_bytes()); // format version (u16)
    out.extend_from_slice(&c.function.module.address.0);
    write_str(out, &c.function.module.name);
    write_str(out, &c.function.name);
    write_uleb(out, c.type_args.len() as u64);
    for t in &c.type_args {
        write_type_tag(out, t)?;
    }
    out.extend_from_slice(&c.mask.to_le_bytes());
    if c.captured_layouts.len() != c.captured.len() {
        return Err(ser_err("closure captured layouts"));
    }
    for (v, l) in c.captured.iter().zip(&c.captured_layouts) {
        write_layout(out, l);
        write_value(out, v, l, depth + 1)?;
    }
    Ok(())
}

/// BCS of a `MoveTypeLayout` (runtime form).
pub fn write_layout(out: &mut Vec<u8>, l: &Layout) {
    out.push(l.serde_tag());
    match l {
        Layout::Vector(e) => write_layout(out, e),
        Layout::Struct(fields) => {
            out.push(0);
            write_uleb(out, fields.len() as u64);
            for f in fields {
                write_layout(out, f);
            }
        }
        Layout::Enum(vs) => {
            out.push(1);
            write_uleb(out, vs.len() as u64);
            for v in vs {
                write_uleb(out, v.len() as u64);
                for f in v {
                    write_layout(out, f);
                }
            }
        }
        _ => {}
    }
}

/// BCS of a `TypeTag`.
pub fn write_type_tag(out: &mut Vec<u8>, t: &Type) -> VmResult<()> {
    match t {
        Type::Bool => out.push(0),
        Type::U8 => out.push(1),
        Type::U64 => out.push(2),
        Type::U128 => out.push(3),
        Type::Address => out.push(4),
        Type::Signer => out.push(5),
        Type::Vector(e) => {
            out.push(6);
            write_type_tag(out, e)?;
        }
        Type::Datatype(id, args) => {
            out.push(7);
            out.extend_from_slice(&id.address.0);
            write_str(out, &id.module);
            write_str(out, &id.name);
            write_uleb(out, args.len() as u64);
            for a in args {
                write_type_tag(out, a)?;
            }
        }
        Type::U16 => out.push(8),
        Type::U32 => out.push(9),
        Type::U256 => out.push(10),
        Type::Function(..) => return Err(ser_err("function type tags are not serialized here")),
        Type::I8 => out.push(12),
        Type::I16 => out.push(13),
        Type::I32 => out.push(14),
        Type::I64 => out.push(15),
        Type::I128 => out.push(16),
        Type::I256 => out.push(17),
        Type::Reference(_) | Type::MutableReference(_) | Type::TyParam(_) => return Err(ser_err("not a value type")),
    }
    Ok(())
}

/// Reads BCS bytes.
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// When set, a signer is read as the enum `Master { account }` (`00` + address).
    pub signer_as_enum: bool,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0, signer_as_enum: false }
    }
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }
    pub fn take(&mut self, n: usize) -> VmResult<&'a [u8]> {
        if self.remaining() < n {
            return Err(de_err());
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn byte(&mut self) -> VmResult<u8> {
        Ok(self.take(1)?[0])
    }
    fn arr<const N: usize>(&mut self) -> VmResult<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    /// A canonical ULEB128 fitting in 32 bits (as BCS requires for lengths).
    pub fn uleb(&mut self) -> VmResult<u64> {
        let mut v: u64 = 0;
        for shift in (0..).step_by(7) {
            if shift > 28 {
                return Err(de_err());
            }
            let b = self.byte()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                if b == 0 && shift > 0 {
                    return Err(de_err()); // non-canonical
                }
                if v > u32::MAX as u64 {
                    return Err(de_err());
                }
                return Ok(v);
            }
        }
        Err(de_err())
    }
    fn string(&mut self) -> VmResult<String> {
        let n = self.uleb()? as usize;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| de_err())
    }
}

/// Deserializes a whole byte string by `l` (trailing bytes are an error).
pub fn deserialize(bytes: &[u8], l: &Layout) -> VmResult<Value> {
    let mut r = Reader::new(bytes);
    let v = read_value(&mut r, l, 0)?;
    if r.remaining() != 0 {
        return Err(de_err());
    }
    Ok(v)
}

/// Like [`deserialize`], reading a signer as `00` + address (argument form).
pub fn deserialize_arg(bytes: &[u8], l: &Layout) -> VmResult<Value> {
    let mut r = Reader::new(bytes);
    r.signer_as_enum = true;
    let v = read_value(&mut r, l, 0)?;
    if r.remaining() != 0 {
        return Err(de_err());
    }
    Ok(v)
}

pub fn read_value(r: &mut Reader<'_>, l: &Layout, depth: usize) -> VmResult<Value> {
    if depth > MAX_DEPTH {
        return Err(de_err());
    }
    Ok(match l {
        Layout::Bool => match r.byte()? {
            0 => Value::Bool(false),
            1 => Value::Bool(true),
            _ => return Err(de_err()),
        },
        Layout::U8 => Value::U8(r.byte()?),
        Layout::U16 => Value::U16(u16::from_le_bytes(r.arr()?)),
        Layout::U32 => Value::U32(u32::from_le_bytes(r.arr()?)),
        Layout::U64 => Value::U64(u64::from_le_bytes(r.arr()?)),
        Layout::U128 => Value::U128(u128::from_le_bytes(r.arr()?)),
        Layout::U256 => Value::U256(U256::from_le_bytes(r.arr()?)),
        Layout::I8 => Value::I8(i8::from_le_bytes(r.arr()?)),
        Layout::I16 => Value::I16(i16::from_le_bytes(r.arr()?)),
        Layout::I32 => Value::I32(i32::from_le_bytes(r.arr()?)),
        Layout::I64 => Value::I64(i64::from_le_bytes(r.arr()?)),
        Layout::I128 => Value::I128(i128::from_le_bytes(r.arr()?)),
        Layout::I256 => Value::I256(I256::from_le_bytes(r.arr()?)),
        Layout::Address => Value::Address(AccountAddress(r.arr()?)),
        Layout::Signer => {
            if r.signer_as_enum && r.byte()? != 0 {
                return Err(de_err());
            }
            Value::signer(AccountAddress(r.arr()?))
        }
        Layout::Vector(el) => {
            let n = r.uleb()? as usize;
            // Every element takes at least one byte: bound before allocating.
            if n > r.remaining() {
                return Err(de_err());
            }
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(read_value(r, el, depth + 1)?);
            }
            Value::Vector(v)
        }
        Layout::Struct(fl) => {
            let mut v = Vec::with_capacity(fl.len());
            for f in fl {
                v.push(read_value(r, f, depth + 1)?);
            }
            Value::Struct(v)
        }
        Layout::Enum(vl) => {
            let tag = r.uleb()? as usize;
            let fl = vl.get(tag).ok_or_else(de_err)?;
            let mut v = Vec::with_capacity(fl.len());
            for f in fl {
                v.push(read_value(r, f, depth + 1)?);
            }
            Value::Variant(tag as u16, v)
        }
        Layout::Function => read_closure(r, depth)?,
    })
}

fn read_type_tag(r: &mut Reader<'_>, depth: usize) -> VmResult<Type> {
    if depth > MAX_DEPTH {
        return Err(de_err());
    }
    Ok(match r.byte()? {
        0 => Type::Bool,
        1 => Type::U8,
        2 => Type::U64,
        3 => Type::U128,
        4 => Type::Address,
        5 => Type::Signer,
        6 => Type::Vector(Box::new(read_type_tag(r, depth + 1)?)),
        7 => {
            let address = AccountAddress(r.arr()?);
            let module = r.string()?;
            let name = r.string()?;
            let n = r.uleb()? as usize;
            if n > r.remaining() {
                return Err(de_err());
            }
            let mut args = Vec::with_capacity(n);
            for _ in 0..n {
                args.push(read_type_tag(r, depth + 1)?);
            }
            Type::Datatype(
                Arc::new(crate::types::DatatypeId { address, module: module.into(), name: name.into() }),
                args,
            )
        }
        8 => Type::U16,
        9 => Type::U32,
        10 => Type::U256,
        12 => Type::I8,
        13 => Type::I16,
        14 => Type::I32,
        15 => Type::I64,
        16 => Type::I128,
        17 => Type::I256,
        _ => return Err(de_err()),
    })
}

fn read_layout(r: &mut Reader<'_>, depth: usize) -> VmResult<Layout> {
    if depth > MAX_DEPTH {
        return Err(de_err());
    }
    Ok(match r.byte()? {
        0 => Layout::Bool,
        1 => Layout::U8,
        2 => Layout::U64,
        3 => Layout::U128,
        4 => Layout::Address,
        5 => Layout::Vector(Box::new(read_layout(r, depth + 1)?)),
        6 => match r.byte()? {
            0 => {
                let n = r.uleb()? as usize;
                if n > r.remaining() {
                    return Err(de_err());
                }
                let mut f = Vec::with_capacity(n);
                for _ in 0..n {
                    f.push(read_layout(r, depth + 1)?);
                }
                Layout::Struct(f)
            }
            1 => {
                let n = r.uleb()? as usize;
                if n > r.remaining() {
                    return Err(de_err());
                }
                let mut vs = Vec::with_capacity(n);
                for _ in 0..n {
                    let m = r.uleb()? as usize;
                    if m > r.remaining() {
                        return Err(de_err());
                    }
                    let mut f = Vec::with_capacity(m);
                    for _ in 0..m {
                        f.push(read_layout(r, depth + 1)?);
                    }
                    vs.push(f);
                }
                Layout::Enum(vs)
            }
            _ => return Err(de_err()),
        },
        7 => Layout::Signer,
        8 => Layout::U16,
        9 => Layout::U32,
        10 => Layout::U256,
        12 => Layout::Function,
        13 => Layout::I8,
        14 => Layout::I16,
        15 => Layout::I32,
        16 => Layout::I64,
        17 => Layout::I128,
        18 => Layout::I256,
        _ => return Err(de_err()),
    })
}

fn read_closure(r: &mut Reader<'_>, depth: usize) -> VmResult<Value> {
    let len = r.uleb()?;
    if u16::from_le_bytes(r.arr()?) != 1 {
        return Err(de_err());
    }
    let address = AccountAddress(r.arr()?);
    let module = r.string()?;
    let name = r.string()?;
    let n = r.uleb()? as usize;
    if n > r.remaining() {
        return Err(de_err());
    }
    let mut type_args = Vec::with_capacity(n);
    for _ in 0..n {
        type_args.push(read_type_tag(r, depth + 1)?);
    }
    let mask = u64::from_le_bytes(r.arr()?);
    let count = mask.count_ones() as u64;
    if len != 5 + 2 * count {
        return Err(de_err());
    }
    let mut captured = Vec::new();
    let mut captured_layouts = Vec::new();
    for _ in 0..count {
        let l = read_layout(r, depth + 1)?;
        captured.push(read_value(r, &l, depth + 1)?);
        captured_layouts.push(l);
    }
    Ok(Value::Closure(Box::new(ClosureValue {
        function: FunctionId { module: ModuleId { address, name: module.into() }, name: name.into() },
        type_args,
        mask,
        captured,
        captured_layouts,
        serializable: true,
    })))
}
