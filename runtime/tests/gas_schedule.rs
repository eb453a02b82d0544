//! The built-in Aptos schedule is the one Aptos's production meter used for
//! `../shared/conformance/aptos/gas`, and every Aptos instruction's price
//! resolves from it; the fixed charges of the per-charge trace match the
//! parameters our opcode table names.

use movejit_format::Opcode;
use movejit_runtime::gas::schedule::{aptos_parameters, InstructionCosts, Schedule};
use std::path::PathBuf;

fn gas_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance/aptos/gas")
}

#[test]
fn built_in_schedule_is_the_shared_one() {
    let text = std::fs::read_to_string(gas_dir().join("schedule-v50.json")).expect("schedule-v50.json");
    let shared: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text).expect("a JSON object");
    let ours = Schedule::aptos_v50();
    assert_eq!(ours.params().len(), shared.len());
    for (name, value) in &shared {
        assert_eq!(ours.get(name).ok(), value.as_u64(), "{name}");
    }
}

#[test]
fn every_aptos_instruction_is_priced() {
    let costs = InstructionCosts::aptos(&Schedule::aptos_v50()).expect("every parameter is in the schedule");
    for &op in Opcode::ALL {
        match op.aptos_byte() {
            Some(_) => assert!(costs.base[op as usize] > 0, "{op:?} has no price"),
            None => assert_eq!(aptos_parameters(op), None, "{op:?} is Sui-only"),
        }
    }
    let mut without = Schedule::aptos_v50().params().clone();
    without.remove("instr.add");
    let err = InstructionCosts::aptos(&Schedule::from_params(50, without)).unwrap_err();
    assert_eq!(err.0, "instr.add");
}

/// The trace names a fixed charge by the constant Aptos's meter charged
/// (`exec ADD`, `exec MOVE_LOC_BASE`): each must be, per occurrence, the
/// base of the opcode whose parameter has that name.
#[test]
fn trace_fixed_charges_match_the_opcode_table() {
    let costs = InstructionCosts::aptos(&Schedule::aptos_v50()).unwrap();
    // Aptos's constant name for each opcode's base parameter.
    let constant = |op: Opcode| {
        let (name, _) = aptos_parameters(op)?;
        let c = name.trim_start_matches("instr.").replace('.', "_").to_uppercase();
        Some(match c.as_str() {
            "BIT_SHL" => "SHL".to_string(),
            "BIT_SHR" => "SHR".to_string(),
            "BIT_XOR" => "XOR".to_string(),
            "MOD" => "MOD_".to_string(),
            _ => c,
        })
    };
    let text = std::fs::read_to_string(gas_dir().join("trace.jsonl")).expect("trace.jsonl");
    let mut checked = std::collections::BTreeSet::new();
    for line in text.lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        for charge in case["trace"].as_array().into_iter().flatten() {
            let Some(name) = charge["charge"].as_str().and_then(|c| c.strip_prefix("exec ")) else { continue };
            if !name.chars().all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit()) || name == "N" {
                continue; // a formula, or a native's charge
            }
            let (count, gas) = (charge["count"].as_u64().unwrap(), charge["gas"].as_u64().unwrap());
            let ops: Vec<Opcode> =
                Opcode::ALL.iter().copied().filter(|&op| constant(op).as_deref() == Some(name)).collect();
            assert!(!ops.is_empty(), "no opcode is priced by {name}");
            for op in ops {
                assert_eq!(costs.base[op as usize] * count, gas, "{name} ({op:?}) in {}", case["id"]);
            }
            checked.insert(name.to_string());
        }
    }
    assert!(checked.len() > 60, "only {} fixed charges were checked", checked.len());
}

/// The transaction limits the gas README states, read from the schedule.
#[test]
fn transaction_limits_resolve() {
    use movejit_runtime::gas::algebra::TransactionLimits;
    let l = TransactionLimits::from_schedule(&Schedule::aptos_v50()).expect("every limit is in the schedule");
    assert_eq!(
        (l.scaling_factor, l.max_execution_gas, l.memory_quota, l.max_gas_units),
        (1_000_000, 9_200_000_000, 10_000_000, 20_000_000)
    );
    assert_eq!(l.to_internal(2), 2_000_000);
}
