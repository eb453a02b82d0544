//! The Aptos framework natives for movejit: tables, objects, events,
//! type_info, transaction context, create_signer, permissioned signers,
//! aggregators (v1 and v2, without delayed fields), the framework's
//! `bcs::serialized_size` / `constant_serialized_size`, `function_info`
//! and the dispatch natives of fungible assets, with the Aptos sources'
//! semantics and abort codes.
//!
//! [`register`] adds them to a [`NativeRegistry`] through its public API,
//! as any host would (natives at `0x1`, next to the Move stdlib ones).
//!
//! Session state lives in [`NativeExtensions`](movejit_runtime::natives::NativeExtensions):
//! a host that wants state across calls (table contents, events, counters)
//! fills one — [`TransactionContext`] for the transaction's values, and
//! reads [`TableStore`] and [`EventLog`] back afterwards — and runs its calls
//! inside [`with_extensions`](movejit_runtime::natives::with_extensions).
//! Without that, each call is a transaction of its own with
//! [`TransactionContext::default`].
//!
//! Assumptions and gaps: gas is charged the way the stdlib natives do
//! (`charge_native(bytes)`; the gas table is not Aptos's); aggregators run
//! without the delayed-field optimisation (plain values, same results);
//! natives that call back into Move (`dispatchable_*`, closures in
//! `string_utils`) are not supported and fail with `VM_EXTENSION_ERROR`.

#![forbid(unsafe_code)]

mod account;
mod aggregator;
mod args;
mod bcs_size;
mod event;
mod misc;
mod object;
mod string_utils;
mod table;
mod transaction_context;
mod type_info;

pub use aggregator::AggregatorV1Store;
pub use event::{EmittedEvent, EventLog};
pub use misc::Randomness;
pub use string_utils::native_format;
pub use table::{TableCheckpoint, TableStore, ALREADY_EXISTS, NOT_FOUND};
pub use transaction_context::{TransactionContext, UserTransaction};

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
    type_info::register(r);
    transaction_context::register(r);
    account::register(r);
    aggregator::register(r);
    aggregator::register_v1(r);
    bcs_size::register(r);
    misc::register(r);
    string_utils::register(r);
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
/// contents, v1 aggregator values and emitted events go back to where they were before (as the
/// Aptos VM discards a failed transaction's effects). Counters of the
/// transaction context are the transaction's own and are not rolled back.
pub fn run_transaction<R>(ext: &mut NativeExtensions, f: impl FnOnce() -> Result<R, VmError>) -> Result<R, VmError> {
    let tables = ext.get_mut::<TableStore>().map(|t| t.checkpoint());
    let events = ext.get::<EventLog>().map(|l| l.events.len());
    let aggregators = ext.get::<AggregatorV1Store>().cloned();
    let r = with_extensions(ext, f);
    if r.is_err() {
        match tables {
            Some(Some(c)) => ext.get_or_default::<TableStore>().restore(c),
            // Entries still parked before the call: nothing safe to go back to.
            Some(None) => {}
            None => {
                ext.remove::<TableStore>();
            }
        }
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
