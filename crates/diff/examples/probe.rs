//! Development probe: generate N programs from a seed and print the summary,
//! the first rejections and divergences.
use movejit_diff::driver::{program_at, Stats};
use movejit_diff::gen;
use movejit_diff::rng::Rng;
use movejit_diff::Options;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seed: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let n: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    let show: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(3);
    let mut stats = Stats::default();
    let opts = Options::default();
    let mut shown = 0;
    for i in 0..n {
        let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i);
        let p = program_at(&mut rng, i);
        if let Err(e) = gen::build(&p, "probe") {
            if shown < show {
                shown += 1;
                println!("=== rejected #{i}: {e:?}\n{}", p.units.join("\n---\n"));
            }
        }
        stats.run_generated(seed, i, &opts);
    }
    println!("{}", stats.summary());
    for f in stats.divergences.iter().take(show) {
        println!(
            "=== divergence {}: {}\n{}\n{}",
            f.name,
            f.case.describe(),
            f.divergence,
            f.program.units.last().unwrap()
        );
    }
}
