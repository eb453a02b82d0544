//! A native store's side of parking ([`NativeSlots`]): which of the
//! store's entries sit in the current call's memory, and taking them back
//! when that memory is dropped. Stores whose entries Move code borrows (the
//! Aptos table store, Sui's dynamic-field children) keep this beside their
//! entries; an entry they park is marked with its slot until it comes home.

use super::{NativeSlots, ParkedHome};
use crate::{Memory, Value, VmError, VmResult};
use std::sync::{Arc, Mutex};

/// The entries (by key `K`) a store has parked in one call's memory.
#[derive(Debug)]
pub struct Parking<K> {
    /// Where the call's memory sends the parked values when dropped.
    home: Option<ParkedHome>,
    /// The entry each parked slot holds (`None`: taken out since).
    slots: Vec<Option<K>>,
}

impl<K> Default for Parking<K> {
    fn default() -> Self {
        Parking { home: None, slots: Vec::new() }
    }
}

impl<K> Parking<K> {
    /// Whether some entry may be parked in a live call's memory: every
    /// parked entry keeps its slot here until its value comes home.
    pub fn any_parked(&self) -> bool {
        self.slots.iter().any(Option::is_some)
    }

    /// Makes `mem` the parking place, first taking back what an earlier
    /// call's memory parked ([`Parking::fold_back`]). `store` names the
    /// store in errors.
    pub fn attach(
        &mut self,
        mem: &mut Memory,
        store: &str,
        put_back: impl FnMut(K, u32, Option<Value>),
    ) -> VmResult<()> {
        if let (Some(a), Some(b)) = (&mem.native.home, &self.home) {
            if Arc::ptr_eq(a, b) {
                return Ok(());
            }
        }
        if mem.native.home.is_some() {
            return Err(VmError::invariant(format!("{store}: call memory parked by another store")));
        }
        self.fold_back(put_back);
        if self.any_parked() {
            return Err(VmError::invariant(format!("{store}: entries still parked in a live call")));
        }
        let home: ParkedHome = Arc::new(Mutex::new(None));
        mem.native.home = Some(home.clone());
        self.home = Some(home);
        Ok(())
    }

    /// Takes back the values an ended call parked: `put_back(key, slot,
    /// value)` for each entry still parked (`value` is `None` when it could
    /// not come back). Nothing while the call's memory is alive.
    pub fn fold_back(&mut self, mut put_back: impl FnMut(K, u32, Option<Value>)) {
        let Some(home) = &self.home else { return };
        let Some(values) = home.lock().ok().and_then(|mut h| h.take()) else { return };
        self.home = None;
        for (slot, (owner, value)) in self.slots.drain(..).zip(values).enumerate() {
            if let Some(key) = owner {
                put_back(key, slot as u32, value);
            }
        }
    }

    /// Parks `value`, entry `key`'s, in the attached call's memory.
    pub fn park(&mut self, native: &mut NativeSlots, key: K, value: Value) -> VmResult<u32> {
        let slot = native.park(value)?;
        self.slots.push(Some(key));
        Ok(slot)
    }

    /// Takes the value of the entry parked in `slot` back out of the call's
    /// memory (the entry leaves the store).
    pub fn take(&mut self, native: &mut NativeSlots, slot: u32) -> VmResult<Value> {
        if let Some(owner) = self.slots.get_mut(slot as usize) {
            *owner = None;
        }
        native.take(slot)
    }

    /// Forgets every parked entry (their call failed; the store goes back
    /// to what it was before).
    pub fn clear(&mut self) {
        self.home = None;
        self.slots.clear();
    }
}
