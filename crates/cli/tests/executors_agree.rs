//! Every executor gives the same `movejit run --json` object, `engine`
//! aside: the interpreter, `jit` and `auto`, on every Aptos
//! conformance case (through the command's own call path, in-process) and
//! every Sui conformance task (replayed on the command's engines, each call
//! rendered by the command's JSON code). Status, sub-status, abort code,
//! message, location, returns, `&mut` results and gas must all agree.

use movejit_cli::run::{before_run_label, EngineChoice, GasUsed, Ran, Request, Runner};
use movejit_engine::JitOptions;
use movejit_format::StatusFlavour;
use movejit_testkit::sui::{replay_sui_test, sui_genesis, sui_tests};
use serde_json::Value as Json;

/// The executors compared, the reference (the interpreter) first.
fn runners() -> Vec<(&'static str, EngineChoice, Runner)> {
    let jit = JitOptions::default;
    vec![
        ("interp", EngineChoice::Interp, Runner::new(EngineChoice::Interp, jit())),
        ("jit", EngineChoice::Jit, Runner::new(EngineChoice::Jit, jit())),
        ("auto", EngineChoice::Auto, Runner::new(EngineChoice::Auto, jit())),
    ]
}

fn without_engine(mut j: Json) -> Json {
    j.as_object_mut().map(|o| o.remove("engine"));
    j
}

/// Compares every executor's object with the reference's; returns the
/// differences (at most a few per call).
fn compare(id: &str, objects: &[(&str, Json)], bad: &mut Vec<String>) {
    let (_, want) = &objects[0];
    for (name, got) in &objects[1..] {
        if got != want {
            bad.push(format!("{id} on {name}:\n    {got}\n    interp: {want}"));
        }
    }
}

fn report(what: &str, n: usize, with_message: usize, bad: &[String]) {
    eprintln!("{what}: {n} calls, {with_message} with a message, {} differ", bad.len());
    for b in bad.iter().take(30) {
        eprintln!("DIFF {b}");
    }
}

#[test]
fn aptos_cases_identical_json_on_every_executor() {
    let cases = movejit_testkit::load_aptos_cases();
    assert!(cases.len() >= 2441, "expected the full case file");
    let mut runners = runners();
    let (mut bad, mut with_message) = (Vec::new(), 0);
    for case in &cases {
        let request = Request {
            modules: case.modules.iter().map(|p| (p.clone(), std::fs::read(p).expect("case module"))).collect(),
            function: Some(case.function.clone()),
            type_args: case.type_args.clone(),
            bcs_args: case.args.clone(),
            ..Request::default()
        };
        let objects: Vec<(&str, Json)> = runners
            .iter_mut()
            .map(|(name, choice, r)| {
                let j = match r.run(&request) {
                    Ok(ran) => ran.json(),
                    Err(f) => f.json(StatusFlavour::Aptos, before_run_label(*choice)),
                };
                (*name, without_engine(j))
            })
            .collect();
        with_message += !objects[0].1["message"].is_null() as usize;
        compare(&case.id, &objects, &mut bad);
    }
    report("aptos", cases.len(), with_message, &bad);
    assert!(bad.is_empty(), "{} differences", bad.len());
    assert!(with_message > 500, "only {with_message} cases report a message");
}

#[test]
fn sui_tasks_identical_json_on_every_executor() {
    let tests = sui_tests();
    assert!(tests.len() > 100, "expected the full test file");
    let mut runners = runners();
    let bases: Vec<_> = runners.iter_mut().map(|(_, _, r)| sui_genesis(r.engine(StatusFlavour::Sui))).collect();
    let (mut n, mut bad, mut with_message) = (0, Vec::new(), 0);
    for test in &tests {
        let replays: Vec<_> = runners
            .iter_mut()
            .zip(&bases)
            .map(|((name, _, r), base)| (*name, replay_sui_test(r.engine(StatusFlavour::Sui), base, test)))
            .collect();
        let tasks = replays[0].1.len();
        assert!(replays.iter().all(|(_, t)| t.len() == tasks), "{}: task counts differ", test["id"]);
        for k in 0..tasks {
            n += 1;
            let objects: Vec<(&str, Json)> = replays
                .iter()
                .map(|(name, ts)| {
                    let t = &ts[k];
                    let j = match &t.call {
                        Some((result, gas_used)) => {
                            let ran = Ran {
                                result: result.clone(),
                                flavour: StatusFlavour::Sui,
                                gas_used: GasUsed::unit(*gas_used),
                                label: "",
                                stats: None,
                            };
                            ran.json()
                        }
                        // A publish: the interpreter's loader on every executor.
                        None => serde_json::to_value(format!("{:?}", t.got)).unwrap_or_default(),
                    };
                    (*name, without_engine(j))
                })
                .collect();
            with_message += objects[0].1.get("message").is_some_and(|m| !m.is_null()) as usize;
            compare(&replays[0].1[k].id, &objects, &mut bad);
        }
    }
    report("sui", n, with_message, &bad);
    assert!(bad.is_empty(), "{} differences", bad.len());
    assert!(n > 500, "expected the full test file");
}
