//! The opcode table (`tests/opcodes/table.txt`, see
//! `movejit_tests::opcode_table`): every opcode of both flavours appears in
//! the functions its rows call, and every row gives its expected result on
//! the interpreter and the same result on executor `jit` (or `auto` where
//! `jit` refuses), full budget and tiny-gas reruns.

use movejit_diff::coverage::{reachable, Coverage};
use movejit_diff::harness::verify_case;
use movejit_diff::{run_both_with, JitVerdict, Options};
use movejit_format::Opcode;
use movejit_tests::opcode_table::{check, load};

#[test]
fn every_opcode_is_in_the_table() {
    let table = load().unwrap_or_else(|e| panic!("{e}"));
    let mut cov = Coverage::default();
    for row in &table.rows {
        let m = &table.sections[&row.section].module;
        cov.add_functions(m, &reachable(m, &row.function));
    }
    let missing: Vec<&str> = cov.missing().iter().map(|o| o.name()).collect();
    assert!(missing.is_empty(), "opcodes no row reaches: {missing:?}");
    assert_eq!(cov.counts.len(), Opcode::ALL.len());
}

#[test]
fn every_row_gives_its_expected_result_on_both_executors() {
    let table = load().unwrap_or_else(|e| panic!("{e}"));
    for (name, s) in &table.sections {
        let case = table.case(table.rows.iter().find(|r| &r.section == name).expect("a row")).expect("case");
        verify_case(&case).unwrap_or_else(|e| panic!("[{name}] does not verify: {e}"));
        assert_eq!(case.flavour, s.flavour);
    }
    let (mut on_jit, mut mixed, mut interp_only) = (0, 0, 0);
    let mut bad = Vec::new();
    for row in &table.rows {
        let case = table.case(row).expect("case");
        let opts = Options {
            full_budget: row.gas.unwrap_or(10_000_000),
            gas_points: 3,
            assume_verified: true,
            ..Options::default()
        };
        match run_both_with(&case, &opts) {
            Err(d) => bad.push(format!("{}: DIVERGENCE {d}", row.label)),
            Ok(c) => {
                match c.jit {
                    JitVerdict::Agreed => on_jit += 1,
                    JitVerdict::Mixed(_) => mixed += 1,
                    JitVerdict::Unsupported(_) | JitVerdict::Rejected(_) => interp_only += 1,
                }
                let diffs = check(&table, row, &c.outcome);
                if !diffs.is_empty() {
                    bad.push(format!("{}: {}", row.label, diffs.join("; ")));
                }
            }
        }
    }
    println!("{} rows: compared on jit {on_jit}, on auto {mixed}, interpreter only {interp_only}", table.rows.len());
    for b in &bad {
        println!("{b}");
    }
    assert!(bad.is_empty(), "{} rows failed", bad.len());
}
