//! Inputs of the `jit_vs_interp` fuzz target (fuzz/) replayed as tests:
//! extreme choice tapes, and every finding of a fuzzing session.

use movejit_diff::driver::{check_fuzz_input, program_at};
use movejit_diff::gen;
use movejit_diff::rng::Rng;

/// (what, input): byte strings in hex.
const INPUTS: &[(&str, &str)] = &[
    ("empty input: all choices hashed", ""),
    // Every draw 0: each choice takes its first option (and every
    // `chance` succeeds), up to where the tape ends.
    ("module, all-zero tape", "00000000000000000000000000000000000000000000000000000000000000000000000000000000"),
    ("single instruction, all-zero tape", "0300000000000000000000000000000000000000000000000000000000000000"),
    // Every draw u64::MAX: the last options, every `chance` fails.
    ("module, all-ones tape", "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"),
    ("single instruction, all-ones tape", "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"),
];

#[test]
fn fuzz_inputs_build_and_agree() {
    let mut failures = Vec::new();
    for (what, hex_input) in INPUTS {
        let input = hex::decode(hex_input).expect("hex");
        // The generator must cope with any tape: a rejected program would
        // make the fuzz target skip it silently.
        let mut rng = Rng::from_bytes(&input);
        let p = program_at(&mut rng, u64::from(input.first().copied().unwrap_or(0)));
        if let Err(r) = gen::build(&p, "fuzz") {
            failures.push(format!("{what}: generator rejected: {r:?}\n{}", p.units.join("\n")));
            continue;
        }
        if let Err(e) = check_fuzz_input(&input) {
            failures.push(format!("{what}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
