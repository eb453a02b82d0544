//! The boundary table (`movejit_diff::boundary`): every integer instruction
//! at every type over the edges of its operands, as parameters and as
//! constants, identical on the interpreter and the JIT and equal to Move's
//! semantics computed independently ([`IntOp::eval`]).

use movejit_diff::boundary;
use movejit_diff::gen::single::IntOp;
use movejit_diff::gen::ty::Int;

/// Every pair of key edges natively; under emulation (CI's aarch64 run
/// under qemu, 10-20x slower) key edges against probes.
const EXHAUSTIVE: bool = !cfg!(target_arch = "aarch64");

#[test]
fn every_integer_instruction_at_every_edge() {
    let start = std::time::Instant::now();
    let r = boundary::run(&Int::INTEGERS, EXHAUSTIVE);
    println!(
        "{} instructions, {} functions, {} calls on both executors, {} failed ({:?})",
        r.instructions,
        r.functions,
        r.calls,
        r.failed,
        start.elapsed()
    );
    for f in &r.failures {
        println!("{f}");
    }
    assert_eq!(r.failed, 0, "{} calls failed", r.failed);
    let per_type: usize = Int::INTEGERS.iter().map(|t| IntOp::all(*t, &Int::INTEGERS).len()).sum();
    assert_eq!(r.instructions, per_type);
    // The table cannot shrink unnoticed.
    let (functions, calls) = if EXHAUSTIVE { (7_000, 250_000) } else { (2_400, 80_000) };
    assert!(r.functions >= functions && r.calls >= calls, "{} functions, {} calls", r.functions, r.calls);
}
