//! The Aptos meter's state for one transaction: the resolved prices of a
//! schedule ([`AptosPricing`], shared by every call) and what the
//! transaction has used and loaded ([`AptosMeter`]). [`super::GasMeter`]
//! holds one when it charges the Aptos schedule.

use super::abstract_size::AbstractSizes;
use super::algebra::{GasAlgebra, MemoryAlgebra, TransactionLimits};
use super::native::{NativePrices, NativeTerms};
use super::schedule::{InstructionCosts, MissingParameter, Schedule};
use crate::intern::TypeId;
use crate::storage::ModuleId;
use movejit_format::{AccountAddress, Opcode, StatusCode};
use std::collections::HashSet;
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

/// One transaction under the Aptos schedule.
#[derive(Clone, Debug)]
pub struct AptosMeter {
    pub pricing: Arc<AptosPricing>,
    pub algebra: GasAlgebra,
    /// The memory quota (`txn.memory_quota`) and the peak usage.
    pub memory: MemoryAlgebra,
    /// Natives leave their arguments' memory in use (Aptos's
    /// `should_leak_memory_for_native`): set by each generic call, to
    /// whether its callee is in `0x1::table` or `0x1::event`, and kept
    /// until the next generic call.
    leak_native_args: bool,
    /// Modules whose loading was charged in this transaction.
    modules: HashSet<ModuleId>,
    /// Resources read in this transaction (by the session's global slot).
    resources: HashSet<usize>,
    /// Resources a native loaded in this transaction (`object::exists_at`)
    /// before any global operation read them, by address and type: the
    /// first such operation then reads nothing.
    native_reads: HashSet<(AccountAddress, TypeId)>,
    /// Generic instantiations resolved in this transaction (by caller
    /// instance and instantiation index): Aptos builds their type
    /// arguments once per caller.
    instantiations: HashSet<(usize, u64)>,
}

impl AptosMeter {
    pub fn new(pricing: Arc<AptosPricing>, balance: u64) -> Self {
        let algebra = GasAlgebra::new(pricing.limits, balance);
        let memory = MemoryAlgebra::new(pricing.limits.memory_quota);
        AptosMeter {
            pricing,
            algebra,
            memory,
            leak_native_args: false,
            modules: HashSet::new(),
            resources: HashSet::new(),
            native_reads: HashSet::new(),
            instantiations: HashSet::new(),
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
    pub fn first_instantiation(&mut self, key: (usize, u64)) -> bool {
        self.instantiations.insert(key)
    }

    /// A native's cost: the sum of `parameter × count` over `terms` (its
    /// formula in Aptos's natives), charged as execution gas.
    pub fn charge_native(&mut self, terms: NativeTerms<'_>) -> Result<(), StatusCode> {
        let cost = self.pricing.natives.cost(terms);
        self.algebra.charge_execution(cost)
    }

    /// Loading module `id` of `size` bytes: once per transaction.
    pub fn charge_module(&mut self, id: &ModuleId, size: u64) -> Result<(), StatusCode> {
        if self.modules.contains(id) {
            return Ok(());
        }
        self.modules.insert(id.clone());
        self.algebra.charge_dependency(&id.address, size)
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
