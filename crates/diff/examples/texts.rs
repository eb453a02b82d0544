//! Development probe: print generated program texts.
use movejit_diff::driver::program_at;
use movejit_diff::rng::Rng;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seed: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let n: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
    for i in 0..n {
        let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i);
        let p = program_at(&mut rng, i);
        println!("=== #{i}\n{}", p.units.join("\n---\n"));
    }
}
