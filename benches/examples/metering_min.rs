//! Metered vs unmetered JIT run time per benchmark as the minimum over
//! many calls (robust on a loaded machine): `cargo run --release -p
//! movejit-benches --example metering_min [-- CALLS]`.

use movejit_benches::executor::{prepare, Executor, Metering};
use movejit_benches::manifest::Suite;
use movejit_benches::{select, shared_dir};

fn main() {
    let calls: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(30);
    let suite = Suite::load(&shared_dir().join("bench")).or_else(|_| Suite::bundled()).expect("a suite");
    for b in select(&suite, &[]) {
        let Ok(program) = suite.program(b, b.smallest_case()) else { continue };
        let mut mins = Vec::new();
        for metering in [Metering::Off, Metering::On] {
            let Ok(mut p) = prepare(Executor::Jit, &program, metering) else { continue };
            let mut best = u64::MAX;
            for _ in 0..calls {
                let c = p.call();
                assert!(matches!(&c.returns, Ok(r) if *r == program.expect), "{}: wrong result", b.name);
                best = best.min(c.ns);
            }
            mins.push(best);
        }
        if let [off, on] = mins[..] {
            println!(
                "{:<20} off {:>10.1} us  on {:>10.1} us  ratio {:.2}",
                b.name,
                off as f64 / 1e3,
                on as f64 / 1e3,
                on as f64 / off as f64
            );
        }
    }
}
