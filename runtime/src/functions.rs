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

use crate::fxhash::FxHashMap;
use crate::values::FunctionId;
use std::borrow::Borrow;
use std::hash::Hash;
use std::sync::{LazyLock, OnceLock, RwLock};

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

/// Keys by dense 32-bit index and back, append-only: an index, once
/// given, names its key for as long as the interner lives. Reading a key by
/// index takes no lock ([`OnceSlots`]); finding a key's index takes a read
/// lock, adding one the write lock. Function names and runtime types are
/// interned with it.
pub struct Interner<K> {
    keys: OnceSlots<K>,
    indices: RwLock<FxHashMap<K, u32>>,
}

impl<K> Default for Interner<K> {
    fn default() -> Self {
        Interner { keys: OnceSlots::default(), indices: RwLock::default() }
    }
}

impl<K: Eq + Hash + Clone> Interner<K> {
    /// The one index never given: it names no key.
    pub const NONE: u32 = u32::MAX;

    /// The index of `key`, adding `make()` (equal to `key`) when new;
    /// `None` once every index below [`Interner::NONE`] is taken.
    pub fn intern<Q>(&self, key: &Q, make: impl FnOnce() -> K) -> Option<u32>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        if let Some(i) = self.lookup(key) {
            return Some(i);
        }
        // A poisoned lock still holds a consistent map: the slot is
        // written before the map names it, each in one step.
        let mut indices = self.indices.write().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = indices.get(key) {
            return Some(*i);
        }
        let i = u32::try_from(indices.len()).ok().filter(|i| *i < Self::NONE)?;
        let key = make();
        if !self.keys.set(i, key.clone()) {
            return None;
        }
        indices.insert(key, i);
        Some(i)
    }

    /// The index of `key` when it was interned.
    pub fn lookup<Q>(&self, key: &Q) -> Option<u32>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.indices.read().unwrap_or_else(|p| p.into_inner()).get(key).copied()
    }

    /// The key behind index `i`.
    #[inline]
    pub fn get(&self, i: u32) -> Option<&K> {
        self.keys.get(i)
    }

    /// How many keys are interned.
    pub fn len(&self) -> usize {
        self.indices.read().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The process's function names by index and back.
static TABLE: LazyLock<Interner<FunctionId>> = LazyLock::new(Interner::default);

/// The table itself: to count or size it (the `id_tables` bench).
pub fn table() -> &'static Interner<FunctionId> {
    &TABLE
}

/// The index of `f`, assigned on first use.
pub fn intern(f: &FunctionId) -> FunctionIndex {
    // Only after 2^32 - 1 names (far more than memory holds) is the table
    // full; the index then names no function, so calls through it fail.
    FunctionIndex(TABLE.intern(f, || f.clone()).unwrap_or(Interner::<FunctionId>::NONE))
}

/// The name behind an index [`intern`] returned.
pub fn name(i: FunctionIndex) -> Option<&'static FunctionId> {
    TABLE.get(i.0)
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
