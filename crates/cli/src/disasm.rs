//! `movejit disasm FILE.mv|DIR...`: prints compiled modules and scripts as
//! Move assembly text on stdout (a header comment before each file when
//! there are several). Undecodable files are reported on stderr and make
//! the exit code 1.

use crate::files::expand_mv_paths;
use movejit_format::{decode_module, decode_script};
use movejit_masm::{disassemble_module, disassemble_script};
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Compiled modules or scripts (.mv), or folders to search for them.
    #[arg(required = true)]
    paths: Vec<std::path::PathBuf>,
}

/// The text of one compiled unit: a module, or else a script.
fn disassemble(bytes: &[u8]) -> Result<String, String> {
    match decode_module(bytes) {
        Ok(m) => disassemble_module(&m).map_err(|e| e.to_string()),
        Err(module_err) => match decode_script(bytes) {
            Ok(s) => disassemble_script(&s).map_err(|e| e.to_string()),
            Err(_) => Err(module_err.to_string()),
        },
    }
}

pub fn run(args: Args) -> ExitCode {
    let files = match expand_mv_paths(&args.paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("movejit disasm: {e}");
            return ExitCode::from(1);
        }
    };
    let many = files.len() > 1;
    let mut failed = false;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for (i, path) in files.iter().enumerate() {
        let result = std::fs::read(path).map_err(|e| e.to_string()).and_then(|b| disassemble(&b));
        match result {
            Ok(text) => {
                let mut chunk = String::new();
                if many {
                    if i > 0 {
                        chunk.push('\n');
                    }
                    chunk.push_str(&format!("// ==== {} ====\n", path.display()));
                }
                chunk.push_str(&text);
                if out.write_all(chunk.as_bytes()).is_err() {
                    // stdout closed (e.g. piped into `head`): stop quietly.
                    return ExitCode::from(if failed { 1 } else { 0 });
                }
            }
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                failed = true;
            }
        }
    }
    ExitCode::from(if failed { 1 } else { 0 })
}
