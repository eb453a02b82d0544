//! The transaction-context natives that read the transaction's payload
//! (`get_script_hash`, `entry_function_payload_internal`,
//! `multisig_payload_internal`, `is_encrypted_txn_internal`) through the
//! framework's Move functions on the tree and flat interpreters and the JIT,
//! with the host's `TransactionContext`; `state_storage`'s usage native; and
//! `consensus_config::validator_txn_enabled` over a published config.

mod common;

use common::framework::{bool_bcs, bytes_arg, Framework, Outcome};
use movejit_aptos_natives::{
    aptos_registry, EntryFunctionPayload, MultisigPayload, StateStorageUsage, TransactionContext, UserTransaction,
    FRAMEWORK,
};
use movejit_engine::runtime::natives::{with_extensions, NativeContext, NativeExtensions, TypeInfo};
use movejit_engine::runtime::{AccountAddress, GasMeter, Layout, Memory, StatusCode, Type, Value, VmError, VmResult};

/// `features::TRANSACTION_CONTEXT_EXTENSION`.
const TRANSACTION_CONTEXT_EXTENSION: u64 = 59;

fn payload() -> EntryFunctionPayload {
    EntryFunctionPayload {
        account_address: AccountAddress::from_u64(0xcafe),
        module_name: "shop".into(),
        function_name: "buy".into(),
        ty_arg_names: vec!["u64".into(), "0x1::string::String".into()],
        args: vec![vec![7, 0, 0, 0, 0, 0, 0, 0], vec![]],
    }
}

fn user(entry: Option<EntryFunctionPayload>, multisig: Option<MultisigPayload>, encrypted: bool) -> UserTransaction {
    UserTransaction {
        sender: AccountAddress::from_u64(0x5eed),
        secondary_signers: vec![],
        gas_payer: AccountAddress::from_u64(0x5eed),
        max_gas_amount: 1000,
        gas_unit_price: 100,
        chain_id: 4,
        timestamp_us: 1,
        transaction_index: 0,
        entry_function_payload: entry,
        multisig_payload: multisig,
        is_encrypted: encrypted,
    }
}

/// BCS of an `EntryFunctionPayload`.
fn payload_bcs(p: &EntryFunctionPayload) -> Vec<u8> {
    let mut out = p.account_address.0.to_vec();
    out.extend(bytes_arg(p.module_name.as_bytes()));
    out.extend(bytes_arg(p.function_name.as_bytes()));
    out.push(p.ty_arg_names.len() as u8);
    for t in &p.ty_arg_names {
        out.extend(bytes_arg(t.as_bytes()));
    }
    out.push(p.args.len() as u8);
    for a in &p.args {
        out.extend(bytes_arg(a));
    }
    out
}

#[test]
fn payload_natives_through_the_framework_agree_on_every_executor() {
    let mut fw = Framework::with_wrapper("module 0xcafe::unused\n");
    fw.enable_features(&[TRANSACTION_CONTEXT_EXTENSION]);
    let with = |user: Option<UserTransaction>, script_hash: Vec<u8>| {
        move || {
            let mut ext = NativeExtensions::new();
            let mut c = TransactionContext::new([3; 32], 4, user.clone());
            c.script_hash = script_hash.clone();
            ext.insert(c);
            ext
        }
    };
    let some = |b: Vec<u8>| [vec![1u8], b].concat();
    let multisig =
        MultisigPayload { multisig_address: AccountAddress::from_u64(0x3a1), entry_function_payload: Some(payload()) };
    let multisig_empty =
        MultisigPayload { multisig_address: AccountAddress::from_u64(0x3a1), entry_function_payload: None };
    let no_context: Outcome = Err((StatusCode::ABORTED, Some(0x3_0001)));
    type Row = (&'static str, Box<dyn Fn() -> NativeExtensions>, Outcome);
    let rows: Vec<Row> = vec![
        ("get_script_hash", Box::new(with(None, vec![])), Ok(vec![bytes_arg(&[])])),
        ("get_script_hash", Box::new(with(None, vec![9; 32])), Ok(vec![bytes_arg(&[9; 32])])),
        (
            "entry_function_payload",
            Box::new(with(Some(user(Some(payload()), None, false)), vec![])),
            Ok(vec![some(payload_bcs(&payload()))]),
        ),
        ("entry_function_payload", Box::new(with(Some(user(None, None, false)), vec![])), Ok(vec![vec![0]])),
        ("entry_function_payload", Box::new(with(None, vec![])), no_context.clone()),
        (
            "multisig_payload",
            Box::new(with(Some(user(None, Some(multisig.clone()), false)), vec![])),
            Ok(vec![some([multisig.multisig_address.0.to_vec(), some(payload_bcs(&payload()))].concat())]),
        ),
        (
            "multisig_payload",
            Box::new(with(Some(user(None, Some(multisig_empty.clone()), false)), vec![])),
            Ok(vec![some([multisig_empty.multisig_address.0.to_vec(), vec![0]].concat())]),
        ),
        ("multisig_payload", Box::new(with(Some(user(None, None, false)), vec![])), Ok(vec![vec![0]])),
        ("multisig_payload", Box::new(with(None, vec![])), no_context.clone()),
        ("is_encrypted_txn", Box::new(with(Some(user(None, None, true)), vec![])), Ok(vec![bool_bcs(true)])),
        ("is_encrypted_txn", Box::new(with(Some(user(None, None, false)), vec![])), Ok(vec![bool_bcs(false)])),
        ("is_encrypted_txn", Box::new(with(None, vec![])), no_context),
    ];
    for (f, ext, want) in rows {
        let got = fw.call_everywhere_with(&format!("0x1::transaction_context::{f}"), &[], &*ext);
        assert_eq!(got, want, "{f}");
    }
    // Without the feature: the Move side's ETRANSACTION_CONTEXT_EXTENSION_NOT_ENABLED.
    let plain = Framework::with_wrapper("module 0xcafe::unused\n");
    let got = plain.call_everywhere_with(
        "0x1::transaction_context::entry_function_payload",
        &[],
        &with(Some(user(None, None, false)), vec![]),
    );
    assert_eq!(got, Err((StatusCode::ABORTED, Some(0x3_0002))));
}

struct NoTypes;

impl TypeInfo for NoTypes {
    fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
        Err(VmError::invariant(format!("no layout for {ty}")))
    }
}

#[test]
fn state_storage_usage_is_the_hosts() {
    let registry = aptos_registry();
    let f = registry
        .get(&FRAMEWORK, "state_storage", "get_state_storage_usage_only_at_epoch_beginning")
        .expect("registered");
    let call = |ext: &mut NativeExtensions| {
        with_extensions(ext, || {
            let mut mem = Memory::default();
            let mut gas = GasMeter::unmetered();
            let mut cx = NativeContext { mem: &mut mem, gas: &mut gas, types: &NoTypes };
            f(&mut cx, &[], vec![])
        })
    };
    let mut ext = NativeExtensions::new();
    assert_eq!(call(&mut ext).map_err(|e| e.status), Err(StatusCode::VM_EXTENSION_ERROR));
    ext.insert(StateStorageUsage { items: 12, bytes: 3456 });
    assert_eq!(call(&mut ext).expect("usage"), vec![Value::Struct(vec![Value::U64(12), Value::U64(3456)])]);
}

/// BCS of `OnChainConsensusConfig::V5` as Aptos's genesis default builds it
/// (JolteonV2 over the default `ConsensusConfigV1`), with `vtxn` given.
fn genesis_consensus_config(vtxn: &[u8]) -> Vec<u8> {
    let mut b = vec![4, 2, 1];
    b.extend(10u64.to_le_bytes());
    b.extend(40u64.to_le_bytes());
    // LeaderReputation(ProposerAndVoterV2 { 1000, 10, 1, 10%, 10, 1, true, 5 })
    b.extend([2, 1]);
    for w in [1000u64, 10, 1] {
        b.extend(w.to_le_bytes());
    }
    b.extend(10u32.to_le_bytes());
    b.extend(10u64.to_le_bytes());
    b.extend(1u64.to_le_bytes());
    b.push(1);
    b.extend(5u32.to_le_bytes());
    b.extend(10u64.to_le_bytes());
    // quorum store, order votes
    b.extend([1, 1]);
    b.extend(vtxn);
    // window_size None, rand_check_enabled
    b.extend([0, 1]);
    b
}

#[test]
fn validator_txn_enabled_through_the_framework() {
    let vtxn_on = [vec![1u8], 2u64.to_le_bytes().to_vec(), 2_097_152u64.to_le_bytes().to_vec()].concat();
    let rows: Vec<(&str, Vec<u8>, bool)> = vec![
        ("genesis default", genesis_consensus_config(&vtxn_on), true),
        ("vtxn V0", genesis_consensus_config(&[0]), false),
        ("trailing byte", [genesis_consensus_config(&vtxn_on), vec![0]].concat(), false),
        ("not a config", b"nonsense".to_vec(), false),
    ];
    for (what, config, want) in rows {
        let mut fw = Framework::with_wrapper("module 0xcafe::unused\n");
        fw.publish_resource("consensus_config", "ConsensusConfig", bytes_arg(&config));
        let got = fw.call_everywhere("0x1::consensus_config::validator_txn_enabled", &[]);
        assert_eq!(got, Ok(vec![bool_bcs(want)]), "{what}");
    }
}
