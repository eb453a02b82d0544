//! The example suite in `benches/suite/`, compiled into the binary so
//! `movejit bench` works without arguments on any machine. Its kernels are
//! `.masm` text assembled at load time; the expected results were computed
//! independently of movejit (see `suite/README.md`).

/// Every file of the bundled suite: (path relative to the suite, content).
pub const FILES: &[(&str, &str)] = &[
    ("benchmarks.jsonl", include_str!("../suite/benchmarks.jsonl")),
    ("fib.masm", include_str!("../suite/fib.masm")),
    ("collatz.masm", include_str!("../suite/collatz.masm")),
    ("lcg128.masm", include_str!("../suite/lcg128.masm")),
    ("vec_sum.masm", include_str!("../suite/vec_sum.masm")),
];

/// The content of a bundled file.
pub fn file(path: &str) -> Option<&'static str> {
    FILES.iter().find(|(p, _)| *p == path).map(|(_, c)| *c)
}
