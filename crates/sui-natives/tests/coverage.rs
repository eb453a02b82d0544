//! How many of the natives the Sui corpus declares at 0x2 / 0x3 are
//! registered, and that every registered one is really declared.

mod common;

use common::shared;
use movejit_engine::runtime::AccountAddress;
use movejit_format::decode_module;
use movejit_sui_natives::{sui_registry, SUI_FRAMEWORK};
use std::collections::BTreeSet;

/// Natives the tests call through the framework; each must be registered.
const MUST: &[(&str, &str)] = &[
    ("address", "from_bytes"),
    ("address", "from_u256"),
    ("address", "to_u256"),
    ("bls12381", "bls12381_min_pk_verify"),
    ("bls12381", "bls12381_min_sig_verify"),
    ("dynamic_field", "add_child_object"),
    ("dynamic_field", "borrow_child_object"),
    ("dynamic_field", "borrow_child_object_mut"),
    ("dynamic_field", "has_child_object"),
    ("dynamic_field", "has_child_object_with_ty"),
    ("dynamic_field", "hash_type_and_key"),
    ("dynamic_field", "remove_child_object"),
    ("ed25519", "ed25519_verify"),
    ("ecdsa_k1", "decompress_pubkey"),
    ("ecdsa_k1", "secp256k1_ecrecover"),
    ("ecdsa_k1", "secp256k1_verify"),
    ("ecdsa_r1", "secp256r1_ecrecover"),
    ("ecdsa_r1", "secp256r1_verify"),
    ("event", "emit"),
    ("hmac", "hmac_sha3_256"),
    ("protocol_config", "is_feature_enabled"),
    ("hash", "blake2b256"),
    ("hash", "keccak256"),
    ("object", "borrow_uid"),
    ("object", "delete_impl"),
    ("object", "record_new_uid"),
    ("transfer", "freeze_object_impl"),
    ("transfer", "party_transfer_impl"),
    ("transfer", "receive_impl"),
    ("transfer", "share_object_impl"),
    ("transfer", "transfer_impl"),
    ("tx_context", "derive_id"),
    ("tx_context", "fresh_id"),
    ("tx_context", "native_epoch"),
    ("tx_context", "native_epoch_timestamp_ms"),
    ("tx_context", "native_gas_budget"),
    ("tx_context", "native_gas_price"),
    ("tx_context", "native_ids_created"),
    ("tx_context", "native_rgp"),
    ("tx_context", "native_sender"),
    ("tx_context", "native_sponsor"),
    ("types", "is_one_time_witness"),
];

/// Registered today, of the natives the corpus declares at 0x2 and 0x3.
const FLOOR: usize = 42;

/// (address, module, function) of every native the corpus declares outside 0x1.
fn declared() -> BTreeSet<(AccountAddress, String, String)> {
    let mut out = BTreeSet::new();
    let mut dirs = vec![shared().join("corpus/sui")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("corpus folder").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
                continue;
            }
            let Ok(m) = decode_module(&std::fs::read(&p).expect("module")) else { continue };
            if *m.address() == AccountAddress::from_u64(1) {
                continue;
            }
            for f in m.function_defs.iter().filter(|f| f.is_native()) {
                let h = &m.function_handles[f.function.idx()];
                out.insert((*m.address(), m.name().to_string(), m.identifiers[h.name.idx()].clone()));
            }
        }
    }
    out
}

#[test]
fn registered_natives_cover_the_corpus() {
    let declared = declared();
    let registry = sui_registry();
    for (m, f) in MUST {
        assert!(
            declared.contains(&(SUI_FRAMEWORK, m.to_string(), f.to_string())),
            "{m}::{f} is not a framework native"
        );
        assert!(registry.get(&SUI_FRAMEWORK, m, f).is_some(), "{m}::{f} is not registered");
    }
    let missing: Vec<_> = declared.iter().filter(|(a, m, f)| registry.get(a, m, f).is_none()).collect();
    let registered = declared.len() - missing.len();
    assert!(registered >= FLOOR, "registered Sui natives fell below {FLOOR}");
    eprintln!(
        "Sui natives registered: {registered} of {}; not yet: {}",
        declared.len(),
        missing.iter().map(|(a, m, f)| format!("{}::{m}::{f}", a.to_hex_short())).collect::<Vec<_>>().join(", ")
    );
}
