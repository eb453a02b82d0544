//! Background compilation (executor `Auto`, `JitOptions::compile_threads`):
//! calls are interpreted while their code compiles on another thread and
//! switch to compiled code whenever it is ready, so the tier a call runs on
//! changes at points the test does not choose. Every Aptos conformance call,
//! repeated over one engine while its code arrives, must give exactly what
//! the interpreter gives: returns, errors, gas (unit schedule and Aptos's)
//! and change sets.

use movejit_engine::runtime::gas::aptos::AptosPricing;
use movejit_engine::runtime::{ChangeSet, CostTable, GasMeter, VmError};
use movejit_engine::ExecutionResult;
use movejit_engine::{new_engine, new_engine_with_cache, EngineConfig, ExecutorKind, JitOptions};
use movejit_testkit::{load_aptos_cases, CaseCall};
use std::time::{Duration, Instant};

/// What a call and its session's finish give, and the gas it used.
type Observed = (Result<ExecutionResult, VmError>, Result<ChangeSet, VmError>, u64);

/// The meters every call runs under: none, the unit schedule, Aptos's.
#[derive(Clone, Copy, Debug)]
enum Meter {
    Unmetered,
    Unit,
    Aptos,
}

impl Meter {
    fn meter(self) -> GasMeter {
        match self {
            Meter::Unmetered => GasMeter::unmetered(),
            Meter::Unit => GasMeter::new(CostTable::default(), 1 << 40),
            Meter::Aptos => {
                let pricing = AptosPricing::v50();
                let balance = pricing.limits.to_internal(2_000_000);
                GasMeter::aptos(pricing, balance)
            }
        }
    }
}

const METERS: [Meter; 3] = [Meter::Unmetered, Meter::Unit, Meter::Aptos];

/// How a call's session ran compiled code: any at all, and any from the
/// hint an earlier session left.
#[derive(Clone, Copy, Default)]
struct Ran {
    compiled: bool,
    from_hint: bool,
}

fn run(engine: &movejit_engine::Engine, c: &CaseCall, meter: Meter) -> (Observed, Ran) {
    let mut gas = meter.meter();
    let mut session = engine.new_session(&c.storage);
    let r = session.execute_function(&c.module, &c.function, &c.ty_args, &c.args, &mut gas);
    let stats = session.compiled_stats().unwrap_or_default();
    let ran = Ran { compiled: stats.compiled_functions > 0, from_hint: stats.from_hint > 0 };
    ((r, session.finish(), gas.used()), ran)
}

#[test]
fn calls_agree_with_the_interpreter_while_code_arrives() {
    let cases = load_aptos_cases();
    assert!(cases.len() >= 2000, "expected the full case file, got {}", cases.len());
    let calls: Vec<CaseCall> = cases.iter().map(|c| c.call().unwrap_or_else(|e| panic!("{}: {e}", c.id))).collect();
    let interp = new_engine(EngineConfig { executor: ExecutorKind::Interpreter, ..EngineConfig::aptos() });
    let jit = JitOptions { compile_threads: 1, ..JitOptions::default() };
    let (auto, cache) =
        new_engine_with_cache(EngineConfig { executor: ExecutorKind::Auto, jit, ..EngineConfig::aptos() });
    let cache = cache.expect("auto has a code cache");
    let want: Vec<Vec<Observed>> =
        calls.iter().map(|c| METERS.iter().map(|m| run(&interp, c, *m).0).collect()).collect();

    let (mut checked, mut bad) = (0usize, Vec::new());
    // Calls that ran compiled code, per round, and those that ran it from
    // a hint.
    let mut ran_compiled: Vec<usize> = Vec::new();
    let mut ran_from_hint: Vec<usize> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(300);
    for round in 0.. {
        ran_compiled.push(0);
        ran_from_hint.push(0);
        for ((case, c), want) in cases.iter().zip(&calls).zip(&want) {
            for (m, want) in METERS.iter().zip(want) {
                let (got, ran) = run(&auto, c, *m);
                ran_compiled[round] += usize::from(ran.compiled);
                ran_from_hint[round] += usize::from(ran.from_hint);
                checked += 1;
                if got != *want && bad.len() < 10 {
                    bad.push(format!("{} (round {round}, {m:?}): {got:?}\n  interp: {want:?}", case.id));
                }
            }
        }
        let s = cache.stats();
        // Until the compiler thread has answered every request (and at
        // least twice, so later rounds run what earlier ones queued).
        if round >= 1 && s.compiled + s.not_compiled >= s.queued {
            break;
        }
        assert!(Instant::now() < deadline, "background compiles did not finish: {s:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(bad.is_empty(), "{} of {checked} calls differ:\n{}", bad.len(), bad.join("\n"));
    let s = cache.stats();
    assert!(s.queued >= 100 && s.compiled >= 100, "little was compiled in the background: {s:?}");
    // The first call of an instance is interpreted while its code compiles;
    // later rounds run the code that arrived.
    let (first, last) = (ran_compiled[0], ran_compiled[ran_compiled.len() - 1]);
    assert!(first < last && last >= 1000, "calls that ran compiled code per round: {ran_compiled:?}");
    // Code compiled in the background reaches later sessions over the same
    // modules through the hint the first session left (no look-up).
    let hinted = ran_from_hint[ran_from_hint.len() - 1];
    assert!(hinted >= 100, "calls that ran code from a hint per round: {ran_from_hint:?}");
    eprintln!(
        "{checked} calls agreed; calls that ran compiled code per round: {ran_compiled:?}, from a hint: \
         {ran_from_hint:?}; code cache: {s:?}"
    );
}
