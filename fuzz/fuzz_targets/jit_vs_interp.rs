//! Generated programs (driven by the fuzz input) on the JIT and the
//! interpreter: any divergence is a crash. The check lives in
//! `movejit_diff::driver::check_fuzz_input` so findings replay as tests.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = movejit_diff::driver::check_fuzz_input(data) {
        panic!("{e}");
    }
});
