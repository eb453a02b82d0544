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
    let text = p.units.last()?.clone();
    diverges(p, &text, call, opts)?;
    let called = p.calls.get(call)?.0.clone();
    let small = shrink(&text, &called, |t| diverges(p, t, call, opts).is_some());
    let d = diverges(p, &small, call, opts)?;
    Some((small, d))
}

/// Delta debugging over `.masm` text: drops functions other than `keep`,
/// then chunks of instruction lines (halving the chunk size), keeping each
/// removal after which `still` holds.
pub fn shrink(text: &str, keep: &str, mut still: impl FnMut(&str) -> bool) -> String {
    let mut text = text.to_string();
    loop {
        let mut changed = false;
        let chunks: Vec<&str> = text.split("\n\n").collect();
        for i in 0..chunks.len() {
            let c = chunks[i].trim_start();
            if !c.starts_with("public fun")
                || c.starts_with(&format!("public fun {keep}("))
                || c.starts_with(&format!("public fun {keep}<"))
            {
                continue;
            }
            let candidate: Vec<&str> = chunks.iter().enumerate().filter(|(k, _)| *k != i).map(|(_, c)| *c).collect();
            let candidate = candidate.join("\n\n");
            if still(&candidate) {
                text = candidate;
                changed = true;
                break;
            }
        }
        if !changed {
            break;
        }
    }
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut chunk = lines.iter().filter(|l| removable(l)).count().max(1);
    loop {
        let mut start = 0;
        loop {
            let idx: Vec<usize> = (0..lines.len()).filter(|&i| removable(&lines[i])).collect();
            if start >= idx.len() {
                break;
            }
            let drop = &idx[start..(start + chunk).min(idx.len())];
            let candidate: Vec<String> =
                lines.iter().enumerate().filter(|(i, _)| !drop.contains(i)).map(|(_, l)| l.clone()).collect();
            if still(&(candidate.join("\n") + "\n")) {
                lines = candidate;
            } else {
                start += chunk;
            }
        }
        if chunk == 1 {
            break;
        }
        chunk /= 2;
    }
    // Sliding windows: stack code often needs a few adjacent lines to go
    // together (operands with their operator, a value with its st_loc).
    for w in [2usize, 3, 4, 5, 6, 8] {
        let mut start = 0;
        loop {
            let idx: Vec<usize> = (0..lines.len()).filter(|&i| removable(&lines[i])).collect();
            if start + w > idx.len() {
                break;
            }
            let drop = &idx[start..start + w];
            let candidate: Vec<String> =
                lines.iter().enumerate().filter(|(i, _)| !drop.contains(i)).map(|(_, l)| l.clone()).collect();
            if still(&(candidate.join("\n") + "\n")) {
                lines = candidate;
            } else {
                start += 1;
            }
        }
    }
    lines.join("\n") + "\n"
}
