#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    movejit_format_fuzz::check_decode(data);
});
