//! Control flow: code is non-empty and cannot fall off its end; loops are
//! well formed. For bytecode v6+ that means a reducible CFG (Tarjan's test)
//! with bounded loop depth; v5 keeps Move's older structural rule (back
//! jumps only to the innermost loop head, breaks only to just after the
//! loop, no jumps into a loop's middle).
//!
//! The v5 rule is chosen by the module's version alone, as in Aptos
//! (`move-bytecode-verifier/src/control_flow.rs`, `verify_function`:
//! `if module.version() <= 5 { control_flow_v5::verify(..) }`, same for
//! scripts). No `VerifierConfig` field or feature flag selects it and
//! `aptos_prod_verifier_config` has none, so a v5 module published or
//! loaded today always gets the v5 rule. Code the current compiler emits
//! for v5 can fail it: the compiler verifies its in-memory module at
//! `VERSION_MAX` (reducibility) and only then serializes at the requested
//! version, so its own check never ran the v5 rule. Such modules (e.g.
//! shared code after an `if` chain inside a loop, which jumps back to a
//! block that is not the innermost loop head) are rejected by the real VM,
//! and here, with INVALID_LOOP_CONTINUE / _BREAK / _SPLIT.

use crate::{
    binary::FunctionContext,
    cfg::{BlockId, Cfg},
    config::VerifierConfig,
    error::VerifyResult,
};
use movejit_format::{Bytecode, CompiledModule, StatusCode};
use std::collections::BTreeSet;

pub(crate) fn verify(m: &CompiledModule, config: &VerifierConfig, f: &FunctionContext) -> VerifyResult<Cfg> {
    let code = &f.code.code;
    match code.last() {
        None => return Err(crate::VerifyError::at_function(StatusCode::EMPTY_CODE_UNIT, f.index)),
        Some(last) if !last.is_unconditional_branch() => {
            return Err(f.err(StatusCode::INVALID_FALL_THROUGH, (code.len() - 1) as u16))
        }
        Some(_) => {}
    }
    if m.version <= 5 {
        v5::verify(config, f)?;
        Ok(Cfg::new(f.code))
    } else {
        let cfg = Cfg::new(f.code);
        verify_reducible(config, f, &cfg)?;
        Ok(cfg)
    }
}

/// Depth-first numbering of the reachable blocks, with each node's
/// descendant count, back edges and other predecessor edges.
struct LoopSummary {
    blocks: Vec<BlockId>,
    descs: Vec<usize>,
    backs: Vec<Vec<usize>>,
    preds: Vec<Vec<usize>>,
}

impl LoopSummary {
    fn new(cfg: &Cfg) -> Self {
        enum Action {
            Visit { from: usize, to: BlockId },
            Finish { block: BlockId, node: usize, parent: usize },
        }
        enum Ex {
            InProgress(usize),
            Done(usize),
        }
        let n = cfg.num_blocks();
        let mut s =
            LoopSummary { blocks: vec![0; n], descs: vec![0; n], backs: vec![vec![]; n], preds: vec![vec![]; n] };
        let mut exploration = std::collections::BTreeMap::new();
        let mut next = 1usize;
        exploration.insert(0u16, Ex::InProgress(0));
        let mut stack: Vec<Action> = cfg.successors_of(0).iter().map(|t| Action::Visit { from: 0, to: *t }).collect();
        while let Some(a) = stack.pop() {
            match a {
                Action::Finish { block, node, parent } => {
                    s.descs[parent] += 1 + s.descs[node];
                    exploration.insert(block, Ex::Done(node));
                }
                Action::Visit { from, to } => match exploration.get(&to) {
                    Some(Ex::InProgress(t)) => s.backs[*t].push(from),
                    Some(Ex::Done(t)) => s.preds[*t].push(from),
                    None => {
                        let node = next;
                        next += 1;
                        exploration.insert(to, Ex::InProgress(node));
                        s.blocks[node] = to;
                        s.preds[node].push(from);
                        stack.push(Action::Finish { block: to, node, parent: from });
                        stack.extend(cfg.successors_of(to).iter().map(|t| Action::Visit { from: node, to: *t }));
                    }
                },
            }
        }
        s.blocks.truncate(next);
        s
    }
    fn is_descendant(&self, anc: usize, desc: usize) -> bool {
        anc <= desc && desc <= anc + self.descs[anc]
    }
}

/// Union-find over loop nodes: each node points at the head of the loop it
/// was collapsed into.
struct Partition {
    parents: Vec<usize>,
    depths: Vec<u16>,
}

impl Partition {
    fn containing_loop(&mut self, id: usize) -> usize {
        let mut root = id;
        while self.parents[root] != root {
            root = self.parents[root];
        }
        let mut cur = id;
        while self.parents[cur] != root {
            let nxt = self.parents[cur];
            self.parents[cur] = root;
            cur = nxt;
        }
        root
    }
    fn collapse(&mut self, head: usize, body: &BTreeSet<usize>) -> u16 {
        let mut depth = self.depths[head];
        for c in body {
            self.parents[*c] = head;
            depth = depth.max(self.depths[*c]);
        }
        depth += 1;
        self.depths[head] = depth;
        depth
    }
}

fn verify_reducible(config: &VerifierConfig, f: &FunctionContext, cfg: &Cfg) -> VerifyResult {
    let summary = LoopSummary::new(cfg);
    let n = summary.blocks.len();
    let mut part = Partition { parents: (0..n).collect(), depths: vec![0; n] };
    for head in (0..n).rev() {
        if summary.backs[head].is_empty() {
            continue;
        }
        let mut body = BTreeSet::new();
        for node in summary.backs[head].clone() {
            let node = part.containing_loop(node);
            if node != head {
                body.insert(node);
            }
        }
        let mut frontier: Vec<usize> = body.iter().copied().collect();
        while let Some(node) = frontier.pop() {
            for pred in summary.preds[node].clone() {
                let pred = part.containing_loop(pred);
                if !summary.is_descendant(head, pred) {
                    return Err(f.err(StatusCode::INVALID_LOOP_SPLIT, summary.blocks[pred]));
                }
                if pred != head && body.insert(pred) {
                    frontier.push(pred);
                }
            }
        }
        let depth = part.collapse(head, &body);
        if let Some(max) = config.max_loop_depth {
            if depth as usize > max {
                return Err(f.err(StatusCode::LOOP_MAX_DEPTH_REACHED, summary.blocks[head]));
            }
        }
    }
    Ok(())
}

mod v5 {
    //! The bytecode-v5 loop rule: loops are the spans from a back-jump
    //! target to its last back jump, properly nested.
    use super::*;

    #[derive(Clone, Copy)]
    enum Label {
        Loop { last_continue: u16 },
        Code,
    }

    fn back_target(i: u16, instr: &Bytecode) -> Option<u16> {
        instr.branch_target().filter(|t| *t <= i)
    }

    pub(super) fn verify(config: &VerifierConfig, f: &FunctionContext) -> VerifyResult {
        let code = &f.code.code;
        let mut labels = vec![Label::Code; code.len()];
        for (i, instr) in code.iter().enumerate() {
            if let Some(t) = back_target(i as u16, instr) {
                labels[t as usize] = Label::Loop { last_continue: i as u16 };
            }
        }
        // Back jumps only to the innermost loop's head.
        walk(f, &labels, |stack, i, instr| match back_target(i, instr) {
            Some(t) if stack.last().map(|(h, _)| *h) != Some(t) => Err(f.err(StatusCode::INVALID_LOOP_CONTINUE, i)),
            _ => Ok(()),
        })?;
        // Breaks go exactly to the instruction after the loop's last continue.
        walk(f, &labels, |stack, i, instr| match instr.branch_target() {
            Some(t) if t > i => match stack.last() {
                Some((_, last)) if t > *last && t != *last + 1 => Err(f.err(StatusCode::INVALID_LOOP_BREAK, i)),
                _ => Ok(()),
            },
            _ => Ok(()),
        })?;
        let depth = loop_depths(&labels);
        // Forward jumps that are not breaks stay at the same loop depth.
        walk(f, &labels, |stack, i, instr| match instr.branch_target() {
            Some(j) if j > i && stack.last().is_none_or(|(_, last)| j <= *last) => {
                let after = match labels[j as usize] {
                    Label::Loop { .. } => depth[j as usize].saturating_sub(1),
                    Label::Code => depth[j as usize],
                };
                if depth[i as usize] != after {
                    Err(f.err(StatusCode::INVALID_LOOP_SPLIT, i))
                } else {
                    Ok(())
                }
            }
            _ => Ok(()),
        })?;
        if let Some(max) = config.max_loop_depth {
            for (i, d) in depth.iter().enumerate() {
                if *d > max {
                    return Err(f.err(StatusCode::LOOP_MAX_DEPTH_REACHED, i as u16));
                }
            }
        }
        Ok(())
    }

    /// Runs `check` over the code with the stack of enclosing loops
    /// (head, last continue) at each instruction.
    fn walk(
        f: &FunctionContext,
        labels: &[Label],
        mut check: impl FnMut(&Vec<(u16, u16)>, u16, &Bytecode) -> VerifyResult,
    ) -> VerifyResult {
        let mut stack: Vec<(u16, u16)> = vec![];
        for (i, instr) in f.code.code.iter().enumerate() {
            let i = i as u16;
            if let Label::Loop { last_continue } = labels[i as usize] {
                stack.push((i, last_continue));
            }
            check(&stack, i, instr)?;
            if back_target(i, instr).is_some() {
                match stack.last() {
                    Some((_, last)) if *last == i => {
                        stack.pop();
                    }
                    Some(_) => {}
                    None => return Err(f.err(StatusCode::INVALID_LOOP_CONTINUE, i)),
                }
            }
        }
        Ok(())
    }

    fn loop_depths(labels: &[Label]) -> Vec<usize> {
        let ends: BTreeSet<u16> = labels
            .iter()
            .filter_map(|l| match l {
                Label::Loop { last_continue } => Some(*last_continue),
                Label::Code => None,
            })
            .collect();
        let mut count = 0usize;
        let mut out = Vec::with_capacity(labels.len());
        for (i, l) in labels.iter().enumerate() {
            if let Label::Loop { .. } = l {
                count += 1;
            }
            out.push(count);
            if ends.contains(&(i as u16)) {
                count = count.saturating_sub(1);
            }
        }
        out
    }
}
