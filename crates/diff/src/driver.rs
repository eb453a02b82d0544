//! Batches of generated programs on both executors, with statistics.

#![forbid(unsafe_code)]

use crate::coverage::{family, Coverage};
use crate::gen::{self, Program, Rejected};
use crate::harness::{run_both_with, JitVerdict, Options};
use crate::outcome::Divergence;
use crate::rng::Rng;
use crate::Case;
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
    /// Cases compared on both executors.
    pub compared: u64,
    /// Cases the JIT does not compile yet, by reason (interpreter only).
    pub unsupported: BTreeMap<String, u64>,
    /// Executions compared (full + tiny-gas reruns) and out-of-gas among them.
    pub runs: u64,
    pub out_of_gas: u64,
    /// Interpreter statuses of the full runs.
    pub statuses: BTreeMap<String, u64>,
    pub divergences: Vec<Found>,
    /// Opcodes of every verified generated module, and of those compared.
    pub generated: Coverage,
    pub compared_ops: Coverage,
}

impl Stats {
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
        if let Some(m) = cases.first().and_then(|c| c.modules.last()) {
            self.generated.add_module(m);
        }
        let mut any_compared = false;
        for (i, case) in cases.iter().enumerate() {
            self.cases += 1;
            match run_both_with(case, opts) {
                Ok(c) => {
                    *self.statuses.entry(c.outcome.status.name().to_string()).or_default() += 1;
                    self.runs += c.runs;
                    self.out_of_gas += c.out_of_gas;
                    match c.jit {
                        JitVerdict::Agreed => {
                            self.compared += 1;
                            any_compared = true;
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
        if any_compared {
            if let Some(m) = cases.first().and_then(|c| c.modules.last()) {
                self.compared_ops.add_module(m);
            }
        }
    }

    /// Program `index` of the stream named by `seed`: one in four is a
    /// single-instruction program.
    pub fn run_generated(&mut self, seed: u64, index: u64, opts: &Options) {
        let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ index);
        let p = program_at(&mut rng, index);
        let opts = &Options { assume_verified: true, ..opts.clone() };
        if index % 4 == 3 {
            self.single_instruction += 1;
        } else {
            self.programs += 1;
        }
        self.run_program(&p, &format!("seed {seed} #{index}"), opts);
    }

    /// A summary: counts, rejections, unsupported reasons, and per opcode
    /// family how many opcodes were generated and compared.
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
        let _ = writeln!(
            s,
            "cases: {} — compared on both executors {}, jit unsupported {}; executions compared {} ({} out of gas); divergences {}",
            self.cases,
            self.compared,
            self.unsupported.values().sum::<u64>(),
            self.runs,
            self.out_of_gas,
            self.divergences.len()
        );
        for (r, n) in &self.unsupported {
            let _ = writeln!(s, "  jit: unsupported {n:>6}  {r}");
        }
        let st: Vec<String> = self.statuses.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(s, "statuses (full budget): {}", st.join(" "));
        let mut fams: BTreeMap<&str, (u64, u64, u64, u64)> = BTreeMap::new();
        for op in movejit_format::Opcode::ALL {
            let e = fams.entry(family(*op)).or_default();
            e.0 += 1;
            let g = self.generated.counts.get(op).copied().unwrap_or(0);
            let c = self.compared_ops.counts.get(op).copied().unwrap_or(0);
            e.1 += u64::from(g > 0);
            e.2 += g;
            e.3 += c;
        }
        let _ = writeln!(s, "{:<16} {:>9} {:>12} {:>14}", "family", "opcodes", "generated", "in compared");
        for (f, (n, seen, g, c)) in fams {
            let _ = writeln!(s, "{f:<16} {seen:>4}/{n:<4} {g:>12} {c:>14}");
        }
        let missing: Vec<&str> = self.generated.missing().iter().map(|o| o.name()).collect();
        let _ = writeln!(s, "opcodes never generated: {}", if missing.is_empty() { "none".into() } else { missing.join(" ") });
        s
    }
}

/// The program at `index` of a stream.
pub fn program_at(rng: &mut Rng, index: u64) -> Program {
    if index % 4 == 3 {
        gen::single::generate(rng)
    } else {
        gen::program::generate(rng)
    }
}
