//! Dynamic-field children: objects owned by another object, by child id.
//!
//! `borrow_child_object(_mut)` return references into a child, so a
//! borrowed child is *parked* in the call's memory (`RefRoot::Native`) for
//! the rest of the call; the other natives find it there. When the call's
//! memory is dropped the parked values come home (`NativeSlots::home`) and
//! the next use folds them back. Move's reference rules keep this sound:
//! while a reference into a child is alive its parent UID is borrowed, so
//! nothing can remove the child.

use movejit_runtime::natives::{NativeContext, ParkedHome};
use movejit_runtime::{AccountAddress, Memory, RefRoot, Reference, Type, Value, VmError, VmResult};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

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
    home: Option<ParkedHome>,
    /// Which child each parked slot holds.
    parked: Vec<Option<AccountAddress>>,
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
        let clean = !self.any_parked();
        self.undo = clean.then(BTreeMap::new);
        clean
    }

    /// Keeps the running transaction's changes.
    pub fn commit(&mut self) {
        self.undo = None;
    }

    /// Undoes the running transaction's changes (after its call ended).
    pub fn rollback(&mut self) {
        self.home = None;
        self.parked.clear();
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

    /// Whether some child may be parked in a live call's memory: every
    /// parked child has a slot here until its value comes home.
    fn any_parked(&self) -> bool {
        self.parked.iter().any(Option::is_some)
    }

    /// Makes `mem` the parking place, first taking back what an earlier
    /// call's memory parked.
    pub(crate) fn attach(&mut self, mem: &mut Memory) -> VmResult<()> {
        if let (Some(a), Some(b)) = (&mem.native.home, &self.home) {
            if Arc::ptr_eq(a, b) {
                return Ok(());
            }
        }
        if mem.native.home.is_some() {
            return Err(VmError::invariant("dynamic field: call memory parked by another store"));
        }
        self.fold_back();
        if self.any_parked() {
            return Err(VmError::invariant("dynamic field: children still parked in a live call"));
        }
        let home: ParkedHome = Arc::new(Mutex::new(None));
        mem.native.home = Some(home.clone());
        self.home = Some(home);
        Ok(())
    }

    fn fold_back(&mut self) {
        let Some(home) = &self.home else { return };
        let Some(values) = home.lock().ok().and_then(|mut h| h.take()) else { return };
        self.home = None;
        for (slot, (owner, value)) in self.parked.drain(..).zip(values).enumerate() {
            let Some(id) = owner else { continue };
            let Some(child) = self.children.get_mut(&id) else { continue };
            if matches!(child.slot, Slot::Parked(s) if s as usize == slot) {
                match value {
                    Some(v) => child.slot = Slot::Here(v),
                    None => {
                        self.children.remove(&id);
                    }
                }
            }
        }
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

    fn find(&mut self, parent: AccountAddress, id: AccountAddress, ty: &Type) -> Lookup<&mut Child> {
        match self.children.get_mut(&id) {
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
        let child = match self.find(parent, id, ty) {
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
                let s = cx.mem.native.park(v)?;
                *here = Slot::Parked(s);
                self.parked.push(Some(id));
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
        match self.find(parent, id, ty) {
            Lookup::Found(_) => {}
            Lookup::Missing => return Ok(Lookup::Missing),
            Lookup::WrongType => return Ok(Lookup::WrongType),
        }
        self.note(id);
        let child = self.children.remove(&id).ok_or_else(|| VmError::invariant("dynamic field: child vanished"))?;
        let v = match child.slot {
            Slot::Here(v) => v,
            Slot::Parked(s) => {
                if let Some(p) = self.parked.get_mut(s as usize) {
                    *p = None;
                }
                cx.mem.native.take(s)?
            }
        };
        Ok(Lookup::Found(v))
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
