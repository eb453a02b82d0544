//! Function identities: a dense 32-bit [`FunctionIndex`] for every function
//! name (`address::module::function`) the process has met, and
//! [`OnceSlots`], the write-once table by index that runtime paths use to
//! find what an index stands for without locking or hashing.
//!
//! A closure names its function by index (jit-abi.md 1.3), so calling,
//! copying and comparing closures never touches a name. Names appear only
//! where a closure crosses the API boundary (BCS of function values,
//! natives' tree values, error messages): [`intern`] and [`name`] convert.
//!
//! An index stands for a *name*, not for one version of its module: the
//! table is shared by every engine, session and thread of the process and
//! only grows. What an index resolves to (compiled code, an interpreted
//! function of one module version) is decided by the executor that holds
//! the version: each JIT generation keeps its own closure table by index
//! (`flat::closure_shims::ClosureTable`) and each interpreter session its
//! own targets, so a republished module never reaches old code through an
//! index.

use crate::values::FunctionId;
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, OnceLock};

/// A function name, interned (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FunctionIndex(u32);

impl FunctionIndex {
    pub fn as_u32(self) -> u32 {
        self.0
    }
}

/// Segment `k` holds `FIRST << k` slots: 27 segments cover every `u32`.
const FIRST: u64 = 64;
const SEGMENTS: usize = 27;

/// Slots by index, each written at most once, read without locks: the
/// table allocates segments of doubling size as indices grow and never
/// moves or frees a value before the table drops, so `get` hands out
/// plain references.
pub struct OnceSlots<T> {
    segments: [OnceLock<Box<[OnceLock<T>]>>; SEGMENTS],
}

impl<T> Default for OnceSlots<T> {
    fn default() -> Self {
        OnceSlots { segments: std::array::from_fn(|_| OnceLock::new()) }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for OnceSlots<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n: usize = self.segments.iter().filter_map(OnceLock::get).map(|s| s.len()).sum();
        write!(f, "OnceSlots({n} slots)")
    }
}

/// Segment and offset of slot `i`.
#[inline]
fn locate(i: u32) -> (usize, usize) {
    let at = i as u64 + FIRST;
    let k = (63 - at.leading_zeros()) as usize - FIRST.trailing_zeros() as usize;
    (k, (at - (FIRST << k)) as usize)
}

impl<T> OnceSlots<T> {
    #[inline]
    pub fn get(&self, i: u32) -> Option<&T> {
        let (k, at) = locate(i);
        self.segments.get(k)?.get()?.get(at)?.get()
    }

    /// Writes slot `i` unless it holds a value already; `false` then (the
    /// first value stays: references to it may be out).
    pub fn set(&self, i: u32, v: T) -> bool {
        let (k, at) = locate(i);
        let Some(seg) = self.segments.get(k) else { return false };
        let seg = seg.get_or_init(|| (0..FIRST << k).map(|_| OnceLock::new()).collect());
        seg.get(at).is_some_and(|s| s.set(v).is_ok())
    }
}

/// The process's function names by index and back.
#[derive(Default)]
struct FunctionTable {
    names: OnceSlots<FunctionId>,
    /// Written only under this lock (interning is rare: once per function
    /// a loader or a deserialized closure names).
    indices: Mutex<HashMap<FunctionId, FunctionIndex>>,
}

static TABLE: LazyLock<FunctionTable> = LazyLock::new(FunctionTable::default);

/// The index of `f`, assigned on first use.
pub fn intern(f: &FunctionId) -> FunctionIndex {
    // A poisoned lock still holds a consistent map (inserts are single steps).
    let mut indices = TABLE.indices.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = indices.get(f) {
        return *i;
    }
    let i = FunctionIndex(indices.len() as u32);
    TABLE.names.set(i.0, f.clone());
    indices.insert(f.clone(), i);
    i
}

/// The name behind an index [`intern`] returned.
pub fn name(i: FunctionIndex) -> Option<&'static FunctionId> {
    TABLE.names.get(i.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::ModuleId;
    use crate::AccountAddress;

    #[test]
    fn slots_cover_segment_edges() {
        let s = OnceSlots::default();
        for (i, v) in [(0u32, 'a'), (63, 'b'), (64, 'c'), (191, 'd'), (192, 'e'), (100_000, 'f')] {
            assert_eq!(s.get(i), None);
            assert!(s.set(i, v));
            assert!(!s.set(i, 'z'), "slot {i} is written once");
            assert_eq!(s.get(i), Some(&v));
        }
        assert_eq!(s.get(1), None);
    }

    #[test]
    fn locate_is_dense() {
        for (i, want) in [(0, (0, 0)), (63, (0, 63)), (64, (1, 0)), (191, (1, 127)), (192, (2, 0))] {
            assert_eq!(locate(i), want, "index {i}");
        }
        assert_eq!(locate(u32::MAX).0, SEGMENTS - 1);
    }

    #[test]
    fn names_round_trip() {
        let f =
            |m: &str, n: &str| FunctionId { module: ModuleId::new(AccountAddress::from_u64(0xf7), m), name: n.into() };
        let (a, b) = (intern(&f("m", "a")), intern(&f("m", "b")));
        assert_ne!(a, b);
        assert_eq!(intern(&f("m", "a")), a);
        assert_eq!(name(a), Some(&f("m", "a")));
        assert_eq!(name(b), Some(&f("m", "b")));
    }
}
