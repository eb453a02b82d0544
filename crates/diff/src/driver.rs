//! Batches of generated programs on both executors, with statistics.

#![forbid(unsafe_code)]

use crate::coverage::{family, reachable, Coverage};
use crate::gen::{self, Program, Rejected};
use crate::harness::{run_both_with, JitVerdict, Options};
use crate::outcome::Divergence;
use crate::rng::Rng;
use crate::Case;
use movejit_format::StatusFlavour;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A divergence with what is needed to reproduce it.
#[derive(Clone, Debug)]
pub struct Found {
    pub name: String,
    pub program: Program,
    /// Index into `program.calls`.
    pub call: usize,
    pub case: Case,
    pub divergence: Divergence,
}

/// Counters over a batch.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub programs: u64,
    pub single_instruction: u64,
    /// Rejections by the assembler or the verifier, by reason.
    pub rejected: BTreeMap<String, u64>,
    pub cases: u64,
    /// Cases compared with executor `jit` (whole call graph compiled).
    pub compared: u64,
    /// Cases `jit` refused but `auto` ran partly compiled, by `jit`'s reason.
    pub mixed: BTreeMap<String, u64>,
    /// Cases nothing of which compiles yet, by reason (interpreter only).
    pub unsupported: BTreeMap<String, u64>,
    /// Executions compared (full + tiny-gas reruns) and out-of-gas among them.
    pub runs: u64,
    pub out_of_gas: u64,
    /// Interpreter statuses of the full runs.
    pub statuses: BTreeMap<String, u64>,
    pub divergences: Vec<Found>,
    /// Opcodes of every verified generated module.
    pub generated: Coverage,
    /// Opcodes of the functions the calls reached, by how they were
    /// compared: on executor `jit`, on `auto` (partly compiled), or run by
    /// the interpreter only (not compiled).
    pub on_jit: Coverage,
    pub on_mixed: Coverage,
    pub interp_only: Coverage,
}

impl Stats {
    /// Adds the counters of `other` (a batch run elsewhere, e.g. on another
    /// thread) to these.
    pub fn merge(&mut self, other: Stats) {
        let add = |to: &mut BTreeMap<String, u64>, from: BTreeMap<String, u64>| {
            for (k, v) in from {
                *to.entry(k).or_default() += v;
            }
        };
        self.programs += other.programs;
        self.single_instruction += other.single_instruction;
        add(&mut self.rejected, other.rejected);
        self.cases += other.cases;
        self.compared += other.compared;
        add(&mut self.mixed, other.mixed);
        add(&mut self.unsupported, other.unsupported);
        self.runs += other.runs;
        self.out_of_gas += other.out_of_gas;
        add(&mut self.statuses, other.statuses);
        self.divergences.extend(other.divergences);
        self.generated.merge(&other.generated);
        self.on_jit.merge(&other.on_jit);
        self.on_mixed.merge(&other.on_mixed);
        self.interp_only.merge(&other.interp_only);
    }

    pub fn rejected_total(&self) -> u64 {
        self.rejected.values().sum()
    }

    /// Runs every call of an already generated program.
    pub fn run_program(&mut self, p: &Program, name: &str, opts: &Options) {
        let cases = match gen::build(p, name) {
            Ok(c) => c,
            Err(r) => {
                let key = match r {
                    Rejected::Assembler(m) => format!("assembler: {m}"),
                    Rejected::Verifier(m) => m.split(':').next().unwrap_or("").to_string(),
                };
                *self.rejected.entry(key).or_default() += 1;
                return;
            }
        };
        let Some(module) = cases.first().and_then(|c| c.modules.last()) else { return };
        self.generated.add_module(module);
        let (mut jit_defs, mut mixed_defs, mut reached) = (Default::default(), Default::default(), Default::default());
        let add = |to: &mut std::collections::BTreeSet<usize>, f: &str| to.extend(reachable(module, f));
        for (i, case) in cases.iter().enumerate() {
            self.cases += 1;
            add(&mut reached, &case.function);
            let mut checked = run_both_with(case, opts);
            if let (Ok(c), Some(e)) = (&checked, p.expect.filter(|_| i == 0)) {
                if let Some(why) = e.mismatch(&c.outcome, 0) {
                    // Both executors agree on a result Move's rules do not give.
                    let d = Divergence {
                        budget: opts.full_budget,
                        field: "oracle",
                        executor: "oracle",
                        interp: c.outcome.clone(),
                        jit: Err(why),
                    };
                    checked = Err(d);
                }
            }
            match checked {
                Ok(c) => {
                    *self.statuses.entry(c.outcome.status.name().to_string()).or_default() += 1;
                    self.runs += c.runs;
                    self.out_of_gas += c.out_of_gas;
                    match c.jit {
                        JitVerdict::Agreed => {
                            self.compared += 1;
                            add(&mut jit_defs, &case.function);
                        }
                        JitVerdict::Mixed(r) => {
                            *self.mixed.entry(r).or_default() += 1;
                            add(&mut mixed_defs, &case.function);
                        }
                        JitVerdict::Unsupported(r) => *self.unsupported.entry(r).or_default() += 1,
                        JitVerdict::Rejected(r) => *self.rejected.entry(format!("at run: {r}")).or_default() += 1,
                    }
                }
                Err(d) => self.divergences.push(Found {
                    name: case.name.clone(),
                    program: p.clone(),
                    call: i,
                    case: case.clone(),
                    divergence: d,
                }),
            }
        }
        let mixed_only = &mixed_defs - &jit_defs;
        let interp_only = &(&reached - &jit_defs) - &mixed_defs;
        self.on_jit.add_functions(module, &jit_defs);
        self.on_mixed.add_functions(module, &mixed_only);
        self.interp_only.add_functions(module, &interp_only);
    }

    /// Program `index` of the stream named by `seed`: one in four is a
    /// single-instruction program.
    pub fn run_generated(&mut self, seed: u64, index: u64, opts: &Options) {
        self.run_generated_of(seed, index, opts, None)
    }

    /// [`Stats::run_generated`], all programs of `flavour` if given: Sui
    /// ones are generated modules only (single-instruction programs are
    /// Aptos's).
    pub fn run_generated_of(&mut self, seed: u64, index: u64, opts: &Options, flavour: Option<StatusFlavour>) {
        let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ index);
        let single = index % 4 == 3 && flavour != Some(StatusFlavour::Sui);
        let p = match flavour {
            Some(f) if !single => gen::program::generate_of(&mut rng, Some(f == StatusFlavour::Sui)),
            _ => program_at(&mut rng, index),
        };
        let opts = &Options { assume_verified: true, ..opts.clone() };
        if single {
            self.single_instruction += 1;
        } else {
            self.programs += 1;
        }
        self.run_program(&p, &format!("seed {seed} #{index}"), opts);
    }

    /// Per opcode family: opcodes generated (of the family's total), and
    /// instructions generated, in functions compared on JIT, compared on
    /// `auto` only, and run by the interpreter only.
    pub fn family_table(&self) -> String {
        let mut fams: BTreeMap<&str, [u64; 6]> = BTreeMap::new();
        for op in movejit_format::Opcode::ALL {
            let e = fams.entry(family(*op)).or_default();
            let g = self.generated.counts.get(op).copied().unwrap_or(0);
            let n = |c: &Coverage| c.counts.get(op).copied().unwrap_or(0);
            e[0] += 1;
            e[1] += u64::from(g > 0);
            e[2] += g;
            e[3] += n(&self.on_jit);
            e[4] += n(&self.on_mixed);
            e[5] += n(&self.interp_only);
        }
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:<16} {:>9} {:>11} {:>15} {:>11} {:>12}",
            "family", "opcodes", "generated", "compared on JIT", "mixed", "interp only"
        );
        for (f, [n, seen, g, j, m, i]) in fams {
            let _ = writeln!(s, "{f:<16} {seen:>4}/{n:<4} {g:>11} {j:>15} {m:>11} {i:>12}");
        }
        s
    }

    /// A summary: counts, rejections, how cases were compared, and the
    /// opcode-family table.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let total = self.programs + self.single_instruction;
        let _ = writeln!(
            s,
            "programs: {total} ({} generated modules, {} single-instruction); rejected {} ({:.2}%)",
            self.programs,
            self.single_instruction,
            self.rejected_total(),
            100.0 * self.rejected_total() as f64 / total.max(1) as f64
        );
        for (r, n) in &self.rejected {
            let _ = writeln!(s, "  rejected {n:>6}  {r}");
        }
        let mixed: u64 = self.mixed.values().sum();
        let _ = writeln!(
            s,
            "cases: {} — compared on JIT {}, mixed (jit refused, auto partly compiled) {mixed}, interpreter only (not compiled) {}; executions compared {} ({} out of gas); divergences {}",
            self.cases,
            self.compared,
            self.unsupported.values().sum::<u64>(),
            self.runs,
            self.out_of_gas,
            self.divergences.len()
        );
        for (r, n) in &self.mixed {
            let _ = writeln!(s, "  mixed       {n:>7}  jit: {r}");
        }
        for (r, n) in &self.unsupported {
            let _ = writeln!(s, "  interp only {n:>7}  {r}");
        }
        let st: Vec<String> = self.statuses.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(s, "statuses (full budget): {}", st.join(" "));
        s.push_str(&self.family_table());
        let missing: Vec<&str> = self.generated.missing().iter().map(|o| o.name()).collect();
        let _ = writeln!(
            s,
            "opcodes never generated: {}",
            if missing.is_empty() { "none".into() } else { missing.join(" ") }
        );
        s
    }
}

/// The `jit_vs_interp` fuzz target's check, here so that a finding becomes
/// a plain regression test: the program `input` generates (each draw is 8
/// input bytes, see [`Rng::from_bytes`]; the first byte also picks a module
/// or a single instruction) agrees on both executors, at a full budget and
/// at tiny ones. `Err` describes the divergence with the program's text.
/// Programs the generator cannot build are skipped.
pub fn check_fuzz_input(input: &[u8]) -> Result<(), String> {
    let mut rng = Rng::from_bytes(input);
    let p = program_at(&mut rng, u64::from(input.first().copied().unwrap_or(0)));
    let Ok(cases) = gen::build(&p, "fuzz") else { return Ok(()) };
    let opts = Options { full_budget: 1_000_000, gas_points: 8, assume_verified: true, ..Options::default() };
    for case in &cases {
        run_both_with(case, &opts)
            .map_err(|d| format!("divergence on {}:\n{d}\n{}", case.describe(), p.units.join("\n")))?;
    }
    Ok(())
}

/// The program at `index` of a stream.
pub fn program_at(rng: &mut Rng, index: u64) -> Program {
    if index % 4 == 3 {
        gen::single::generate(rng)
    } else {
        gen::program::generate(rng)
    }
}
