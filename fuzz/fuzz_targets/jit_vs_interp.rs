//! Generated programs (seeded from the fuzz input) on the JIT and the
//! interpreter: any divergence is a crash.
#![no_main]

use libfuzzer_sys::fuzz_target;
use movejit_diff::driver::program_at;
use movejit_diff::rng::Rng;
use movejit_diff::{gen, run_both_with, Options};

fuzz_target!(|data: &[u8]| {
    let mut rng = Rng::from_bytes(data);
    // The first byte picks the generator (every fourth: single instruction).
    let index = data.first().copied().unwrap_or(0) as u64;
    let p = program_at(&mut rng, index);
    let Ok(cases) = gen::build(&p, "fuzz") else { return };
    let opts = Options { full_budget: 1_000_000, gas_points: 8, assume_verified: true };
    for case in &cases {
        if let Err(d) = run_both_with(case, &opts) {
            panic!("divergence on {}:\n{d}\n{}", case.describe(), p.units.join("\n"));
        }
    }
});
