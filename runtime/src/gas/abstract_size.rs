//! Aptos's abstract value sizes (`misc.abs_val.*`), measured over flat
//! values. Copying, reading and comparing values is priced per abstract
//! unit, and the memory quota counts them too, so both executors measure
//! values here.
//!
//! The rules follow how Aptos's VM represents values (its `ValueView`):
//! - a primitive costs its own parameter (`u64`, `address`, …);
//! - a struct costs `struct` plus its fields; an enum value is a struct
//!   whose first field is its `u16` tag; a signer is an enum value (variant
//!   0, the master signer) holding an address;
//! - a vector of primitives is packed: `vector` plus `per_<elem>_packed`
//!   per element; any other vector costs `vector` plus each element;
//! - a closure costs `closure` plus its captured values;
//! - a reference costs `reference` (what it points to is not counted),
//!   except in the *dereferenced* size Move's `==` uses, which is the size
//!   of the referenced value (and counts vectors of `u16`, `u32` and `u256`
//!   element by element: [`AbstractSizes::dereferenced`]);
//! - a vector element's *packed* size is its kind's packed size for a
//!   scalar, its outermost node otherwise, except a non-empty vector of
//!   signed integers: one packed element ([`AbstractSizes::packed_value`]).
//!
//! A layout without vectors or closures has a size that does not depend on
//! the value ([`AbstractSizes::fixed`]): callers compute it once.

use super::schedule::{MissingParameter, Schedule};
use crate::flat::layout::{FlatLayout, Shape};
use crate::flat::raw;
use crate::layout::Layout;
use crate::scalar::ScalarKind;
use crate::values::Value;
use std::sync::Arc;

/// The scalar kind of a tree value, if it is a scalar.
fn scalar_of(v: &Value) -> Option<ScalarKind> {
    Some(match v {
        Value::Bool(_) => ScalarKind::Bool,
        Value::U8(_) => ScalarKind::U8,
        Value::U16(_) => ScalarKind::U16,
        Value::U32(_) => ScalarKind::U32,
        Value::U64(_) => ScalarKind::U64,
        Value::U128(_) => ScalarKind::U128,
        Value::U256(_) => ScalarKind::U256,
        Value::I8(_) => ScalarKind::I8,
        Value::I16(_) => ScalarKind::I16,
        Value::I32(_) => ScalarKind::I32,
        Value::I64(_) => ScalarKind::I64,
        Value::I128(_) => ScalarKind::I128,
        Value::I256(_) => ScalarKind::I256,
        Value::Address(_) => ScalarKind::Address,
        _ => return None,
    })
}

/// The `misc.abs_val.*` parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AbstractSizes {
    /// One value of each scalar kind, indexed by its code.
    unit: [u64; ScalarKind::ALL.len()],
    /// One element of a packed vector (Aptos packs every scalar kind).
    packed: [u64; ScalarKind::ALL.len()],
    struct_: u64,
    closure: u64,
    vector: u64,
    reference: u64,
}

impl AbstractSizes {
    pub fn from_schedule(s: &Schedule) -> Result<Self, MissingParameter> {
        let mut unit = [0; ScalarKind::ALL.len()];
        let mut packed = [0; ScalarKind::ALL.len()];
        for k in ScalarKind::ALL {
            let name = k.to_type().to_string();
            unit[k as usize] = s.get(&format!("misc.abs_val.{name}"))?;
            packed[k as usize] = s.get(&format!("misc.abs_val.per_{name}_packed"))?;
        }
        Ok(AbstractSizes {
            unit,
            packed,
            struct_: s.get("misc.abs_val.struct")?,
            closure: s.get("misc.abs_val.closure")?,
            vector: s.get("misc.abs_val.vector")?,
            reference: s.get("misc.abs_val.reference")?,
        })
    }

    /// The size of a reference (what it points to is not counted).
    pub fn reference(&self) -> u64 {
        self.reference
    }

    /// The size of every value of layout `l`, when it does not depend on
    /// the value (no vector or closure inside).
    pub fn fixed(&self, l: &FlatLayout) -> Option<u64> {
        if let Some(p) = l.shape.scalar() {
            return Some(self.unit[p as usize]);
        }
        match &l.shape {
            Shape::Signer => Some(self.signer()),
            Shape::Struct(fs) => fs.iter().try_fold(self.struct_, |acc, f| Some(acc + self.fixed(&f.layout)?)),
            Shape::Enum(vs) => {
                // Fixed only when every variant has the same size.
                let mut sizes = vs.iter().map(|fs| {
                    fs.iter().try_fold(self.struct_ + self.unit[ScalarKind::U16 as usize], |acc, f| {
                        Some(acc + self.fixed(&f.layout)?)
                    })
                });
                let first = sizes.next().unwrap_or(Some(self.struct_ + self.unit[ScalarKind::U16 as usize]))?;
                sizes.all(|s| s == Some(first)).then_some(first)
            }
            Shape::Reference(_) => Some(self.reference),
            _ => None,
        }
    }

    /// The abstract size of the value of layout `l` held in `bytes`.
    pub fn value(&self, l: &FlatLayout, bytes: &[u8]) -> u64 {
        self.measure(l, bytes, Walk::Value)
    }

    /// The size Move's `==` and `!=` (and `cmp::compare`) are priced by: a
    /// reference counts as the value it points to, and vectors of `u16`,
    /// `u32` and `u256` inside it count element by element
    /// ([`Walk::Dereferenced`]).
    pub fn dereferenced(&self, l: &FlatLayout, bytes: &[u8]) -> u64 {
        match &l.shape {
            Shape::Reference(t) => self.measure(t, raw::deref(bytes, t.size), Walk::Dereferenced),
            _ => self.measure(l, bytes, Walk::Dereferenced),
        }
    }

    /// The size of one element of a vector of scalar kind `k`, as `walk`
    /// counts it.
    fn vector_element(&self, k: ScalarKind, walk: Walk) -> u64 {
        match (walk, k) {
            (Walk::Dereferenced, ScalarKind::U16 | ScalarKind::U32 | ScalarKind::U256) => self.unit[k as usize],
            _ => self.packed[k as usize],
        }
    }

    fn measure(&self, l: &FlatLayout, bytes: &[u8], walk: Walk) -> u64 {
        if let Some(p) = l.shape.scalar() {
            return self.unit[p as usize];
        }
        match &l.shape {
            Shape::Signer => self.signer(),
            Shape::Vector(e) => {
                let len = raw::vec_len(bytes);
                match e.shape.scalar() {
                    Some(p) => self.vector.saturating_add(self.vector_element(p, walk).saturating_mul(len)),
                    None => match self.fixed(e) {
                        Some(each) => self.vector.saturating_add(each.saturating_mul(len)),
                        None => raw::vec_data(bytes, e.size)
                            .chunks_exact(e.size as usize)
                            .fold(self.vector, |acc, x| acc.saturating_add(self.measure(e, x, walk))),
                    },
                }
            }
            Shape::Struct(fs) => fs.iter().fold(self.struct_, |acc, f| acc.saturating_add(self.field(f, bytes, walk))),
            Shape::Enum(vs) => {
                let tagged = self.struct_ + self.unit[ScalarKind::U16 as usize];
                let fields = crate::flat::value::variant(vs, bytes).unwrap_or(&[]);
                fields.iter().fold(tagged, |acc, f| acc.saturating_add(self.field(f, bytes, walk)))
            }
            Shape::Reference(_) => self.reference,
            Shape::Closure => raw::closure_ref(bytes).map_or(self.closure, |c| {
                c.captured
                    .iter()
                    .fold(self.closure, |acc, v| acc.saturating_add(self.measure(v.layout(), v.bytes(), walk)))
            }),
            _ => unreachable!("primitives are measured above"),
        }
    }

    /// [`value`](Self::value) of the value at `a`.
    ///
    /// # Safety
    /// `a` holds a live value of layout `l`.
    #[allow(unsafe_code)]
    pub unsafe fn value_at(&self, l: &FlatLayout, a: crate::flat::mem::Addr) -> u64 {
        // SAFETY: the caller's contract.
        self.value(l, unsafe { crate::flat::mem::bytes(a, l.size) })
    }

    /// [`dereferenced`](Self::dereferenced) of the value at `a`.
    ///
    /// # Safety
    /// `a` holds a live value of layout `l`.
    #[allow(unsafe_code)]
    pub unsafe fn dereferenced_at(&self, l: &FlatLayout, a: crate::flat::mem::Addr) -> u64 {
        // SAFETY: the caller's contract.
        self.dereferenced(l, unsafe { crate::flat::mem::bytes(a, l.size) })
    }

    /// [`value`](Self::value) and [`heap`](Self::heap) of any closure
    /// whose captured values have the layouts `captured`, when they are all
    /// scalars (then they do not depend on the values); `None` otherwise.
    pub fn scalar_closure(&self, captured: &[Arc<FlatLayout>]) -> Option<(u64, u64)> {
        let units = captured
            .iter()
            .try_fold(self.closure, |acc, l| Some(acc.saturating_add(self.unit[l.shape.scalar()? as usize])))?;
        Some((units, units.saturating_sub(self.closure)))
    }

    /// Aptos's *stack* size of a value of layout `l`: its outermost node
    /// only (a struct, vector, closure or reference counts as one node).
    pub fn stack(&self, l: &FlatLayout) -> u64 {
        match l.shape.scalar() {
            Some(p) => self.unit[p as usize],
            None => match &l.shape {
                Shape::Vector(_) => self.vector,
                Shape::Closure => self.closure,
                Shape::Reference(_) => self.reference,
                _ => self.struct_,
            },
        }
    }

    /// Whether every value of layout `l` has heap size 0 (scalars and
    /// references): what compiled code may copy, read, write or drop
    /// without feeding the memory meter.
    pub fn heapless(l: &FlatLayout) -> bool {
        l.shape.scalar().is_some() || matches!(l.shape, Shape::Reference(_))
    }

    /// Whether a slot of layout `l` tells by its bytes alone whether what
    /// it holds has a heap part to release: all zero exactly when it holds
    /// no value (moved out) or a value of heap size 0 (an empty vector).
    /// Vectors and closures only: a struct or enum may be all zero while
    /// held (an empty vector inside, variant 0 without fields) and still
    /// have a heap size (its fields, its tag), so a frame's `ret` tells
    /// whether such a local holds a value by dataflow and a flag instead.
    pub fn bytes_tell_held(l: &FlatLayout) -> bool {
        matches!(l.shape, Shape::Vector(_) | Shape::Closure)
    }

    /// Aptos's *heap* size of the value of layout `l` in `bytes`: its size
    /// less its stack size (what the memory quota counts when a value is
    /// copied, read, loaded or destroyed).
    pub fn heap(&self, l: &FlatLayout, bytes: &[u8]) -> u64 {
        if Self::heapless(l) {
            return 0;
        }
        self.value(l, bytes).saturating_sub(self.stack(l))
    }

    /// [`heap`](Self::heap) of the value at `a`.
    ///
    /// # Safety
    /// `a` holds a live value of layout `l`.
    #[allow(unsafe_code)]
    pub unsafe fn heap_at(&self, l: &FlatLayout, a: crate::flat::mem::Addr) -> u64 {
        // SAFETY: the caller's contract.
        self.heap(l, unsafe { crate::flat::mem::bytes(a, l.size) })
    }

    /// Aptos's *packed* size of a vector element of layout `e`: a
    /// primitive's packed size, otherwise its outermost node.
    pub fn packed(&self, e: &FlatLayout) -> u64 {
        match e.shape.scalar() {
            Some(p) => self.packed[p as usize],
            None => self.stack(e),
        }
    }

    /// The vector element kind whose packed size depends on the value: a
    /// vector of signed integers. Aptos's packed-size visitor overrides the
    /// packed visits of every other vector (to count `vector`) but not of
    /// `i8`..`i256`, which fall back to `ValueVisitor`'s default: `visit_vec`
    /// (`vector`) and then each element, whose `per_iN_packed` overwrites it.
    fn signed_vector(e: &FlatLayout) -> Option<ScalarKind> {
        use ScalarKind::*;
        match &e.shape {
            Shape::Vector(x) => x.shape.scalar().filter(|k| matches!(k, I8 | I16 | I32 | I64 | I128 | I256)),
            _ => None,
        }
    }

    /// Whether every value of element layout `e` has the same packed size
    /// ([`packed`](Self::packed)); otherwise [`packed_value`](Self::packed_value)
    /// measures it.
    pub fn packed_fixed(e: &FlatLayout) -> bool {
        Self::signed_vector(e).is_none()
    }

    /// Aptos's packed size of the element value of layout `e` in `bytes`:
    /// [`packed`](Self::packed), except that a non-empty vector of signed
    /// integers counts one packed element (`per_iN_packed`).
    pub fn packed_value(&self, e: &FlatLayout, bytes: &[u8]) -> u64 {
        match Self::signed_vector(e) {
            Some(k) if raw::vec_len(bytes) > 0 => self.packed[k as usize],
            _ => self.packed(e),
        }
    }

    /// [`packed_value`](Self::packed_value) of the `n` elements of layout
    /// `e` held by the vector value in `v` from index `from` on.
    pub fn packed_elements(&self, e: &FlatLayout, v: &[u8], from: u64) -> u64 {
        if Self::packed_fixed(e) || e.size == 0 {
            return self.packed(e).saturating_mul(raw::vec_len(v).saturating_sub(from));
        }
        raw::vec_data(v, e.size)
            .chunks_exact(e.size as usize)
            .skip(from as usize)
            .fold(0u64, |acc, x| acc.saturating_add(self.packed_value(e, x)))
    }

    /// [`packed_value`](Self::packed_value) of the element at `a`.
    ///
    /// # Safety
    /// `a` holds a live value of layout `e`.
    #[allow(unsafe_code)]
    pub unsafe fn packed_value_at(&self, e: &FlatLayout, a: crate::flat::mem::Addr) -> u64 {
        // SAFETY: the caller's contract.
        self.packed_value(e, unsafe { crate::flat::mem::bytes(a, e.size) })
    }

    /// [`packed_elements`](Self::packed_elements) of the vector at `v`.
    ///
    /// # Safety
    /// `v` holds a live vector of elements of layout `e`.
    #[allow(unsafe_code)]
    pub unsafe fn packed_elements_at(&self, e: &FlatLayout, v: crate::flat::mem::Addr, from: u64) -> u64 {
        // SAFETY: the caller's contract (a vector slot is 8 bytes).
        self.packed_elements(e, unsafe { crate::flat::mem::bytes(v, 8) }, from)
    }

    /// The heap size of a vector of `len` elements of scalar kind `k`.
    pub fn vector_heap(&self, k: ScalarKind, len: u64) -> u64 {
        self.packed[k as usize].saturating_mul(len)
    }

    /// The size of an enum value's tag (Aptos counts it as a `u16` field).
    pub fn variant_tag(&self) -> u64 {
        self.unit[ScalarKind::U16 as usize]
    }

    /// The abstract size of tree value `v` of layout `l` (natives over tree
    /// values), by the same rules as [`value`](Self::value).
    pub fn tree_value(&self, l: &Layout, v: &Value) -> u64 {
        self.tree_measure(l, v, Walk::Value)
    }

    /// [`dereferenced`](Self::dereferenced) of tree value `v` (the value a
    /// reference points to) of layout `l`.
    pub fn tree_dereferenced(&self, l: &Layout, v: &Value) -> u64 {
        self.tree_measure(l, v, Walk::Dereferenced)
    }

    fn tree_measure(&self, l: &Layout, v: &Value, walk: Walk) -> u64 {
        if let Some(k) = scalar_of(v) {
            return self.unit[k as usize];
        }
        match (l, v) {
            (Layout::Signer, _) => self.signer(),
            (Layout::Vector(e), Value::Vector(items)) => match items.first().and_then(scalar_of) {
                Some(k) => self.vector.saturating_add(self.vector_element(k, walk).saturating_mul(items.len() as u64)),
                None => items.iter().fold(self.vector, |acc, x| acc.saturating_add(self.tree_measure(e, x, walk))),
            },
            (Layout::Struct(fs), Value::Struct(vs)) => {
                fs.iter().zip(vs).fold(self.struct_, |acc, (f, x)| acc.saturating_add(self.tree_measure(f, x, walk)))
            }
            (Layout::Enum(variants), Value::Variant(tag, vs)) => {
                let tagged = self.struct_ + self.unit[ScalarKind::U16 as usize];
                let fs = variants.get(*tag as usize).map_or(&[][..], Vec::as_slice);
                fs.iter().zip(vs).fold(tagged, |acc, (f, x)| acc.saturating_add(self.tree_measure(f, x, walk)))
            }
            (_, Value::Closure(c)) => c
                .captured
                .iter()
                .zip(&c.captured_layouts)
                .fold(self.closure, |acc, (x, f)| acc.saturating_add(self.tree_measure(f, x, walk))),
            (_, Value::Ref(_)) => self.reference,
            _ => 0,
        }
    }

    /// Aptos's heap size of tree value `v` of layout `l`: its
    /// [`tree_value`](Self::tree_value) less its outermost node (0 for
    /// scalars and references), as [`heap`](Self::heap) measures flat values.
    pub fn tree_heap(&self, l: &Layout, v: &Value) -> u64 {
        let stack = match v {
            _ if scalar_of(v).is_some() => return 0,
            Value::Ref(_) => return 0,
            Value::Vector(_) => self.vector,
            Value::Closure(_) => self.closure,
            _ => self.struct_,
        };
        self.tree_value(l, v).saturating_sub(stack)
    }

    fn signer(&self) -> u64 {
        self.struct_ + self.unit[ScalarKind::U16 as usize] + self.unit[ScalarKind::Address as usize]
    }

    fn field(&self, f: &crate::flat::layout::Field, bytes: &[u8], walk: Walk) -> u64 {
        let start = f.offset as usize;
        self.measure(&f.layout, &bytes[start..start + f.layout.size as usize], walk)
    }
}

/// Which of Aptos's two value sizes a measure takes. They differ only in
/// vectors of `u16`, `u32` and `u256`: Aptos's dereferencing visitor (the
/// size `eq`, `neq` and `cmp::compare` are priced by) does not forward
/// those three packed visits, so they fall back to the visitor's
/// element-by-element default: `vector` plus each element's own size
/// (`misc.abs_val.u16`, …) instead of its packed size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Walk {
    Value,
    Dereferenced,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flat::bcs::deserialize;
    use std::sync::Arc;

    fn sizes() -> AbstractSizes {
        AbstractSizes::from_schedule(&Schedule::aptos_v50()).expect("the built-in schedule has every size")
    }

    fn uleb(n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        crate::bcs::write_uleb(&mut out, n as u64);
        out
    }

    /// (layout, BCS of a value, expected size, expected fixed size)
    #[test]
    fn sizes_follow_aptos_value_shapes() {
        use Layout::*;
        let vec_u64 = |n: usize| [uleb(n), vec![0; 8 * n]].concat();
        let cases: Vec<(Layout, Vec<u8>, u64, Option<u64>)> = vec![
            (U64, vec![0; 8], 40, Some(40)),
            (Bool, vec![1], 40, Some(40)),
            (Address, vec![0; 32], 40, Some(40)),
            (Signer, vec![0; 32], 120, Some(120)),
            (Struct(vec![U8, U256]), vec![0; 33], 120, Some(120)),
            // Packed vectors: `vector` + 8 per u64, 1 per u8, 32 per address.
            (Vector(Box::new(U64)), vec_u64(0), 40, None),
            (Vector(Box::new(U64)), vec_u64(3), 64, None),
            (Vector(Box::new(U8)), [uleb(5), vec![7; 5]].concat(), 45, None),
            (Vector(Box::new(Address)), [uleb(2), vec![0; 64]].concat(), 104, None),
            // Other vectors count every element in full.
            (Vector(Box::new(Struct(vec![U64]))), [uleb(2), vec![0; 16]].concat(), 40 + 2 * 80, None),
            (Vector(Box::new(Vector(Box::new(U8)))), [uleb(2), uleb(1), vec![9], uleb(0)].concat(), 40 + 41 + 40, None),
            (Vector(Box::new(Signer)), [uleb(1), vec![0; 32]].concat(), 40 + 120, None),
            // An enum value: a struct whose first field is its u16 tag.
            (Enum(vec![vec![], vec![U64, U64]]), vec![0], 80, None),
            (Enum(vec![vec![], vec![U64, U64]]), [vec![1], vec![0; 16]].concat(), 160, None),
            (Enum(vec![vec![U8], vec![Bool]]), vec![1, 1], 120, Some(120)),
        ];
        let s = sizes();
        for (i, (layout, bcs, expected, fixed)) in cases.into_iter().enumerate() {
            let flat = Arc::new(FlatLayout::from_layout(&layout, 64).unwrap());
            let v = deserialize(&bcs, flat.clone()).unwrap_or_else(|e| panic!("case {i}: {e:?}"));
            assert_eq!(s.value(&flat, v.bytes()), expected, "case {i}: {layout:?}");
            assert_eq!(s.fixed(&flat), fixed, "case {i}: {layout:?}");
            if let Some(f) = fixed {
                assert_eq!(f, expected, "case {i}: fixed and measured agree");
            }
            let r = FlatLayout::reference(flat.clone());
            let slot = (v.as_ptr() as usize).to_le_bytes();
            assert_eq!(s.value(&r, &slot), 40, "case {i}: a reference");
            assert_eq!(s.dereferenced(&r, &slot), expected, "case {i}: dereferenced");
            let tree = crate::bcs::deserialize(&bcs, &layout).unwrap();
            assert_eq!(s.tree_value(&layout, &tree), expected, "case {i}: tree value");
            assert_eq!(s.tree_heap(&layout, &tree), s.heap(&flat, v.bytes()), "case {i}: tree heap");
            assert_eq!(s.tree_dereferenced(&layout, &tree), expected, "case {i}: tree dereferenced");
        }
    }

    /// The dereferenced size (`eq`, `cmp::compare`) counts vectors of `u16`,
    /// `u32` and `u256` element by element, at any depth; other vectors
    /// stay packed. (layout, BCS of a value, size, dereferenced size)
    #[test]
    fn dereferenced_sizes_unpack_u16_u32_u256_vectors() {
        use Layout::*;
        let v = |l: Layout| Vector(Box::new(l));
        let cases: Vec<(Layout, Vec<u8>, u64, u64)> = vec![
            (v(U16), [uleb(3), vec![0; 6]].concat(), 40 + 3 * 2, 40 + 3 * 40),
            (v(U32), [uleb(2), vec![0; 8]].concat(), 40 + 2 * 4, 40 + 2 * 40),
            (v(U256), [uleb(1), vec![0; 32]].concat(), 40 + 32, 40 + 40),
            (v(U64), [uleb(2), vec![0; 16]].concat(), 40 + 2 * 8, 40 + 2 * 8),
            (v(I16), [uleb(2), vec![0; 4]].concat(), 40 + 2 * 2, 40 + 2 * 2),
            (v(U8), [uleb(4), vec![0; 4]].concat(), 40 + 4, 40 + 4),
            (v(U16), uleb(0), 40, 40),
            (Struct(vec![U8, v(U16)]), [vec![1], uleb(1), vec![0; 2]].concat(), 40 + 40 + 42, 40 + 40 + 80),
            (v(v(U32)), [uleb(2), uleb(1), vec![0; 4], uleb(0)].concat(), 40 + 44 + 40, 40 + 80 + 40),
        ];
        let s = sizes();
        for (i, (layout, bcs, value, dereferenced)) in cases.into_iter().enumerate() {
            let flat = Arc::new(FlatLayout::from_layout(&layout, 64).unwrap());
            let val = deserialize(&bcs, flat.clone()).unwrap_or_else(|e| panic!("case {i}: {e:?}"));
            assert_eq!(s.value(&flat, val.bytes()), value, "case {i}: {layout:?}");
            assert_eq!(s.dereferenced(&flat, val.bytes()), dereferenced, "case {i}: {layout:?} dereferenced");
            let r = FlatLayout::reference(flat.clone());
            let slot = (val.as_ptr() as usize).to_le_bytes();
            assert_eq!(s.dereferenced(&r, &slot), dereferenced, "case {i}: through a reference");
            let tree = crate::bcs::deserialize(&bcs, &layout).unwrap();
            assert_eq!(s.tree_value(&layout, &tree), value, "case {i}: tree value");
            assert_eq!(s.tree_dereferenced(&layout, &tree), dereferenced, "case {i}: tree dereferenced");
        }
    }

    /// A closure's captured values are measured by the same walk: its
    /// dereferenced size unpacks captured `u16`/`u32`/`u256` vectors, its
    /// value size does not. (captured (layout, BCS), size, dereferenced size)
    #[test]
    fn closures_measure_captured_values_by_the_same_walk() {
        use crate::flat::closure::FlatClosure;
        use crate::values::{ClosureValue, FunctionId};
        use Layout::*;
        let v = |l: Layout| Vector(Box::new(l));
        type Captured = Vec<(Layout, Vec<u8>)>;
        let cases: Vec<(Captured, u64, u64)> = vec![
            (vec![], 40, 40),
            (vec![(U8, vec![1]), (v(U16), [uleb(3), vec![0; 6]].concat())], 40 + 40 + 46, 40 + 40 + 160),
            (vec![(v(U256), [uleb(1), vec![0; 32]].concat())], 40 + 72, 40 + 80),
            (vec![(v(U64), [uleb(2), vec![0; 16]].concat())], 40 + 56, 40 + 56),
            (vec![(Struct(vec![v(U32)]), [uleb(2), vec![0; 8]].concat())], 40 + 40 + 48, 40 + 40 + 120),
        ];
        let s = sizes();
        let id = FunctionId { module: crate::storage::ModuleId::new(Default::default(), "m"), name: "f".into() };
        for (i, (captured, value, dereferenced)) in cases.into_iter().enumerate() {
            let flat_captured = captured
                .iter()
                .map(|(l, bcs)| deserialize(bcs, Arc::new(FlatLayout::from_layout(l, 64).unwrap())).unwrap())
                .collect();
            let closure = FlatClosure {
                function: crate::functions::intern(&id),
                type_args: vec![],
                mask: (1 << captured.len()) - 1,
                captured: flat_captured,
                serializable: false,
            };
            let flat = Arc::new(FlatLayout::from_layout(&Function, 64).unwrap());
            let mut val = crate::flat::value::FlatValue::zeroed(flat.clone());
            raw::closure_put(val.bytes_mut(), Arc::new(closure));
            assert_eq!(s.value(&flat, val.bytes()), value, "case {i}");
            assert_eq!(s.dereferenced(&flat, val.bytes()), dereferenced, "case {i}: dereferenced");
            let r = FlatLayout::reference(flat.clone());
            let slot = (val.as_ptr() as usize).to_le_bytes();
            assert_eq!(s.dereferenced(&r, &slot), dereferenced, "case {i}: through a reference");
            let tree = Value::Closure(Box::new(ClosureValue {
                function: id.clone(),
                type_args: vec![],
                mask: (1 << captured.len()) - 1,
                captured: captured.iter().map(|(l, bcs)| crate::bcs::deserialize(bcs, l).unwrap()).collect(),
                captured_layouts: captured.iter().map(|(l, _)| l.clone()).collect(),
                serializable: false,
            }));
            assert_eq!(s.tree_value(&Function, &tree), value, "case {i}: tree value");
            assert_eq!(s.tree_dereferenced(&Function, &tree), dereferenced, "case {i}: tree dereferenced");
        }
    }
}
