//! The single-instruction generator: one opcode at one width with random
//! (edge) operands, in a function that does nothing else.

#![forbid(unsafe_code)]

use super::program::{Program, ADDRESS, MODULE};
use super::ty::{Int, Sc};
use crate::rng::Rng;

const BINARY: [&str; 8] = ["add", "sub", "mul", "div", "mod", "bit_or", "bit_and", "xor"];
const COMPARE: [&str; 6] = ["lt", "gt", "le", "ge", "eq", "neq"];

/// One tiny program: `public fun t(operands): result` running one
/// instruction on its parameters (constants for loads).
pub fn generate(rng: &mut Rng) -> Program {
    let ints = Int::available(10, false);
    let t = rng.pick(&ints);
    let tn = t.name();
    let int = Sc::Int(t);
    let (params, ret, body): (Vec<Sc>, Sc, Vec<String>) = match rng.below(9) {
        0..=2 => {
            let ops: Vec<&str> = BINARY.iter().copied().filter(|o| !t.signed() || !o.starts_with('b') && *o != "xor").collect();
            let op = rng.pick(&ops);
            (vec![int, int], int, vec![op.into()])
        }
        3 if !t.signed() => {
            let op = rng.pick(&["shl", "shr"]);
            (vec![int, Sc::Int(Int::U8)], int, vec![op.into()])
        }
        3 | 4 => (vec![int, int], Sc::Bool, vec![(rng.pick(&COMPARE)).into()]),
        5 => {
            let to = rng.pick(&ints);
            (vec![int], Sc::Int(to), vec![format!("cast_{}", to.name())])
        }
        6 if t.signed() => (vec![int], int, vec!["negate".into()]),
        6 => {
            let op = rng.pick(&["and", "or", "eq", "neq"]);
            (vec![Sc::Bool, Sc::Bool], Sc::Bool, vec![op.into()])
        }
        7 => {
            let v = t.text(t.edge_value(rng));
            let load = if rng.chance(1, 3) { format!("ld_const <{tn}> {v}") } else { format!("ld_{tn} {v}") };
            (vec![], int, vec![load])
        }
        _ => (vec![Sc::Bool], Sc::Bool, vec!["not".into()]),
    };
    let names: Vec<String> = (0..params.len()).map(|i| format!("a{i}")).collect();
    let header: Vec<String> = params.iter().zip(&names).map(|(p, n)| format!("{n}: {}", p.name())).collect();
    let mut text = format!("version 10\nmodule {ADDRESS}::{MODULE}\n\npublic fun t({}): {}\n", header.join(", "), ret.name());
    for n in &names {
        text.push_str(&format!("    move_loc {n}\n"));
    }
    for l in body {
        text.push_str(&format!("    {l}\n"));
    }
    text.push_str("    ret\n");
    let args = params.iter().map(|p| p.random_bcs(rng)).collect();
    Program {
        version: 10,
        sui: false,
        features: Default::default(),
        units: vec![text],
        calls: vec![("t".into(), Vec::new(), args)],
    }
}
