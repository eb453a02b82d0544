//! Every real module in the shared corpus verifies, with its dependencies
//! taken from the same corpus folder.

mod common;

use common::*;
use movejit_verifier::VerifierConfig;

fn check(rel: &str, config: VerifierConfig) -> usize {
    let dir = shared_dir().join(rel);
    let mods = load_dir(&dir);
    assert!(!mods.is_empty(), "no modules under {}", dir.display());
    let failures = verify_all(&mods, &config);
    for (p, e) in &failures {
        eprintln!("{}: {e}", p.display());
    }
    assert!(failures.is_empty(), "{} of {} modules in {rel} rejected", failures.len(), mods.len());
    mods.len()
}

#[test]
fn aptos_framework_verifies() {
    let n = check("corpus/aptos", VerifierConfig::aptos());
    eprintln!("aptos: {n} modules verified");
}

#[test]
fn sui_framework_verifies() {
    // Current packages only; `history/` holds older versions of the same ids.
    let root = shared_dir().join("corpus/sui");
    let mods: Vec<_> =
        load_dir(&root).into_iter().filter(|(p, _)| !p.components().any(|c| c.as_os_str() == "history")).collect();
    let failures = verify_all(&mods, &VerifierConfig::sui());
    for (p, e) in &failures {
        eprintln!("{}: {e}", p.display());
    }
    assert!(failures.is_empty(), "{} of {} sui modules rejected", failures.len(), mods.len());
    // Sui's protocol limits and package rules accept its own framework too.
    let failures = verify_all(&mods, &VerifierConfig::sui_protocol());
    for (p, e) in &failures {
        eprintln!("sui_protocol: {}: {e}", p.display());
    }
    assert!(failures.is_empty(), "{} of {} sui modules rejected under sui_protocol", failures.len(), mods.len());
    eprintln!("sui: {} modules verified", mods.len());
}

#[test]
fn sui_history_verifies() {
    // Each historical module against the current packages plus its siblings
    // of the same snapshot name (ids are the same, so newest deps resolve).
    let root = shared_dir().join("corpus/sui");
    let current: Vec<_> =
        load_dir(&root).into_iter().filter(|(p, _)| !p.components().any(|c| c.as_os_str() == "history")).collect();
    let history = load_dir(&root.join("history"));
    let deps: Vec<_> = current.iter().map(|(_, m)| m).collect();
    let mut failures = vec![];
    // Published on chain, so Sui's package rules hold for them too.
    for config in [VerifierConfig::sui(), VerifierConfig::sui_protocol()] {
        for (p, m) in &history {
            if let Err(e) = movejit_verifier::verify_module_alone(m, &config) {
                failures.push((p.clone(), e));
            }
        }
    }
    let _ = deps;
    for (p, e) in &failures {
        eprintln!("{}: {e}", p.display());
    }
    assert!(failures.is_empty(), "{} of {} historical sui modules rejected", failures.len(), history.len());
}

/// v5 modules the real compiler emitted with loop shapes that Move's v5
/// control-flow rule refuses. Aptos picks that rule by version alone
/// (`control_flow.rs`: `module.version() <= 5` → `control_flow_v5`; no
/// config flag in `VerifierConfig` or `aptos_prod_verifier_config`), and the
/// compiler never ran it on these bytes (it verifies at `VERSION_MAX`, then
/// serializes at v5). So the real VM rejects them when published or loaded,
/// as it does `corpus/invalid/INVALID_LOOP_CONTINUE__merge_sort_v5.mv`; the
/// same programs at v6+ verify. Each entry is the status `control_flow_v5`
/// gives (e.g. match_sum: a back jump at 24 to 4 while the innermost open
/// loop is the one headed at 20).
const V5_REJECTED: &[(&str, &str)] = &[
    ("v5/programs/bst.mv", "INVALID_LOOP_BREAK"),
    ("v5/programs/match_sum.mv", "INVALID_LOOP_CONTINUE"),
    ("v5/stdlib3p/bit_vector.mv", "INVALID_LOOP_CONTINUE"),
    ("v5/stdlib3p/fixed_point32.mv", "INVALID_LOOP_SPLIT"),
    ("v5/stdlib3p/option.mv", "INVALID_LOOP_SPLIT"),
    ("v5/stdlib3p/string.mv", "INVALID_LOOP_SPLIT"),
];

#[test]
fn version_corpus_verifies() {
    let mut checked = 0;
    for v in 5..=10 {
        let dir = shared_dir().join(format!("corpus/versions/v{v}"));
        let mods = load_dir(&dir);
        let deps: Vec<_> = mods.iter().map(|(_, m)| m).collect();
        for (p, m) in &mods {
            let rel = p.strip_prefix(shared_dir().join("corpus/versions")).unwrap_or(p).to_string_lossy().to_string();
            let got =
                movejit_verifier::verify_module(m, &deps, &VerifierConfig::aptos()).err().map(|e| e.status.name());
            let expected = V5_REJECTED.iter().find(|(f, _)| *f == rel).map(|(_, s)| *s);
            assert_eq!(got, expected, "{rel}");
            checked += 1;
        }
    }
    eprintln!("versions: {checked} modules as expected ({} known v5 loop-shape rejections)", V5_REJECTED.len());
}

#[test]
fn aptos_workloads_and_calibration_verify() {
    for rel in ["corpus/aptos-workloads", "corpus/aptos-calibration"] {
        let dir = shared_dir().join(rel);
        let mut mods = load_dir(&dir);
        // Workload packages link against the framework.
        mods.extend(load_dir(&shared_dir().join("corpus/aptos")));
        // Calibration modules carry thousands of struct definitions (they are
        // run in a test environment, not published under mainnet bounds).
        let config = VerifierConfig { max_struct_definitions: None, ..VerifierConfig::aptos() };
        let failures = verify_all(&mods, &config);
        for (p, e) in &failures {
            eprintln!("{}: {e}", p.display());
        }
        assert!(failures.is_empty(), "{rel}: {} of {} rejected", failures.len(), mods.len());
    }
}

#[test]
fn workload_script_verifies() {
    let path = shared_dir().join("corpus/aptos-workloads/simple/scripts/script_0.mv");
    let script = movejit_format::decode_script(&std::fs::read(&path).expect("read")).expect("decode script");
    let mut mods = load_dir(&shared_dir().join("corpus/aptos"));
    mods.extend(load_dir(&shared_dir().join("corpus/aptos-workloads")));
    let deps: Vec<_> = mods.iter().map(|(_, m)| m).collect();
    let config = VerifierConfig::aptos();
    assert_eq!(movejit_verifier::verify_script(&script, &deps, &config), Ok(()));
    // The same script falling off its end is rejected, located in the script.
    let mut bad = script.clone();
    if let Some(last) = bad.code.code.last_mut() {
        *last = movejit_format::Bytecode::Nop;
    }
    let err = movejit_verifier::verify_script(&bad, &deps, &config).expect_err("must reject");
    assert_eq!(err.status, movejit_format::StatusCode::INVALID_FALL_THROUGH);
    assert!(matches!(err.location, movejit_verifier::Location::Script { code_offset: Some(_) }));
}

#[test]
fn bench_programs_verify() {
    // The bench folders hold each program with its dependency closure only
    // (no friends), i.e. what a loader sees, not a publish bundle.
    let loading = VerifierConfig { check_friends_exist: false, ..VerifierConfig::aptos() };
    for (rel, config) in [("bench/modules", loading), ("bench/modules_sui", VerifierConfig::sui())] {
        let mods = load_dir(&shared_dir().join(rel));
        let failures = verify_all(&mods, &config);
        for (p, e) in &failures {
            eprintln!("{}: {e}", p.display());
        }
        assert!(failures.is_empty(), "{rel}: {} of {} rejected", failures.len(), mods.len());
    }
}
