//! The Sui framework natives (`0x2`) for movejit, with the Sui sources'
//! semantics and abort codes: `tx_context` (sender, epoch, gas figures,
//! sponsor, fresh and derived ids), `object` (`record_new_uid`,
//! `delete_impl`, `borrow_uid`), `transfer` (transfer, freeze, share, party
//! transfer, receive), `event::emit`, `dynamic_field` (field ids and
//! children), `hash` (blake2b256, keccak256), `address` (bytes and u256)
//! and `types::is_one_time_witness`, `ed25519::ed25519_verify` (ZIP215,
//! ed25519-consensus as fastcrypto), `hmac::hmac_sha3_256` and
//! `protocol_config::is_feature_enabled` (flags the host turns on in
//! [`ObjectRuntime::features`]), `ecdsa_k1` (recovery, decompression,
//! verification over libsecp256k1 as fastcrypto), `ecdsa_r1` (recovery,
//! low-`s` verification over p256), `bls12381` min-sig / min-pk
//! verification (blst as fastcrypto).
//!
//! [`register`] adds them to a [`NativeRegistry`] through its public API,
//! as any host would; [`sui_registry`] is the Move stdlib with Sui's
//! semantics plus these.
//!
//! Session state lives in [`NativeExtensions`]: a host puts a
//! [`TransactionContext`] (and, in [`ObjectRuntime`], the input objects'
//! owners and receivable objects) in it, runs the transaction with
//! [`run_transaction`] (which rolls the object state back when it fails),
//! then reads the effects with [`ObjectRuntime::take_effects`]. Without
//! that each call is a transaction of its own with a default context.
//!
//! Gaps: gas is charged as the stdlib natives do (`charge_native(bytes)`),
//! not with Sui's cost table; events are limited by count, not yet by size;
//! children live in the session only (no store of earlier transactions'
//! children other than what the host inserts with [`ChildStore::insert`]).
//! Not yet: the other cryptography modules (groth16, group_ops, ecvrf,
//! poseidon, vdf, zklogin, nitro attestation), `config::read_setting_impl`
//! (needs the config objects from storage), accumulators and
//! `event::emit_authenticated_impl`, and `0x3::validator::validate_metadata_bcs`.

#![forbid(unsafe_code)]

mod args;
mod bls12381;
mod children;
mod crypto;
mod dynamic_field;
mod ecdsa_k1;
mod ecdsa_r1;
mod hash;
mod object;
mod object_runtime;
mod tx_context;
mod type_tag;

pub use bls12381::{bls12381_min_pk_verify, bls12381_min_sig_verify};
pub use children::ChildStore;
pub use crypto::{ed25519_verify, hmac_sha3_256};
pub use dynamic_field::{
    derive_dynamic_field_id, E_BCS_SERIALIZATION_FAILURE, E_FIELD_TYPE_MISMATCH, E_KEY_DOES_NOT_EXIST,
};
pub use ecdsa_k1::{
    decompress_pubkey, secp256k1_ecrecover, secp256k1_verify, E_FAIL_TO_RECOVER_PUBKEY, E_INVALID_PUBKEY,
    E_INVALID_SIGNATURE,
};
pub use ecdsa_r1::{secp256r1_ecrecover, secp256r1_verify, E_R1_FAIL_TO_RECOVER_PUBKEY, E_R1_INVALID_SIGNATURE};
pub use hash::{blake2b256, keccak256, E_ADDRESS_PARSE_ERROR};
pub use object::{
    E_NOT_SUPPORTED, E_RECEIVING_OBJECT_TYPE_MISMATCH, E_SHARED_NON_NEW_OBJECT, E_UNABLE_TO_RECEIVE_OBJECT,
};
pub use object_runtime::{
    sub_status, EmittedEvent, ObjectEffects, ObjectLimits, ObjectRuntime, Owner, Receivable, Transfer,
};
pub use tx_context::{derive_id, TransactionContext};
pub use type_tag::type_tag_bcs;

use movejit_runtime::natives::{with_extensions, NativeExtensions};
use movejit_runtime::{AccountAddress, NativeRegistry, VmError};

/// The address of the Sui framework.
pub const SUI_FRAMEWORK: AccountAddress = {
    let mut b = [0u8; 32];
    b[31] = 2;
    AccountAddress(b)
};

/// Adds every Sui framework native this crate implements to `registry`
/// (replacing natives of the same name).
pub fn register(registry: &mut NativeRegistry) {
    let r = &mut args::Registrar { registry, address: SUI_FRAMEWORK };
    tx_context::register(r);
    object::register(r);
    dynamic_field::register(r);
    hash::register(r);
    crypto::register(r);
    ecdsa_k1::register(r);
    ecdsa_r1::register(r);
    bls12381::register(r);
}

/// The Move stdlib natives (Sui semantics) plus the Sui framework ones:
/// what a Sui host registers.
pub fn sui_registry() -> NativeRegistry {
    let mut r = NativeRegistry::with_sui_stdlib();
    register(&mut r);
    r
}

/// The object state a failed transaction goes back to.
struct Checkpoint {
    new_ids: std::collections::BTreeSet<AccountAddress>,
    deleted_ids: std::collections::BTreeSet<AccountAddress>,
    transfers: std::collections::BTreeMap<AccountAddress, Transfer>,
    events: usize,
    receivable: std::collections::BTreeMap<(AccountAddress, AccountAddress), Receivable>,
    /// Whether the children can be rolled back (none parked before).
    children: bool,
    ids_created: Option<u64>,
}

/// Runs one transaction (`f`: the session's calls) with `ext` installed,
/// and, when it fails, rolls back what it did to the object state (ids,
/// transfers, events, children, received objects) and the context's id
/// counter, as Sui discards a failed transaction's effects.
pub fn run_transaction<R>(ext: &mut NativeExtensions, f: impl FnOnce() -> Result<R, VmError>) -> Result<R, VmError> {
    let ids_created = ext.get::<TransactionContext>().map(|c| c.ids_created);
    let rt = ext.get_or_default::<ObjectRuntime>();
    let saved = Checkpoint {
        new_ids: rt.new_ids.clone(),
        deleted_ids: rt.deleted_ids.clone(),
        transfers: rt.transfers.clone(),
        events: rt.events.len(),
        receivable: rt.receivable.clone(),
        children: rt.children.begin_transaction(),
        ids_created,
    };
    let r = with_extensions(ext, f);
    if r.is_ok() {
        ext.get_or_default::<ObjectRuntime>().children.commit();
    } else {
        let rt = ext.get_or_default::<ObjectRuntime>();
        rt.new_ids = saved.new_ids;
        rt.deleted_ids = saved.deleted_ids;
        rt.transfers = saved.transfers;
        rt.events.truncate(saved.events);
        rt.receivable = saved.receivable;
        // Children still parked before the call: nothing safe to go back to.
        if saved.children {
            rt.children.rollback();
        }
        if let (Some(n), Some(c)) = (saved.ids_created, ext.get_mut::<TransactionContext>()) {
            c.ids_created = n;
        }
    }
    r
}
