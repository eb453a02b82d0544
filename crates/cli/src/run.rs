//! `movejit run` (not yet written).

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Input paths.
    paths: Vec<std::path::PathBuf>,
}

pub fn run(args: Args) -> ExitCode {
    let _ = args.paths;
    eprintln!("movejit run: not yet implemented");
    ExitCode::from(2)
}
