//! The Aptos framework natives for movejit, with the Aptos sources'
//! semantics and abort codes: tables, `object` (exists_at, derived
//! addresses), events (module and handle events), `type_info`,
//! `transaction_context` (including the transaction's payloads),
//! `create_signer` and permissioned signers, `aggregator_v2` (without
//! delayed fields: plain values, same results) and v1 aggregators,
//! `code::request_publish*`, `string_utils` (`native_format`,
//! `native_format_list`), `aptos_hash`, `util::from_bytes`, `function_info`
//! (identifiers, loading), `randomness`, `state_storage` (usage the host
//! reports), `consensus_config::validator_txn_enabled_internal`, the
//! framework's `bcs::serialized_size` / `constant_serialized_size`, and
//! cryptography with the libraries Aptos uses: `ed25519` / `multi_ed25519`
//! (strict verification, ed25519-dalek 1.0.1), `secp256k1` (ECDSA key
//! recovery, libsecp256k1 0.7), `bls12381` (blst, min-pk), `ristretto255`
//! (scalars by value, points as handles into a per-transaction
//! [`RistrettoPoints`] store; curve25519-dalek-ng) and Bulletproofs range
//! proofs (`ristretto255_bulletproofs`, `confidential_range_proofs`).
//!
//! [`register`] adds them to a [`NativeRegistry`] through its public API,
//! as any host would (natives at `0x1`, next to the Move stdlib ones);
//! [`aptos_registry`] is both.
//!
//! Session state lives in [`NativeExtensions`]: a host that wants state
//! across calls (table contents, events, counters, publish requests) keeps
//! one per session, puts a [`TransactionContext`] (and, for
//! `#[randomness]` entry calls, [`Randomness::unbiasable`]) in it before
//! each transaction, runs the transaction with [`run_transaction`] (which
//! rolls the natives' state back when it fails), then reads [`EventLog`],
//! [`TableStore`] and [`take_publish_request`]. Without that, each call is a
//! transaction of its own with [`TransactionContext::default`].
//!
//! Gas: under the Aptos schedule each native charges Aptos's native gas
//! (`aptos_framework.*`, `table.*`, `move_stdlib.*` parameters, Aptos's
//! formulas, where Aptos charges); under `unit`, `charge_native(bytes)`.
//! Not charged yet: `object::exists_at`'s per-item / per-byte load and
//! `function_info::load_function_impl`'s module loading (natives do not
//! see the loader), natives' heap memory.
//!
//! Gaps: table changes reach the host through
//! [`TableStore`], not the session's change set, and tables stored before
//! the session (a table resolver) are not read yet; natives that call back
//! into Move (`dispatchable_fungible_asset`) fail with `VM_EXTENSION_ERROR`;
//! `string_utils` formats structs other than `String` / `Option` with
//! `VM_EXTENSION_ERROR` (runtime types carry no field names); Bulletproofs
//! keep each distinct domain-separation tag for the process (capped; see
//! that module). Not yet: natives that need module or storage access the
//! native API does not give (`function_info::check_dispatch_type_compatibility_impl`,
//! `reflect::native_resolve`, `storage_slot`), `account_abstraction`'s
//! dispatch into Move, and `crypto_algebra`.

#![forbid(unsafe_code)]

mod account;
mod aggregator;
mod args;
mod bcs_size;
mod bls12381;
mod bulletproofs;
mod code;
mod consensus_config;
mod ed25519;
mod event;
mod misc;
mod object;
mod ristretto255;
mod secp256k1;
mod string_utils;
mod table;
mod transaction_context;
mod type_info;

pub use aggregator::AggregatorV1Store;
pub use code::{take_publish_request, PublishRequest};
pub use event::{EmittedEvent, EventLog};
pub use misc::{Randomness, StateStorageUsage};
pub use ristretto255::RistrettoPoints;
pub use string_utils::{native_format, native_format_list};
pub use table::{TableStore, ALREADY_EXISTS, NOT_FOUND};
pub use transaction_context::{EntryFunctionPayload, MultisigPayload, TransactionContext, UserTransaction};

use movejit_runtime::natives::{with_extensions, NativeExtensions};
use movejit_runtime::{AccountAddress, NativeRegistry, VmError};

/// The address the Aptos framework natives live at.
pub const FRAMEWORK: AccountAddress = {
    let mut b = [0u8; 32];
    b[31] = 1;
    AccountAddress(b)
};

/// Adds every Aptos framework native this crate implements to `registry`
/// (replacing natives of the same name).
pub fn register(registry: &mut NativeRegistry) {
    let r = &mut args::Registrar { registry, address: FRAMEWORK };
    table::register(r);
    object::register(r);
    event::register(r);
    event::register_flat(r);
    type_info::register(r);
    transaction_context::register(r);
    account::register(r);
    aggregator::register(r);
    aggregator::register_v1(r);
    bcs_size::register(r);
    misc::register(r);
    string_utils::register(r);
    code::register(r);
    ed25519::register(r);
    ristretto255::register(r);
    bls12381::register(r);
    secp256k1::register(r);
    consensus_config::register(r);
    bulletproofs::register(r);
}

/// The Move stdlib natives plus the Aptos framework ones: what an Aptos
/// host registers.
pub fn aptos_registry() -> NativeRegistry {
    let mut r = NativeRegistry::with_stdlib();
    register(&mut r);
    r
}

/// Runs one transaction (`f`: the session's calls) with `ext` installed,
/// and, when it fails, rolls back what it did to the natives' state: table
/// contents, v1 aggregator values and emitted events go back, and a publish
/// request it made is dropped to where they were before (as the
/// Aptos VM discards a failed transaction's effects). Counters of the
/// transaction context are the transaction's own and are not rolled back.
/// Ristretto255 points start empty in each transaction (Aptos empties them
/// when a session starts; no point value outlives its transaction).
pub fn run_transaction<R>(ext: &mut NativeExtensions, f: impl FnOnce() -> Result<R, VmError>) -> Result<R, VmError> {
    ext.remove::<RistrettoPoints>();
    // `Some(undoable)` when the store existed before the transaction.
    let tables = ext.get_mut::<TableStore>().map(|t| t.begin_transaction());
    let events = ext.get::<EventLog>().map(|l| l.events.len());
    let aggregators = ext.get::<AggregatorV1Store>().cloned();
    let r = with_extensions(ext, f);
    if r.is_ok() {
        if let Some(t) = ext.get_mut::<TableStore>() {
            t.commit();
        }
    } else {
        match tables {
            Some(true) => ext.get_or_default::<TableStore>().rollback(),
            // Entries still parked before the call: nothing safe to go back to.
            Some(false) => {}
            None => {
                ext.remove::<TableStore>();
            }
        }
        code::discard(ext);
        match aggregators {
            Some(a) => {
                ext.insert(a);
            }
            None => {
                ext.remove::<AggregatorV1Store>();
            }
        }
        match events {
            Some(n) => ext.get_or_default::<EventLog>().events.truncate(n),
            None => {
                ext.remove::<EventLog>();
            }
        }
    }
    r
}
