//! `movejit verify [--flavour aptos|sui] [--deps PATH]... [--json] [--move-rules-only] PATH...`:
//! decodes, bounds-checks and fully verifies every module (and Aptos
//! script) named, Sui modules with Sui's publish-time package rules too
//! (`VerifierConfig::sui_protocol`) unless `--move-rules-only`, linking each against the other given files and the
//! `--deps` modules. Prints one line per rejected file (or, with `--json`,
//! one JSON object per file) and a summary on stderr; exits 1 if any
//! file was rejected, 2 on usage or I/O errors.

use crate::files::expand_mv_paths;
use movejit_format::{decode_module, decode_script, CompiledModule, Flavour, StatusCode, StatusFlavour};
use movejit_verifier::{verify_module, verify_script, Location, VerifierConfig};
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
    Module(CompiledModule),
    Script(movejit_format::CompiledScript),
}

fn decode(bytes: &[u8]) -> Result<Unit, StatusCode> {
    match decode_module(bytes) {
        Ok(m) => Ok(Unit::Module(m)),
        Err(module_err) => match decode_script(bytes) {
            Ok(s) => Ok(Unit::Script(s)),
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
    // Decode everything first: every given module is a possible dependency.
    let mut units = Vec::with_capacity(files.len());
    for p in &files {
        let unit = std::fs::read(p).map_err(|e| Err(e.to_string())).and_then(|b| decode(&b).map_err(Ok));
        units.push(unit);
    }
    let mut deps: Vec<CompiledModule> = Vec::new();
    for p in &dep_files {
        match std::fs::read(p).ok().and_then(|b| decode_module(&b).ok()) {
            Some(m) => deps.push(m),
            None => eprintln!("movejit verify: dependency {} does not decode; ignored", p.display()),
        }
    }
    let mut all: Vec<&CompiledModule> = units.iter().filter_map(|u| match u {
        Ok(Unit::Module(m)) => Some(m),
        _ => None,
    }).collect();
    all.extend(deps.iter());

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let (mut ok, mut bad, mut io_error) = (0usize, 0usize, false);
    for (p, unit) in files.iter().zip(&units) {
        let path = p.display().to_string();
        let outcome = match unit {
            Err(Err(e)) => {
                eprintln!("{path}: {e}");
                io_error = true;
                continue;
            }
            Err(Ok(status)) => {
                let sf = match args.flavour {
                    Some(FlavourArg::Sui) => StatusFlavour::Sui,
                    _ => StatusFlavour::Aptos,
                };
                Outcome { path, module: None, status: Some((*status, sf)), location: None }
            }
            Ok(Unit::Module(m)) => {
                let config = config_for(args.flavour, m.flavour, args.move_rules_only);
                let sf = status_flavour(args.flavour, m.flavour);
                let res = verify_module(m, &all, &config);
                Outcome {
                    path,
                    module: Some(m.id_string()),
                    status: res.as_ref().err().map(|e| (e.status, sf)),
                    location: res.err().map(|e| e.location),
                }
            }
            Ok(Unit::Script(s)) => {
                let config = config_for(args.flavour, s.flavour, args.move_rules_only);
                let sf = status_flavour(args.flavour, s.flavour);
                let res = verify_script(s, &all, &config);
                Outcome {
                    path,
                    module: None,
                    status: res.as_ref().err().map(|e| (e.status, sf)),
                    location: res.err().map(|e| e.location),
                }
            }
        };
        if outcome.status.is_some() {
            bad += 1;
        } else {
            ok += 1;
        }
        let line = if args.json {
            Some(json_line(&outcome))
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
