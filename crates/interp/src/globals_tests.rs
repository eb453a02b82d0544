//! The session's global cache keyed by (address, interned type id): finding
//! slots through the hints and the hash index, also after a failed call
//! truncated the slots (a stale hint must only miss).

use crate::engine::{GlobalMeta, Globals};
use movejit_runtime::{AccountAddress, DatatypeId, Type, TypeTable};
use std::sync::Arc;

fn resource(name: &str, args: Vec<Type>) -> Type {
    let id = DatatypeId { address: AccountAddress::from_u64(0xb0), module: "globals_tests".into(), name: name.into() };
    Type::Datatype(Arc::new(id), args)
}

/// Adds slot (address, ty) as the flat interpreter does on first use.
fn add(g: &mut Globals, address: AccountAddress, ty: &Type) -> usize {
    let id = TypeTable::shared().intern(ty).unwrap();
    let slot = g.meta.len();
    g.meta.push(GlobalMeta {
        address,
        id,
        ty: TypeTable::shared().get(id).unwrap(),
        existed: false,
        dirty: false,
        journaled: false,
    });
    g.flat.push(None);
    g.index.insert((address, id), slot as u32);
    slot
}

fn find(g: &mut Globals, address: AccountAddress, ty: &Type) -> Option<usize> {
    g.find(&address, TypeTable::shared().intern(ty).unwrap())
}

#[test]
fn slots_are_found_by_address_and_type_id() {
    let (a, b) = (AccountAddress::from_u64(0xcafe), AccountAddress::from_u64(0xbeef));
    let keys = [
        (a, resource("R", vec![])),
        (b, resource("R", vec![])),
        (a, resource("R", vec![Type::U64])),
        (a, resource("R", vec![Type::U8])),
        (a, resource("S", vec![])),
    ];
    let mut g = Globals::default();
    for (addr, t) in &keys {
        assert_eq!(find(&mut g, *addr, t), None, "{addr} {t} before loading");
    }
    let slots: Vec<usize> = keys.iter().map(|(addr, t)| add(&mut g, *addr, t)).collect();
    // Twice: the first lookup goes through the index, the second may hit a hint.
    for _ in 0..2 {
        for ((addr, t), slot) in keys.iter().zip(&slots) {
            assert_eq!(find(&mut g, *addr, t), Some(*slot), "{addr} {t}");
        }
    }
    assert_eq!(find(&mut g, b, &resource("S", vec![])), None);
}

#[test]
fn a_stale_hint_after_truncation_only_misses() {
    let a = AccountAddress::from_u64(0xcafe);
    let (r, s) = (resource("Stale", vec![]), resource("Fresh", vec![Type::Bool]));
    let mut g = Globals::default();
    let slot = add(&mut g, a, &r);
    assert_eq!(find(&mut g, a, &r), Some(slot));
    // What a failed call does: drop the slots it added.
    g.meta.truncate(slot);
    g.flat.truncate(slot);
    g.index.retain(|_, s| (*s as usize) < slot);
    assert_eq!(find(&mut g, a, &r), None);
    // The slot number is reused by another resource: the old hint must not match it.
    let again = add(&mut g, a, &s);
    assert_eq!(again, slot);
    assert_eq!(find(&mut g, a, &r), None);
    assert_eq!(find(&mut g, a, &s), Some(again));
}

/// What a call does to one slot in the journal test.
#[derive(Clone, Copy, Debug)]
enum Change {
    /// Nothing.
    Keep,
    /// A mutable borrow writing this number.
    Write(u64),
    /// A move out (the slot is empty afterwards).
    Take,
    /// A move in of this number (the slot was empty).
    Put(u64),
    /// Two writes: only the first change is journaled.
    WriteTwice(u64, u64),
}

fn number(n: u64) -> movejit_runtime::flat::FlatValue {
    use movejit_runtime::flat::{bcs, FlatLayout};
    let l = Arc::new(FlatLayout::from_layout(&movejit_runtime::Layout::U64, 8).unwrap());
    bcs::deserialize(&n.to_le_bytes(), l).unwrap()
}

fn read(g: &Globals, slot: usize) -> Option<u64> {
    g.flat[slot].as_ref().map(|v| u64::from_le_bytes(v.bytes()[..8].try_into().unwrap()))
}

/// A failed call leaves the slots that existed as they were (values and
/// written marks) and drops the ones it loaded; a call that succeeds keeps
/// its changes. Nothing is copied up front: a slot is journaled at its
/// first change only.
#[test]
fn a_failed_call_is_undone_from_its_journal() {
    use Change::*;
    // (slot before the call: value, dirty; the call's change; whether the
    // call fails; the slot after: value, dirty)
    type Slot = (Option<u64>, bool);
    let cases: &[(Slot, Change, bool, Slot)] = &[
        ((Some(1), false), Keep, true, (Some(1), false)),
        ((Some(1), false), Write(2), true, (Some(1), false)),
        ((Some(1), false), Write(2), false, (Some(2), true)),
        ((Some(1), true), Write(2), true, (Some(1), true)),
        ((Some(1), false), Take, true, (Some(1), false)),
        ((Some(1), false), Take, false, (None, true)),
        ((None, false), Put(3), true, (None, false)),
        ((None, true), Put(3), false, (Some(3), true)),
        ((Some(1), false), WriteTwice(2, 3), true, (Some(1), false)),
        ((Some(1), false), WriteTwice(2, 3), false, (Some(3), true)),
    ];
    let a = AccountAddress::from_u64(0xa11);
    for (i, &((before, dirty), change, fails, after)) in cases.iter().enumerate() {
        let mut g = Globals::default();
        let slot = add(&mut g, a, &resource("Journaled", vec![]));
        g.flat[slot] = before.map(number);
        g.meta[slot].dirty = dirty;
        g.begin_call();
        // The call also loads a slot of its own.
        let loaded = add(&mut g, a, &resource("Loaded", vec![]));
        g.changing(loaded);
        g.flat[loaded] = Some(number(9));
        match change {
            Keep => {}
            Write(n) => {
                g.changing(slot);
                g.flat[slot] = Some(number(n));
            }
            Take => {
                g.changing(slot);
                g.flat[slot] = None;
            }
            Put(n) => {
                g.changing(slot);
                g.flat[slot] = Some(number(n));
            }
            WriteTwice(x, y) => {
                g.changing(slot);
                g.flat[slot] = Some(number(x));
                g.changing(slot);
                g.flat[slot] = Some(number(y));
            }
        }
        if fails {
            g.roll_back();
            assert_eq!(g.meta.len(), 1, "case {i}: the loaded slot is dropped");
            assert_eq!(find(&mut g, a, &resource("Loaded", vec![])), None, "case {i}");
        } else {
            g.end_call();
            assert_eq!(read(&g, loaded), Some(9), "case {i}: the loaded slot stays");
        }
        assert_eq!((read(&g, slot), g.meta[slot].dirty), after, "case {i}: {change:?}");
        assert!(!g.meta[slot].journaled, "case {i}: the journal is closed");
        // Outside a call nothing is journaled.
        g.changing(slot);
        assert!(!g.meta[slot].journaled, "case {i}: outside a call");
    }
}
