//! Delta debugging of a diverging generated module: drop instruction lines
//! and whole functions while the module still assembles, verifies and
//! diverges.

#![forbid(unsafe_code)]

use crate::gen::{self, Program};
use crate::harness::{run_both_with, Options};
use crate::outcome::Divergence;

/// Does call `call` of `p` (with the generated module text `text`) still
/// diverge? The divergence if so.
fn diverges(p: &Program, text: &str, call: usize, opts: &Options) -> Option<Divergence> {
    let mut q = p.clone();
    if let Some(last) = q.units.last_mut() {
        *last = text.to_string();
    }
    q.calls = vec![q.calls.get(call)?.clone()];
    let cases = gen::build(&q, "min").ok()?;
    run_both_with(cases.first()?, opts).err()
}

/// A line the minimizer may delete: an instruction (indented, not a
/// `local` declaration or an import).
fn removable(line: &str) -> bool {
    line.starts_with("    ") && !line.trim_start().starts_with("local ") && !line.trim_start().starts_with("fun ")
        || (line.ends_with(':') && !line.starts_with(' '))
}

/// Shrinks the generated module of `p` for call `call`; the smallest text
/// found that still diverges, with its divergence.
pub fn minimize(p: &Program, call: usize, opts: &Options) -> Option<(String, Divergence)> {
    let mut text = p.units.last()?.clone();
    let mut best = diverges(p, &text, call, opts)?;
    // Whole functions other than the one called.
    let called = &p.calls.get(call)?.0;
    loop {
        let mut changed = false;
        let chunks: Vec<&str> = text.split("\n\n").collect();
        for i in 0..chunks.len() {
            let c = chunks[i];
            if !c.trim_start().starts_with("public fun") || c.contains(&format!("public fun {called}(")) || c.contains(&format!("public fun {called}<")) {
                continue;
            }
            let candidate: Vec<&str> = chunks.iter().enumerate().filter(|(k, _)| *k != i).map(|(_, c)| *c).collect();
            let candidate = candidate.join("\n\n");
            if let Some(d) = diverges(p, &candidate, call, opts) {
                text = candidate;
                best = d;
                changed = true;
                break;
            }
        }
        if !changed {
            break;
        }
    }
    // Lines, ddmin-style: chunks of removable lines, halving.
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut chunk = lines.iter().filter(|l| removable(l)).count().max(1);
    while chunk >= 1 {
        let mut start = 0;
        let mut progressed = false;
        loop {
            let idx: Vec<usize> = (0..lines.len()).filter(|&i| removable(&lines[i])).collect();
            if start >= idx.len() {
                break;
            }
            let drop: Vec<usize> = idx[start..(start + chunk).min(idx.len())].to_vec();
            let candidate: Vec<String> =
                lines.iter().enumerate().filter(|(i, _)| !drop.contains(i)).map(|(_, l)| l.clone()).collect();
            let joined = candidate.join("\n") + "\n";
            if let Some(d) = diverges(p, &joined, call, opts) {
                lines = candidate;
                best = d;
                progressed = true;
            } else {
                start += chunk;
            }
        }
        if chunk == 1 && !progressed {
            break;
        }
        if chunk > 1 {
            chunk /= 2;
        }
    }
    Some((lines.join("\n") + "\n", best))
}
