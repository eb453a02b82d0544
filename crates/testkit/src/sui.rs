//! Replay of the Sui transactional-test data (shared/conformance/sui) on
//! any engine: genesis, every task of a test in order (publish tasks
//! through `Session::publish_bundle`, calls through `execute_function`, each
//! in a fresh session over the test's store), and the comparison of a
//! task's result with the real Sui VM's (loose: ok + status + abort code +
//! printed returns; strict: also sub-status, location and offsets).

use crate::shared_dir;
use movejit_engine::runtime::fmt::print_value;
use movejit_engine::runtime::{bcs, CostTable, GasMeter, InMemoryStorage, ModuleId, Type, VmError};
use movejit_engine::{Engine, ExecutionResult};
use movejit_format::{AccountAddress, StatusCode};
use serde_json::Value as Json;
use std::path::PathBuf;

/// What an engine produced for one task, in the expectation's terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiGot {
    pub ok: bool,
    pub status: Option<String>,
    pub sub_status: Option<u64>,
    /// Short module name (`0x2::m`) or `undefined`; empty on success.
    pub location: String,
    pub offsets: Vec<(u16, u16)>,
    pub returns: Vec<String>,
    pub mutrefs: Vec<(u64, String)>,
    /// The error's diagnostic text (not compared with the expectation).
    pub message: Option<String>,
}

impl SuiGot {
    fn success() -> SuiGot {
        SuiGot {
            ok: true,
            status: None,
            sub_status: None,
            location: String::new(),
            offsets: vec![],
            returns: vec![],
            mutrefs: vec![],
            message: None,
        }
    }
}

/// One replayed task.
#[derive(Clone, Debug)]
pub struct SuiTask {
    /// `suite/category/test#index`.
    pub id: String,
    /// `suite/category`.
    pub category: String,
    /// `call` / `publish` / `publish_and_call`.
    pub action: String,
    pub expect: Json,
    pub got: SuiGot,
    /// Distinct function instances that ran compiled / interpreted (calls on
    /// an engine with compiled code attached).
    pub ran_compiled: usize,
    pub ran_interpreted: usize,
    /// A call's raw result and the gas it used (`None` for a publish).
    pub call: Option<(Result<ExecutionResult, VmError>, u64)>,
}

pub fn sui_dir() -> PathBuf {
    shared_dir().join("conformance/sui")
}

pub fn strs(j: &Json) -> Vec<String> {
    j.as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect()).unwrap_or_default()
}

fn short(long: &str) -> String {
    match long.split_once("::") {
        Some((a, n)) => {
            let t = a.trim_start_matches("0x").trim_start_matches('0');
            format!("0x{}::{}", if t.is_empty() { "0" } else { t }, n)
        }
        None => long.to_string(),
    }
}

pub fn sui_got_err(e: VmError) -> SuiGot {
    let location = e.location.as_ref().map(|l| short(&l.module)).unwrap_or_else(|| "undefined".into());
    let offsets = match &e.location {
        Some(l) if e.status.name() != "MISSING_DEPENDENCY" && e.status.name() != "LINKER_ERROR" => {
            vec![(l.function_index, l.code_offset)]
        }
        _ => vec![],
    };
    SuiGot {
        ok: false,
        status: Some(e.status.name().to_string()),
        sub_status: e.sub_status,
        location,
        offsets,
        returns: vec![],
        mutrefs: vec![],
        message: e.message,
    }
}

pub fn sui_got_ok(r: ExecutionResult) -> SuiGot {
    let show = |b: &Vec<u8>, l| bcs::deserialize(b, l).map(|v| print_value(&v, l)).unwrap_or_else(|e| format!("<{e}>"));
    SuiGot {
        returns: r.returns.iter().zip(&r.return_layouts).map(|(b, l)| show(b, l)).collect(),
        mutrefs: r.mutrefs.iter().zip(&r.mutref_layouts).map(|((i, b), l)| (*i as u64, show(b, l))).collect(),
        ..SuiGot::success()
    }
}

/// Every test of `tests.jsonl`.
pub fn sui_tests() -> Vec<Json> {
    let text = std::fs::read_to_string(sui_dir().join("tests.jsonl")).expect("tests.jsonl");
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).expect("test json")).collect()
}

fn read(p: &str) -> Vec<u8> {
    std::fs::read(sui_dir().join(p)).unwrap_or_default()
}

/// The store every test starts from: the genesis modules, one per publish,
/// sender 0x1.
pub fn sui_genesis(engine: &Engine) -> InMemoryStorage {
    let path = sui_dir().join("genesis/genesis.json");
    let genesis: Json = serde_json::from_str(&std::fs::read_to_string(path).expect("genesis")).expect("json");
    let mut base = InMemoryStorage::default();
    for m in strs(&genesis["modules"]) {
        let mut s = engine.new_session(&base);
        let ids = s.publish_bundle(&[read(&m)], AccountAddress::from_u64(1)).expect("genesis publishes");
        for (id, b) in ids {
            base.publish(id, b);
        }
    }
    base
}

/// Runs every task of `test` in order on `engine`, from `base`.
pub fn replay_sui_test(engine: &Engine, base: &InMemoryStorage, test: &Json) -> Vec<SuiTask> {
    let category = format!("{}/{}", test["suite"].as_str().unwrap_or(""), test["category"].as_str().unwrap_or(""));
    let mut storage = base.clone();
    let mut out = Vec::new();
    for task in test["tasks"].as_array().cloned().unwrap_or_default() {
        let action = task["vm_action"].as_str().unwrap_or("none");
        if action == "none" {
            continue;
        }
        let sender = task["sender"].as_str().and_then(AccountAddress::parse);
        let mut got = None;
        let (mut ran_compiled, mut ran_interpreted) = (0, 0);
        let mut call = None;
        if action == "publish" || action == "publish_and_call" {
            let bundle: Vec<Vec<u8>> = strs(&task["modules"]).iter().map(|p| read(p)).collect();
            let mut s = engine.new_session(&storage);
            match s.publish_bundle(&bundle, sender.unwrap_or_default()) {
                Ok(ids) => {
                    for (id, b) in ids {
                        storage.publish(id, b);
                    }
                    if action == "publish" {
                        got = Some(SuiGot::success());
                    }
                }
                Err(e) => got = Some(sui_got_err(e)),
            }
        }
        let got = got.unwrap_or_else(|| {
            let f = task["function"].as_str().unwrap_or("");
            let mut parts = f.rsplitn(3, "::");
            let fname = parts.next().unwrap_or("");
            let mname = parts.next().unwrap_or("");
            let addr = parts.next().and_then(AccountAddress::parse).unwrap_or_default();
            let ty_args: Option<Vec<Type>> =
                strs(&task["type_args_resolved"]).iter().map(|s| Type::parse_tag(s)).collect();
            let args: Vec<Vec<u8>> =
                strs(&task["call_args_bcs_hex"]).iter().map(|h| hex::decode(h).unwrap_or_default()).collect();
            let mut gas = match task["gas_budget"].as_u64() {
                Some(b) => GasMeter::new(CostTable::default(), b),
                None => GasMeter::unmetered(),
            };
            let mut s = engine.new_session(&storage);
            let r = match ty_args {
                Some(ta) => s.execute_function(&ModuleId::new(addr, mname), fname, &ta, &args, &mut gas),
                None => Err(VmError::new(StatusCode::TYPE_RESOLUTION_FAILURE)),
            };
            if let Some(st) = s.compiled_stats() {
                (ran_compiled, ran_interpreted) = (st.compiled_functions, st.interpreted_functions);
            }
            let got = match &r {
                Ok(r) => sui_got_ok(r.clone()),
                Err(e) => sui_got_err(e.clone()),
            };
            call = Some((r, gas.used()));
            got
        });
        out.push(SuiTask {
            id: format!("{}#{}", test["id"].as_str().unwrap_or(""), task["index"]),
            category: category.clone(),
            action: action.to_string(),
            expect: task["expect"].clone(),
            got,
            ran_compiled,
            ran_interpreted,
            call,
        });
    }
    out
}

/// Agrees with the real VM on ok, status, abort code and printed results.
pub fn sui_loose(t: &SuiTask) -> bool {
    let (e, got) = (&t.expect, &t.got);
    let want_ok = e["ok"].as_bool().unwrap_or(false);
    let want_status = e["major_status"].as_str().map(String::from);
    let want_mutrefs: Vec<(u64, String)> = e["mutable_ref_outputs"]
        .as_array()
        .map(|a| a.iter().map(|p| (p[0].as_u64().unwrap_or(0), p[1].as_str().unwrap_or("").to_string())).collect())
        .unwrap_or_default();
    got.ok == want_ok
        && (want_ok || got.status == want_status)
        && (!want_ok || (got.returns == strs(&e["return_values"]) && got.mutrefs == want_mutrefs))
        && (want_status.as_deref() != Some("ABORTED") || got.sub_status == e["abort_code"].as_u64())
}

/// The offsets the real VM reported for a failure.
pub fn sui_want_offsets(t: &SuiTask) -> Vec<(u16, u16)> {
    t.expect["offsets"]
        .as_array()
        .map(|a| a.iter().map(|p| (p[0].as_u64().unwrap_or(0) as u16, p[1].as_u64().unwrap_or(0) as u16)).collect())
        .unwrap_or_default()
}

/// Loose agreement plus sub-status, location and offsets of failures.
pub fn sui_strict(t: &SuiTask) -> bool {
    let (e, got) = (&t.expect, &t.got);
    sui_loose(t)
        && (e["ok"].as_bool().unwrap_or(false)
            || (got.sub_status == e["sub_status"].as_u64()
                && Some(got.location.as_str()) == e["location"].as_str()
                && got.offsets == sui_want_offsets(t)))
}
