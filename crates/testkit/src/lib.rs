//! Test support shared by the executors' test suites (interpreter, engine,
//! CLI): the Aptos oracle cases of `../shared/conformance/aptos` (case →
//! expected result) with a runner generic over the executor, so the same
//! table runs on every executor and executors can be compared case by case;
//! the Sui conformance tasks ([`sui`]); and modules written as `.masm` text
//! published into a storage ([`masm`]); the corpus survey of which function
//! instances compile ([`survey`]); executors compared at many gas
//! balances ([`balances`]).
//!
//! Test-only: it may panic on a malformed reference file, and assumes
//! `../shared` sits beside the checkout.

pub mod balances;
pub mod masm;
pub mod sui;
pub mod survey;

use movejit_engine::runtime::{GasMeter, InMemoryStorage, ModuleId, Type, VmError};
use movejit_engine::{Engine, ExecutionResult};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `/work/shared` seen from this crate (workspace root, then `../shared`).
pub fn shared_dir() -> PathBuf {
    let mut p = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    while !p.join("Cargo.lock").exists() || !p.join("crates").exists() {
        if !p.pop() {
            break;
        }
    }
    p.join("../shared")
}

/// One oracle case.
#[derive(Debug, Clone)]
pub struct Case {
    pub id: String,
    pub family: String,
    pub modules: Vec<PathBuf>,
    pub function: String,
    pub type_args: Vec<String>,
    pub args: Vec<String>,
    pub expect: Json,
    /// The real VM's error message (`info.vm_message`), when it gave one.
    pub vm_message: Option<String>,
}

pub fn load_aptos_cases() -> Vec<Case> {
    let dir = shared_dir().join("conformance/aptos");
    let text = std::fs::read_to_string(dir.join("cases.jsonl")).expect("cases.jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let j: Json = serde_json::from_str(l).expect("case json");
            let strs = |k: &str| -> Vec<String> {
                j[k].as_array()
                    .map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
                    .unwrap_or_default()
            };
            Case {
                id: j["id"].as_str().unwrap_or_default().to_string(),
                family: j["family"].as_str().unwrap_or_default().to_string(),
                modules: strs("modules").into_iter().map(|m| dir.join(m)).collect(),
                function: j["function"].as_str().unwrap_or_default().to_string(),
                type_args: strs("type_args"),
                args: strs("args"),
                expect: j["expect"].clone(),
                vm_message: j["info"]["vm_message"].as_str().map(String::from),
            }
        })
        .collect()
}

/// What one executor produced for a case, in the oracle's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub status: String,
    pub abort_code: Option<u64>,
    pub sub_status: Option<u64>,
    pub location: Option<(String, u16, u16)>,
    pub message: Option<String>,
    pub returns: Vec<String>,
    pub mutrefs: Vec<String>,
}

fn short_module(long: &str) -> String {
    // "0x000..cafe::m" → "0xcafe::m"
    match long.split_once("::") {
        Some((a, n)) => {
            let t = a.trim_start_matches("0x").trim_start_matches('0');
            format!("0x{}::{}", if t.is_empty() { "0" } else { t }, n)
        }
        None => long.to_string(),
    }
}

pub fn outcome_of(r: Result<ExecutionResult, VmError>) -> Outcome {
    match r {
        Ok(res) => Outcome {
            status: "EXECUTED".into(),
            abort_code: None,
            sub_status: None,
            location: None,
            message: None,
            returns: res.returns.iter().map(hex::encode).collect(),
            mutrefs: res.mutrefs.iter().map(|(_, b)| hex::encode(b)).collect(),
        },
        Err(e) => Outcome {
            status: e.status.name().to_string(),
            abort_code: (e.status.name() == "ABORTED").then_some(e.sub_status).flatten(),
            sub_status: e.sub_status,
            location: e.location.map(|l| (short_module(&l.module), l.function_index, l.code_offset)),
            message: e.message,
            returns: vec![],
            mutrefs: vec![],
        },
    }
}

/// An executor the case table can run on. The interpreter implements it
/// here; the JIT will implement it the same way, and `compare_executors`
/// checks both give the same outcome for every case.
pub trait CaseExecutor {
    fn name(&self) -> &'static str;
    fn run(&self, case: &Case) -> Result<Outcome, String>;
}

/// The reference interpreter as a [`CaseExecutor`].
pub struct InterpExecutor(pub Engine);

impl CaseExecutor for InterpExecutor {
    fn name(&self) -> &'static str {
        "interp"
    }
    fn run(&self, case: &Case) -> Result<Outcome, String> {
        run_on_interp(&self.0, case)
    }
}

/// Cases where two executors disagree with each other (id, a's, b's).
pub fn compare_executors(a: &dyn CaseExecutor, b: &dyn CaseExecutor, cases: &[Case]) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for c in cases {
        let (x, y) = (a.run(c), b.run(c));
        if x != y {
            out.push((c.id.clone(), format!("{x:?}"), format!("{y:?}")));
        }
    }
    out
}

/// A case ready to call: its modules published into fresh storage, the
/// function, its type arguments and BCS arguments.
pub struct CaseCall {
    pub storage: InMemoryStorage,
    pub module: ModuleId,
    pub function: String,
    pub ty_args: Vec<Type>,
    pub args: Vec<Vec<u8>>,
}

impl Case {
    /// The case as a call over its own storage.
    pub fn call(&self) -> Result<CaseCall, String> {
        let mut storage = InMemoryStorage::default();
        for p in &self.modules {
            let bytes = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
            let m = movejit_format::decode_module(&bytes).map_err(|e| format!("{}: {e}", p.display()))?;
            storage.publish(ModuleId::new(*m.address(), m.name()), bytes);
        }
        let mut parts = self.function.rsplitn(3, "::");
        let fname = parts.next().ok_or("function")?;
        let mname = parts.next().ok_or("module")?;
        let addr = parts.next().ok_or("address")?;
        let addr = movejit_format::AccountAddress::parse(addr).ok_or("address")?;
        let ty_args = self
            .type_args
            .iter()
            .map(|t| Type::parse_tag(t).ok_or_else(|| format!("type tag {t}")))
            .collect::<Result<_, _>>()?;
        let args = self.args.iter().map(|a| hex::decode(a).map_err(|e| e.to_string())).collect::<Result<_, _>>()?;
        Ok(CaseCall { storage, module: ModuleId::new(addr, mname), function: fname.to_string(), ty_args, args })
    }
}

impl CaseCall {
    /// Runs the call once in a new session of `engine`, metered by `gas`.
    pub fn run(&self, engine: &Engine, gas: &mut GasMeter) -> Result<ExecutionResult, VmError> {
        let mut session = engine.new_session(&self.storage);
        session.execute_function(&self.module, &self.function, &self.ty_args, &self.args, gas)
    }
}

/// Runs a case on the interpreter: publish its modules into fresh storage,
/// call the function once, unmetered.
pub fn run_on_interp(engine: &Engine, case: &Case) -> Result<Outcome, String> {
    Ok(outcome_of(case.call()?.run(engine, &mut GasMeter::unmetered())))
}

/// The differences between an outcome and the case's expectation (empty = agree).
pub fn compare(case: &Case, got: &Outcome) -> Vec<String> {
    let e = &case.expect;
    let mut diffs = Vec::new();
    let status = e["status"].as_str().unwrap_or_default();
    if got.status != status {
        diffs.push(format!("status {} != expected {status} ({:?})", got.status, got.message));
        return diffs;
    }
    if let Some(code) = e["abort_code"].as_u64() {
        if got.abort_code != Some(code) {
            diffs.push(format!("abort code {:?} != {code}", got.abort_code));
        }
    }
    if let Some(s) = e["sub_status"].as_u64() {
        if got.sub_status != Some(s) {
            diffs.push(format!("sub-status {:?} != {s}", got.sub_status));
        }
    }
    if let Some(loc) = e["location"].as_str() {
        let want = (
            loc.to_string(),
            e["function_index"].as_u64().unwrap_or(0) as u16,
            e["code_offset"].as_u64().unwrap_or(0) as u16,
        );
        if got.location.as_ref() != Some(&want) {
            diffs.push(format!("location {:?} != {want:?}", got.location));
        }
    }
    if let Some(m) = e["abort_message_hex"].as_str() {
        let got_m = got.message.as_ref().map(|s| hex::encode(s.as_bytes()));
        if got_m.as_deref() != Some(m) {
            diffs.push(format!("abort message {got_m:?} != {m}"));
        }
    }
    if status == "EXECUTED" {
        let want: Vec<String> = e["returns"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
            .unwrap_or_default();
        if got.returns != want {
            diffs.push(format!("returns {:?} != {want:?}", got.returns));
        }
        let want: Vec<String> = e["mutrefs"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
            .unwrap_or_default();
        if got.mutrefs != want {
            diffs.push(format!("mutrefs {:?} != {want:?}", got.mutrefs));
        }
    }
    diffs
}

/// Agreement per family: (agree, total).
pub type Tally = BTreeMap<String, (usize, usize)>;

pub fn print_tally(title: &str, t: &Tally) {
    let (a, n) = t.values().fold((0, 0), |(a, n), (x, y)| (a + x, n + y));
    eprintln!("{title}: {a}/{n} agree");
    for (fam, (x, y)) in t {
        eprintln!("  {fam:<18} {x:>4}/{y:<4}");
    }
}
