//! Dynamic-field children: objects owned by another object, by child id.
//!
//! `borrow_child_object(_mut)` return references into a child, so a
//! borrowed child is *parked* in the call's memory (`RefRoot::Native`) for
//! the rest of the call; the other natives find it there. When the call's
//! memory is dropped the parked values come home (`NativeSlots::home`) and
//! the next use folds them back. Move's reference rules keep this sound:
//! while a reference into a child is alive its parent UID is borrowed, so
//! nothing can remove the child.

use movejit_runtime::natives::{NativeContext, Parking};
use movejit_runtime::{AccountAddress, Memory, RefRoot, Reference, Type, Value, VmError, VmResult};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
enum Slot {
    Here(Value),
    /// In slot `n` of the current call's parked values.
    Parked(u32),
}

#[derive(Clone, Debug)]
struct Child {
    parent: AccountAddress,
    ty: Type,
    slot: Slot,
}

/// What looking a child up found.
pub(crate) enum Lookup<T> {
    Missing,
    WrongType,
    Found(T),
}

/// The children of a session.
#[derive(Debug, Default)]
pub struct ChildStore {
    children: BTreeMap<AccountAddress, Child>,
    /// Children parked in the current call's memory, by id.
    parking: Parking<AccountAddress>,
    /// The running transaction's changed children as it found them
    /// (`None`: absent), to undo its changes: going back costs what the
    /// transaction touched, not what the store holds.
    undo: Option<BTreeMap<AccountAddress, Option<Child>>>,
}

impl ChildStore {
    /// Starts a transaction whose changes [`ChildStore::rollback`] undoes
    /// (taking back what an ended call parked first); `false`, and no
    /// undo, while a live call still has children parked.
    pub fn begin_transaction(&mut self) -> bool {
        self.fold_back();
        let clean = !self.parking.any_parked();
        self.undo = clean.then(BTreeMap::new);
        clean
    }

    /// Keeps the running transaction's changes.
    pub fn commit(&mut self) {
        self.undo = None;
    }

    /// Undoes the running transaction's changes (after its call ended).
    pub fn rollback(&mut self) {
        self.parking.clear();
        for (id, old) in self.undo.take().into_iter().flatten() {
            match old {
                Some(c) => {
                    self.children.insert(id, c);
                }
                None => {
                    self.children.remove(&id);
                }
            }
        }
    }

    /// Notes child `id` as it is, unless the running transaction (if any)
    /// changed it before.
    fn note(&mut self, id: AccountAddress) {
        if let Some(u) = &mut self.undo {
            u.entry(id).or_insert_with(|| self.children.get(&id).cloned());
        }
    }

    /// Adds a child owned by `parent` (a host loading stored dynamic fields).
    pub fn insert(&mut self, parent: AccountAddress, id: AccountAddress, ty: Type, value: Value) {
        self.note(id);
        self.children.insert(id, Child { parent, ty, slot: Slot::Here(value) });
    }

    /// Every child: id → (parent, type, value); `None` while a live call
    /// still has some parked.
    pub fn entries(&mut self) -> Option<Vec<(AccountAddress, AccountAddress, Type, Value)>> {
        self.fold_back();
        self.children
            .iter()
            .map(|(id, c)| match &c.slot {
                Slot::Here(v) => Some((*id, c.parent, c.ty.clone(), v.clone())),
                Slot::Parked(_) => None,
            })
            .collect()
    }

    /// Makes `mem` the parking place, first taking back what an earlier
    /// call's memory parked.
    pub(crate) fn attach(&mut self, mem: &mut Memory) -> VmResult<()> {
        let children = &mut self.children;
        self.parking.attach(mem, "dynamic field", |id, slot, value| put_back(children, id, slot, value))
    }

    fn fold_back(&mut self) {
        let children = &mut self.children;
        self.parking.fold_back(|id, slot, value| put_back(children, id, slot, value));
    }

    pub(crate) fn contains(&self, parent: AccountAddress, id: AccountAddress, ty: Option<&Type>) -> bool {
        self.children.get(&id).is_some_and(|c| c.parent == parent && ty.is_none_or(|t| *t == c.ty))
    }

    /// Adds a child; one already there is an invariant violation (Move's
    /// `dynamic_field::add` checks first).
    pub(crate) fn add(&mut self, parent: AccountAddress, id: AccountAddress, ty: Type, value: Value) -> VmResult<()> {
        if self.children.contains_key(&id) {
            return Err(crate::args::invariant("duplicate addition of a child object"));
        }
        self.note(id);
        self.children.insert(id, Child { parent, ty, slot: Slot::Here(value) });
        Ok(())
    }

    fn find<'a>(
        children: &'a mut BTreeMap<AccountAddress, Child>,
        parent: AccountAddress,
        id: AccountAddress,
        ty: &Type,
    ) -> Lookup<&'a mut Child> {
        match children.get_mut(&id) {
            Some(c) if c.parent == parent => {
                if c.ty == *ty {
                    Lookup::Found(c)
                } else {
                    Lookup::WrongType
                }
            }
            _ => Lookup::Missing,
        }
    }

    /// A reference to the child, parking it first.
    pub(crate) fn borrow(
        &mut self,
        cx: &mut NativeContext<'_>,
        parent: AccountAddress,
        id: AccountAddress,
        ty: &Type,
    ) -> VmResult<Lookup<Value>> {
        // The call may change the child in place: keep what it was.
        self.note(id);
        let child = match Self::find(&mut self.children, parent, id, ty) {
            Lookup::Found(c) => c,
            Lookup::Missing => return Ok(Lookup::Missing),
            Lookup::WrongType => return Ok(Lookup::WrongType),
        };
        let slot = match &mut child.slot {
            Slot::Parked(s) => *s,
            here => {
                let Slot::Here(v) = std::mem::replace(here, Slot::Parked(u32::MAX)) else {
                    return Err(VmError::invariant("dynamic field: child state"));
                };
                let s = self.parking.park(&mut cx.mem.native, id, v)?;
                *here = Slot::Parked(s);
                s
            }
        };
        Ok(Lookup::Found(Value::Ref(Reference::new(RefRoot::Native(slot)))))
    }

    /// Takes the child out.
    pub(crate) fn remove(
        &mut self,
        cx: &mut NativeContext<'_>,
        parent: AccountAddress,
        id: AccountAddress,
        ty: &Type,
    ) -> VmResult<Lookup<Value>> {
        match Self::find(&mut self.children, parent, id, ty) {
            Lookup::Found(_) => {}
            Lookup::Missing => return Ok(Lookup::Missing),
            Lookup::WrongType => return Ok(Lookup::WrongType),
        }
        self.note(id);
        let child = self.children.remove(&id).ok_or_else(|| VmError::invariant("dynamic field: child vanished"))?;
        let v = match child.slot {
            Slot::Here(v) => v,
            Slot::Parked(s) => self.parking.take(&mut cx.mem.native, s)?,
        };
        Ok(Lookup::Found(v))
    }
}

/// Child `id` gets back the value it parked in `slot` (gone when the value
/// could not come back).
fn put_back(children: &mut BTreeMap<AccountAddress, Child>, id: AccountAddress, slot: u32, value: Option<Value>) {
    let Some(child) = children.get_mut(&id) else { return };
    if matches!(child.slot, Slot::Parked(s) if s == slot) {
        match value {
            Some(v) => child.slot = Slot::Here(v),
            None => {
                children.remove(&id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollback_undoes_only_the_running_transaction() {
        let (parent, a, b) =
            (AccountAddress::from_u64(1), AccountAddress::from_u64(0xa), AccountAddress::from_u64(0xb));
        let child = |id, v| (id, parent, Type::U64, Value::U64(v));
        let mut s = ChildStore::default();
        s.insert(parent, a, Type::U64, Value::U64(1));
        // Fails: an addition and a replacement, both undone.
        assert!(s.begin_transaction());
        s.add(parent, b, Type::U64, Value::U64(2)).expect("add");
        s.insert(parent, a, Type::U64, Value::U64(3));
        s.rollback();
        assert_eq!(s.entries(), Some(vec![child(a, 1)]));
        // Commits: kept, and a rollback with no transaction running undoes nothing.
        assert!(s.begin_transaction());
        s.add(parent, b, Type::U64, Value::U64(2)).expect("add");
        s.commit();
        s.rollback();
        assert_eq!(s.entries(), Some(vec![child(a, 1), child(b, 2)]));
    }
}
