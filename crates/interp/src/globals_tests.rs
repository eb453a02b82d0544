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
    g.meta.push(GlobalMeta { address, id, ty: Arc::new(ty.clone()), existed: false, dirty: false });
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
