//! `movejit asm FILE.masm... -o DIR [--dep FILE.mv|DIR]...`: assembles each
//! file and writes `DIR/<module name>.mv` (`DIR/<file stem>.mv` for a
//! script). Structs and functions of other modules come from the text's
//! `use` declarations or from the `--dep` modules. Errors are printed as
//! `FILE:LINE:COL: message` and make the exit code 1.

use crate::files::expand_mv_paths;
use movejit_format::{decode_module, decode_script, serialize_module, serialize_script, CompiledModule};
use movejit_masm::{assemble_with, AsmOptions, Assembled};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Move assembly files (.masm).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Output folder (created if missing).
    #[arg(short = 'o', long = "output-dir", default_value = ".")]
    output_dir: PathBuf,
    /// Bytecode version for files without a `version` directive.
    #[arg(long = "bytecode-version")]
    bytecode_version: Option<u32>,
    /// Compiled dependencies (.mv files or folders) to import undeclared
    /// structs and functions from.
    #[arg(long = "dep")]
    deps: Vec<PathBuf>,
}

fn load_deps(paths: &[PathBuf]) -> Result<Vec<CompiledModule>, String> {
    let files = expand_mv_paths(paths).map_err(|e| e.to_string())?;
    files
        .iter()
        .map(|p| {
            let bytes = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
            decode_module(&bytes).map_err(|e| format!("{}: {e}", p.display()))
        })
        .collect()
}

/// Assembles one file into `(output file name, bytes)`.
fn assemble_file(path: &Path, options: AsmOptions<'_>) -> Result<(String, Vec<u8>), String> {
    let src = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let unit = assemble_with(&src, options).map_err(|e| format!("{}:{}: {}", path.display(), e.pos, e.message))?;
    // The bytes go through the decoder (with its bounds check) before
    // they are written: the assembler checks names, not every table rule.
    match unit {
        Assembled::Module(m) => {
            let bytes = serialize_module(&m);
            decode_module(&bytes).map_err(|e| format!("{}: assembled module is malformed: {e}", path.display()))?;
            Ok((format!("{}.mv", m.name()), bytes))
        }
        Assembled::Script(s) => {
            let bytes = serialize_script(&s);
            decode_script(&bytes).map_err(|e| format!("{}: assembled script is malformed: {e}", path.display()))?;
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("script");
            Ok((format!("{stem}.mv"), bytes))
        }
    }
}

pub fn run(args: Args) -> ExitCode {
    let deps = match load_deps(&args.deps) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("movejit asm: dependency {e}");
            return ExitCode::from(1);
        }
    };
    let options = AsmOptions { default_version: args.bytecode_version, deps: &deps };
    if let Err(e) = std::fs::create_dir_all(&args.output_dir) {
        eprintln!("movejit asm: cannot create {}: {e}", args.output_dir.display());
        return ExitCode::from(1);
    }
    let mut failed = false;
    for path in &args.paths {
        match assemble_file(path, options) {
            Ok((name, bytes)) => {
                let out = args.output_dir.join(name);
                if let Err(e) = std::fs::write(&out, bytes) {
                    eprintln!("{}: {e}", out.display());
                    failed = true;
                }
            }
            Err(e) => {
                eprintln!("{e}");
                failed = true;
            }
        }
    }
    ExitCode::from(if failed { 1 } else { 0 })
}
