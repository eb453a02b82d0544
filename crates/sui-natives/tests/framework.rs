//! Real Sui framework functions with the Sui natives, on tree, flat and
//! JIT with identical results, gas and object effects.

mod common;

use common::*;
use movejit_engine::runtime::natives::NativeExtensions;
use movejit_engine::runtime::{AccountAddress, StatusCode};
use movejit_sui_natives::{
    derive_id, ObjectRuntime, Owner, Receivable, TransactionContext, E_ADDRESS_PARSE_ERROR, E_FIELD_TYPE_MISMATCH,
    E_KEY_DOES_NOT_EXIST, E_RECEIVING_OBJECT_TYPE_MISMATCH, E_SHARED_NON_NEW_OBJECT, E_UNABLE_TO_RECEIVE_OBJECT,
};

const DIGEST: [u8; 32] = [7; 32];

fn context() -> TransactionContext {
    TransactionContext {
        sender: addr(0xA11CE),
        digest: DIGEST,
        epoch: 42,
        epoch_timestamp_ms: 1_700_000_000_000,
        rgp: 750,
        gas_price: 1000,
        gas_budget: 50_000_000,
        sponsor: Some(addr(0x5B)),
        ids_created: 0,
    }
}

fn with_context(ext: &mut NativeExtensions) {
    ext.insert(context());
}

/// The BCS `TxContext` Move code holds (its fields are not what the natives read).
fn ctx_arg() -> Vec<u8> {
    tx_context_bcs(addr(0xA11CE), &DIGEST, 42, 1_700_000_000_000, 0)
}

fn ok(values: Vec<Vec<u8>>) -> Outcome {
    Ok(values)
}

/// Independent of the crate: blake2b256(0xf1 ‖ digest ‖ n LE).
fn expected_id(n: u64) -> AccountAddress {
    use blake2::Digest;
    let mut h = blake2::Blake2b::<blake2::digest::consts::U32>::new();
    h.update([0xf1]);
    h.update(DIGEST);
    h.update(n.to_le_bytes());
    AccountAddress(h.finalize().into())
}

#[test]
fn tx_context_reads_the_host_context() {
    let sui = Sui::new();
    let calls = [
        ("0x2::tx_context::sender", addr(0xA11CE).0.to_vec()),
        ("0x2::tx_context::epoch", u64_bcs(42)),
        ("0x2::tx_context::epoch_timestamp_ms", u64_bcs(1_700_000_000_000)),
        ("0x2::tx_context::reference_gas_price", u64_bcs(750)),
        ("0x2::tx_context::gas_price", u64_bcs(1000)),
        // Option<address>: Some
        ("0x2::tx_context::sponsor", [vec![1], addr(0x5B).0.to_vec()].concat()),
        ("0x2::tx_context::digest", bytes(&DIGEST)),
    ];
    let seq: Vec<Call> = calls.iter().map(|(f, _)| call(f, &[], vec![ctx_arg()])).collect();
    let run = sui.run(&seq, &with_context);
    for ((f, want), got) in calls.iter().zip(&run.outcomes) {
        assert_eq!(got, &ok(vec![want.clone()]), "{f}");
    }
    // No sponsor: None.
    let run = sui.run(&[call("0x2::tx_context::sponsor", &[], vec![ctx_arg()])], &|ext| {
        ext.insert(TransactionContext { sponsor: None, ..context() });
    });
    assert_eq!(run.outcomes, vec![ok(vec![vec![0]])]);
}

#[test]
fn fresh_ids_are_derived_from_the_digest_and_recorded() {
    let sui = Sui::new();
    let seq = [
        call("0x2::tx_context::fresh_object_address", &[], vec![ctx_arg()]),
        call("0x2::tx_context::fresh_object_address", &[], vec![ctx_arg()]),
        call("0x2::object::new", &[], vec![ctx_arg()]),
    ];
    let run = sui.run(&seq, &with_context);
    let ids: Vec<_> = (0..3).map(expected_id).collect();
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(run.outcomes[i], ok(vec![id.0.to_vec()]), "call {i}");
        assert_eq!(derive_id(&DIGEST, i as u64), *id);
    }
    assert_eq!(run.effects.new_ids, ids.iter().copied().collect());
    assert!(run.effects.deleted_ids.is_empty());
}

#[test]
fn object_new_and_delete() {
    let sui = Sui::new();
    let fresh = expected_id(0);
    let old = addr(0x0B1EC7);
    let seq = [
        call("0x2::object::new", &[], vec![ctx_arg()]),
        // A new id deleted in the same transaction leaves no trace...
        call("0x2::object::delete", &[], vec![fresh.0.to_vec()]),
        // ...an existing object's id is recorded as deleted.
        call("0x2::object::delete", &[], vec![old.0.to_vec()]),
        call("0x2::object::uid_to_address", &[], vec![old.0.to_vec()]),
    ];
    let run = sui.run(&seq, &with_context);
    assert_eq!(run.outcomes, vec![ok(vec![fresh.0.to_vec()]), ok(vec![]), ok(vec![]), ok(vec![old.0.to_vec()])]);
    assert!(run.effects.new_ids.is_empty());
    assert_eq!(run.effects.deleted_ids, [old].into_iter().collect());
}

const COIN: &str = "0x2::coin::Coin<0x2::sui::SUI>";

fn coin(id: AccountAddress, value: u64) -> Vec<u8> {
    [id.0.to_vec(), u64_bcs(value)].concat()
}

#[test]
fn transfers_freezes_and_shares() {
    let sui = Sui::new();
    let (a, b, c) = (addr(0xC1), addr(0xC2), addr(0xC3));
    let recipient = addr(0xB0B);
    let fresh = expected_id(0);
    let seq = [
        call("0x2::transfer::public_transfer", &[COIN], vec![coin(a, 5), recipient.0.to_vec()]),
        call("0x2::transfer::public_freeze_object", &[COIN], vec![coin(b, 6)]),
        // Sharing an object neither new nor shared before aborts...
        call("0x2::transfer::public_share_object", &[COIN], vec![coin(c, 7)]),
        // ...a new one is shared.
        call("0x2::object::new", &[], vec![ctx_arg()]),
        call("0x2::transfer::public_share_object", &[COIN], vec![coin(fresh, 8)]),
    ];
    let run = sui.run(&seq, &with_context);
    assert_eq!(run.outcomes[..2], [ok(vec![]), ok(vec![])]);
    assert_eq!(run.outcomes[2], abort(E_SHARED_NON_NEW_OBJECT));
    assert_eq!(run.outcomes[4], ok(vec![]));
    let t = &run.effects.transfers;
    assert_eq!(t.len(), 3, "the failed share left nothing");
    assert_eq!(t[&a].owner, Owner::AddressOwner(recipient));
    assert_eq!(t[&b].owner, Owner::Immutable);
    assert_eq!(t[&fresh].owner, Owner::Shared);
    assert_eq!(t[&a].ty.to_string(), movejit_engine::runtime::Type::parse_tag(COIN).unwrap().to_string());

    // An input object that was shared may be shared again.
    let run = sui.run(&[call("0x2::transfer::public_share_object", &[COIN], vec![coin(c, 7)])], &|ext| {
        with_context(ext);
        ext.get_or_default::<ObjectRuntime>().input_objects.insert(c, Owner::Shared);
    });
    assert_eq!(run.outcomes, vec![ok(vec![])]);
}

#[test]
fn receive_takes_objects_sent_to_the_parent() {
    let sui = Sui::new();
    let parent = addr(0x9A);
    let child = addr(0xC4);
    // Receiving<T> { id: ID, version: u64 }
    let receiving = |version: u64| [child.0.to_vec(), u64_bcs(version)].concat();
    let seq = [
        call("0x2::transfer::public_receive", &[COIN], vec![parent.0.to_vec(), receiving(3)]),
        call(
            "0x2::transfer::public_receive",
            &["0x2::coin::Coin<0x2::coin::Coin<0x2::sui::SUI>>"],
            vec![parent.0.to_vec(), receiving(4)],
        ),
        call("0x2::transfer::public_receive", &[COIN], vec![parent.0.to_vec(), receiving(4)]),
        call("0x2::transfer::public_receive", &[COIN], vec![parent.0.to_vec(), receiving(4)]),
    ];
    let run = sui.run(&seq, &|ext| {
        with_context(ext);
        let ty = movejit_engine::runtime::Type::parse_tag(COIN).unwrap();
        let value = movejit_engine::runtime::Value::Struct(vec![
            movejit_engine::runtime::Value::Struct(vec![movejit_engine::runtime::Value::Struct(vec![
                movejit_engine::runtime::Value::Address(child),
            ])]),
            movejit_engine::runtime::Value::Struct(vec![movejit_engine::runtime::Value::U64(99)]),
        ]);
        ext.get_or_default::<ObjectRuntime>().receivable.insert((parent, child), Receivable { version: 4, ty, value });
    });
    assert_eq!(
        run.outcomes,
        vec![
            abort(E_UNABLE_TO_RECEIVE_OBJECT),
            abort(E_RECEIVING_OBJECT_TYPE_MISMATCH),
            ok(vec![coin(child, 99)]),
            abort(E_UNABLE_TO_RECEIVE_OBJECT),
        ]
    );
}

#[test]
fn dynamic_fields_add_borrow_remove() {
    let sui = Sui::new();
    let parent = addr(0xD1);
    let uid = parent.0.to_vec();
    let df = |f: &'static str, ty: &[&str], args: Vec<Vec<u8>>| call(f, ty, args);
    let seq = [
        df("0x2::dynamic_field::add", &["u64", "u64"], vec![uid.clone(), u64_bcs(7), u64_bcs(42)]),
        df("0x2::dynamic_field::exists_", &["u64"], vec![uid.clone(), u64_bcs(7)]),
        df("0x2::dynamic_field::exists_with_type", &["u64", "u64"], vec![uid.clone(), u64_bcs(7)]),
        df("0x2::dynamic_field::exists_with_type", &["u64", "bool"], vec![uid.clone(), u64_bcs(7)]),
        df("0x2::dynamic_field::borrow", &["u64", "u64"], vec![uid.clone(), u64_bcs(7)]),
        // EFieldAlreadyExists (Move's check before the native).
        df("0x2::dynamic_field::add", &["u64", "u64"], vec![uid.clone(), u64_bcs(7), u64_bcs(1)]),
        df("0x2::dynamic_field::borrow", &["u64", "bool"], vec![uid.clone(), u64_bcs(7)]),
        df("0x2::dynamic_field::borrow", &["u64", "u64"], vec![uid.clone(), u64_bcs(8)]),
        df("0x2::dynamic_field::borrow_mut", &["u64", "u64"], vec![uid.clone(), u64_bcs(7)]),
        df("0x2::dynamic_field::remove_if_exists", &["u64", "u64"], vec![uid.clone(), u64_bcs(9)]),
        df("0x2::dynamic_field::remove", &["u64", "u64"], vec![uid.clone(), u64_bcs(7)]),
        df("0x2::dynamic_field::remove", &["u64", "u64"], vec![uid.clone(), u64_bcs(7)]),
        df("0x2::dynamic_field::exists_", &["u64"], vec![uid.clone(), u64_bcs(7)]),
        df("0x2::dynamic_field::add", &["u64", "vector<u8>"], vec![uid.clone(), u64_bcs(1), bytes(b"kept")]),
    ];
    let run = sui.run(&seq, &with_context);
    let t = vec![1u8];
    let f = vec![0u8];
    assert_eq!(
        run.outcomes,
        vec![
            ok(vec![]),
            ok(vec![t.clone()]),
            ok(vec![t.clone()]),
            ok(vec![f.clone()]),
            ok(vec![u64_bcs(42)]),
            abort(0),
            abort(E_FIELD_TYPE_MISMATCH),
            abort(E_KEY_DOES_NOT_EXIST),
            ok(vec![u64_bcs(42)]),
            ok(vec![f.clone()]),
            ok(vec![u64_bcs(42)]),
            abort(E_KEY_DOES_NOT_EXIST),
            ok(vec![f.clone()]),
            ok(vec![]),
        ]
    );
    assert_eq!(run.children.len(), 1, "one field left: {:?}", run.children);
}

/// Sui's TypeScript SDK test vector for `deriveDynamicFieldID` (u64 key 0).
#[test]
fn hash_type_and_key_matches_sui() {
    let parent = AccountAddress::parse("0xbef336120c90707eb387d72dde9c0e9f6fea37b9f02b1ba8de271c64ad7b6db0").unwrap();
    let want = AccountAddress::parse("0x6552700b707460a3f48d8348f7531c4bba7a9546b4cf445ba265ad2ba06b1bb3").unwrap();
    let tag = movejit_sui_natives::type_tag_bcs(&movejit_engine::runtime::Type::U64).unwrap();
    assert_eq!(movejit_sui_natives::derive_dynamic_field_id(parent, &tag, &u64_bcs(0)), want);
    let run = Sui::new().run(
        &[call("0x2::dynamic_field::hash_type_and_key", &["u64"], vec![parent.0.to_vec(), u64_bcs(0)])],
        &with_context,
    );
    assert_eq!(run.outcomes, vec![ok(vec![want.0.to_vec()])]);
}

#[test]
fn a_failed_transaction_leaves_no_effects() {
    let sui = Sui::new();
    let parent = addr(0xD2);
    let uid = parent.0.to_vec();
    // add then abort inside one call: dynamic_field::add aborts on the
    // second add after the first has run in an earlier transaction; the
    // failing share records nothing.
    let seq = [
        call("0x2::dynamic_field::add", &["u64", "u64"], vec![uid.clone(), u64_bcs(1), u64_bcs(10)]),
        call("0x2::dynamic_field::add", &["u64", "u64"], vec![uid.clone(), u64_bcs(1), u64_bcs(11)]),
        call("0x2::transfer::public_share_object", &[COIN], vec![coin(addr(0xE), 1)]),
        call("0x2::dynamic_field::borrow", &["u64", "u64"], vec![uid.clone(), u64_bcs(1)]),
    ];
    let run = sui.run(&seq, &with_context);
    assert_eq!(run.outcomes, vec![ok(vec![]), abort(0), abort(E_SHARED_NON_NEW_OBJECT), ok(vec![u64_bcs(10)])]);
    assert!(run.effects.transfers.is_empty());
    assert_eq!(run.children.len(), 1);
}

#[test]
fn events_are_logged_with_their_bcs() {
    let sui = Sui::new();
    let s = bytes(b"hello");
    let seq = [
        call("0x2::event::emit", &["0x1::string::String"], vec![s.clone()]),
        call("0x2::event::emit", &["0x1::option::Option<u64>"], vec![[vec![1], u64_bcs(9)].concat()]),
        // SUI has drop but not copy.
        call("0x2::event::emit", &["0x2::sui::SUI"], vec![vec![1]]),
    ];
    let run = sui.run(&seq, &with_context);
    assert_eq!(run.outcomes, vec![ok(vec![]), ok(vec![]), Err((StatusCode::CONSTRAINT_NOT_SATISFIED, None))]);
    let ev = &run.effects.events;
    assert_eq!(ev.len(), 2);
    assert_eq!(ev[0].data, s);
    assert_eq!(
        ev[0].ty.to_string(),
        movejit_engine::runtime::Type::parse_tag("0x1::string::String").unwrap().to_string()
    );
    assert_eq!(ev[1].data, [vec![1], u64_bcs(9)].concat());
}

#[test]
fn hashes_addresses_and_witnesses() {
    let sui = Sui::new();
    let rows: Vec<(Call, Outcome)> = vec![
        (
            call("0x2::hash::blake2b256", &[], vec![bytes(b"")]),
            ok(vec![bytes(&hex("0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8"))]),
        ),
        (
            call("0x2::hash::blake2b256", &[], vec![bytes(b"abc")]),
            ok(vec![bytes(&hex("bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319"))]),
        ),
        (
            call("0x2::hash::keccak256", &[], vec![bytes(b"")]),
            ok(vec![bytes(&hex("c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"))]),
        ),
        (
            call("0x2::hash::keccak256", &[], vec![bytes(b"abc")]),
            ok(vec![bytes(&hex("4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"))]),
        ),
        (call("0x2::address::from_bytes", &[], vec![bytes(&[0xAB; 32])]), ok(vec![vec![0xAB; 32]])),
        (call("0x2::address::from_bytes", &[], vec![bytes(&[0xAB; 31])]), abort(E_ADDRESS_PARSE_ERROR)),
        (call("0x2::address::from_bytes", &[], vec![bytes(&[0xAB; 33])]), abort(E_ADDRESS_PARSE_ERROR)),
        // to_u256(0x…0102) = 258 (big-endian address, little-endian u256 BCS).
        (
            call("0x2::address::to_u256", &[], vec![addr(0x0102).0.to_vec()]),
            ok(vec![[vec![2, 1], vec![0; 30]].concat()]),
        ),
        (
            call("0x2::address::from_u256", &[], vec![[vec![2, 1], vec![0; 30]].concat()]),
            ok(vec![addr(0x0102).0.to_vec()]),
        ),
        (
            call("0x2::address::to_string", &[], vec![addr(0xAB).0.to_vec()]),
            ok(vec![bytes(format!("{:064x}", 0xABu8).as_bytes())]),
        ),
        // SUI { dummy_field: bool } is the sui module's one-time witness.
        (call("0x2::types::is_one_time_witness", &["0x2::sui::SUI"], vec![vec![1]]), ok(vec![vec![1]])),
        (call("0x2::types::is_one_time_witness", &["0x1::string::String"], vec![bytes(b"x")]), ok(vec![vec![0]])),
        (call("0x2::types::is_one_time_witness", &["bool"], vec![vec![1]]), ok(vec![vec![0]])),
        (call("0x2::types::is_one_time_witness", &["0x1::option::Option<bool>"], vec![vec![0]]), ok(vec![vec![0]])),
    ];
    let (calls, want): (Vec<_>, Vec<_>) = rows.into_iter().unzip();
    let run = sui.run(&calls, &with_context);
    for (i, (got, want)) in run.outcomes.iter().zip(&want).enumerate() {
        assert_eq!(got, want, "row {i}: {}", calls[i].function);
    }
}

fn hex(s: &str) -> Vec<u8> {
    ::hex::decode(s).expect("hex")
}

/// `dynamic_object_field::add` adds a field, then the object as the field's
/// child. Adding a second name for the same object fails after the field is
/// in: the transaction rolls back and the second name does not exist.
#[test]
fn a_transaction_failing_midway_rolls_children_back() {
    let sui = Sui::new();
    let parent = addr(0xD3);
    let uid = parent.0.to_vec();
    let obj = addr(0x0C);
    let dof = |f: &'static str, ty: &[&str], args: Vec<Vec<u8>>| call(f, ty, args);
    let seq = [
        dof("0x2::dynamic_object_field::add", &["u64", COIN], vec![uid.clone(), u64_bcs(1), coin(obj, 5)]),
        dof("0x2::dynamic_object_field::add", &["u64", COIN], vec![uid.clone(), u64_bcs(2), coin(obj, 6)]),
        dof("0x2::dynamic_object_field::exists_", &["u64"], vec![uid.clone(), u64_bcs(2)]),
        dof("0x2::dynamic_object_field::exists_", &["u64"], vec![uid.clone(), u64_bcs(1)]),
        dof("0x2::dynamic_object_field::borrow", &["u64", COIN], vec![uid.clone(), u64_bcs(1)]),
        dof("0x2::dynamic_object_field::id", &["u64"], vec![uid.clone(), u64_bcs(1)]),
        dof("0x2::dynamic_object_field::remove", &["u64", COIN], vec![uid.clone(), u64_bcs(1)]),
        dof("0x2::dynamic_object_field::exists_", &["u64"], vec![uid.clone(), u64_bcs(1)]),
    ];
    let run = sui.run(&seq, &with_context);
    assert_eq!(run.outcomes[0], ok(vec![]));
    assert_eq!(run.outcomes[1], Err((StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR, None)));
    assert_eq!(
        run.outcomes[2..],
        [
            ok(vec![vec![0]]),
            ok(vec![vec![1]]),
            ok(vec![coin(obj, 5)]),
            ok(vec![[vec![1], obj.0.to_vec()].concat()]),
            ok(vec![coin(obj, 5)]),
            ok(vec![vec![0]])
        ]
    );
    assert!(run.children.is_empty(), "{:?}", run.children);
}

/// RFC 8032 §7.1 tests 1 and 2, tampered and malformed rows, HMAC-SHA3-256
/// (NIST example, key length < block length) and protocol feature flags.
#[test]
fn signatures_macs_and_feature_flags() {
    let sui = Sui::new();
    let pk1 = hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
    let sig1 = hex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
    let pk2 = hex("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c");
    let sig2 = hex("92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00");
    let mut bad = sig2.clone();
    bad[0] ^= 1;
    let verify = |sig: &[u8], pk: &[u8], msg: &[u8]| {
        call("0x2::ed25519::ed25519_verify", &[], vec![bytes(sig), bytes(pk), bytes(msg)])
    };
    let key: Vec<u8> = (0u8..32).collect();
    let rows: Vec<(Call, Outcome)> = vec![
        (verify(&sig1, &pk1, b""), ok(vec![vec![1]])),
        (verify(&sig2, &pk2, &[0x72]), ok(vec![vec![1]])),
        (verify(&sig2, &pk2, &[0x73]), ok(vec![vec![0]])),
        (verify(&bad, &pk2, &[0x72]), ok(vec![vec![0]])),
        (verify(&sig1, &pk2, b""), ok(vec![vec![0]])),
        (verify(&sig1[..63], &pk1, b""), ok(vec![vec![0]])),
        (verify(&sig1, &pk1[..31], b""), ok(vec![vec![0]])),
        (
            call("0x2::hmac::hmac_sha3_256", &[], vec![bytes(&key), bytes(b"Sample message for keylen<blocklen")]),
            ok(vec![bytes(&hex("4fe8e202c4f058e8dddc23d8c34e467343e23555e24fc2f025d598f558f67205"))]),
        ),
        (call("0x2::protocol_config::is_feature_enabled", &[], vec![bytes(b"enable_x")]), ok(vec![vec![1]])),
        (call("0x2::protocol_config::is_feature_enabled", &[], vec![bytes(b"enable_y")]), ok(vec![vec![0]])),
        (call("0x2::protocol_config::is_feature_enabled", &[], vec![bytes(&[0xff])]), ok(vec![vec![0]])),
    ];
    let (calls, want): (Vec<_>, Vec<_>) = rows.into_iter().unzip();
    let run = sui.run(&calls, &|ext| {
        with_context(ext);
        ext.get_or_default::<ObjectRuntime>().features.insert("enable_x".into());
    });
    for (i, (got, want)) in run.outcomes.iter().zip(&want).enumerate() {
        assert_eq!(got, want, "row {i}: {}", calls[i].function);
    }
}

/// `sui::table` end to end: a table object from `object::new`, entries as
/// dynamic fields, its own abort codes, and `destroy_empty` deleting the
/// fresh id (so the transaction creates no object).
#[test]
fn sui_table_lifecycle() {
    let sui = Sui::new();
    let id = expected_id(0);
    let table = |size: u64| [id.0.to_vec(), u64_bcs(size)].concat();
    let t = &["u64", "u64"];
    let seq = [
        call("0x2::table::new", t, vec![ctx_arg()]),
        call("0x2::table::add", t, vec![table(0), u64_bcs(1), u64_bcs(100)]),
        call("0x2::table::add", t, vec![table(1), u64_bcs(2), u64_bcs(200)]),
        call("0x2::table::contains", t, vec![table(2), u64_bcs(1)]),
        call("0x2::table::borrow", t, vec![table(2), u64_bcs(2)]),
        call("0x2::table::add", t, vec![table(2), u64_bcs(1), u64_bcs(5)]),
        call("0x2::table::remove", t, vec![table(2), u64_bcs(1)]),
        call("0x2::table::borrow", t, vec![table(1), u64_bcs(1)]),
        // ETableNotEmpty
        call("0x2::table::destroy_empty", t, vec![table(1)]),
        call("0x2::table::remove", t, vec![table(1), u64_bcs(2)]),
        call("0x2::table::destroy_empty", t, vec![table(0)]),
    ];
    let run = sui.run(&seq, &with_context);
    assert_eq!(
        run.outcomes,
        vec![
            ok(vec![table(0)]),
            ok(vec![]),
            ok(vec![]),
            ok(vec![vec![1]]),
            ok(vec![u64_bcs(200)]),
            abort(0),
            ok(vec![u64_bcs(100)]),
            abort(E_KEY_DOES_NOT_EXIST),
            abort(0),
            ok(vec![u64_bcs(200)]),
            ok(vec![]),
        ]
    );
    assert!(run.effects.new_ids.is_empty() && run.effects.deleted_ids.is_empty(), "{:?}", run.effects);
    assert!(run.children.is_empty());
}

/// The Sui natives ported to the flat native ABI (jit-abi.md, "Native
/// ABI"): each has a flat form the flat executors call instead of the tree
/// bridge.
#[test]
fn ported_natives_have_a_flat_form() {
    let r = movejit_sui_natives::sui_registry();
    let sui = movejit_sui_natives::SUI_FRAMEWORK;
    let ported = [
        ("dynamic_field", "hash_type_and_key"),
        ("dynamic_field", "add_child_object"),
        ("dynamic_field", "borrow_child_object"),
        ("dynamic_field", "borrow_child_object_mut"),
        ("dynamic_field", "remove_child_object"),
        ("dynamic_field", "has_child_object"),
        ("dynamic_field", "has_child_object_with_ty"),
        ("object", "record_new_uid"),
        ("object", "delete_impl"),
        ("object", "borrow_uid"),
        ("transfer", "transfer_impl"),
        ("transfer", "freeze_object_impl"),
        ("transfer", "share_object_impl"),
        ("event", "emit"),
    ];
    for (m, f) in ported {
        assert!(r.get(&sui, m, f).expect("registered").flat().is_some(), "{m}::{f} has a flat form");
    }
    // Sui's own type_name natives replace the stdlib's, with flat forms of their own.
    let one = movejit_runtime::AccountAddress::from_u64(1);
    for f in ["get", "get_with_original_ids", "with_defining_ids", "with_original_ids", "defining_id", "original_id"] {
        assert!(r.get(&one, "type_name", f).expect("registered").flat().is_some(), "type_name::{f} has a flat form");
    }
    for name in r.tree_only() {
        println!("tree-only: {name}");
    }
}
