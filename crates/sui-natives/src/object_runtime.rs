//! The session's object state, as Sui's `ObjectRuntime` keeps it: ids
//! created and deleted, transfers (the objects a transaction hands to an
//! owner), emitted events and dynamic-field children.
//!
//! A host puts the transaction's input objects' owners (and objects that can
//! be received) in [`ObjectRuntime`] before the transaction and reads the
//! effects after it.

use crate::args::memory_limit;
use crate::children::ChildStore;
use movejit_runtime::{AccountAddress, Type, Value, VmResult};
use std::collections::{BTreeMap, BTreeSet};

/// Sui's `VMMemoryLimitExceededSubStatusCode`s.
pub mod sub_status {
    pub const EVENT_COUNT_LIMIT_EXCEEDED: u64 = 0;
    pub const NEW_ID_COUNT_LIMIT_EXCEEDED: u64 = 2;
    pub const DELETED_ID_COUNT_LIMIT_EXCEEDED: u64 = 3;
    pub const TRANSFER_ID_COUNT_LIMIT_EXCEEDED: u64 = 4;
}

/// Who owns an object after a transfer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    AddressOwner(AccountAddress),
    /// Frozen.
    Immutable,
    Shared,
    /// A party transfer to one address (`ConsensusAddressOwner`).
    ConsensusAddressOwner(AccountAddress),
}

/// One object handed to an owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub owner: Owner,
    pub ty: Type,
    pub value: Value,
}

/// One emitted event: its type and value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmittedEvent {
    pub ty: Type,
    /// BCS of the event value.
    pub data: Vec<u8>,
}

/// An object the transaction may `transfer::receive`: sent to `parent`
/// at `version`.
#[derive(Clone, Debug)]
pub struct Receivable {
    pub version: u64,
    pub ty: Type,
    pub value: Value,
}

/// Per-transaction limits (Sui protocol-config values; defaults as on
/// mainnet, metered transactions).
#[derive(Clone, Debug)]
pub struct ObjectLimits {
    pub max_num_event_emit: usize,
    pub max_num_new_move_object_ids: usize,
    pub max_num_deleted_move_object_ids: usize,
    pub max_num_transferred_move_object_ids: usize,
    /// Whether `transfer::party_transfer` is enabled.
    pub party_transfer: bool,
}

impl Default for ObjectLimits {
    fn default() -> Self {
        ObjectLimits {
            max_num_event_emit: 1024,
            max_num_new_move_object_ids: 2048,
            max_num_deleted_move_object_ids: 2048,
            max_num_transferred_move_object_ids: 2048,
            party_transfer: true,
        }
    }
}

/// How a transfer relates to the object's owner before the transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TransferResult {
    /// Created in this transaction.
    New,
    SameOwner,
    OwnerChanged,
}

/// The object state of a session (see the module doc).
#[derive(Debug, Default)]
pub struct ObjectRuntime {
    pub limits: ObjectLimits,
    /// Owners of the transaction's input objects (host-provided).
    pub input_objects: BTreeMap<AccountAddress, Owner>,
    /// Objects that can be received: (parent, id) → the object.
    pub receivable: BTreeMap<(AccountAddress, AccountAddress), Receivable>,
    /// Protocol feature flags that are on (`protocol_config::is_feature_enabled`).
    pub features: BTreeSet<String>,
    pub(crate) new_ids: BTreeSet<AccountAddress>,
    pub(crate) deleted_ids: BTreeSet<AccountAddress>,
    pub(crate) transfers: BTreeMap<AccountAddress, Transfer>,
    pub(crate) events: Vec<EmittedEvent>,
    pub(crate) children: ChildStore,
}

/// What a transaction did, for the host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectEffects {
    pub new_ids: BTreeSet<AccountAddress>,
    pub deleted_ids: BTreeSet<AccountAddress>,
    pub transfers: BTreeMap<AccountAddress, Transfer>,
    pub events: Vec<EmittedEvent>,
}

impl ObjectRuntime {
    /// Ids created (and not deleted) so far.
    pub fn new_ids(&self) -> &BTreeSet<AccountAddress> {
        &self.new_ids
    }
    /// Ids deleted that were not created in this transaction.
    pub fn deleted_ids(&self) -> &BTreeSet<AccountAddress> {
        &self.deleted_ids
    }
    pub fn transfers(&self) -> &BTreeMap<AccountAddress, Transfer> {
        &self.transfers
    }
    pub fn events(&self) -> &[EmittedEvent] {
        &self.events
    }
    /// The dynamic-field children (see [`ChildStore`]).
    pub fn children(&mut self) -> &mut ChildStore {
        &mut self.children
    }

    /// Ends the transaction: its effects, leaving children and inputs in place.
    pub fn take_effects(&mut self) -> ObjectEffects {
        ObjectEffects {
            new_ids: std::mem::take(&mut self.new_ids),
            deleted_ids: std::mem::take(&mut self.deleted_ids),
            transfers: std::mem::take(&mut self.transfers),
            events: std::mem::take(&mut self.events),
        }
    }

    /// A fresh id (`fresh_id`, `derive_id`, `record_new_uid`). An id deleted
    /// earlier in the transaction (a dynamic field removed and added again)
    /// comes back rather than counting as new.
    pub(crate) fn new_id(&mut self, id: AccountAddress) -> VmResult<()> {
        if self.new_ids.len() >= self.limits.max_num_new_move_object_ids {
            return Err(memory_limit(sub_status::NEW_ID_COUNT_LIMIT_EXCEEDED, "too many new object ids"));
        }
        if !self.deleted_ids.remove(&id) {
            self.new_ids.insert(id);
        }
        Ok(())
    }

    /// `object::delete`: an id created in this transaction just goes.
    pub(crate) fn delete_id(&mut self, id: AccountAddress) -> VmResult<()> {
        if self.deleted_ids.len() >= self.limits.max_num_deleted_move_object_ids {
            return Err(memory_limit(sub_status::DELETED_ID_COUNT_LIMIT_EXCEEDED, "too many deleted object ids"));
        }
        if !self.new_ids.remove(&id) {
            self.deleted_ids.insert(id);
        }
        Ok(())
    }

    pub(crate) fn transfer(
        &mut self,
        id: AccountAddress,
        owner: Owner,
        ty: Type,
        value: Value,
    ) -> VmResult<TransferResult> {
        let result = if self.new_ids.contains(&id) {
            TransferResult::New
        } else if self.input_objects.get(&id) == Some(&owner) {
            TransferResult::SameOwner
        } else {
            TransferResult::OwnerChanged
        };
        if !self.transfers.contains_key(&id) && self.transfers.len() >= self.limits.max_num_transferred_move_object_ids
        {
            return Err(memory_limit(sub_status::TRANSFER_ID_COUNT_LIMIT_EXCEEDED, "too many transferred objects"));
        }
        self.transfers.insert(id, Transfer { owner, ty, value });
        Ok(result)
    }

    pub(crate) fn emit_event(&mut self, ty: Type, data: Vec<u8>) -> VmResult<()> {
        if self.events.len() >= self.limits.max_num_event_emit {
            return Err(memory_limit(sub_status::EVENT_COUNT_LIMIT_EXCEEDED, "too many events"));
        }
        self.events.push(EmittedEvent { ty, data });
        Ok(())
    }
}
