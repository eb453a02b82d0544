//! Loop counters whose step cannot wrap.
//!
//! `while (i < n) { ...; i = i + 1 }` compiles to a branch on
//! `copy_loc i; <n>; lt` and, in the body, `move_loc i; ld 1; add`. On the
//! branch's true edge `i < n <= MAX`, so `i + 1` cannot overflow while `i`
//! is not written again; likewise `i > x` (or `i != 0`) makes `i - 1`
//! unable to underflow. This is a forward must-analysis over the blocks:
//! a fact about a local is made by a branch edge and ends at the next
//! `st_loc` (or borrow) of that local; a block starts with the facts every
//! way into it carries. The lowering then emits such a step without its
//! overflow test (a failure site that can never fail).

use movejit_format::{cfg, Bytecode, CodeUnit};
use std::collections::HashMap;

/// A set of locals, one bit each (functions have at most 256 locals).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Locals([u64; 4]);

impl Locals {
    const NONE: Locals = Locals([0; 4]);
    const ALL: Locals = Locals([u64::MAX; 4]);

    fn has(&self, l: u8) -> bool {
        self.0[l as usize / 64] >> (l % 64) & 1 == 1
    }
    fn with(mut self, l: u8) -> Locals {
        self.0[l as usize / 64] |= 1 << (l % 64);
        self
    }
    fn and(self, o: Locals) -> Locals {
        Locals(std::array::from_fn(|i| self.0[i] & o.0[i]))
    }
    fn minus(self, o: Locals) -> Locals {
        Locals(std::array::from_fn(|i| self.0[i] & !o.0[i]))
    }
}

/// What is known about locals at a point: which are below some value
/// (adding 1 fits) and which are above some value (subtracting 1 fits).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Facts {
    below: Locals,
    above: Locals,
}

impl Facts {
    const NONE: Facts = Facts { below: Locals::NONE, above: Locals::NONE };
    const ALL: Facts = Facts { below: Locals::ALL, above: Locals::ALL };

    fn meet(self, o: Facts) -> Facts {
        Facts { below: self.below.and(o.below), above: self.above.and(o.above) }
    }
    fn kill(self, k: Locals) -> Facts {
        Facts { below: self.below.minus(k), above: self.above.minus(k) }
    }
    fn add(mut self, f: Fact) -> Facts {
        match f {
            Some((l, Side::Below)) => self.below = self.below.with(l),
            Some((l, Side::Above)) => self.above = self.above.with(l),
            None => {}
        }
        self
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Side {
    Below,
    Above,
}

pub(super) struct Counters {
    /// Block start -> its index in code order.
    index: HashMap<usize, usize>,
    /// Per block: the facts it starts with.
    entry: Vec<Facts>,
}

impl Counters {
    pub(super) fn new(unit: &CodeUnit, blocks: &[(usize, usize)]) -> Self {
        let code = &unit.code;
        let index: HashMap<usize, usize> = blocks.iter().enumerate().map(|(i, &(s, _))| (s, i)).collect();
        let n = blocks.len();
        // Per block: (successor, facts the edge adds).
        let mut edges: Vec<Vec<(usize, Facts)>> = vec![Vec::new(); n];
        let mut kills = vec![Locals::NONE; n];
        for (b, &(s, e)) in blocks.iter().enumerate() {
            let Some(body) = code.get(s..e) else { continue };
            for ins in body {
                if let Bytecode::StLoc(l) | Bytecode::MutBorrowLoc(l) | Bytecode::ImmBorrowLoc(l) = ins {
                    kills[b] = kills[b].with(*l);
                }
            }
            if e == 0 {
                continue;
            }
            let (on_true, on_false) = branch_facts(code, s, e);
            let (t_true, t_false) = match code[e - 1] {
                Bytecode::BrTrue(t) => (Some(t as usize), Some(e)),
                Bytecode::BrFalse(t) => (Some(e), Some(t as usize)),
                _ => (None, None),
            };
            for succ in cfg::successors(unit, e - 1) {
                let Some(&t) = index.get(&succ) else { continue };
                // An edge that is both ways of the branch learns nothing.
                let gen = if t_true == t_false {
                    None
                } else if Some(succ) == t_true {
                    on_true
                } else if Some(succ) == t_false {
                    on_false
                } else {
                    None
                };
                edges[b].push((t, Facts::NONE.add(gen)));
            }
        }
        // Greatest fixpoint: start from "everything" and meet over the
        // ways in until nothing changes; the entry block starts empty.
        let mut entry = vec![Facts::ALL; n];
        if n > 0 {
            entry[0] = Facts::NONE;
        }
        let mut changed = true;
        while changed {
            changed = false;
            let mut next = vec![Facts::ALL; n];
            if n > 0 {
                next[0] = Facts::NONE;
            }
            for b in 0..n {
                let out = entry[b].kill(kills[b]);
                for &(t, gen) in &edges[b] {
                    let f = Facts { below: or(out.below, gen.below), above: or(out.above, gen.above) };
                    next[t] = next[t].meet(f);
                }
            }
            if next != entry {
                entry = next;
                changed = true;
            }
        }
        Counters { index, entry }
    }

    /// Whether the `add` or `sub` at `i`, in the block starting at
    /// `start`, is `<local> ± 1` on a local whose step cannot wrap there.
    pub(super) fn step_fits(&self, code: &[Bytecode], start: usize, i: usize) -> bool {
        let Some(&b) = self.index.get(&start) else { return false };
        if i < start + 2 {
            return false;
        }
        let Some(l) = read_local(&code[i - 2]) else { return false };
        if !is_one(&code[i - 1]) {
            return false;
        }
        let side = match code[i] {
            Bytecode::Add => Side::Below,
            Bytecode::Sub => Side::Above,
            _ => return false,
        };
        let mut f = self.entry[b];
        for ins in &code[start..i - 2] {
            if let Bytecode::StLoc(k) | Bytecode::MutBorrowLoc(k) | Bytecode::ImmBorrowLoc(k) = ins {
                f = f.kill(Locals::NONE.with(*k));
            }
        }
        match side {
            Side::Below => f.below.has(l),
            Side::Above => f.above.has(l),
        }
    }
}

fn or(a: Locals, b: Locals) -> Locals {
    Locals(std::array::from_fn(|i| a.0[i] | b.0[i]))
}

fn read_local(i: &Bytecode) -> Option<u8> {
    match i {
        Bytecode::CopyLoc(l) | Bytecode::MoveLoc(l) => Some(*l),
        _ => None,
    }
}

fn is_one(i: &Bytecode) -> bool {
    use Bytecode::*;
    matches!(i, LdU8(1) | LdU16(1) | LdU32(1) | LdU64(1) | LdU128(1))
}

fn is_zero(i: &Bytecode) -> bool {
    use Bytecode::*;
    matches!(i, LdU8(0) | LdU16(0) | LdU32(0) | LdU64(0) | LdU128(0))
}

/// A constant of at least 1.
fn is_positive(i: &Bytecode) -> bool {
    use Bytecode::*;
    match *i {
        LdU8(x) => x >= 1,
        LdU16(x) => x >= 1,
        LdU32(x) => x >= 1,
        LdU64(x) => x >= 1,
        LdU128(x) => x >= 1,
        _ => false,
    }
}

/// Pushes one value, pops none, writes no local.
fn plain_push(i: &Bytecode) -> bool {
    use Bytecode::*;
    matches!(i, CopyLoc(_) | MoveLoc(_) | LdU8(_) | LdU16(_) | LdU32(_) | LdU64(_) | LdU128(_) | LdU256(_) | LdConst(_))
}

/// What one edge learns: a local is below or above some value.
type Fact = Option<(u8, Side)>;

/// The facts the two edges of the conditional branch ending block
/// `[s, e)` make: `(on true, on false)`.
fn branch_facts(code: &[Bytecode], s: usize, e: usize) -> (Fact, Fact) {
    use Bytecode::*;
    let none = (None, None);
    if e < s + 4 || !matches!(code[e - 1], BrTrue(_) | BrFalse(_)) {
        return none;
    }
    let cmp = &code[e - 2];
    // The compared local as the right operand: `<x>; copy_loc l; cmp`.
    let right = read_local(&code[e - 3]);
    // ... or as the left one: `copy_loc l; <x>; cmp`, where `<x>` is one
    // plain push, or a plain push then `vec_len`.
    let left = if plain_push(&code[e - 3]) {
        read_local(&code[e - 4])
    } else if matches!(code[e - 3], VecLen(_)) && e >= s + 5 && plain_push(&code[e - 4]) {
        read_local(&code[e - 5])
    } else {
        None
    };
    let facts = |l: Option<u8>, t: Option<Side>, f: Option<Side>| match l {
        Some(l) => (t.map(|s| (l, s)), f.map(|s| (l, s))),
        None => none,
    };
    let (below, above) = (Some(Side::Below), Some(Side::Above));
    if let Some(l) = left {
        // `l < x`, `l <= x`, `l > x`, `l >= x` on their true and false edges.
        // `l >= c` for a constant `c >= 1` makes `l - 1` fit too.
        let at_least_one = if is_positive(&code[e - 3]) { above } else { None };
        let r = match cmp {
            Lt => facts(Some(l), below, at_least_one),
            Le => facts(Some(l), None, above),
            Gt => facts(Some(l), above, None),
            Ge => facts(Some(l), at_least_one, below),
            Neq if is_zero(&code[e - 3]) => facts(Some(l), above, None),
            Eq if is_zero(&code[e - 3]) => facts(Some(l), None, above),
            _ => none,
        };
        if r != none {
            return r;
        }
    }
    if let Some(l) = right {
        // `x < l` and the rest, mirrored.
        let at_least_one = if is_positive(&code[e - 4]) { above } else { None };
        return match cmp {
            Lt => facts(Some(l), above, None),
            Le => facts(Some(l), at_least_one, below),
            Gt => facts(Some(l), below, at_least_one),
            Ge => facts(Some(l), None, above),
            Neq if is_zero(&code[e - 4]) => facts(Some(l), above, None),
            Eq if is_zero(&code[e - 4]) => facts(Some(l), None, above),
            _ => none,
        };
    }
    none
}

#[cfg(test)]
mod tests {
    use super::*;
    use movejit_format::{Bytecode::*, SignatureIndex};

    fn unit(code: Vec<Bytecode>) -> CodeUnit {
        CodeUnit { locals: SignatureIndex(0), code, jump_tables: vec![] }
    }

    /// Which `± 1` steps of `code` the analysis finds unable to wrap.
    fn fitting(code: Vec<Bytecode>) -> Vec<usize> {
        let u = unit(code);
        let blocks = cfg::basic_blocks(&u);
        let c = Counters::new(&u, &blocks);
        let mut out = Vec::new();
        for &(s, e) in &blocks {
            for i in s..e {
                if c.step_fits(&u.code, s, i) {
                    out.push(i);
                }
            }
        }
        out
    }

    /// (what, code, the offsets of the steps that cannot wrap).
    #[rustfmt::skip]
    fn cases() -> Vec<(&'static str, Vec<Bytecode>, Vec<usize>)> {
        vec![
            (
                // while (l1 < l0) l1 = l1 + 1; the step after the loop wraps.
                "counting up to a bound",
                vec![
                    CopyLoc(1), CopyLoc(0), Lt, BrFalse(9),
                    MoveLoc(1), LdU64(1), Add, StLoc(1), Branch(0),
                    MoveLoc(1), LdU64(1), Add, Ret,
                ],
                vec![6],
            ),
            (
                // The counter written before its step: nothing known.
                "written in the body",
                vec![
                    CopyLoc(1), CopyLoc(0), Lt, BrFalse(11),
                    LdU64(7), StLoc(1), MoveLoc(1), LdU64(1), Add, StLoc(1), Branch(0),
                    Ret,
                ],
                vec![],
            ),
            (
                // while (l1 > 0) l1 = l1 - 1, and `l1 + 1` is not covered.
                "counting down",
                vec![
                    CopyLoc(1), LdU64(0), Gt, BrFalse(12),
                    CopyLoc(1), LdU64(1), Add, Pop,
                    MoveLoc(1), LdU64(1), Sub, StLoc(1),
                    Ret,
                ],
                vec![10],
            ),
            (
                // if (l1 != 0) l1 - 1 else l1 - 1: only the true edge knows.
                "not zero, both edges",
                vec![
                    CopyLoc(1), LdU64(0), Neq, BrTrue(8),
                    CopyLoc(1), LdU64(1), Sub, Ret,
                    CopyLoc(1), LdU64(1), Sub, Ret,
                ],
                vec![10],
            ),
            (
                // if (l0 >= l1) ... else l0 + 1 (l0 < l1); one fact per
                // branch, so l1 - 1 keeps its test.
                "mirrored, false edge",
                vec![
                    CopyLoc(0), CopyLoc(1), Ge, BrTrue(11),
                    CopyLoc(1), LdU64(1), Sub, CopyLoc(0), LdU64(1), Add, Ret,
                    Ret,
                ],
                vec![9],
            ),
            (
                // if (l0 < 2) l0 else l0 - 1 + (l0 - 2): the false edge
                // knows l0 >= 2 >= 1 (only `- 1` is covered).
                "below a constant, false edge",
                vec![
                    CopyLoc(0), LdU64(2), Lt, BrFalse(6),
                    CopyLoc(0), Ret,
                    CopyLoc(0), LdU64(1), Sub, CopyLoc(0), LdU64(2), Sub, Add, Ret,
                ],
                vec![8],
            ),
            (
                // if (1 <= l0) l0 - 1 else (if (0 > l0) ...): the mirrored
                // forms; a bound of 0 makes no fact.
                "mirrored constants",
                vec![
                    LdU64(1), CopyLoc(0), Le, BrFalse(8),
                    CopyLoc(0), LdU64(1), Sub, Ret,
                    LdU64(0), CopyLoc(0), Le, BrFalse(16),
                    CopyLoc(0), LdU64(1), Sub, Ret,
                    CopyLoc(0), LdU64(1), Sub, Ret,
                ],
                vec![6],
            ),
            (
                // A join where one way in knows nothing.
                "join",
                vec![
                    CopyLoc(1), CopyLoc(0), Lt, BrTrue(6),
                    LdU64(0), Pop,
                    MoveLoc(1), LdU64(1), Add, Ret,
                ],
                vec![],
            ),
            (
                // Borrowed in between: the fact ends.
                "borrowed",
                vec![
                    CopyLoc(1), CopyLoc(0), Lt, BrFalse(9),
                    ImmBorrowLoc(1), Pop, CopyLoc(1), LdU64(1), Add,
                    Ret,
                ],
                vec![],
            ),
        ]
    }

    #[test]
    fn steps_that_cannot_wrap() {
        for (what, code, want) in cases() {
            assert_eq!(fitting(code), want, "{what}");
        }
    }
}
