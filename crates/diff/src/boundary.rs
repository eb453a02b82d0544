//! The boundary table: every integer instruction ([`IntOp::all`]:
//! arithmetic, shifts, comparisons, casts to every type, negation) at every
//! type, over the edge values of its operands ([`Int::key_edges`]: the
//! type's MIN, MAX and neighbours and those of every narrower type; shift
//! amounts at and around every width). Each instruction runs in three
//! shapes: on parameters (nothing to fold; every pair of key edges), and
//! with either operand a constant (`ld_<t>` or `ld_const`), which the JIT
//! lowers through its constant-operand fast paths, against the other
//! operand's [`Int::probes`]. Every call runs on the interpreter and on
//! executor `jit`; the outcomes must be identical (everything
//! [`Outcome`] holds) and equal to [`IntOp::eval`], so a bug both executors
//! share is caught too.

#![forbid(unsafe_code)]

use crate::case::Case;
use crate::exec::{Executor, Prepared, RunError};
use crate::gen::single::{IntOp, Operand};
use crate::gen::ty::{Int, IntGen, Sc, SHIFT_EDGES};
use crate::gen::{assemble_units, verify_all, Expect};
use crate::outcome::Outcome;
use ethnum::I256;
use movejit_format::{AccountAddress, StatusCode, StatusFlavour};

/// The gas budget of each call (far more than one instruction needs).
const BUDGET: u64 = 1_000_000;
/// Failures kept with their details (all are counted).
const KEEP: usize = 40;

/// What a table run did.
#[derive(Debug, Default)]
pub struct Report {
    /// (type, instruction) pairs, functions and calls run on both executors.
    pub instructions: usize,
    pub functions: usize,
    pub calls: usize,
    /// Calls that diverged, disagreed with the oracle or did not run.
    pub failed: usize,
    /// The first [`KEEP`] failures, one line each.
    pub failures: Vec<String>,
}

impl Report {
    fn fail(&mut self, s: String) {
        self.failed += 1;
        if self.failures.len() < KEEP {
            self.failures.push(s);
        }
    }
}

/// One function of an instruction's module: its name, operands and the
/// values each parameter ranges over.
struct Func {
    name: String,
    operands: Vec<Operand>,
    values: Vec<Vec<I256>>,
}

/// The values operand `k` of `op` on `t` ranges over as a parameter: key
/// edges in the exhaustive shape, else the probes. Shift amounts always
/// range over every width's edges, and so does the value shifted (a
/// constant amount is a fast path where limb boundaries matter).
fn operand_values(op: IntOp, t: Int, k: usize, key: bool) -> Vec<I256> {
    match (op, k) {
        (IntOp::Shift(_), 1) => SHIFT_EDGES.iter().map(|a| I256::from(*a)).collect(),
        (IntOp::Shift(_), _) => t.key_edges(),
        _ if key => t.key_edges(),
        _ => t.probes(),
    }
}

/// The constants operand `k` of `op` on `t` takes (each its own function,
/// so each compiled once): every shift amount; every key edge for the right
/// operand of arithmetic and for negation; for a cast the key edges at the
/// target's range boundary (where the oracle's verdict changes between v
/// and v±1) and the probes; else the probes. Not `exhaustive` (slow
/// targets, where compiling dominates): right operands and casts only, and
/// probes or boundary values alone.
fn constants(op: IntOp, t: Int, k: usize, exhaustive: bool) -> Vec<I256> {
    let probes = t.probes();
    match (op, k) {
        (IntOp::Shift(_), 1) => operand_values(op, t, 1, true),
        (IntOp::Arith(_) | IntOp::Shift(_) | IntOp::Compare(_), 0) if !exhaustive => Vec::new(),
        (IntOp::Arith(_), 1) | (IntOp::Negate, _) if exhaustive => t.key_edges(),
        (IntOp::Cast(_), _) => {
            let ok = |v: I256| op.eval(t, &[v]).is_some();
            let step = |v: I256, d: i64| t.from_bits(v.as_u256().wrapping_add(I256::from(d).as_u256()));
            t.key_edges()
                .into_iter()
                .filter(|v| exhaustive && probes.contains(v) || ok(*v) != ok(step(*v, 1)) || ok(*v) != ok(step(*v, -1)))
                .collect()
        }
        _ => probes,
    }
}

/// The functions for `op` on `t`: all parameters (every key edge of the
/// first operand against every key edge of the second when `exhaustive`,
/// else against its probes), then an operand a [`constants`] value
/// (alternately an immediate and a constant-pool load) with the other
/// ranging over its probes.
fn functions(op: IntOp, t: Int, exhaustive: bool) -> Vec<Func> {
    let n = op.operands(t).len();
    let all = (0..n).map(|k| operand_values(op, t, k, k == 0 || exhaustive)).collect();
    let mut out = vec![Func { name: "p".into(), operands: vec![Operand::Param; n], values: all }];
    for k in 0..n {
        for (i, v) in constants(op, t, k, exhaustive).into_iter().enumerate() {
            let mut operands = vec![Operand::Param; n];
            operands[k] = if (i + k) % 2 == 0 { Operand::Imm(v) } else { Operand::Const(v) };
            let values = (0..n).map(|j| if j == k { vec![v] } else { operand_values(op, t, j, false) }).collect();
            out.push(Func { name: format!("k{k}_{i}"), operands, values });
        }
    }
    out
}

/// Every combination of the function's operand values.
fn calls(f: &Func) -> Vec<Vec<I256>> {
    let mut rows: Vec<Vec<I256>> = vec![Vec::new()];
    for values in &f.values {
        rows = rows.iter().flat_map(|r| values.iter().map(move |v| [r.clone(), vec![*v]].concat())).collect();
    }
    rows
}

/// Runs the table for the instructions on `types` (cast targets: every
/// type); `exhaustive`: every pair of key edges for binary instructions on
/// parameters (else key edges against probes, for slow targets).
pub fn run(types: &[Int], exhaustive: bool) -> Report {
    let mut report = Report::default();
    for &t in types {
        for op in IntOp::all(t, &Int::INTEGERS) {
            run_instruction(op, t, exhaustive, &mut report);
        }
    }
    report
}

fn run_instruction(op: IntOp, t: Int, exhaustive: bool, report: &mut Report) {
    let label = format!("{} {}", op.mnemonic(), t.name());
    let funcs = functions(op, t, exhaustive);
    let mut text = crate::gen::single::module_header();
    for f in &funcs {
        text.push_str(&op.function_text(t, &f.name, &f.operands));
        text.push('\n');
    }
    let modules = match assemble_units(&[text]) {
        Ok(m) => m,
        Err(e) => return report.fail(format!("{label}: does not assemble: {e:?}")),
    };
    if let Err(e) = verify_all(&modules, StatusFlavour::Aptos) {
        return report.fail(format!("{label}: does not verify: {e:?}"));
    }
    let case = Case {
        name: label.clone(),
        flavour: StatusFlavour::Aptos,
        modules,
        address: AccountAddress::from_u64(0xcafe),
        module: crate::gen::program::MODULE.into(),
        function: "p".into(),
        type_args: Vec::new(),
        args: Vec::new(),
    };
    let (mut interp, mut jit) = (Prepared::new(Executor::Interp, &case), Prepared::new(Executor::Jit, &case));
    report.instructions += 1;
    let tys = op.operands(t);
    for (index, f) in funcs.iter().enumerate() {
        report.functions += 1;
        for values in calls(f) {
            report.calls += 1;
            let args: Vec<Vec<u8>> = f
                .operands
                .iter()
                .zip(&tys)
                .zip(&values)
                .filter(|((o, _), _)| **o == Operand::Param)
                .map(|((_, ty), v)| ty.bcs(*v))
                .collect();
            let shown: Vec<String> = tys.iter().zip(&values).map(|(ty, v)| ty.text(*v)).collect();
            let what = format!("{label} {}({})", f.name, shown.join(", "));
            let i = match interp.run_call(&f.name, &args, BUDGET) {
                Ok(o) => o,
                Err(e) => {
                    report.fail(format!("{what}: interpreter failed: {e:?}"));
                    continue;
                }
            };
            match jit.run_call(&f.name, &args, BUDGET) {
                Ok(j) => {
                    if let Some(field) = i.first_difference(&j) {
                        report.fail(format!("{what}: {field} differs: interp {i}, jit {j}"));
                        continue;
                    }
                }
                Err(RunError::Unsupported(e) | RunError::Failed(e)) => {
                    report.fail(format!("{what}: jit did not run it: {e}"));
                    continue;
                }
            }
            let want = Expect { result: op.result(t), value: op.eval(t, &values), offset: tys.len() as u16 };
            if let Some(bad) = want.mismatch(&i, index as u16) {
                report.fail(format!("{what}: both executors {i}, but {bad}"));
            }
        }
    }
}

impl Expect {
    /// How `got` (a call of function `function`) differs from this
    /// expectation, if it does.
    pub fn mismatch(&self, got: &Outcome, function: u16) -> Option<String> {
        match self.value {
            Some(v) => {
                let (bytes, shown) = match self.result {
                    Sc::Bool => (vec![u8::from(v != I256::ZERO)], (v != I256::ZERO).to_string()),
                    Sc::Int(r) => (r.bcs(v), r.text(v)),
                };
                (got.status != StatusCode::EXECUTED || got.returns != [bytes]).then(|| format!("Move gives {shown}"))
            }
            None => {
                let at = got.location.as_ref().map(|l| (l.function, l.code_offset));
                let offset = self.offset;
                (got.status != StatusCode::ARITHMETIC_ERROR
                    || got.sub_status.is_some()
                    || at != Some((function, offset)))
                .then(|| format!("Move gives ARITHMETIC_ERROR at fn {function} @{offset}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Loc;

    fn outcome(status: StatusCode, returns: Vec<Vec<u8>>, at: Option<(u16, u16)>) -> Outcome {
        Outcome {
            status,
            sub_status: None,
            abort_code: None,
            message: None,
            location: at.map(|(function, code_offset)| Loc { module: "0xcafe::g".into(), function, code_offset }),
            returns,
            mutrefs: Vec::new(),
            changes: Vec::new(),
            gas_used: 0,
            memory_used: None,
        }
    }

    #[test]
    fn expectations_reject_what_move_does_not_give() {
        let value = Expect { result: Sc::Int(Int::U128), value: Some(I256::ONE << 127u32), offset: 1 };
        let mut bytes = vec![0u8; 16];
        bytes[15] = 0x80;
        assert_eq!(value.mismatch(&outcome(StatusCode::EXECUTED, vec![bytes.clone()], None), 0), None);
        assert!(value.mismatch(&outcome(StatusCode::ARITHMETIC_ERROR, vec![], Some((0, 1))), 0).is_some());
        bytes[15] = 0x7f;
        assert!(value.mismatch(&outcome(StatusCode::EXECUTED, vec![bytes], None), 0).is_some());
        let error = Expect { result: Sc::Bool, value: None, offset: 2 };
        assert_eq!(error.mismatch(&outcome(StatusCode::ARITHMETIC_ERROR, vec![], Some((3, 2))), 3), None);
        assert!(error.mismatch(&outcome(StatusCode::ARITHMETIC_ERROR, vec![], Some((3, 1))), 3).is_some());
        assert!(error.mismatch(&outcome(StatusCode::EXECUTED, vec![vec![1]], None), 3).is_some());
    }
}
