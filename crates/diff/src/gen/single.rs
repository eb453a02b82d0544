//! The single-instruction generator: one opcode at one width with edge
//! operands (parameters, or constants for the JIT's constant fast paths), in
//! a function that does nothing else. [`IntOp`] is also what the boundary
//! table (`crate::boundary`) enumerates, with [`IntOp::eval`] as its oracle.

#![forbid(unsafe_code)]

use super::program::{Expect, Program, ADDRESS, MODULE};
use super::ty::{shift_amount, Int, IntGen, Sc, SHIFT_EDGES};
use crate::rng::Rng;
use ethnum::I256;

/// Binary arithmetic; the last three are unsigned only.
pub const ARITH: [&str; 8] = ["add", "sub", "mul", "div", "mod", "bit_or", "bit_and", "xor"];
pub const COMPARE: [&str; 6] = ["lt", "gt", "le", "ge", "eq", "neq"];
pub const SHIFT: [&str; 2] = ["shl", "shr"];

/// An integer instruction over operands of one type `t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntOp {
    /// One of [`ARITH`]: (t, t) -> t.
    Arith(&'static str),
    /// One of [`SHIFT`]: (t, u8) -> t, unsigned `t` only.
    Shift(&'static str),
    /// One of [`COMPARE`]: (t, t) -> bool.
    Compare(&'static str),
    /// `cast_<to>`: t -> to.
    Cast(Int),
    /// t -> t, signed `t` only.
    Negate,
}

/// Where an operand comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// The next parameter.
    Param,
    /// An immediate load (`ld_u8` … `ld_i256`).
    Imm(I256),
    /// A constant-pool load (`ld_const <t>`).
    Const(I256),
}

impl IntOp {
    /// Every integer instruction the verifier accepts on `t` (casts to each
    /// of `targets`).
    pub fn all(t: Int, targets: &[Int]) -> Vec<IntOp> {
        let mut ops: Vec<IntOp> =
            ARITH.iter().filter(|o| !t.signed() || !is_bitwise(o)).map(|o| IntOp::Arith(o)).collect();
        if !t.signed() {
            ops.extend(SHIFT.iter().map(|o| IntOp::Shift(o)));
        }
        ops.extend(COMPARE.iter().map(|o| IntOp::Compare(o)));
        ops.extend(targets.iter().map(|to| IntOp::Cast(*to)));
        if t.signed() {
            ops.push(IntOp::Negate);
        }
        ops
    }

    pub fn mnemonic(self) -> String {
        match self {
            IntOp::Arith(o) | IntOp::Shift(o) | IntOp::Compare(o) => o.to_string(),
            IntOp::Cast(to) => format!("cast_{}", to.name()),
            IntOp::Negate => "negate".into(),
        }
    }

    /// The operand types on `t`.
    pub fn operands(self, t: Int) -> Vec<Int> {
        match self {
            IntOp::Arith(_) | IntOp::Compare(_) => vec![t, t],
            IntOp::Shift(_) => vec![t, Int::U8],
            IntOp::Cast(_) | IntOp::Negate => vec![t],
        }
    }

    pub fn result(self, t: Int) -> Sc {
        match self {
            IntOp::Compare(_) => Sc::Bool,
            IntOp::Cast(to) => Sc::Int(to),
            _ => Sc::Int(t),
        }
    }

    /// Move's result of the instruction on `args` (values as in
    /// [`Int::range`]; a bool result as 0 or 1), or `None` for
    /// `ARITHMETIC_ERROR`. Written from the language's rules (checked
    /// arithmetic over the mathematical values, value-preserving casts,
    /// shifts below the width dropping high bits, `MIN / -1` and
    /// `MIN % -1` overflow), not from either executor.
    pub fn eval(self, t: Int, args: &[I256]) -> Option<I256> {
        let (a, b) = (args[0], args.get(1).copied().unwrap_or_default());
        match self {
            IntOp::Arith(op) if t.signed() => {
                let (min, _) = t.range();
                let r = match op {
                    "add" => a.checked_add(b)?,
                    "sub" => a.checked_sub(b)?,
                    "mul" => a.checked_mul(b)?,
                    "div" | "mod" if b == I256::MINUS_ONE && a == min => return None,
                    "div" => a.checked_div(b)?,
                    "mod" => a.checked_rem(b)?,
                    _ => unreachable!("{op} on {t:?}"),
                };
                t.contains(r).then_some(r)
            }
            IntOp::Arith(op) => {
                let (x, y) = (a.as_u256(), b.as_u256());
                let r = match op {
                    "add" => x.checked_add(y)?,
                    "sub" => x.checked_sub(y)?,
                    "mul" => x.checked_mul(y)?,
                    "div" => x.checked_div(y)?,
                    "mod" => x.checked_rem(y)?,
                    "bit_or" => x | y,
                    "bit_and" => x & y,
                    "xor" => x ^ y,
                    _ => unreachable!("{op}"),
                };
                t.contains_unsigned(r).then(|| t.from_bits(r))
            }
            IntOp::Shift(op) => {
                let n = b.as_u32();
                if n >= t.bits() {
                    return None;
                }
                let x = a.as_u256();
                Some(t.from_bits(if op == "shl" { x << n } else { x >> n }))
            }
            IntOp::Compare(op) => {
                let o = if t == Int::U256 { a.as_u256().cmp(&b.as_u256()) } else { a.cmp(&b) };
                let r = match op {
                    "lt" => o.is_lt(),
                    "gt" => o.is_gt(),
                    "le" => o.is_le(),
                    "ge" => o.is_ge(),
                    "eq" => o.is_eq(),
                    "neq" => o.is_ne(),
                    _ => unreachable!("{op}"),
                };
                Some(I256::from(u8::from(r)))
            }
            IntOp::Cast(to) => {
                let fits = if t == Int::U256 { to.contains_unsigned(a.as_u256()) } else { to.contains(a) };
                fits.then(|| to.from_bits(a.as_u256()))
            }
            IntOp::Negate => {
                let r = a.checked_neg()?;
                t.contains(r).then_some(r)
            }
        }
    }

    /// `public fun <name>(params): result` loading `operands` (parameters
    /// `a0`, `a1`, … in order, or constants) and running the instruction;
    /// the instruction is at offset `operands.len()`.
    pub fn function_text(self, t: Int, name: &str, operands: &[Operand]) -> String {
        let tys = self.operands(t);
        let mut params = Vec::new();
        let mut body = String::new();
        for (ty, o) in tys.iter().zip(operands) {
            let line = match o {
                Operand::Param => {
                    let p = format!("a{}", params.len());
                    params.push(format!("{p}: {}", ty.name()));
                    format!("move_loc {p}")
                }
                Operand::Imm(v) => format!("ld_{} {}", ty.name(), ty.text(*v)),
                Operand::Const(v) => format!("ld_const <{}> {}", ty.name(), ty.text(*v)),
            };
            body.push_str(&format!("    {line}\n"));
        }
        format!(
            "public fun {name}({}): {}\n{body}    {}\n    ret\n",
            params.join(", "),
            self.result(t).name(),
            self.mnemonic()
        )
    }
}

fn is_bitwise(op: &str) -> bool {
    matches!(op, "bit_or" | "bit_and" | "xor")
}

/// The module header of generated single-instruction code.
pub fn module_header() -> String {
    format!("version 10\nmodule {ADDRESS}::{MODULE}\n\n")
}

/// One tiny program: `public fun t(operands): result` running one
/// instruction on its parameters or on constants.
pub fn generate(rng: &mut Rng) -> Program {
    let ints = Int::available(10, false);
    let t = rng.pick(&ints);
    let tn = t.name();
    let ops = IntOp::all(t, &ints);
    let of_kind = |f: fn(&IntOp) -> bool| -> Vec<IntOp> { ops.iter().copied().filter(f).collect() };
    let int_op = match rng.below(9) {
        0..=2 => Some(rng.pick(&of_kind(|o| matches!(o, IntOp::Arith(_))))),
        3 if !t.signed() => Some(rng.pick(&of_kind(|o| matches!(o, IntOp::Shift(_))))),
        3 | 4 => Some(rng.pick(&of_kind(|o| matches!(o, IntOp::Compare(_))))),
        5 => Some(rng.pick(&of_kind(|o| matches!(o, IntOp::Cast(_))))),
        6 if t.signed() => Some(IntOp::Negate),
        _ => None,
    };
    let (text, args) = match int_op {
        Some(op) => {
            // Each operand a parameter or, one time in four, a constant.
            let (mut operands, mut args, mut values) = (Vec::new(), Vec::new(), Vec::new());
            for ty in op.operands(t) {
                let v = match op {
                    IntOp::Shift(_) if ty == Int::U8 && !operands.is_empty() => {
                        if rng.chance(1, 2) {
                            I256::from(rng.pick(&SHIFT_EDGES))
                        } else {
                            I256::from(shift_amount(rng, t.bits()))
                        }
                    }
                    // Half the casts aim at the target's range boundary.
                    IntOp::Cast(to) if rng.chance(1, 2) => ty.edge_at_width(rng, to.bits().min(ty.bits())),
                    _ => ty.edge_value(rng),
                };
                values.push(v);
                operands.push(match rng.below(8) {
                    0 => Operand::Imm(v),
                    1 => Operand::Const(v),
                    _ => {
                        args.push(ty.bcs(v));
                        Operand::Param
                    }
                });
            }
            let expect = Expect { result: op.result(t), value: op.eval(t, &values), offset: operands.len() as u16 };
            let mut p = single(op.function_text(t, "t", &operands), args);
            p.expect = Some(expect);
            return p;
        }
        None => {
            let (params, body): (Vec<Sc>, String) = match rng.below(3) {
                0 => {
                    let op = rng.pick(&["and", "or", "eq", "neq"]);
                    (vec![Sc::Bool, Sc::Bool], format!("    move_loc a0\n    move_loc a1\n    {op}\n"))
                }
                1 => {
                    let v = t.text(t.edge_value(rng));
                    let load = if rng.chance(1, 3) { format!("ld_const <{tn}> {v}") } else { format!("ld_{tn} {v}") };
                    return single(format!("public fun t(): {tn}\n    {load}\n    ret\n"), Vec::new());
                }
                _ => (vec![Sc::Bool], "    move_loc a0\n    not\n".into()),
            };
            let header: Vec<String> = params.iter().enumerate().map(|(i, p)| format!("a{i}: {}", p.name())).collect();
            let text = format!("public fun t({}): bool\n{body}    ret\n", header.join(", "));
            (text, params.iter().map(|p| p.random_bcs(rng)).collect())
        }
    };
    single(text, args)
}

fn single(function: String, args: Vec<Vec<u8>>) -> Program {
    Program {
        version: 10,
        sui: false,
        features: Default::default(),
        units: vec![format!("{}{function}", module_header())],
        calls: vec![("t".into(), Vec::new(), args)],
        expect: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The oracle against hand-computed results (None: ARITHMETIC_ERROR).
    #[test]
    fn oracle_follows_moves_rules() {
        let p = |k: u32| I256::ONE << k;
        let u256_max = I256::MINUS_ONE; // u256 values are their bits
        let n = |v: i64| I256::from(v);
        #[rustfmt::skip]
        let table: &[(IntOp, Int, &[I256], Option<I256>)] = &[
            (IntOp::Arith("mod"), Int::I8, &[n(-128), n(-1)], None),
            (IntOp::Arith("div"), Int::I8, &[n(-128), n(-1)], None),
            (IntOp::Arith("div"), Int::I8, &[n(-128), n(1)], Some(n(-128))),
            (IntOp::Arith("mod"), Int::I16, &[n(-7), n(2)], Some(n(-1))),
            (IntOp::Arith("sub"), Int::U8, &[n(0), n(1)], None),
            (IntOp::Arith("add"), Int::U256, &[u256_max, n(1)], None),
            (IntOp::Arith("add"), Int::U256, &[p(255), n(1)], Some(I256::MIN + 1)),
            (IntOp::Arith("mul"), Int::U128, &[p(64), p(64)], None),
            (IntOp::Arith("mul"), Int::U128, &[p(64), p(63)], Some(p(127))),
            (IntOp::Arith("xor"), Int::U16, &[n(0xff00), n(0x0ff0)], Some(n(0xf0f0))),
            (IntOp::Cast(Int::U128), Int::I256, &[p(127)], Some(p(127))),
            (IntOp::Cast(Int::U128), Int::I256, &[p(128) - 1], Some(p(128) - 1)),
            (IntOp::Cast(Int::U128), Int::I256, &[p(128)], None),
            (IntOp::Cast(Int::U128), Int::I256, &[n(-1)], None),
            (IntOp::Cast(Int::I8), Int::U256, &[u256_max], None),
            (IntOp::Cast(Int::U256), Int::I8, &[n(-1)], None),
            (IntOp::Cast(Int::I256), Int::U256, &[I256::MIN], None),
            (IntOp::Cast(Int::U256), Int::U8, &[n(255)], Some(n(255))),
            (IntOp::Cast(Int::I64), Int::I128, &[-p(63)], Some(-p(63))),
            (IntOp::Shift("shl"), Int::U8, &[n(255), n(7)], Some(n(128))),
            (IntOp::Shift("shl"), Int::U8, &[n(1), n(8)], None),
            (IntOp::Shift("shr"), Int::U256, &[u256_max, n(255)], Some(n(1))),
            (IntOp::Shift("shl"), Int::U256, &[n(3), n(255)], Some(I256::MIN)),
            (IntOp::Compare("lt"), Int::U256, &[u256_max, n(0)], Some(n(0))),
            (IntOp::Compare("lt"), Int::I256, &[n(-1), n(0)], Some(n(1))),
            (IntOp::Compare("neq"), Int::U64, &[n(5), n(5)], Some(n(0))),
            (IntOp::Negate, Int::I8, &[n(-128)], None),
            (IntOp::Negate, Int::I8, &[n(127)], Some(n(-127))),
        ];
        for (op, t, args, want) in table {
            assert_eq!(op.eval(*t, args), *want, "{} {t:?} {args:?}", op.mnemonic());
        }
    }
}
