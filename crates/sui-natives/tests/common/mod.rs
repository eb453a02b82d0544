//! Calling the real Sui framework (`../shared/corpus/sui`: move-stdlib at
//! 0x1, sui-framework at 0x2) with the Sui natives, on the
//! interpreter, the JIT (a call that does not compile fails the test) and
//! `auto`, unmetered and metered, and checking that every
//! executor ends each call the same way, with the same gas and the same
//! object effects.

#![allow(dead_code)]

use movejit_engine::runtime::natives::NativeExtensions;
use movejit_engine::runtime::{
    AccountAddress, CostTable, GasMeter, InMemoryStorage, ModuleId, StatusCode, Type, VmError,
};
use movejit_engine::{new_engine, EngineConfig, ExecutorKind};
use movejit_sui_natives::{run_transaction, ObjectEffects, ObjectRuntime};
use std::path::{Path, PathBuf};

/// `../shared` from the workspace root.
pub fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// The executors every call runs on, by label, the reference (the
/// interpreter) first.
pub const EXECUTORS: [(&str, ExecutorKind); 3] =
    [("interp", ExecutorKind::Interpreter), ("jit", ExecutorKind::Jit), ("auto", ExecutorKind::Auto)];

const BUDGET: u64 = 100_000_000;

/// What a call ends with: BCS returns, or (status, abort code).
pub type Outcome = Result<Vec<Vec<u8>>, (StatusCode, Option<u64>)>;

/// One call of a transaction sequence.
pub struct Call {
    pub function: &'static str,
    pub ty_args: Vec<Type>,
    pub args: Vec<Vec<u8>>,
}

pub fn call(function: &'static str, ty_args: &[&str], args: Vec<Vec<u8>>) -> Call {
    let ty_args = ty_args.iter().map(|t| Type::parse_tag(t).unwrap_or_else(|| panic!("type {t}"))).collect();
    Call { function, ty_args, args }
}

/// What a sequence of calls did on one executor.
#[derive(Debug, PartialEq)]
pub struct Run {
    pub outcomes: Vec<Outcome>,
    pub gas: Vec<u64>,
    pub effects: ObjectEffects,
    /// Dynamic-field children at the end: (id, parent, BCS-free debug form).
    pub children: Vec<String>,
}

pub struct Sui {
    store: InMemoryStorage,
}

impl Sui {
    pub fn new() -> Sui {
        let mut store = InMemoryStorage::default();
        for pkg in ["move-stdlib", "sui-framework"] {
            let dir = shared().join("corpus/sui").join(pkg);
            for e in std::fs::read_dir(&dir).expect("corpus folder").flatten() {
                let p = e.path();
                if p.extension().is_none_or(|e| e != "mv") {
                    continue;
                }
                let bytes = std::fs::read(&p).expect("module");
                let m = movejit_format::decode_module(&bytes).unwrap_or_else(|e| panic!("{}: {e:?}", p.display()));
                store.publish(ModuleId::new(*m.address(), m.name()), bytes);
            }
        }
        Sui { store }
    }

    /// Runs `calls` in order, each a transaction of its own
    /// ([`run_transaction`]) over one set of extensions made by `setup`, on
    /// one executor.
    pub fn run_on(
        &self,
        executor: ExecutorKind,
        metered: bool,
        calls: &[Call],
        setup: &dyn Fn(&mut NativeExtensions),
    ) -> Run {
        let config = EngineConfig { natives: movejit_sui_natives::sui_registry(), executor, ..EngineConfig::sui() };
        let engine = new_engine(config);
        let mut ext = NativeExtensions::new();
        setup(&mut ext);
        let mut run =
            Run { outcomes: Vec::new(), gas: Vec::new(), effects: ObjectEffects::default(), children: Vec::new() };
        for c in calls {
            let (module, name) = split(c.function);
            let mut session = engine.new_session(&self.store);
            let mut gas = if metered { GasMeter::new(CostTable::default(), BUDGET) } else { GasMeter::unmetered() };
            let r =
                run_transaction(&mut ext, || session.execute_function(&module, name, &c.ty_args, &c.args, &mut gas));
            run.gas.push(gas.used());
            run.outcomes.push(r.map(|r| r.returns).map_err(|e| outcome_of_error(c.function, executor, e)));
        }
        let rt = ext.get_or_default::<ObjectRuntime>();
        run.effects = rt.take_effects();
        run.children = rt
            .children()
            .entries()
            .expect("no child left parked")
            .into_iter()
            .map(|(id, parent, ty, v)| format!("{id}:{parent}:{ty}:{v:?}"))
            .collect();
        run
    }

    /// [`Sui::run_on`] on every executor, unmetered and metered: asserts they
    /// agree (outcomes, effects, children; gas when metered) and returns the run.
    pub fn run(&self, calls: &[Call], setup: &dyn Fn(&mut NativeExtensions)) -> Run {
        let mut first: Option<Run> = None;
        for metered in [false, true] {
            let mut gas_seen: Option<Vec<u64>> = None;
            for (label, executor) in EXECUTORS {
                let run = self.run_on(executor, metered, calls, setup);
                if metered {
                    match &gas_seen {
                        None => gas_seen = Some(run.gas.clone()),
                        Some(g) => assert_eq!(&run.gas, g, "gas on {label}"),
                    }
                }
                match &first {
                    None => first = Some(run),
                    Some(f) => {
                        assert_eq!(run.outcomes, f.outcomes, "outcomes on {label} (metered {metered})");
                        assert_eq!(run.effects, f.effects, "effects on {label} (metered {metered})");
                        assert_eq!(run.children, f.children, "children on {label} (metered {metered})");
                    }
                }
            }
        }
        first.expect("ran")
    }
}

fn outcome_of_error(function: &str, executor: ExecutorKind, e: VmError) -> (StatusCode, Option<u64>) {
    let message = format!("{e:?}");
    assert!(
        !message.contains(movejit_engine::JIT_NOT_COMPILED),
        "{function} was not compiled on {executor:?}: {message}"
    );
    (e.status, e.sub_status)
}

/// `0xADDR::module::function` → (module id, function name).
pub fn split(f: &str) -> (ModuleId, &str) {
    let mut parts = f.split("::");
    let (a, m, n) = (parts.next().expect("address"), parts.next().expect("module"), parts.next().expect("function"));
    (ModuleId::new(AccountAddress::parse(a).expect("address"), m), n)
}

pub fn uleb(mut n: usize, out: &mut Vec<u8>) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// BCS of a `vector<u8>`.
pub fn bytes(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    uleb(b.len(), &mut out);
    out.extend_from_slice(b);
    out
}

pub fn u64_bcs(n: u64) -> Vec<u8> {
    n.to_le_bytes().to_vec()
}

pub fn addr(n: u64) -> AccountAddress {
    AccountAddress::from_u64(n)
}

/// BCS of a `TxContext` (sender, tx_hash, epoch, epoch_timestamp_ms, ids_created).
pub fn tx_context_bcs(sender: AccountAddress, digest: &[u8; 32], epoch: u64, ts: u64, ids: u64) -> Vec<u8> {
    let mut out = sender.0.to_vec();
    out.extend(bytes(digest));
    out.extend(u64_bcs(epoch));
    out.extend(u64_bcs(ts));
    out.extend(u64_bcs(ids));
    out
}

/// An abort with `code`.
pub fn abort(code: u64) -> Outcome {
    Err((StatusCode::ABORTED, Some(code)))
}
