//! Gas: one meter ([`GasMeter`]) over one of two schedules: the `unit`
//! placeholder table ([`CostTable`]: a static cost per instruction kind plus
//! per-byte costs), or Aptos's production schedule ([`aptos::AptosMeter`]:
//! Move's charge points, priced by named parameters).

pub mod abstract_size;
pub mod algebra;
pub mod aptos;
pub mod aptos_v50;
pub mod memory;
pub mod native;
pub mod schedule;

use crate::error::{VmError, VmResult};
use aptos::{AptosMeter, AptosPricing};
use movejit_format::{Opcode, StatusCode};
use std::collections::HashMap;
use std::sync::Arc;

/// The default balance under the unit schedule ([`CostTable::default`]),
/// which has no separate external unit: large enough for any benchmark, small
/// enough that a runaway loop ends in seconds.
pub const UNIT_MAX_GAS: u64 = 1_000_000_000;

/// Costs in internal gas units.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CostTable {
    /// Static cost per instruction kind; missing kinds cost `default_instr`.
    pub instr: HashMap<Opcode, u64>,
    pub default_instr: u64,
    /// Per byte of data copied, read, written, hashed or serialized.
    pub per_byte: u64,
    /// Base cost of a native call.
    pub native_base: u64,
    /// Per call (on top of the `Call` instruction) for each new frame.
    pub per_frame: u64,
}

impl CostTable {
    /// A table that charges nothing (the unit part of a meter charging
    /// another schedule).
    pub fn zero() -> Self {
        CostTable { instr: HashMap::new(), default_instr: 0, per_byte: 0, native_base: 0, per_frame: 0 }
    }
}

impl Default for CostTable {
    fn default() -> Self {
        let mut instr = HashMap::new();
        for op in Opcode::ALL {
            let name = op.name();
            let c = if name.starts_with("Call")
                || name.contains("Global")
                || name == "MoveTo"
                || name == "MoveFrom"
                || name.starts_with("MoveTo")
                || name.starts_with("MoveFrom")
                || name == "Exists"
            {
                20
            } else if name.starts_with("Vec") || name.starts_with("Pack") || name.starts_with("Unpack") {
                5
            } else {
                1
            };
            instr.insert(*op, c);
        }
        CostTable { instr, default_instr: 1, per_byte: 1, native_base: 10, per_frame: 10 }
    }
}

/// Charges gas; `OUT_OF_GAS` when the budget is exhausted.
#[derive(Clone, Debug)]
pub struct GasMeter {
    table: Arc<CostTable>,
    /// The table's static cost of each opcode, indexed by `Opcode as usize`
    /// (interpreters charge one per instruction: no hashing on that path).
    instr: Arc<[u64]>,
    /// `None`: unmetered.
    budget: Option<u64>,
    used: u64,
    /// Charging the Aptos schedule: the unit table is all zeros (its
    /// charges cost nothing) and the executors charge Move's charge
    /// points here instead.
    aptos: Option<Box<AptosMeter>>,
}

impl GasMeter {
    pub fn new(table: CostTable, budget: u64) -> Self {
        let instr = Opcode::ALL.iter().map(|op| table.instr.get(op).copied().unwrap_or(table.default_instr)).collect();
        GasMeter { table: Arc::new(table), instr, budget: Some(budget), used: 0, aptos: None }
    }
    /// A meter charging the Aptos schedule `pricing` with a balance of
    /// `balance` internal units.
    pub fn aptos(pricing: Arc<AptosPricing>, balance: u64) -> Self {
        let table = CostTable { instr: HashMap::new(), default_instr: 0, per_byte: 0, native_base: 0, per_frame: 0 };
        let aptos = Some(Box::new(AptosMeter::new(pricing, balance)));
        // A unit budget of 0: `charge` finds the Aptos meter on its slow
        // path (the unit schedule's hot path tests nothing more).
        GasMeter { table: Arc::new(table), instr: Arc::new([]), budget: Some(0), used: 0, aptos }
    }
    /// The Aptos meter, when this meter charges the Aptos schedule.
    pub fn aptos_meter(&self) -> Option<&AptosMeter> {
        self.aptos.as_deref()
    }
    pub fn aptos_meter_mut(&mut self) -> Option<&mut AptosMeter> {
        self.aptos.as_deref_mut()
    }
    /// The abstract size of tree value `v` of layout `l` under the Aptos
    /// schedule (natives priced by size); 0 under `unit`.
    pub fn abstract_size(&self, l: &crate::layout::Layout, v: &crate::values::Value) -> u64 {
        self.aptos.as_ref().map_or(0, |a| a.pricing.sizes.tree_value(l, v))
    }
    /// [`abstract_size`](Self::abstract_size) as `eq` and `cmp::compare`
    /// measure what a reference points to
    /// ([`AbstractSizes::dereferenced`](abstract_size::AbstractSizes::dereferenced)).
    pub fn abstract_size_dereferenced(&self, l: &crate::layout::Layout, v: &crate::values::Value) -> u64 {
        self.aptos.as_ref().map_or(0, |a| a.pricing.sizes.tree_dereferenced(l, v))
    }
    #[inline]
    pub fn is_aptos(&self) -> bool {
        self.aptos.is_some()
    }
    /// This meter, metered, with `budget` units and nothing used (a meter
    /// reused per call: no table is rebuilt).
    pub fn restart(&mut self, budget: u64) {
        self.budget = Some(budget);
        self.used = 0;
        if let Some(a) = &mut self.aptos {
            **a = AptosMeter::new(a.pricing.clone(), budget);
            self.budget = Some(0);
        }
    }
    /// A fresh meter with `budget` units over this meter's cost table
    /// (shared, not rebuilt: for meters made per call).
    pub fn with_budget(&self, budget: u64) -> Self {
        let aptos = self.aptos.as_ref().map(|a| Box::new(AptosMeter::new(a.pricing.clone(), budget)));
        let budget = if aptos.is_some() { 0 } else { budget };
        GasMeter { table: self.table.clone(), instr: self.instr.clone(), budget: Some(budget), used: 0, aptos }
    }
    /// A meter that charges nothing (it builds no cost table).
    pub fn unmetered() -> Self {
        let table = CostTable { instr: HashMap::new(), default_instr: 0, per_byte: 0, native_base: 0, per_frame: 0 };
        GasMeter { table: Arc::new(table), instr: Arc::new([]), budget: None, used: 0, aptos: None }
    }
    /// Internal units used (Aptos: execution and I/O).
    pub fn used(&self) -> u64 {
        match &self.aptos {
            Some(a) => a.algebra.total_used(),
            None => self.used,
        }
    }
    /// Units left; `None` when unmetered.
    pub fn remaining(&self) -> Option<u64> {
        match &self.aptos {
            Some(a) => Some(a.algebra.balance()),
            None => self.budget.map(|b| b.saturating_sub(self.used)),
        }
    }
    pub fn is_metered(&self) -> bool {
        self.budget.is_some()
    }
    /// `amount` internal units (Aptos: of execution gas).
    #[inline]
    pub fn charge(&mut self, amount: u64) -> VmResult<()> {
        let Some(b) = self.budget else { return Ok(()) };
        let next = self.used.saturating_add(amount);
        if next > b {
            return self.charge_past_budget(amount, b);
        }
        self.used = next;
        Ok(())
    }
    /// `charge` past the unit budget: out of gas, or an Aptos meter (whose
    /// unit budget is 0) charging.
    #[cold]
    #[inline(never)]
    fn charge_past_budget(&mut self, amount: u64, budget: u64) -> VmResult<()> {
        if let Some(a) = &mut self.aptos {
            return a.charge_execution(amount).map_err(VmError::new);
        }
        self.used = budget;
        Err(VmError::new(StatusCode::OUT_OF_GAS))
    }
    #[inline]
    pub fn charge_instr(&mut self, op: Opcode) -> VmResult<()> {
        if self.budget.is_none() {
            return Ok(());
        }
        let c = self.instr.get(op as usize).copied().unwrap_or(self.table.default_instr);
        self.charge(c)
    }
    pub fn charge_bytes(&mut self, n: usize) -> VmResult<()> {
        if self.budget.is_none() {
            return Ok(());
        }
        self.charge(self.table.per_byte.saturating_mul(n as u64))
    }
    pub fn charge_native(&mut self, bytes: usize) -> VmResult<()> {
        // (Under Aptos the unit table is all zeros: nothing to charge.)
        if self.budget.is_none() || self.aptos.is_some() {
            return Ok(());
        }
        self.charge(self.table.native_base)?;
        self.charge_bytes(bytes)
    }
    /// A native's charge under the Aptos schedule: `parameter × count`
    /// terms, its formula in Aptos's natives (nothing under `unit`, which
    /// charges [`charge_native`](Self::charge_native) instead).
    #[inline]
    pub fn charge_aptos_native(&mut self, terms: native::NativeTerms<'_>) -> VmResult<()> {
        match &mut self.aptos {
            None => Ok(()),
            Some(a) => Self::charge_aptos_terms(a, terms),
        }
    }
    /// [`charge_aptos_native`](Self::charge_aptos_native)'s charge, out of
    /// line: natives called unmetered or under `unit` pay one test.
    #[inline(never)]
    fn charge_aptos_terms(a: &mut aptos::AptosMeter, terms: native::NativeTerms<'_>) -> VmResult<()> {
        a.charge_native(terms).map_err(VmError::new)
    }
    #[inline]
    pub fn charge_frame(&mut self) -> VmResult<()> {
        if self.budget.is_none() {
            return Ok(());
        }
        self.charge(self.table.per_frame)
    }
}
