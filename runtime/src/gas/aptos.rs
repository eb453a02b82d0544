//! The Aptos meter's state for one transaction: the resolved prices of a
//! schedule ([`AptosPricing`], shared by every call) and what the
//! transaction has used and loaded ([`AptosMeter`]). [`super::GasMeter`]
//! holds one when it charges the Aptos schedule.

use super::abstract_size::AbstractSizes;
use super::algebra::{GasAlgebra, MemoryAlgebra, TransactionLimits};
use super::native::{NativePrices, NativeTerms};
use super::schedule::{InstructionCosts, MissingParameter, Schedule};
use crate::flat::FlatLayout;
use crate::fxhash::FxHashSet;
use crate::intern::TypeId;
use crate::storage::ModuleId;
use movejit_format::{AccountAddress, Opcode, StatusCode};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// Aptos rounds each resource read up to whole pages (`IoPricingV4`).
const READ_PAGE_BYTES: u64 = 4096;

/// Everything charging needs from one schedule, resolved once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AptosPricing {
    pub costs: InstructionCosts,
    /// Every native parameter, by [`super::native::NativeParam`].
    pub natives: NativePrices,
    pub sizes: AbstractSizes,
    pub limits: TransactionLimits,
}

impl AptosPricing {
    pub fn from_schedule(s: &Schedule) -> Result<Self, MissingParameter> {
        Ok(AptosPricing {
            costs: InstructionCosts::aptos(s)?,
            natives: NativePrices::from_schedule(s)?,
            sizes: AbstractSizes::from_schedule(s)?,
            limits: TransactionLimits::from_schedule(s)?,
        })
    }

    /// The built-in v50 schedule, resolved once per process.
    pub fn v50() -> Arc<Self> {
        Self::v50_ref().clone()
    }

    fn v50_ref() -> &'static Arc<Self> {
        static V50: OnceLock<Arc<AptosPricing>> = OnceLock::new();
        V50.get_or_init(|| {
            Arc::new(AptosPricing::from_schedule(&Schedule::aptos_v50()).expect("the built-in schedule is complete"))
        })
    }

    /// What a call of a Move function with `args` arguments (captured and
    /// provided) and locals of `local_nodes` type nodes each charges
    /// before its frame once its module is loaded: the price of `op`, then
    /// each local's type, as [`AptosMeter::charge_site`] and
    /// [`AptosMeter::charge_create_ty`] charge them one by one. `None`
    /// when the sum does not fit (no fast path may then charge it at once).
    pub fn call_price(&self, op: Opcode, args: u64, local_nodes: &[u64]) -> Option<u64> {
        let counts = SiteCounts { units: args, locals: local_nodes.len() as u64, ty_args: 0 };
        let mut total = self.costs.site_cost(op, counts);
        for n in local_nodes {
            total = total.checked_add(self.costs.subst_ty_per_node.checked_mul(*n)?)?;
        }
        // `site_cost` saturates.
        (total < u64::MAX).then_some(total)
    }

    /// What `copy_loc` of a closure whose captured values have the
    /// layouts `captured` charges, when they are all scalars (then it does
    /// not depend on the values): its heap units (what the memory quota
    /// counts) and its price, as [`AptosMeter::charge_copy`] measures them
    /// on the value. `None` otherwise.
    pub fn scalar_closure_copy(&self, captured: &[Arc<FlatLayout>]) -> Option<(u64, u64)> {
        let (units, heap) = self.sizes.scalar_closure(captured)?;
        Some((heap, self.costs.site_cost(Opcode::CopyLoc, SiteCounts { units, ..SiteCounts::default() })))
    }

    /// Whether `p` is the built-in v50 schedule (the one compiled code is
    /// generated for: its prices are constants in the code).
    pub fn is_v50(p: &Arc<Self>) -> bool {
        Arc::ptr_eq(p, Self::v50_ref())
    }
}

/// The counts an instruction's formula multiplies by, known once its
/// function is prepared (or, for value-sized instructions, measured when
/// it runs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SiteCounts {
    /// Fields, elements, constant bytes, call arguments or abstract value
    /// units: whatever the opcode's per-unit parameter prices.
    pub units: u64,
    /// Calls only.
    pub locals: u64,
    pub ty_args: u64,
}

impl InstructionCosts {
    /// What one instruction costs: its base plus its formula's per-unit
    /// parts. The one place an instruction's price is computed (the
    /// interpreter per instruction, compiled code per block).
    pub fn site_cost(&self, op: Opcode, c: SiteCounts) -> u64 {
        let i = op as usize;
        let (base, u) = (self.base[i], self.per_unit[i]);
        base.saturating_add(u.per_unit.saturating_mul(c.units))
            .saturating_add(u.per_local.saturating_mul(c.locals))
            .saturating_add(u.per_ty_arg.saturating_mul(c.ty_args))
    }
}

/// A call site whose Aptos charges depend on the transaction (a generic
/// call, a call into a module not at a special address), as compiled code
/// hands it to [`AptosMeter::charge_call_site`].
#[derive(Debug)]
pub struct AptosCallSite {
    /// A generic call: the caller's instance id, the instantiation's index
    /// and its type arguments' nodes.
    pub instantiation: Option<(u32, u64, u64)>,
    /// `CallGeneric` (see [`AptosMeter::note_generic_call`]).
    pub generic: bool,
    /// The callee's module.
    pub module: ModuleId,
    /// The site's constant charges after those (its price, then its
    /// frame's types): the running sum after each, and whether running
    /// out there is located as a loading error.
    pub steps: Vec<(u64, bool)>,
    /// The [`AptosMeter::id`] of the last meter that charged this site's
    /// instantiation and module (0: none): that meter skips looking them
    /// up again (its sets only grow).
    settled: AtomicU64,
}

impl AptosCallSite {
    pub fn new(
        instantiation: Option<(u32, u64, u64)>,
        generic: bool,
        module: ModuleId,
        steps: Vec<(u64, bool)>,
    ) -> Self {
        AptosCallSite { instantiation, generic, module, steps, settled: AtomicU64::new(0) }
    }
}

/// A charge compiled code makes through a helper
/// ([`AptosMeter::charge_call_site`], [`AptosMeter::charge_copy`]) that
/// failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChargeFailure {
    pub status: StatusCode,
    /// Gas spent through the failing charge.
    pub spent: u64,
    /// Located as a loading error (`ExecContext::AT_LOAD`).
    pub at_load: bool,
}

/// One transaction under the Aptos schedule.
#[derive(Debug)]
pub struct AptosMeter {
    /// Unique in the process (a clone or a restarted meter gets its own):
    /// what [`AptosCallSite`]s remember they were charged by.
    id: u64,
    pub pricing: Arc<AptosPricing>,
    pub algebra: GasAlgebra,
    /// The memory quota (`txn.memory_quota`) and the peak usage.
    pub memory: MemoryAlgebra,
    /// Natives leave their arguments' memory in use (Aptos's
    /// `should_leak_memory_for_native`): set by each generic call, to
    /// whether its callee is in `0x1::table` or `0x1::event`, and kept
    /// until the next generic call.
    leak_native_args: bool,
    /// Modules whose loading was charged in this transaction (looked up
    /// at every call: a fast hasher, the keys being loaded modules).
    modules: FxHashSet<ModuleId>,
    /// Resources read in this transaction (by the session's global slot).
    resources: FxHashSet<usize>,
    /// Resources a native loaded in this transaction (`object::exists_at`)
    /// before any global operation read them, by address and type: the
    /// first such operation then reads nothing.
    native_reads: HashSet<(AccountAddress, TypeId)>,
    /// Generic instantiations resolved in this transaction (by caller
    /// instance, [`crate::intern::instance_id`], and instantiation index):
    /// Aptos builds their type arguments once per caller.
    instantiations: FxHashSet<(u32, u64)>,
}

/// The next [`AptosMeter`] id.
static NEXT_METER: AtomicU64 = AtomicU64::new(1);

impl Clone for AptosMeter {
    fn clone(&self) -> Self {
        AptosMeter {
            id: NEXT_METER.fetch_add(1, Ordering::Relaxed),
            pricing: self.pricing.clone(),
            algebra: self.algebra.clone(),
            memory: self.memory.clone(),
            leak_native_args: self.leak_native_args,
            modules: self.modules.clone(),
            resources: self.resources.clone(),
            native_reads: self.native_reads.clone(),
            instantiations: self.instantiations.clone(),
        }
    }
}

impl AptosMeter {
    pub fn new(pricing: Arc<AptosPricing>, balance: u64) -> Self {
        let algebra = GasAlgebra::new(pricing.limits, balance);
        let memory = MemoryAlgebra::new(pricing.limits.memory_quota);
        AptosMeter {
            id: NEXT_METER.fetch_add(1, Ordering::Relaxed),
            pricing,
            algebra,
            memory,
            leak_native_args: false,
            modules: FxHashSet::default(),
            resources: FxHashSet::default(),
            native_reads: HashSet::new(),
            instantiations: FxHashSet::default(),
        }
    }

    pub fn charge_execution(&mut self, amount: u64) -> Result<(), StatusCode> {
        self.algebra.charge_execution(amount)
    }

    /// The execution gas compiled code may spend without a check here: the
    /// balance, capped by what the execution limit has left. A charge
    /// larger than this fails (`OUT_OF_GAS` or `EXECUTION_LIMIT_REACHED`).
    pub fn fuel(&self) -> u64 {
        let room = self.algebra.limits().max_execution_gas.saturating_sub(self.algebra.execution_used());
        self.algebra.balance().min(room)
    }

    /// Settles what compiled code spent from [`fuel`](Self::fuel): `spent`
    /// is more than the fuel when its last charge did not fit, and that
    /// charge then fails here exactly as it would have as one charge.
    pub fn charge_compiled(&mut self, spent: u64) -> Result<(), StatusCode> {
        self.algebra.charge_execution(spent)
    }

    /// `op` at a site with counts `c`.
    pub fn charge_site(&mut self, op: Opcode, c: SiteCounts) -> Result<(), StatusCode> {
        let cost = self.pricing.costs.site_cost(op, c);
        self.algebra.charge_execution(cost)
    }

    /// Building a type of `nodes` nodes (instantiation).
    pub fn charge_create_ty(&mut self, nodes: u64) -> Result<(), StatusCode> {
        let cost = self.pricing.costs.subst_ty_per_node.saturating_mul(nodes);
        self.algebra.charge_execution(cost)
    }

    /// Whether instantiation `key` is resolved for the first time in this
    /// transaction (its type arguments are built, and charged, then).
    pub fn first_instantiation(&mut self, key: (u32, u64)) -> bool {
        self.instantiations.insert(key)
    }

    /// A native's cost: the sum of `parameter × count` over `terms` (its
    /// formula in Aptos's natives), charged as execution gas.
    pub fn charge_native(&mut self, terms: NativeTerms<'_>) -> Result<(), StatusCode> {
        let cost = self.pricing.natives.cost(terms);
        self.algebra.charge_execution(cost)
    }

    /// Whether `mark` names this meter: a site that found every module it
    /// loads loaded by this meter (the transaction) once need not look
    /// them up again (see [`mark_loaded`](Self::mark_loaded)).
    pub fn loaded_at(&self, mark: &AtomicU64) -> bool {
        mark.load(Ordering::Relaxed) == self.id
    }

    /// Records in a site's `mark` that this meter has loaded every module
    /// the site loads.
    pub fn mark_loaded(&self, mark: &AtomicU64) {
        mark.store(self.id, Ordering::Relaxed);
    }

    /// Loading module `id` of `size` bytes: once per transaction.
    pub fn charge_module(&mut self, id: &ModuleId, size: u64) -> Result<(), StatusCode> {
        if self.modules.contains(id) {
            return Ok(());
        }
        self.modules.insert(id.clone());
        self.algebra.charge_dependency(&id.address, size)
    }

    /// The charges of call site `site` that only the transaction fixes,
    /// as compiled code makes them with `fuel` left before the call's own
    /// charges, in the interpreter's order (`interp/src/flat/exec.rs`
    /// `charge_aptos_call`, then the callee's frame): the instantiation's
    /// types on its first resolution, the callee's module on its first
    /// load (its size asked of `module_size` then), then the site's
    /// constant steps. `Ok`: what was charged beyond the constant steps
    /// (compiled code charged those already). `Err`: the charge that did
    /// not fit or failed, with all that was spent through it (a charge
    /// that does not fit is spent whole, for
    /// [`charge_compiled`](Self::charge_compiled) to settle).
    pub fn charge_call_site(
        &mut self,
        site: &AptosCallSite,
        fuel: u64,
        module_size: impl FnOnce() -> Option<u64>,
    ) -> Result<u64, ChargeFailure> {
        let fail = |status, spent, at_load| Err(ChargeFailure { status, spent, at_load });
        let mut spent = 0u64;
        // Charged by this meter already: nothing to look up.
        let settled = site.settled.load(Ordering::Relaxed) == self.id;
        if settled {
            if site.generic {
                self.note_generic_call(&site.module);
            }
            // The steps are running sums: when the last fits, all do.
            if site.steps.last().is_none_or(|&(q, _)| q <= fuel) {
                return Ok(0);
            }
            return match site.steps.iter().find(|(q, _)| *q > fuel) {
                Some(&(q, at_load)) => fail(StatusCode::OUT_OF_GAS, q, at_load),
                None => Ok(0),
            };
        }
        if let Some((caller, index, nodes)) = site.instantiation {
            if self.first_instantiation((caller, index)) {
                spent = spent.saturating_add(self.pricing.costs.subst_ty_per_node.saturating_mul(nodes));
                if spent > fuel {
                    return fail(StatusCode::OUT_OF_GAS, spent, false);
                }
            }
        }
        if site.generic {
            self.note_generic_call(&site.module);
        }
        if !self.modules.contains(&site.module) {
            let Some(size) = module_size() else {
                return fail(StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR, spent, false);
            };
            self.modules.insert(site.module.clone());
            let cost = self.algebra.dependency_cost(&site.module.address, size);
            spent = spent.saturating_add(cost);
            if spent > fuel {
                return fail(StatusCode::OUT_OF_GAS, spent, true);
            }
            if let Err(s) = self.algebra.count_dependency(&site.module.address, size) {
                return fail(s, spent, true);
            }
        }
        for &(q, at_load) in &site.steps {
            if spent.saturating_add(q) > fuel {
                return fail(StatusCode::OUT_OF_GAS, spent.saturating_add(q), at_load);
            }
        }
        site.settled.store(self.id, Ordering::Relaxed);
        Ok(spent)
    }

    /// `copy_loc` or `read_ref` (`op`) of the value of layout `l` in
    /// `bytes`, as compiled code makes it with `fuel` left before its
    /// charges, in the interpreter's order (`charge_aptos`): the value's
    /// heap part is used, then the instruction is priced by the value's
    /// abstract size. `Ok`: the price; `Err` as in
    /// [`charge_call_site`](Self::charge_call_site).
    pub fn charge_copy(&mut self, op: Opcode, l: &FlatLayout, bytes: &[u8], fuel: u64) -> Result<u64, ChargeFailure> {
        let sizes = &self.pricing.sizes;
        let units = sizes.value(l, bytes);
        let heap = if AbstractSizes::heapless(l) { 0 } else { units.saturating_sub(sizes.stack(l)) };
        let price = self.pricing.costs.site_cost(op, SiteCounts { units, ..SiteCounts::default() });
        self.charge_sized_copy(heap, price, fuel)
    }

    /// A copy of `heap` heap units priced `price`, with `fuel` left before
    /// it: its memory is used, then its price checked against `fuel`, as
    /// [`charge_copy`](Self::charge_copy) (which measures them on the
    /// value) and a closure call's fast path (which knows them per target,
    /// [`AptosPricing::scalar_closure_copy`]) make it. `Ok`: the price;
    /// `Err` as in [`charge_call_site`](Self::charge_call_site).
    pub fn charge_sized_copy(&mut self, heap: u64, price: u64, fuel: u64) -> Result<u64, ChargeFailure> {
        if let Err(status) = self.memory.use_memory(heap) {
            return Err(ChargeFailure { status, spent: 0, at_load: false });
        }
        if price > fuel {
            return Err(ChargeFailure { status: StatusCode::OUT_OF_GAS, spent: price, at_load: false });
        }
        Ok(price)
    }

    /// `eq` or `neq` (`op`) of the values of layout `l` in `a` and `b`, as
    /// compiled code makes it with `fuel` left before its charges, in the
    /// interpreter's order (`charge_aptos`): when the operands are values
    /// (`values`; not references) their heap parts are released (compared
    /// values are destroyed), then the instruction is priced by both
    /// abstract sizes. `Ok`: the price; `Err` as in
    /// [`charge_call_site`](Self::charge_call_site).
    pub fn charge_compare(
        &mut self,
        op: Opcode,
        l: &FlatLayout,
        (a, b): (&[u8], &[u8]),
        values: bool,
        fuel: u64,
    ) -> Result<u64, ChargeFailure> {
        let sizes = &self.pricing.sizes;
        let units = sizes.dereferenced(l, a).saturating_add(sizes.dereferenced(l, b));
        if values && !AbstractSizes::heapless(l) {
            let heap = sizes.heap(l, a).saturating_add(sizes.heap(l, b));
            self.memory.release_memory(heap);
        }
        let price = self.pricing.costs.site_cost(op, SiteCounts { units, ..SiteCounts::default() });
        if price > fuel {
            return Err(ChargeFailure { status: StatusCode::OUT_OF_GAS, spent: price, at_load: false });
        }
        Ok(price)
    }

    /// Whether global slot `slot` was read in this transaction.
    pub fn has_read(&self, slot: usize) -> bool {
        self.resources.contains(&slot)
    }

    /// A native loads resource `key` (address, type), whose session slot
    /// is `slot` if it has one: whether this is the transaction's first
    /// load of it (Aptos's data cache loads a resource once).
    pub fn load_by_native(&mut self, slot: Option<usize>, key: (AccountAddress, TypeId)) -> bool {
        if slot.is_some_and(|s| self.resources.contains(&s)) {
            return false;
        }
        self.native_reads.insert(key)
    }

    /// The first global operation on slot `slot`, resource `key`: if a
    /// native loaded it before ([`load_by_native`](Self::load_by_native)),
    /// it is read already (nothing to charge) and `true` is returned.
    pub fn read_by_native(&mut self, slot: usize, key: (AccountAddress, TypeId)) -> bool {
        if self.native_reads.contains(&key) {
            self.resources.insert(slot);
            return true;
        }
        false
    }

    /// The first access to global slot `slot` in this transaction reads it
    /// from storage: `bytes` (its size) and `heap` (its heap size,
    /// [`AbstractSizes::heap`], which it uses in memory) when it exists
    /// there, `None` otherwise.
    pub fn charge_resource(&mut self, slot: usize, loaded: Option<(u64, u64)>) -> Result<(), StatusCode> {
        if !self.resources.insert(slot) {
            return Ok(());
        }
        if let Some((_, heap)) = loaded {
            self.memory.use_memory(heap)?;
        }
        let pages = loaded.map(|(b, _)| b.div_ceil(READ_PAGE_BYTES) * READ_PAGE_BYTES);
        self.algebra.charge_resource_read(pages)
    }

    /// A value of `amount` abstract units is created (copied, read,
    /// loaded, packed into a container, returned by a native).
    pub fn use_memory(&mut self, amount: u64) -> Result<(), StatusCode> {
        self.memory.use_memory(amount)
    }

    /// A value of `amount` abstract units is destroyed (popped, compared,
    /// overwritten, unpacked, left in a returning frame).
    pub fn release_memory(&mut self, amount: u64) {
        self.memory.release_memory(amount)
    }

    /// A generic call of a function of `module`: decides whether the
    /// natives called from now on release their arguments' memory.
    pub fn note_generic_call(&mut self, module: &ModuleId) {
        let core = module.address == movejit_format::AccountAddress::from_u64(1);
        self.leak_native_args = core && matches!(&*module.name, "table" | "event");
    }

    /// A native is called with arguments of `heap` heap units in all: they
    /// are released, unless a native of `0x1::table` or `0x1::event` was
    /// the last generic call ([`note_generic_call`](Self::note_generic_call)).
    pub fn release_native_args(&mut self, heap: u64) {
        if !self.leak_native_args {
            self.memory.release_memory(heap);
        }
    }

    /// Peak memory of the transaction so far, in abstract units.
    pub fn memory_used(&self) -> u64 {
        self.memory.peak()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `charge_call_site` charges as the interpreter's call sequence does
    /// (instantiation once per caller, module once per transaction, then
    /// the constant steps) and fails at the first charge past the fuel,
    /// with everything spent through it and the loading errors flagged.
    #[test]
    fn call_sites_charge_in_the_interpreters_order() {
        let pricing = AptosPricing::v50();
        let per_node = pricing.costs.subst_ty_per_node;
        let module = ModuleId::new(AccountAddress::from_u64(0xcafe), "m");
        let size = 1000;
        let load = GasAlgebra::new(pricing.limits, u64::MAX).dependency_cost(&module.address, size);
        assert!(per_node > 0 && load > 0);
        let site = AptosCallSite::new(Some((7, 3, 2)), true, module.clone(), vec![(100, false), (130, true)]);
        let inst = 2 * per_node;
        let fail = |status, spent, at_load| Err(ChargeFailure { status, spent, at_load });
        let oog = StatusCode::OUT_OF_GAS;
        // (fuel, outcome of a fresh meter's first call)
        let table: Vec<(u64, Result<u64, ChargeFailure>)> = vec![
            (inst - 1, fail(oog, inst, false)),
            (inst + load - 1, fail(oog, inst + load, true)),
            (inst + load + 99, fail(oog, inst + load + 100, false)),
            (inst + load + 129, fail(oog, inst + load + 130, true)),
            (inst + load + 130, Ok(inst + load)),
        ];
        for (fuel, want) in table {
            let mut m = AptosMeter::new(pricing.clone(), u64::MAX);
            assert_eq!(m.charge_call_site(&site, fuel, || Some(size)), want, "fuel {fuel}");
        }
        // Once resolved and loaded, only the constant steps are checked.
        let mut m = AptosMeter::new(pricing.clone(), u64::MAX);
        assert_eq!(m.charge_call_site(&site, u64::MAX, || Some(size)), Ok(inst + load));
        assert_eq!(m.charge_call_site(&site, 130, || None), Ok(0));
        assert_eq!(m.charge_call_site(&site, 129, || None), fail(oog, 130, true));
        // Another caller resolves the instantiation again.
        let other = AptosCallSite::new(Some((8, 3, 2)), true, module.clone(), site.steps.clone());
        assert_eq!(m.charge_call_site(&other, u64::MAX, || None), Ok(inst));
        // A module at a special address loads for free.
        let framework =
            AptosCallSite::new(None, false, ModuleId::new(AccountAddress::from_u64(1), "vector"), vec![(10, false)]);
        assert_eq!(m.charge_call_site(&framework, 10, || Some(size)), Ok(0));
        // A site one meter settled charges another (a clone too) in full.
        let mut fresh = AptosMeter::new(pricing.clone(), u64::MAX);
        assert_eq!(fresh.charge_call_site(&site, u64::MAX, || Some(size)), Ok(inst + load));
        let mut clone = AptosMeter::new(pricing.clone(), u64::MAX).clone();
        assert_eq!(clone.charge_call_site(&site, u64::MAX, || Some(size)), Ok(inst + load));
        // An unknown module size is an invariant violation.
        let mut m = AptosMeter::new(pricing, u64::MAX);
        let failed = m.charge_call_site(&site, u64::MAX, || None).map_err(|f| f.status);
        assert_eq!(failed, Err(StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR));
    }
}
