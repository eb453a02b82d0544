//! Move stdlib natives (vector, bcs, hash, signer, string, type_name, debug,
//! mem, cmp), with the Aptos stdlib's semantics.

use super::{NativeContext, NativeFunction, NativeRegistry, NativeResult};
use crate::error::{vec_err, VmError, VmResult};
use crate::gas::native::NativeParam as P;
use crate::types::Type;
use crate::values::{compare_values, Value};
use movejit_format::AccountAddress;
use sha2::Digest;

type Args = Vec<Value>;

// The Aptos schedule's parameters of the stdlib natives (`move_stdlib.*`,
// and the framework's where Aptos prices a stdlib native by them).
const BCS_TO_BYTES_PER_BYTE: P = P::named("move_stdlib.bcs.to_bytes.per_byte_serialized");
const BCS_TO_BYTES_FAILURE: P = P::named("move_stdlib.bcs.to_bytes.failure");
const SHA2_256_BASE: P = P::named("move_stdlib.hash.sha2_256.base");
const SHA2_256_PER_BYTE: P = P::named("move_stdlib.hash.sha2_256.per_byte");
const SHA3_256_BASE: P = P::named("move_stdlib.hash.sha3_256.base");
const SHA3_256_PER_BYTE: P = P::named("move_stdlib.hash.sha3_256.per_byte");
const SIGNER_BORROW_ADDRESS: P = P::named("move_stdlib.signer.borrow_address.base");
const CHECK_UTF8_BASE: P = P::named("move_stdlib.string.check_utf8.base");
const CHECK_UTF8_PER_BYTE: P = P::named("move_stdlib.string.check_utf8.per_byte");
const IS_CHAR_BOUNDARY: P = P::named("move_stdlib.string.is_char_boundary.base");
const SUB_STRING_BASE: P = P::named("move_stdlib.string.sub_string.base");
const SUB_STRING_PER_BYTE: P = P::named("move_stdlib.string.sub_string.per_byte");
const INDEX_OF_BASE: P = P::named("move_stdlib.string.index_of.base");
const INDEX_OF_PER_BYTE_PATTERN: P = P::named("move_stdlib.string.index_of.per_byte_pattern");
const INDEX_OF_PER_BYTE_SEARCHED: P = P::named("move_stdlib.string.index_of.per_byte_searched");
const CMP_BASE: P = P::named("move_stdlib.cmp.compare.base");
const CMP_PER_ABS_VAL_UNIT: P = P::named("move_stdlib.cmp.compare.per_abs_val_unit");
const MOVE_RANGE_BASE: P = P::named("move_stdlib.vector.move_range.base");
const MOVE_RANGE_PER_INDEX: P = P::named("move_stdlib.vector.move_range.per_index_moved");
const MEM_SWAP: P = P::named("move_stdlib.mem.swap.base");
const FROM_BYTES_BASE: P = P::named("aptos_framework.util.from_bytes.base");
const FROM_BYTES_PER_BYTE: P = P::named("aptos_framework.util.from_bytes.per_byte");
// Aptos's framework has no `type_name::get`; priced as `type_info::type_name`.
const TYPE_NAME_BASE: P = P::named("aptos_framework.type_info.type_name.base");
const TYPE_NAME_PER_BYTE: P = P::named("aptos_framework.type_info.type_name.per_abstract_memory_unit");

fn arg(args: &mut Args) -> VmResult<Value> {
    args.pop().ok_or_else(|| VmError::invariant("native: missing argument"))
}

fn reg(
    r: &mut NativeRegistry,
    a: AccountAddress,
    m: &str,
    f: &str,
    func: impl Fn(&mut NativeContext<'_>, &[Type], Args) -> VmResult<NativeResult> + Send + Sync + 'static,
) {
    r.register(a, m, f, NativeFunction::new(func));
}

fn idx(v: Value) -> VmResult<usize> {
    Ok(usize::try_from(v.as_u64()?).unwrap_or(usize::MAX))
}

pub(super) fn register_all(r: &mut NativeRegistry, a: AccountAddress) {
    // vector
    reg(r, a, "vector", "empty", |_, _, _| Ok(vec![Value::Vector(Vec::new())]));
    reg(r, a, "vector", "length", |cx, _, mut args| {
        let v = arg(&mut args)?;
        match cx.deref(&v)? {
            Value::Vector(e) => Ok(vec![Value::U64(e.len() as u64)]),
            _ => Err(VmError::invariant("length of non-vector")),
        }
    });
    for (name, mutable) in [("borrow", false), ("borrow_mut", true)] {
        let _ = mutable;
        reg(r, a, "vector", name, |cx, _, mut args| {
            let i = idx(arg(&mut args)?)?;
            let v = arg(&mut args)?.into_ref()?;
            let len = match cx.mem.get(&v)? {
                Value::Vector(e) => e.len(),
                _ => return Err(VmError::invariant("borrow of non-vector")),
            };
            if i >= len {
                return Err(VmError::vector(vec_err::INDEX_OUT_OF_BOUNDS));
            }
            Ok(vec![Value::Ref(v.child(i))])
        });
    }
    reg(r, a, "vector", "push_back", |cx, _, mut args| {
        let e = arg(&mut args)?;
        let v = arg(&mut args)?;
        match cx.deref_mut(&v)? {
            Value::Vector(items) => items.push(e),
            _ => return Err(VmError::invariant("push_back on non-vector")),
        }
        Ok(vec![])
    });
    reg(r, a, "vector", "pop_back", |cx, _, mut args| {
        let v = arg(&mut args)?;
        match cx.deref_mut(&v)? {
            Value::Vector(items) => match items.pop() {
                Some(e) => Ok(vec![e]),
                None => Err(VmError::vector(vec_err::POP_EMPTY_VEC)),
            },
            _ => Err(VmError::invariant("pop_back on non-vector")),
        }
    });
    reg(r, a, "vector", "destroy_empty", |_, _, mut args| {
        let v = arg(&mut args)?.into_vec()?;
        if !v.is_empty() {
            return Err(VmError::vector(vec_err::DESTROY_NON_EMPTY_VEC));
        }
        Ok(vec![])
    });
    reg(r, a, "vector", "swap", |cx, _, mut args| {
        let j = idx(arg(&mut args)?)?;
        let i = idx(arg(&mut args)?)?;
        let v = arg(&mut args)?;
        match cx.deref_mut(&v)? {
            Value::Vector(items) => {
                if i >= items.len() || j >= items.len() {
                    return Err(VmError::vector(vec_err::INDEX_OUT_OF_BOUNDS));
                }
                items.swap(i, j);
                Ok(vec![])
            }
            _ => Err(VmError::invariant("swap on non-vector")),
        }
    });
    reg(r, a, "vector", "move_range", |cx, _, mut args| {
        cx.gas.charge_aptos_native(&[(MOVE_RANGE_BASE, 1)])?;
        let insert = idx(arg(&mut args)?)?;
        let to = arg(&mut args)?;
        let len = idx(arg(&mut args)?)?;
        let removal = idx(arg(&mut args)?)?;
        let from = arg(&mut args)?;
        let vec_len = |cx: &NativeContext<'_>, v: &Value| match cx.deref(v)? {
            Value::Vector(items) => Ok(items.len()),
            _ => Err(VmError::invariant("move_range on non-vector")),
        };
        let (from_len, to_len) = (vec_len(cx, &from)?, vec_len(cx, &to)?);
        if removal.checked_add(len).is_none_or(|end| end > from_len) || insert > to_len {
            return Err(VmError::vector(vec_err::INDEX_OUT_OF_BOUNDS));
        }
        // Aptos: every element moved, the range counted twice (out and in).
        let moved = (from_len - removal).saturating_add(to_len - insert).saturating_add(len);
        cx.gas.charge_aptos_native(&[(MOVE_RANGE_PER_INDEX, moved as u64)])?;
        let moved: Vec<Value> = match cx.deref_mut(&from)? {
            Value::Vector(items) => items.drain(removal..removal + len).collect(),
            _ => return Err(VmError::invariant("move_range on non-vector")),
        };
        match cx.deref_mut(&to)? {
            Value::Vector(items) => {
                items.splice(insert..insert, moved);
                Ok(vec![])
            }
            _ => Err(VmError::invariant("move_range on non-vector")),
        }
    });

    // bcs
    for name in ["to_bytes", "serialize"] {
        reg(r, a, "bcs", name, |cx, ty, mut args| {
            let v = arg(&mut args)?;
            let t = ty.first().ok_or_else(|| VmError::invariant("to_bytes without type"))?;
            cx.charge_layout(t)?;
            let layout = cx.types.layout_of(t)?;
            // Values that cannot be serialized (closures over private
            // functions) abort with NFE_BCS_SERIALIZATION_FAILURE.
            let Ok(bytes) = crate::bcs::serialize(cx.deref(&v)?, &layout) else {
                cx.gas.charge_aptos_native(&BCS_FAILURE_TERMS)?;
                return Err(VmError::abort(NFE_BCS_SERIALIZATION_FAILURE));
            };
            cx.gas.charge_native(bytes.len())?;
            cx.gas.charge_aptos_native(&bcs_to_bytes_terms(bytes.len()))?;
            Ok(vec![Value::from_bytes(&bytes)])
        });
    }

    // from_bcs (Aptos framework, 0x1::from_bcs)
    reg(r, a, "from_bcs", "from_bytes", |cx, ty, mut args| {
        const EFROM_BYTES: u64 = 0x01_0001;
        let bytes = arg(&mut args)?.to_bytes()?;
        let t = ty.first().ok_or_else(|| VmError::invariant("from_bytes without type"))?;
        cx.charge_layout(t)?;
        let layout = cx.types.layout_of(t)?;
        cx.gas.charge_native(bytes.len())?;
        cx.gas.charge_aptos_native(&[(FROM_BYTES_BASE, 1), (FROM_BYTES_PER_BYTE, bytes.len() as u64)])?;
        let v = crate::bcs::deserialize(&bytes, &layout).map_err(|_| VmError::abort(EFROM_BYTES))?;
        Ok(vec![v])
    });

    // hash
    reg(r, a, "hash", "sha2_256", |cx, _, mut args| {
        let data = arg(&mut args)?.to_bytes()?;
        cx.gas.charge_native(data.len())?;
        cx.gas.charge_aptos_native(&Hash256::Sha2.terms(data.len()))?;
        Ok(vec![Value::from_bytes(&sha2_256(&data))])
    });
    reg(r, a, "hash", "sha3_256", |cx, _, mut args| {
        let data = arg(&mut args)?.to_bytes()?;
        cx.gas.charge_native(data.len())?;
        cx.gas.charge_aptos_native(&Hash256::Sha3.terms(data.len()))?;
        Ok(vec![Value::from_bytes(&sha3_256(&data))])
    });

    // signer
    reg(r, a, "signer", "borrow_address", |cx, _, mut args| {
        cx.gas.charge_aptos_native(&[(SIGNER_BORROW_ADDRESS, 1)])?;
        let s = arg(&mut args)?.into_ref()?;
        Ok(vec![Value::Ref(s.child(0))])
    });

    // string
    reg(r, a, "string", "internal_check_utf8", |cx, _, mut args| {
        let v = arg(&mut args)?;
        let b = cx.deref(&v)?.to_bytes()?;
        cx.gas.charge_aptos_native(&[(CHECK_UTF8_BASE, 1), (CHECK_UTF8_PER_BYTE, b.len() as u64)])?;
        Ok(vec![Value::Bool(std::str::from_utf8(&b).is_ok())])
    });
    reg(r, a, "string", "internal_is_char_boundary", |cx, _, mut args| {
        cx.gas.charge_aptos_native(&[(IS_CHAR_BOUNDARY, 1)])?;
        let i = idx(arg(&mut args)?)?;
        let v = arg(&mut args)?;
        let b = cx.deref(&v)?.to_bytes()?;
        let ok = i == 0 || i == b.len() || (i < b.len() && (b[i] as i8) >= -0x40);
        Ok(vec![Value::Bool(ok)])
    });
    reg(r, a, "string", "internal_sub_string", |cx, _, mut args| {
        let j = idx(arg(&mut args)?)?;
        let i = idx(arg(&mut args)?)?;
        charge_sub_string(cx.gas, i, j)?;
        let v = arg(&mut args)?;
        let b = cx.deref(&v)?.to_bytes()?;
        if i > j || j > b.len() {
            return Err(VmError::invariant("sub_string out of range"));
        }
        Ok(vec![Value::from_bytes(&b[i..j])])
    });
    reg(r, a, "string", "internal_index_of", |cx, _, mut args| {
        let pat = arg(&mut args)?;
        let s = arg(&mut args)?;
        let p = cx.deref(&pat)?.to_bytes()?;
        let s = cx.deref(&s)?.to_bytes()?;
        let pos = if p.is_empty() { 0 } else { s.windows(p.len()).position(|w| w == p.as_slice()).unwrap_or(s.len()) };
        charge_index_of(cx.gas, p.len(), pos)?;
        Ok(vec![Value::U64(pos as u64)])
    });

    // type_name
    reg(r, a, "type_name", "get", |cx, ty, _| {
        cx.gas.charge_aptos_native(&[(TYPE_NAME_BASE, 1)])?;
        let t = ty.first().ok_or_else(|| VmError::invariant("type_name::get without type"))?;
        let name = t.type_name();
        cx.gas.charge_aptos_native(&[(TYPE_NAME_PER_BYTE, name.len() as u64)])?;
        Ok(vec![Value::Struct(vec![Value::Struct(vec![Value::from_bytes(name.as_bytes())])])])
    });

    // debug
    reg(r, a, "debug", "print", |_, _, _| Ok(vec![]));
    reg(r, a, "debug", "print_stack_trace", |_, _, _| Ok(vec![]));

    // mem / cmp
    reg(r, a, "mem", "swap", |cx, _, mut args| {
        cx.gas.charge_aptos_native(&[(MEM_SWAP, 1)])?;
        let y = arg(&mut args)?;
        let x = arg(&mut args)?;
        let xv = std::mem::take(cx.deref_mut(&x)?);
        let yv = std::mem::replace(cx.deref_mut(&y)?, xv);
        *cx.deref_mut(&x)? = yv;
        Ok(vec![])
    });
    reg(r, a, "cmp", "compare", |cx, ty, mut args| {
        let y = arg(&mut args)?;
        let x = arg(&mut args)?;
        if cx.gas.is_aptos() {
            let t = ty.first().ok_or_else(|| VmError::invariant("compare without type"))?;
            let layout = cx.types.layout_of(t)?;
            let units = cx.gas.abstract_size_dereferenced(&layout, cx.deref(&x)?)
                + cx.gas.abstract_size_dereferenced(&layout, cx.deref(&y)?);
            cx.gas.charge_aptos_native(&[(CMP_BASE, 1), (CMP_PER_ABS_VAL_UNIT, units)])?;
        }
        let tag = ordering_tag(compare_values(cx.deref(&x)?, cx.deref(&y)?)?);
        Ok(vec![Value::Variant(tag, vec![])])
    });
}

/// The variant of `0x1::cmp::Ordering` (`Less`, `Equal`, `Greater`) for `o`.
fn ordering_tag(o: std::cmp::Ordering) -> u16 {
    match o {
        std::cmp::Ordering::Less => 0,
        std::cmp::Ordering::Equal => 1,
        std::cmp::Ordering::Greater => 2,
    }
}

/// `bcs::to_bytes` of a value that cannot be serialized.
pub const NFE_BCS_SERIALIZATION_FAILURE: u64 = 0x1C5;

/// Aptos's price of `bcs::to_bytes` serializing `n` bytes.
pub fn bcs_to_bytes_terms(n: usize) -> [(P, u64); 1] {
    [(BCS_TO_BYTES_PER_BYTE, n as u64)]
}

/// Aptos's price of a `bcs::to_bytes` whose value cannot be serialized.
pub const BCS_FAILURE_TERMS: [(P, u64); 1] = [(BCS_TO_BYTES_FAILURE, 1)];

/// The 256-bit hashes of `0x1::hash`: their native names, digests and
/// Aptos prices, in one place for every native path that computes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hash256 {
    Sha2,
    Sha3,
}

impl Hash256 {
    pub const ALL: [Hash256; 2] = [Hash256::Sha2, Hash256::Sha3];

    /// The native's name in `0x1::hash`.
    pub fn name(self) -> &'static str {
        match self {
            Hash256::Sha2 => "sha2_256",
            Hash256::Sha3 => "sha3_256",
        }
    }

    pub fn digest(self, data: &[u8]) -> [u8; 32] {
        match self {
            Hash256::Sha2 => sha2_256(data),
            Hash256::Sha3 => sha3_256(data),
        }
    }

    /// Aptos's price of hashing `n` bytes.
    pub fn terms(self, n: usize) -> [(P, u64); 2] {
        match self {
            Hash256::Sha2 => [(SHA2_256_BASE, 1), (SHA2_256_PER_BYTE, n as u64)],
            Hash256::Sha3 => [(SHA3_256_BASE, 1), (SHA3_256_PER_BYTE, n as u64)],
        }
    }
}

/// `string::internal_sub_string(_, i, j)`: the base, then (when `i <= j`)
/// per byte taken, before the range is checked.
fn charge_sub_string(gas: &mut crate::gas::GasMeter, i: usize, j: usize) -> VmResult<()> {
    gas.charge_aptos_native(&[(SUB_STRING_BASE, 1)])?;
    if i <= j {
        gas.charge_aptos_native(&[(SUB_STRING_PER_BYTE, (j - i) as u64)])?;
    }
    Ok(())
}

/// `string::internal_index_of`: per pattern byte and per byte searched
/// (up to where the pattern was found).
fn charge_index_of(gas: &mut crate::gas::GasMeter, pattern: usize, searched: usize) -> VmResult<()> {
    gas.charge_aptos_native(&[
        (INDEX_OF_BASE, 1),
        (INDEX_OF_PER_BYTE_PATTERN, pattern as u64),
        (INDEX_OF_PER_BYTE_SEARCHED, searched as u64),
    ])
}

/// The flat forms of the stdlib natives (same checks, errors and charges
/// as the tree forms in [`register_all`]).
pub(super) fn register_flat_all(r: &mut NativeRegistry, a: AccountAddress) {
    for name in ["to_bytes", "serialize"] {
        r.register_flat(a, "bcs", name, |call| {
            let t = call.ty_arg(0).map_err(|_| VmError::invariant("to_bytes without type"))?;
            call.cx.charge_layout(t)?;
            let Ok(bytes) = call.arg_bcs(0) else {
                call.cx.gas.charge_aptos_native(&BCS_FAILURE_TERMS)?;
                return Err(VmError::abort(NFE_BCS_SERIALIZATION_FAILURE));
            };
            call.cx.gas.charge_native(bytes.len())?;
            call.cx.gas.charge_aptos_native(&bcs_to_bytes_terms(bytes.len()))?;
            call.ret_bytes(0, &bytes)
        });
    }
    r.register_flat(a, "from_bcs", "from_bytes", |call| {
        const EFROM_BYTES: u64 = 0x01_0001;
        let t = call.ty_arg(0).map_err(|_| VmError::invariant("from_bytes without type"))?;
        call.cx.charge_layout(t)?;
        let layout = call.cx.types.layout_of(t)?;
        let n = call.arg_bytes(0)?.len();
        call.cx.gas.charge_native(n)?;
        call.cx.gas.charge_aptos_native(&[(FROM_BYTES_BASE, 1), (FROM_BYTES_PER_BYTE, n as u64)])?;
        let v = crate::bcs::deserialize(call.arg_bytes(0)?, &layout).map_err(|_| VmError::abort(EFROM_BYTES))?;
        call.ret_tree(0, &v)
    });
    for hash in Hash256::ALL {
        r.register_flat(a, "hash", hash.name(), move |call| {
            let data = call.arg_bytes(0)?;
            let n = data.len();
            let digest = hash.digest(data);
            call.cx.gas.charge_native(n)?;
            call.cx.gas.charge_aptos_native(&hash.terms(n))?;
            call.ret_bytes(0, &digest)
        });
    }
    // A signer is one address at offset 0: the reference is the signer's.
    r.register_flat(a, "signer", "borrow_address", |call| {
        call.cx.gas.charge_aptos_native(&[(SIGNER_BORROW_ADDRESS, 1)])?;
        call.ret_arg_ref(0, 0, &[])
    });
    r.register_flat(a, "string", "internal_check_utf8", |call| {
        let n = call.arg_bytes(0)?.len() as u64;
        call.cx.gas.charge_aptos_native(&[(CHECK_UTF8_BASE, 1), (CHECK_UTF8_PER_BYTE, n)])?;
        let ok = std::str::from_utf8(call.arg_bytes(0)?).is_ok();
        call.ret_bool(0, ok)
    });
    r.register_flat(a, "string", "internal_is_char_boundary", |call| {
        call.cx.gas.charge_aptos_native(&[(IS_CHAR_BOUNDARY, 1)])?;
        let b = call.arg_bytes(0)?;
        let i = usize::try_from(call.arg_u64(1)?).unwrap_or(usize::MAX);
        let ok = i == 0 || i == b.len() || (i < b.len() && (b[i] as i8) >= -0x40);
        call.ret_bool(0, ok)
    });
    r.register_flat(a, "string", "internal_sub_string", |call| {
        let i = usize::try_from(call.arg_u64(1)?).unwrap_or(usize::MAX);
        let j = usize::try_from(call.arg_u64(2)?).unwrap_or(usize::MAX);
        charge_sub_string(call.cx.gas, i, j)?;
        let b = call.arg_bytes(0)?;
        if i > j || j > b.len() {
            return Err(VmError::invariant("sub_string out of range"));
        }
        let sub = b[i..j].to_vec();
        call.ret_bytes(0, &sub)
    });
    r.register_flat(a, "string", "internal_index_of", |call| {
        let s = call.arg_bytes(0)?;
        let p = call.arg_bytes(1)?;
        let pos = if p.is_empty() { 0 } else { s.windows(p.len()).position(|w| w == p).unwrap_or(s.len()) };
        let pattern = p.len();
        charge_index_of(call.cx.gas, pattern, pos)?;
        call.ret_u64(0, pos as u64)
    });
    r.register_flat(a, "type_name", "get", |call| {
        call.cx.gas.charge_aptos_native(&[(TYPE_NAME_BASE, 1)])?;
        let t = call.ty_arg(0).map_err(|_| VmError::invariant("type_name::get without type"))?;
        let name = t.type_name();
        call.cx.gas.charge_aptos_native(&[(TYPE_NAME_PER_BYTE, name.len() as u64)])?;
        call.ret_tree(0, &Value::Struct(vec![Value::Struct(vec![Value::from_bytes(name.as_bytes())])]))
    });
    for name in ["print", "print_stack_trace"] {
        r.register_flat(a, "debug", name, |_| Ok(()));
    }
    r.register_flat(a, "cmp", "compare", |call| {
        if call.cx.gas.is_aptos() {
            let units = call.arg_dereferenced_size(0)? + call.arg_dereferenced_size(1)?;
            call.cx.gas.charge_aptos_native(&[(CMP_BASE, 1), (CMP_PER_ABS_VAL_UNIT, units)])?;
        }
        let tag = ordering_tag(call.compare_ref_args(0, 1)?);
        call.ret_tree(0, &Value::Variant(tag, vec![]))
    });
    // Two places of one layout: their bytes trade places (ownership with them).
    r.register_flat(a, "mem", "swap", |call| {
        call.cx.gas.charge_aptos_native(&[(MEM_SWAP, 1)])?;
        call.swap_mut_args(0, 1)
    });
}

/// Sui's variants of natives whose behaviour differs from Aptos.
pub(super) fn register_sui_overrides(r: &mut NativeRegistry, a: AccountAddress) {
    reg(r, a, "type_name", "get", |_, ty, _| {
        let t = ty.first().ok_or_else(|| VmError::invariant("type_name::get without type"))?;
        let name = t.canonical_name(false);
        Ok(vec![Value::Struct(vec![Value::Struct(vec![Value::from_bytes(name.as_bytes())])])])
    });
    for f in ["get_with_original_ids", "with_defining_ids", "with_original_ids"] {
        reg(r, a, "type_name", f, |_, ty, _| {
            let t = ty.first().ok_or_else(|| VmError::invariant("type_name without type"))?;
            let name = t.canonical_name(false);
            Ok(vec![Value::Struct(vec![Value::Struct(vec![Value::from_bytes(name.as_bytes())])])])
        });
    }
    for f in ["defining_id", "original_id"] {
        reg(r, a, "type_name", f, |_, ty, _| match ty.first() {
            Some(Type::Datatype(id, _)) => Ok(vec![Value::Address(id.address)]),
            // Sui aborts for types that are not datatypes.
            _ => Err(VmError::abort(0)),
        });
    }
    // Their flat forms (the same results; Sui charges nothing here).
    for f in ["get", "get_with_original_ids", "with_defining_ids", "with_original_ids"] {
        r.register_flat(a, "type_name", f, |call| {
            let t = call.ty_arg(0).map_err(|_| VmError::invariant("type_name without type"))?;
            let name = t.canonical_name(false);
            call.ret_tree(0, &Value::Struct(vec![Value::Struct(vec![Value::from_bytes(name.as_bytes())])]))
        });
    }
    for f in ["defining_id", "original_id"] {
        r.register_flat(a, "type_name", f, |call| match call.ty_args.first() {
            Some(Type::Datatype(id, _)) => call.ret_address(0, id.address),
            _ => Err(VmError::abort(0)),
        });
    }
}

/// `0x1::hash::sha2_256` of `data` (also what the flat interpreter's
/// direct path computes; gas is charged by the caller, per byte).
pub fn sha2_256(data: &[u8]) -> [u8; 32] {
    sha2::Sha256::digest(data).into()
}

/// `0x1::hash::sha3_256` of `data` (as [`sha2_256`]).
pub fn sha3_256(data: &[u8]) -> [u8; 32] {
    sha3::Sha3_256::digest(data).into()
}
