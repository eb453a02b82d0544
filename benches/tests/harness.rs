//! Quick checks of the harness against real data: the bundled suite runs
//! correctly, the native controls return the shared manifest's checksums at
//! every size, the executor adapter reports wrong results and gaps, and the
//! compile-cost walk covers a corpus. (Timings are the benches' job.)

use movejit_benches::executor::{prepare, Executor, Metering, PrepareError};
use movejit_benches::manifest::Suite;
use movejit_benches::measure::measure;
use movejit_benches::{bundled, compile_cost, native, shared_dir};

#[test]
fn bundled_files_are_the_suite_folder() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("suite");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "README.md")
        .collect();
    on_disk.sort();
    let mut bundled: Vec<String> = bundled::FILES.iter().map(|(p, _)| p.to_string()).collect();
    bundled.sort();
    assert_eq!(on_disk, bundled);
    for (p, c) in bundled::FILES {
        assert_eq!(std::fs::read_to_string(dir.join(p)).unwrap(), *c, "{p}");
    }
}

#[test]
fn bundled_suite_is_correct_on_every_executor() {
    let suite = Suite::bundled().unwrap();
    assert!(suite.benchmarks.len() >= 4);
    let mut jit_ran = 0;
    for b in &suite.benchmarks {
        let program = suite.program(b, &b.case).unwrap();
        for ex in Executor::ALL {
            for metering in [Metering::Off, Metering::On] {
                match prepare(ex, &program, metering) {
                    Ok(mut p) => {
                        let m = measure(p.as_mut(), &program.expect, 1, || {});
                        assert!(m.correct, "{} on {}: {:?}", b.name, ex.name(), m.failure);
                        assert_eq!(m.samples.len(), 1);
                        assert_eq!(p.compile_ns().is_some(), ex == Executor::Jit);
                        jit_ran += usize::from(ex == Executor::Jit);
                    }
                    Err(PrepareError::NotSupported(why)) => {
                        assert_eq!(ex, Executor::Jit, "{}: the interpreter runs everything: {why}", b.name);
                    }
                    Err(e) => panic!("{} on {}: {e}", b.name, ex.name()),
                }
            }
        }
    }
    // fib, collatz and lcg128 are scalar code.
    assert!(jit_ran >= 6, "{jit_ran}");
}

#[test]
fn a_wrong_expected_result_is_reported() {
    let suite = Suite::bundled().unwrap();
    let b = suite.benchmarks.iter().find(|b| b.name == "fib").unwrap();
    let mut program = suite.program(b, &b.case).unwrap();
    program.expect[0][0] ^= 1;
    for ex in Executor::ALL {
        let mut p = prepare(ex, &program, Metering::Off).unwrap();
        let m = measure(p.as_mut(), &program.expect, 3, || {});
        assert!(!m.correct);
        assert_eq!(m.samples.len(), 1, "stops at the first wrong call");
        assert!(m.failure.unwrap().starts_with("wrong result"));
    }
}

#[test]
fn bad_manifest_entries_are_errors() {
    let suite = Suite::bundled().unwrap();
    let mut b = suite.benchmarks[0].clone();
    for (modules, function, arg) in [
        (vec!["../fib.masm".to_string()], b.function.clone(), b.case.args[0].clone()),
        (vec!["/etc/hostname".to_string()], b.function.clone(), b.case.args[0].clone()),
        (vec!["missing.mv".to_string()], b.function.clone(), b.case.args[0].clone()),
        (b.modules.clone(), "fib".to_string(), b.case.args[0].clone()),
        (b.modules.clone(), b.function.clone(), "zz".to_string()),
    ] {
        b.modules = modules;
        b.function = function;
        b.case.args = vec![arg];
        assert!(suite.program(&b, &b.case).is_err(), "{:?} {} {:?}", b.modules, b.function, b.case.args);
    }
}

#[test]
fn native_controls_match_the_shared_checksums() {
    let suite = Suite::load(&shared_dir().join("bench")).unwrap();
    let mut kernels = std::collections::BTreeSet::new();
    for b in &suite.benchmarks {
        let Some(k) = &b.native_control() else { continue };
        kernels.insert(k.clone());
        for case in b.cases() {
            let args: Vec<Vec<u8>> = case.args.iter().map(|a| hex::decode(a).unwrap()).collect();
            let got = native::run(k, &args).unwrap();
            assert_eq!(hex::encode(got), case.expect_returns[0], "{} {:?}", b.name, case.arg_values);
        }
    }
    let all: std::collections::BTreeSet<String> = native::KERNELS.iter().map(|s| s.to_string()).collect();
    assert_eq!(kernels, all, "every native control has a benchmark and vice versa");
}

#[test]
fn shared_scalar_benchmarks_agree_on_both_executors() {
    // The smallest size of the benchmarks the JIT compiles today.
    let suite = Suite::load(&shared_dir().join("bench")).unwrap();
    let mut both = 0;
    for b in &suite.benchmarks {
        let case = b.smallest_case();
        let program = suite.program(b, case).unwrap();
        let Ok(mut jit) = prepare(Executor::Jit, &program, Metering::Off) else { continue };
        let m = measure(jit.as_mut(), &program.expect, 1, || {});
        assert!(m.correct, "{} on jit: {:?}", b.name, m.failure);
        let mut interp = prepare(Executor::Interp, &program, Metering::Off).unwrap();
        let m = measure(interp.as_mut(), &program.expect, 0, || {});
        assert!(m.correct, "{} on interp: {:?}", b.name, m.failure);
        both += 1;
    }
    assert!(both >= 3, "fib, arith_u64_loop, nested_loop at least: {both}");
}

#[test]
fn compile_cost_covers_the_move_stdlib() {
    let report = compile_cost::compile_corpus(&shared_dir().join("corpus/aptos/MoveStdlib")).unwrap();
    assert!(report.modules > 10, "{}", report.modules);
    assert!(report.rejected_modules.is_empty(), "{:?}", report.rejected_modules);
    let failed: usize = report.failures_by_kind().iter().map(|(_, n)| n).sum();
    assert_eq!(report.compiled().count() + failed, report.functions.len());
    assert!(report.compiled().count() > 0, "{:?}", report.failures_by_kind());
    assert!(report.generic > 0 && report.native > 0);
}
