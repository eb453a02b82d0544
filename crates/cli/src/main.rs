//! `movejit`: disassemble, assemble, verify and run compiled Move modules.
//!
//! Each subcommand lives in its own module with its `Args` and a `run`
//! function returning the process exit code.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod asm;
mod bench;
mod compile;
mod diff;
mod disasm;
mod plot;
mod verify;

use movejit_cli::{files, run};

// The tool allocates many small, short-lived blocks (decoded tables,
// verifier states, prepared frames, natives' values): mimalloc serves them
// faster than the system allocator. A library user picks their own.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "movejit", version, about = "A Move bytecode execution engine: interpreter and Cranelift JIT")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print compiled modules (.mv) as Move assembly text (.masm).
    Disasm(disasm::Args),
    /// Assemble .masm files into compiled modules (.mv).
    Asm(asm::Args),
    /// Decode, bounds-check and verify modules; one line per bad module.
    Verify(verify::Args),
    /// Load modules, verify them and call one function.
    Run(run::Args),
    /// Compile one function with the JIT and print its Cranelift IR or machine code.
    Compile(compile::Args),
    /// Compare the JIT with the interpreter on generated programs and given modules.
    Diff(diff::Args),
    /// Run benchmark suites on the interpreter and the JIT; check and time every result.
    Bench(bench::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Disasm(a) => disasm::run(a),
        Command::Asm(a) => asm::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Run(a) => run::run(a),
        Command::Compile(a) => compile::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Diff(a) => diff::run(a),
    }
}
