//! `movejit verify [--flavour aptos|sui] [--deps PATH]... [--json] [--move-rules-only] PATH...`:
//! decodes, bounds-checks and fully verifies every module (and Aptos
//! script) named, Sui modules with Sui's publish-time package rules too
//! (`VerifierConfig::sui_protocol`) unless `--move-rules-only`, linking each against the other given files and the
//! `--deps` modules. The files are staged as one publish over the deps: a
//! module given twice is DUPLICATE_MODULE_NAME, and a module with the id of
//! a dep is an upgrade of it, checked for compatibility first. Prints one line per rejected file (or, with `--json`,
//! one JSON object per file) and a summary on stderr; exits 1 if any
//! file was rejected, 2 on usage or I/O errors.

use crate::files::expand_mv_paths;
use movejit_format::{decode_module, decode_script, CompiledModule, Flavour, StatusCode, StatusFlavour};
use movejit_verifier::{publish, verify_module_against, verify_script, Location, VerifierConfig};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum FlavourArg {
    Aptos,
    Sui,
}

#[derive(clap::Args)]
pub struct Args {
    /// Whose verifier rules and limits to apply (default: from each
    /// module's version word; unflavoured v5/v6 modules verify as Aptos).
    #[arg(long, value_enum)]
    flavour: Option<FlavourArg>,
    /// Dependency modules or folders (repeatable); they are linked against
    /// but not reported.
    #[arg(long = "deps", value_name = "PATH")]
    deps: Vec<PathBuf>,
    /// One JSON object per file on stdout.
    #[arg(long)]
    json: bool,
    /// Sui: apply only Move's bytecode-verifier rules (as Sui's verifier
    /// test suite does), not the package rules a Sui publish adds (object
    /// structs, id leak, private generics, entry and init rules, one-time
    /// witness, protocol limits).
    #[arg(long)]
    move_rules_only: bool,
    /// Modules or scripts (.mv), or folders to search for them.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

/// The outcome for one input file.
struct Outcome {
    path: String,
    module: Option<String>,
    status: Option<(StatusCode, StatusFlavour)>,
    location: Option<Location>,
}

enum Unit {
    Module(Box<CompiledModule>),
    Script(Box<movejit_format::CompiledScript>),
}

fn decode(bytes: &[u8]) -> Result<Unit, StatusCode> {
    match decode_module(bytes) {
        Ok(m) => Ok(Unit::Module(Box::new(m))),
        Err(module_err) => match decode_script(bytes) {
            Ok(s) => Ok(Unit::Script(Box::new(s))),
            Err(_) => Err(module_err.status),
        },
    }
}

fn config_for(arg: Option<FlavourArg>, flavour: Flavour, move_rules_only: bool) -> VerifierConfig {
    let sui = match arg {
        Some(FlavourArg::Aptos) => false,
        Some(FlavourArg::Sui) => true,
        None => flavour.is_sui(),
    };
    match (sui, move_rules_only) {
        (false, _) => VerifierConfig::aptos(),
        (true, true) => VerifierConfig::sui(),
        (true, false) => VerifierConfig::sui_protocol(),
    }
}

fn status_flavour(arg: Option<FlavourArg>, flavour: Flavour) -> StatusFlavour {
    match (arg, flavour) {
        (Some(FlavourArg::Sui), _) | (None, Flavour::Sui) => StatusFlavour::Sui,
        _ => StatusFlavour::Aptos,
    }
}

pub fn run(args: Args) -> ExitCode {
    let (files, dep_files) = match (expand_mv_paths(&args.paths), expand_mv_paths(&args.deps)) {
        (Ok(f), Ok(d)) => (f, d),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("movejit verify: {e}");
            return ExitCode::from(2);
        }
    };
    let outcomes = verify_files(&files, &dep_files, args.flavour, args.move_rules_only);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let (mut ok, mut bad, mut io_error) = (0usize, 0usize, false);
    for outcome in &outcomes {
        let outcome = match outcome {
            Err(e) => {
                eprintln!("{e}");
                io_error = true;
                continue;
            }
            Ok(o) => o,
        };
        if outcome.status.is_some() {
            bad += 1;
        } else {
            ok += 1;
        }
        let line = if args.json {
            Some(json_line(outcome))
        } else {
            outcome.status.map(|(s, _)| format!("{}: {}", outcome.path, s.name()))
        };
        if let Some(line) = line {
            if writeln!(out, "{line}").is_err() {
                break;
            }
        }
    }
    eprintln!("verified {} file(s): {ok} ok, {bad} rejected", ok + bad);
    if io_error {
        ExitCode::from(2)
    } else if bad > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Verifies `files` as one bundle published over `dep_files` (published in
/// order), the way a publish stages it (`movejit_verifier::publish`): a
/// module named twice is DUPLICATE_MODULE_NAME, a module with the id of a
/// dependency is an upgrade of it and must be compatible, and everything
/// links against the dependencies with the new versions in place. One
/// outcome per file, in order; `Err` is an unreadable file.
fn verify_files(
    files: &[PathBuf],
    dep_files: &[PathBuf],
    flavour: Option<FlavourArg>,
    move_rules_only: bool,
) -> Vec<Result<Outcome, String>> {
    // Decode everything first: every given module is a possible dependency.
    let units: Vec<Result<Unit, Result<StatusCode, String>>> = files
        .iter()
        .map(|p| {
            std::fs::read(p).map_err(|e| Err(format!("{}: {e}", p.display()))).and_then(|b| decode(&b).map_err(Ok))
        })
        .collect();
    let mut deps: Vec<CompiledModule> = Vec::new();
    for p in dep_files {
        match std::fs::read(p).ok().and_then(|b| decode_module(&b).ok()) {
            Some(m) => deps.push(m),
            None => eprintln!("movejit verify: dependency {} does not decode; ignored", p.display()),
        }
    }
    let published: Vec<&CompiledModule> = deps.iter().collect();
    let bundle: Vec<&CompiledModule> = units
        .iter()
        .filter_map(|u| match u {
            Ok(Unit::Module(m)) => Some(&**m),
            _ => None,
        })
        .collect();
    let mut staging = publish::check_staging(&published, &bundle).into_iter();
    let all = publish::linked_set(&published, &bundle);

    let mut outcomes = Vec::with_capacity(files.len());
    for (p, unit) in files.iter().zip(&units) {
        let path = p.display().to_string();
        let outcome = match unit {
            Err(Err(e)) => {
                outcomes.push(Err(e.clone()));
                continue;
            }
            Err(Ok(status)) => {
                let sf = match flavour {
                    Some(FlavourArg::Sui) => StatusFlavour::Sui,
                    _ => StatusFlavour::Aptos,
                };
                Outcome { path, module: None, status: Some((*status, sf)), location: None }
            }
            Ok(Unit::Module(m)) => {
                let config = config_for(flavour, m.flavour, move_rules_only);
                let sf = status_flavour(flavour, m.flavour);
                let staged = staging.next().unwrap_or(Ok(()));
                // Every module here was decoded, so bounds-checked.
                let res = staged.and_then(|()| verify_module_against(m, &all, &[], &config));
                Outcome {
                    path,
                    module: Some(m.id_string()),
                    status: res.as_ref().err().map(|e| (e.status, sf)),
                    location: res.err().map(|e| e.location),
                }
            }
            Ok(Unit::Script(s)) => {
                let config = config_for(flavour, s.flavour, move_rules_only);
                let sf = status_flavour(flavour, s.flavour);
                let res = verify_script(s, &all, &config);
                Outcome {
                    path,
                    module: None,
                    status: res.as_ref().err().map(|e| (e.status, sf)),
                    location: res.err().map(|e| e.location),
                }
            }
        };
        outcomes.push(Ok(outcome));
    }
    outcomes
}

/// The JSON object for one file, keys in the documented order.
fn json_line(o: &Outcome) -> String {
    let text = |v: &str| serde_json::Value::String(v.to_string()).to_string();
    let opt = |v: Option<String>| v.unwrap_or_else(|| "null".to_string());
    let location = o.location.as_ref().map(|l| {
        format!(
            "{{\"kind\": {}, \"index\": {}, \"code_offset\": {}}}",
            text(l.kind()),
            l.index().unwrap_or(0),
            opt(l.code_offset().map(|c| c.to_string()))
        )
    });
    format!(
        "{{\"path\": {}, \"module\": {}, \"ok\": {}, \"status\": {}, \"status_code\": {}, \"location\": {}}}",
        text(&o.path),
        opt(o.module.as_deref().map(text)),
        o.status.is_none(),
        opt(o.status.map(|(s, _)| text(s.name()))),
        opt(o.status.map(|(s, f)| s.number(f).to_string())),
        opt(location)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn shared() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
    }

    /// The status of each file, in order (None: accepted).
    fn statuses(files: &[PathBuf], deps: &[PathBuf]) -> Vec<Option<&'static str>> {
        verify_files(files, deps, None, false)
            .into_iter()
            .map(|o| o.expect("readable").status.map(|(s, _)| s.name()))
            .collect()
    }

    /// Every case of the Aptos reject suite through `movejit verify`'s own
    /// path: the suite's `deps` as `--deps`, its `modules` as the files; the
    /// first rejected file carries the VM's status.
    #[test]
    fn aptos_rejects_reproduce() {
        let root = shared().join("verifier/aptos");
        let text = std::fs::read_to_string(root.join("rejects.jsonl")).expect("rejects.jsonl");
        let (mut total, mut upgrades) = (0, 0);
        let mut wrong = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let case: serde_json::Value = serde_json::from_str(line).expect("json");
            let paths = |k: &str| -> Vec<PathBuf> {
                case[k].as_array().expect(k).iter().map(|p| root.join(p.as_str().expect("path"))).collect()
            };
            let expect = case["expect_status"].as_str().expect("expect_status");
            total += 1;
            upgrades += usize::from(expect == "BACKWARD_INCOMPATIBLE_MODULE_UPDATE");
            let got = statuses(&paths("modules"), &paths("deps")).into_iter().flatten().next();
            if got != Some(expect) {
                wrong.push(format!("{}: expected {expect}, got {got:?}", case["id"]));
            }
        }
        assert_eq!(total, 264, "the suite changed size");
        assert_eq!(upgrades, 25);
        assert!(wrong.is_empty(), "{} of {total} differ:\n{}", wrong.len(), wrong.join("\n"));
    }

    #[test]
    fn bundles_and_upgrades() {
        let stdlib = shared().join("verifier/aptos/modules/stdlib");
        let vector = stdlib.join("vector.mv");
        let option = stdlib.join("option.mv");
        let deps = expand_mv_paths(std::slice::from_ref(&stdlib)).expect("stdlib");
        // (files, deps, status of each file)
        type Case<'a> = (&'a [&'a PathBuf], &'a [PathBuf], &'a [Option<&'a str>]);
        let cases: &[Case] = &[
            (&[&option, &vector], &deps, &[None, None]),
            // An identical upgrade is compatible.
            (&[&vector], &deps, &[None]),
            // The same module twice in one bundle.
            (&[&vector, &vector], &[], &[None, Some("DUPLICATE_MODULE_NAME")]),
            (&[&option, &option], &deps, &[None, Some("DUPLICATE_MODULE_NAME")]),
            // option imports vector: missing without deps.
            (&[&option], &[], &[Some("LINKER_ERROR")]),
        ];
        for (files, deps, expect) in cases {
            let files: Vec<PathBuf> = files.iter().map(|p| (*p).clone()).collect();
            assert_eq!(statuses(&files, deps), *expect, "{files:?} over {deps:?}");
        }
    }
}
