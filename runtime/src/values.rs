//! Values, references and the memory references point into.
//!
//! Tree values are what natives not ported to the flat native ABI take and
//! return (through the native bridge); no executor runs on them. A
//! reference is a root (a local of the native call, or a parked value) plus
//! a path of field / element indices. The verifier's reference-safety rules
//! guarantee the path stays valid while the reference lives, so resolving it
//! is a plain walk; no interior mutability or aliasing is needed.

use crate::error::{TrapResult, VmError, VmResult};
use crate::storage::ModuleId;
use crate::types::Type;
use ethnum::{I256, U256};
use movejit_format::AccountAddress;
use std::sync::Arc;

/// A function named by its module and name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FunctionId {
    pub module: ModuleId,
    pub name: Arc<str>,
}

/// A closure: a function, its type arguments, the capture mask and the
/// captured values (in parameter order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClosureValue {
    pub function: FunctionId,
    pub type_args: Vec<Type>,
    pub mask: u64,
    pub captured: Vec<Value>,
    /// Layouts of the captured values (needed to serialize them).
    pub captured_layouts: Vec<crate::layout::Layout>,
    /// Whether the function may be stored (public or `#[persistent]`);
    /// serializing a closure over any other function is an invariant error.
    pub serializable: bool,
}

/// Where a reference starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefRoot {
    /// A local: a slot of the call's locals (the native bridge puts each
    /// reference argument's target in one).
    Local(u32),
    /// A value a native owns for the call (a table entry), in
    /// [`Memory::native`].
    Native(u32),
}

/// The field / element indices from a reference's root to its target.
/// Short paths (the common case) are stored inline, without allocating.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Path {
    Inline(u8, [u32; 3]),
    Heap(Box<Vec<u32>>),
}

impl Default for Path {
    fn default() -> Self {
        Path::Inline(0, [0; 3])
    }
}

impl Path {
    pub fn as_slice(&self) -> &[u32] {
        match self {
            Path::Inline(n, a) => &a[..*n as usize],
            Path::Heap(v) => v,
        }
    }
    /// Extends this path by one step, in place.
    #[inline]
    pub fn push(&mut self, idx: u32) {
        match self {
            Path::Inline(n, a) if (*n as usize) < a.len() => {
                a[*n as usize] = idx;
                *n += 1;
            }
            p => *p = p.with(idx),
        }
    }

    /// This path extended by one step.
    pub fn with(&self, idx: u32) -> Path {
        match self {
            Path::Inline(n, a) if (*n as usize) < a.len() => {
                let mut a = *a;
                a[*n as usize] = idx;
                Path::Inline(n + 1, a)
            }
            p => {
                let mut v = p.as_slice().to_vec();
                v.push(idx);
                Path::Heap(Box::new(v))
            }
        }
    }
}

/// A reference: a root and a path of field or element indices below it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    pub root: RefRoot,
    pub path: Path,
}

impl Reference {
    pub fn new(root: RefRoot) -> Reference {
        Reference { root, path: Path::default() }
    }
    /// The reference to child `idx` (field or element). Indices beyond
    /// `u32::MAX` cannot exist in memory, so they are clamped to an index
    /// that resolving reports as out of range.
    pub fn child(&self, idx: usize) -> Reference {
        let idx = u32::try_from(idx).unwrap_or(u32::MAX);
        Reference { root: self.root, path: self.path.with(idx) }
    }
}

/// A Move value.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Value {
    /// A local with nothing in it (never initialised or moved out).
    #[default]
    Invalid,
    Bool(bool),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    U128(u128),
    U256(U256),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    I128(i128),
    I256(I256),
    Address(AccountAddress),
    Vector(Vec<Value>),
    /// A struct's fields. A signer is a struct with one address field.
    Struct(Vec<Value>),
    /// An enum value: the variant tag and its fields.
    Variant(u16, Vec<Value>),
    Closure(Box<ClosureValue>),
    Ref(Reference),
}

impl Value {
    #[inline]
    pub fn as_bool(&self) -> TrapResult<bool> {
        match self {
            Value::Bool(b) => Ok(*b),
            v => Err(Box::new(VmError::invariant(format!("expected bool, got {v:?}")))),
        }
    }
    #[inline]
    pub fn as_u64(&self) -> TrapResult<u64> {
        match self {
            Value::U64(b) => Ok(*b),
            v => Err(Box::new(VmError::invariant(format!("expected u64, got {v:?}")))),
        }
    }
    pub fn as_address(&self) -> TrapResult<AccountAddress> {
        match self {
            Value::Address(a) => Ok(*a),
            Value::Struct(f) if f.len() == 1 => f[0].as_address(),
            v => Err(Box::new(VmError::invariant(format!("expected address, got {v:?}")))),
        }
    }
    #[inline]
    pub fn into_ref(self) -> TrapResult<Reference> {
        match self {
            Value::Ref(r) => Ok(r),
            v => Err(Box::new(VmError::invariant(format!("expected reference, got {v:?}")))),
        }
    }
    pub fn into_vec(self) -> TrapResult<Vec<Value>> {
        match self {
            Value::Vector(v) => Ok(v),
            v => Err(Box::new(VmError::invariant(format!("expected vector, got {v:?}")))),
        }
    }
    pub fn into_fields(self) -> TrapResult<Vec<Value>> {
        match self {
            Value::Struct(v) => Ok(v),
            v => Err(Box::new(VmError::invariant(format!("expected struct, got {v:?}")))),
        }
    }
    /// The bytes of a `vector<u8>`.
    pub fn to_bytes(&self) -> TrapResult<Vec<u8>> {
        match self {
            Value::Vector(v) => v
                .iter()
                .map(|e| match e {
                    Value::U8(b) => Ok(*b),
                    e => Err(Box::new(VmError::invariant(format!("expected u8, got {e:?}")))),
                })
                .collect(),
            v => Err(Box::new(VmError::invariant(format!("expected vector<u8>, got {v:?}")))),
        }
    }
    pub fn signer(a: AccountAddress) -> Value {
        Value::Struct(vec![Value::Address(a)])
    }
    pub fn from_bytes(b: &[u8]) -> Value {
        Value::Vector(b.iter().map(|x| Value::U8(*x)).collect())
    }
    /// The child at `idx` (field of a struct or variant, element of a vector).
    pub fn child(&self, idx: usize) -> TrapResult<&Value> {
        match self {
            Value::Struct(f) | Value::Variant(_, f) | Value::Vector(f) => {
                f.get(idx).ok_or_else(|| Box::new(VmError::invariant("reference path out of range")))
            }
            v => Err(Box::new(VmError::invariant(format!("cannot index into {v:?}")))),
        }
    }
    pub fn child_mut(&mut self, idx: usize) -> TrapResult<&mut Value> {
        match self {
            Value::Struct(f) | Value::Variant(_, f) | Value::Vector(f) => {
                f.get_mut(idx).ok_or_else(|| Box::new(VmError::invariant("reference path out of range")))
            }
            v => Err(Box::new(VmError::invariant(format!("cannot index into {v:?}")))),
        }
    }
    /// Nesting depth of the value (a primitive is 1).
    pub fn depth(&self) -> usize {
        match self {
            Value::Vector(f) | Value::Struct(f) | Value::Variant(_, f) => {
                1 + f.iter().map(Value::depth).max().unwrap_or(0)
            }
            Value::Closure(c) => 1 + c.captured.iter().map(Value::depth).max().unwrap_or(0),
            _ => 1,
        }
    }
}

/// Everything a tree reference can point into: the locals of a native call
/// (its reference arguments' targets, put there by the native bridge) and
/// the values natives park.
#[derive(Debug, Default)]
pub struct Memory {
    pub locals: Vec<Value>,
    /// Values natives parked for the call (see `natives::NativeSlots`).
    pub native: crate::natives::NativeSlots,
}

impl Memory {
    fn root(&self, root: RefRoot) -> TrapResult<&Value> {
        match root {
            RefRoot::Local(slot) => {
                self.locals.get(slot as usize).ok_or_else(|| Box::new(VmError::invariant("dangling local reference")))
            }
            RefRoot::Native(slot) => {
                self.native.get(slot).ok_or_else(|| Box::new(VmError::invariant("dangling native reference")))
            }
        }
    }
    fn root_mut(&mut self, root: RefRoot) -> TrapResult<&mut Value> {
        match root {
            RefRoot::Local(slot) => self
                .locals
                .get_mut(slot as usize)
                .ok_or_else(|| Box::new(VmError::invariant("dangling local reference"))),
            RefRoot::Native(slot) => {
                self.native.get_mut(slot).ok_or_else(|| Box::new(VmError::invariant("dangling native reference")))
            }
        }
    }
    /// The value `r` points to.
    #[inline]
    pub fn get(&self, r: &Reference) -> TrapResult<&Value> {
        let mut v = self.root(r.root)?;
        for &i in r.path.as_slice() {
            v = v.child(i as usize)?;
        }
        Ok(v)
    }
    pub fn get_mut(&mut self, r: &Reference) -> TrapResult<&mut Value> {
        let mut v = self.root_mut(r.root)?;
        for &i in r.path.as_slice() {
            v = v.child_mut(i as usize)?;
        }
        Ok(v)
    }
    /// `v` itself, or what it points to when it is a reference.
    pub fn deref<'a>(&'a self, v: &'a Value) -> TrapResult<&'a Value> {
        match v {
            Value::Ref(r) => self.get(r),
            v => Ok(v),
        }
    }
}

/// Total order used by `std::cmp::compare`: integers numerically, vectors
/// lexicographically then by length, structs field by field, enums by tag
/// then fields. Returns -1, 0 or 1.
pub fn compare_values(a: &Value, b: &Value) -> VmResult<std::cmp::Ordering> {
    use std::cmp::Ordering;
    use Value::*;
    Ok(match (a, b) {
        (Bool(x), Bool(y)) => x.cmp(y),
        (U8(x), U8(y)) => x.cmp(y),
        (U16(x), U16(y)) => x.cmp(y),
        (U32(x), U32(y)) => x.cmp(y),
        (U64(x), U64(y)) => x.cmp(y),
        (U128(x), U128(y)) => x.cmp(y),
        (U256(x), U256(y)) => x.cmp(y),
        (I8(x), I8(y)) => x.cmp(y),
        (I16(x), I16(y)) => x.cmp(y),
        (I32(x), I32(y)) => x.cmp(y),
        (I64(x), I64(y)) => x.cmp(y),
        (I128(x), I128(y)) => x.cmp(y),
        (I256(x), I256(y)) => x.cmp(y),
        (Address(x), Address(y)) => x.cmp(y),
        (Vector(x), Vector(y)) | (Struct(x), Struct(y)) => {
            for (p, q) in x.iter().zip(y) {
                let o = compare_values(p, q)?;
                if o != Ordering::Equal {
                    return Ok(o);
                }
            }
            x.len().cmp(&y.len())
        }
        (Variant(t, x), Variant(u, y)) => {
            if t != u {
                return Ok(t.cmp(u));
            }
            for (p, q) in x.iter().zip(y) {
                let o = compare_values(p, q)?;
                if o != Ordering::Equal {
                    return Ok(o);
                }
            }
            Ordering::Equal
        }
        (Closure(x), Closure(y)) => {
            let o = (&x.function, &x.type_args, x.mask).cmp(&(&y.function, &y.type_args, y.mask));
            if o != Ordering::Equal {
                return Ok(o);
            }
            for (p, q) in x.captured.iter().zip(&y.captured) {
                let o = compare_values(p, q)?;
                if o != Ordering::Equal {
                    return Ok(o);
                }
            }
            x.captured.len().cmp(&y.captured.len())
        }
        (a, b) => return Err(VmError::invariant(format!("cannot compare {a:?} with {b:?}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn sizes_and_paths() {
        assert!(std::mem::size_of::<Value>() <= 48, "{}", std::mem::size_of::<Value>());
        let mut r = Reference::new(RefRoot::Native(0));
        for i in 0..9 {
            r = r.child(i);
        }
        assert_eq!(r.path.as_slice(), &[0, 1, 2, 3, 4, 5, 6, 7, 8]);
    }
}
