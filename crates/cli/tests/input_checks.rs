//! The `movejit` command refuses bad input with Move's status, the same on
//! every executor: malformed or ill-formed type arguments, a module given
//! twice, an incompatible upgrade given to `verify`; and a closed stdout
//! ends it quietly.

mod common;

use std::path::PathBuf;

fn shared() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

fn movejit(args: &[&str]) -> (Option<i32>, String) {
    let (code, stdout, _) = common::movejit(args);
    (code, stdout)
}

/// The `status` of `movejit run --json`.
fn run_status(args: &[&str]) -> String {
    let (_, stdout) = movejit(args);
    let line = stdout.lines().last().unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"));
    v["status"].as_str().unwrap_or_default().to_string()
}

#[test]
fn run_checks_type_arguments_and_bundles() {
    let dir = shared().join("conformance/aptos/modules");
    let vector = dir.join("stdlib3p/vector.mv");
    let generics = dir.join("generics/generics.mv");
    let (vector, generics) = (vector.to_str().expect("path"), generics.to_str().expect("path"));
    // (modules, type argument, expected status); `wrap<T>(x: T)` gets `255`.
    let cases: &[(&[&str], &str, &str)] = &[
        (&[vector, generics], "u8", "EXECUTED"),
        (&[vector, generics], "0xcafe::generics::Box<u8,u64>", "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH"),
        (&[vector, generics], "0xcafe::generics::Box", "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH"),
        (&[vector, generics], "vector<0xcafe::generics::Pair<u8>>", "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH"),
        (&[vector, generics], "&u64", "TYPE_RESOLUTION_FAILURE"),
        (&[vector, generics], "&mut u64", "TYPE_RESOLUTION_FAILURE"),
        (&[vector, generics], "0xcafe::generics::Nope", "TYPE_RESOLUTION_FAILURE"),
        (&[vector, generics], "0xcafe::nowhere::S", "LINKER_ERROR"),
        (&[vector, generics, generics], "u8", "DUPLICATE_MODULE_NAME"),
    ];
    let mut wrong = Vec::new();
    for engine in ["interp", "jit", "auto"] {
        for (modules, ty, expect) in cases {
            let mut args = vec!["run", "--json", "--engine", engine];
            args.extend_from_slice(modules);
            args.extend_from_slice(&["--function", "0xcafe::generics::wrap", "--type-args", ty, "--bcs-args", "ff"]);
            let got = run_status(&args);
            if got != *expect {
                wrong.push(format!(
                    "--engine {engine} {ty} over {} module(s): expected {expect}, got {got}",
                    modules.len()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn verify_checks_bundles_and_upgrades() {
    let generics = shared().join("conformance/aptos/modules/generics/generics.mv");
    let vector = shared().join("conformance/aptos/modules/stdlib3p/vector.mv");
    let (generics, vector) = (generics.to_str().expect("path"), vector.to_str().expect("path"));
    let (code, out) = movejit(&["verify", vector, generics, generics]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(out.trim(), format!("{generics}: DUPLICATE_MODULE_NAME"));
    // The same module as its own previous version is compatible.
    let (code, out) = movejit(&["verify", "--deps", vector, "--deps", generics, generics]);
    assert_eq!((code, out.as_str()), (Some(0), ""));
    // The first incompatible upgrade of the Aptos reject suite.
    let root = shared().join("verifier/aptos");
    let text = std::fs::read_to_string(root.join("rejects.jsonl")).expect("rejects.jsonl");
    let case: serde_json::Value = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json"))
        .find(|c| c["expect_status"] == "BACKWARD_INCOMPATIBLE_MODULE_UPDATE")
        .expect("an upgrade case");
    let path = |p: &serde_json::Value| root.join(p.as_str().expect("path")).to_str().expect("path").to_string();
    let mut args = vec!["verify".to_string()];
    for d in case["deps"].as_array().expect("deps") {
        args.extend(["--deps".to_string(), path(d)]);
    }
    args.extend(case["modules"].as_array().expect("modules").iter().map(path));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out) = movejit(&args);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains(": BACKWARD_INCOMPATIBLE_MODULE_UPDATE"), "{}: {out}", case["id"]);
}

/// A reader that stops early (`movejit bench | head -1`) ends the command
/// quietly, as SIGPIPE would, instead of a panic with a backtrace.
#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    use std::io::{BufRead, BufReader, Read};
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_movejit"))
        .args(["bench", "--iters", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs movejit");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut first).expect("a first line");
    // The reader is dropped here: the pipe is closed before the next line.
    let mut stderr = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut stderr).expect("stderr");
    let status = child.wait().expect("movejit ends");
    assert!(first.starts_with("suite "), "first line: {first}");
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
    assert_eq!(status.code(), Some(141), "stderr: {stderr}");
}
