//! Which framework natives the registry provides: every native the `clob`
//! benchmark and the aptos-workloads packages can reach must be there, and
//! each of them must really be declared `native` in the framework.

mod common;

use common::shared;
use movejit_aptos_natives::{aptos_registry, FRAMEWORK};
use movejit_format::decode_module;
use std::collections::BTreeSet;

/// Natives reachable (call graph over the modules, from `0xb0::clob_bench::bench_clob`
/// and every function of the aptos-workloads packages) at 0x1.
const REACHED: &[(&str, &str)] = &[
    ("aggregator", "add"),
    ("aggregator", "sub"),
    ("aggregator_factory", "new_aggregator"),
    ("aggregator_v2", "create_aggregator"),
    ("aggregator_v2", "create_derived_string"),
    ("aggregator_v2", "create_snapshot"),
    ("aggregator_v2", "create_unbounded_aggregator"),
    ("aggregator_v2", "derive_string_concat"),
    ("aggregator_v2", "is_at_least_impl"),
    ("aggregator_v2", "read"),
    ("aggregator_v2", "read_snapshot"),
    ("aggregator_v2", "snapshot"),
    ("aggregator_v2", "try_add"),
    ("aggregator_v2", "try_sub"),
    ("aptos_hash", "sip_hash"),
    ("bcs", "constant_serialized_size"),
    ("bcs", "serialized_size"),
    ("bcs", "to_bytes"),
    ("cmp", "compare"),
    ("code", "request_publish"),
    ("code", "request_publish_with_allowed_deps"),
    ("create_signer", "create_signer"),
    ("dispatchable_fungible_asset", "dispatchable_deposit"),
    ("dispatchable_fungible_asset", "dispatchable_derived_balance"),
    ("dispatchable_fungible_asset", "dispatchable_withdraw"),
    ("event", "write_module_event_to_store"),
    ("event", "write_to_event_store"),
    ("from_bcs", "from_bytes"),
    ("function_info", "load_function_impl"),
    ("hash", "sha3_256"),
    ("mem", "swap"),
    ("object", "create_user_derived_object_address_impl"),
    ("object", "exists_at"),
    ("permissioned_signer", "is_permissioned_signer_impl"),
    ("permissioned_signer", "permission_address"),
    ("permissioned_signer", "signer_from_permissioned_handle_impl"),
    ("randomness", "fetch_and_increment_txn_counter"),
    ("randomness", "is_unbiasable"),
    ("signer", "borrow_address"),
    ("string", "internal_check_utf8"),
    ("string_utils", "native_format"),
    ("table", "add_box"),
    ("table", "borrow_box"),
    ("table", "borrow_box_mut"),
    ("table", "contains_box"),
    ("table", "destroy_empty_box"),
    ("table", "drop_unchecked_box"),
    ("table", "new_table_handle"),
    ("table", "remove_box"),
    ("transaction_context", "generate_unique_address"),
    ("transaction_context", "get_txn_hash"),
    ("transaction_context", "monotonically_increasing_counter_internal"),
    ("transaction_context", "monotonically_increasing_counter_internal_for_test_only"),
    ("type_info", "type_name"),
    ("type_info", "type_of"),
    ("util", "from_bytes"),
    ("vector", "move_range"),
];

/// Framework natives registered today (of the 169 the corpus declares).
const FLOOR: usize = 142;

/// (module, function) of every native function the framework declares at 0x1.
fn declared_natives() -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    let mut dirs = vec![shared().join("corpus/aptos")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("corpus folder").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
                continue;
            }
            let Ok(m) = decode_module(&std::fs::read(&p).expect("module")) else { continue };
            if *m.address() != FRAMEWORK {
                continue;
            }
            for f in m.function_defs.iter().filter(|f| f.is_native()) {
                let h = &m.function_handles[f.function.idx()];
                out.insert((m.name().to_string(), m.identifiers[h.name.idx()].clone()));
            }
        }
    }
    out
}

#[test]
fn every_reached_native_is_registered_and_declared() {
    let declared = declared_natives();
    let registry = aptos_registry();
    for (m, f) in REACHED {
        assert!(declared.contains(&(m.to_string(), f.to_string())), "{m}::{f} is not a framework native");
        assert!(registry.get(&FRAMEWORK, m, f).is_some(), "{m}::{f} is not registered");
    }
    let missing: Vec<_> = declared.iter().filter(|(m, f)| registry.get(&FRAMEWORK, m, f).is_none()).collect();
    // Floor: all but crypto_algebra (22), account_abstraction's dispatch into
    // Move, and the natives needing module or storage access
    // (function_info::check_dispatch_type_compatibility_impl,
    // reflect::native_resolve, storage_slot's two borrows).
    assert!(declared.len() - missing.len() >= FLOOR, "registered framework natives fell below {FLOOR}");
    eprintln!(
        "framework natives registered: {} of {}; not yet: {}",
        declared.len() - missing.len(),
        declared.len(),
        missing.iter().map(|(m, f)| format!("{m}::{f}")).collect::<Vec<_>>().join(", ")
    );
}
