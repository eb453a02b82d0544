//! Calls on a warm engine (what a node runs: a new session per call over
//! one engine, then `finish`) give what the first call gave, on every
//! executor: returns, `&mut` results, layouts, gas, errors (status,
//! sub-status, message, location) and change sets. Later sessions take
//! the warm paths (entry plans, and on `Jit` the direct compiled entry of
//! `movejit_interp`'s `flat/direct.rs`), so every Aptos conformance case
//! runs in three rounds over engines that keep their plans and code.

use movejit_engine::runtime::{
    AccountAddress, ChangeSet, GasMeter, InMemoryStorage, ModuleId, StatusCode, Type, VmError,
};
use movejit_engine::ExecutionResult;
use movejit_engine::{new_engine, Engine, EngineConfig, ExecutorKind, JIT_NOT_COMPILED};
use movejit_testkit::{load_aptos_cases, Case};

/// Everything a call and its session's finish give.
type Observed = (Result<ExecutionResult, VmError>, Result<ChangeSet, VmError>);

struct Call {
    storage: InMemoryStorage,
    module: ModuleId,
    function: String,
    type_args: Vec<Type>,
    args: Vec<Vec<u8>>,
}

fn call_of(case: &Case) -> Call {
    let mut storage = InMemoryStorage::default();
    for p in &case.modules {
        let bytes = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let m = movejit_format::decode_module(&bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        storage.publish(ModuleId::new(*m.address(), m.name()), bytes);
    }
    let mut parts = case.function.rsplitn(3, "::");
    let (f, m, a) = (parts.next(), parts.next(), parts.next());
    let (Some(f), Some(m), Some(a)) = (f, m, a) else { panic!("{}: function name", case.id) };
    let address = AccountAddress::parse(a).unwrap_or_else(|| panic!("{}: address", case.id));
    Call {
        storage,
        module: ModuleId::new(address, m),
        function: f.to_string(),
        type_args: case.type_args.iter().map(|t| Type::parse_tag(t).expect("type tag")).collect(),
        args: case.args.iter().map(|a| hex::decode(a).expect("hex argument")).collect(),
    }
}

fn run(engine: &Engine, c: &Call) -> Observed {
    let mut session = engine.new_session(&c.storage);
    let r = session.execute_function(&c.module, &c.function, &c.type_args, &c.args, &mut GasMeter::unmetered());
    (r, session.finish())
}

fn not_compiled(o: &Observed) -> bool {
    matches!(&o.0, Err(e) if e.status == StatusCode::FEATURE_NOT_ENABLED
        && e.message.as_deref().is_some_and(|m| m.starts_with(JIT_NOT_COMPILED)))
}

#[test]
fn warm_calls_repeat_the_first_call_on_every_executor() {
    let cases = load_aptos_cases();
    assert!(cases.len() >= 2000, "expected the full case file, got {}", cases.len());
    let calls: Vec<Call> = cases.iter().map(call_of).collect();
    let engine = |executor| new_engine(EngineConfig { executor, ..EngineConfig::aptos() });
    let executors = [
        ("interp", engine(ExecutorKind::Interpreter)),
        ("jit", engine(ExecutorKind::Jit)),
        ("auto", engine(ExecutorKind::Auto)),
    ];
    // The reference: each case's first call, on a fresh engine of its own.
    let first: Vec<Observed> = calls.iter().map(|c| run(&engine(ExecutorKind::Interpreter), c)).collect();
    let (mut checked, mut bad) = (0usize, Vec::new());
    for round in 0..3 {
        for ((case, c), want) in cases.iter().zip(&calls).zip(&first) {
            for (name, e) in &executors {
                let got = run(e, c);
                if *name == "jit" && not_compiled(&got) {
                    continue;
                }
                checked += 1;
                if got != *want {
                    bad.push(format!("{name} round {round} {}: {got:?}\n  first: {want:?}", case.id));
                }
            }
        }
    }
    for b in bad.iter().take(20) {
        eprintln!("DIFF {b}");
    }
    assert!(bad.is_empty(), "{} of {checked} warm calls differ from the first", bad.len());
}
