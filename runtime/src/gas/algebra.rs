//! Aptos's gas algebra: one balance that execution and I/O charges draw
//! from, each also capped by a per-transaction limit, and the module-loading
//! (dependency) counters. The rules are those of Aptos's
//! `StandardGasAlgebra` at gas feature versions ≥ 15 (every version the
//! built-in schedules have):
//!
//! - a charge larger than the balance ends with `OUT_OF_GAS`, and what was
//!   left of the balance still counts as used by that category;
//! - otherwise the charge is taken, and *then* a category over its limit
//!   ends with `EXECUTION_LIMIT_REACHED` / `IO_LIMIT_REACHED`;
//! - each loaded module outside the special addresses 0x0–0xf costs
//!   `dependency_per_module + dependency_per_byte × size` of execution gas
//!   and counts towards `max_num_dependencies` / `max_total_dependency_size`
//!   (`DEPENDENCY_LIMIT_REACHED`).
//!
//! Amounts are internal gas units; a balance in external units is scaled by
//! `txn.gas_unit_scaling_factor`.

use super::schedule::{MissingParameter, Schedule};
use movejit_format::{AccountAddress, StatusCode};

/// The per-transaction limits and prices the algebra needs, from a schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransactionLimits {
    /// Internal units per external gas unit.
    pub scaling_factor: u64,
    /// The default balance, in external units.
    pub max_gas_units: u64,
    pub max_execution_gas: u64,
    pub max_io_gas: u64,
    pub dependency_per_module: u64,
    pub dependency_per_byte: u64,
    pub max_num_dependencies: u64,
    pub max_total_dependency_size: u64,
    /// Reading a resource: per slot and per byte read (I/O gas).
    pub read_per_slot: u64,
    pub read_per_byte: u64,
    /// Peak memory allowed, in abstract memory units.
    pub memory_quota: u64,
}

impl TransactionLimits {
    pub fn from_schedule(s: &Schedule) -> Result<Self, MissingParameter> {
        Ok(TransactionLimits {
            scaling_factor: s.get("txn.gas_unit_scaling_factor")?,
            max_gas_units: s.get("txn.maximum_number_of_gas_units")?,
            max_execution_gas: s.get("txn.max_execution_gas")?,
            max_io_gas: s.get("txn.max_io_gas")?,
            dependency_per_module: s.get("txn.dependency_per_module")?,
            dependency_per_byte: s.get("txn.dependency_per_byte")?,
            max_num_dependencies: s.get("txn.max_num_dependencies")?,
            max_total_dependency_size: s.get("txn.max_total_dependency_size")?,
            read_per_slot: s.get("txn.storage_io_per_state_slot_read")?,
            read_per_byte: s.get("txn.storage_io_per_state_byte_read")?,
            memory_quota: s.get("txn.memory_quota")?,
        })
    }

    /// `units` external gas units in internal units (saturating).
    pub fn to_internal(&self, units: u64) -> u64 {
        units.saturating_mul(self.scaling_factor)
    }
}

/// Balance and per-category usage of one transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GasAlgebra {
    limits: TransactionLimits,
    initial_balance: u64,
    balance: u64,
    execution_used: u64,
    io_used: u64,
    dependencies: u64,
    dependency_bytes: u64,
}

impl GasAlgebra {
    /// A transaction with `balance` internal units.
    pub fn new(limits: TransactionLimits, balance: u64) -> Self {
        GasAlgebra {
            limits,
            initial_balance: balance,
            balance,
            execution_used: 0,
            io_used: 0,
            dependencies: 0,
            dependency_bytes: 0,
        }
    }

    pub fn limits(&self) -> &TransactionLimits {
        &self.limits
    }
    pub fn balance(&self) -> u64 {
        self.balance
    }
    pub fn execution_used(&self) -> u64 {
        self.execution_used
    }
    pub fn io_used(&self) -> u64 {
        self.io_used
    }
    /// Internal units taken from the balance.
    pub fn total_used(&self) -> u64 {
        self.initial_balance - self.balance
    }
    /// External units taken from the balance (rounded up, as a node bills).
    pub fn total_used_external(&self) -> u64 {
        self.total_used().div_ceil(self.limits.scaling_factor.max(1))
    }

    /// No execution limit (benchmarks time programs past it).
    pub fn lift_execution_limit(&mut self) {
        self.limits.max_execution_gas = u64::MAX;
    }

    pub fn charge_execution(&mut self, amount: u64) -> Result<(), StatusCode> {
        Self::draw(&mut self.balance, &mut self.execution_used, amount)?;
        if self.execution_used > self.limits.max_execution_gas {
            return Err(StatusCode::EXECUTION_LIMIT_REACHED);
        }
        Ok(())
    }

    pub fn charge_io(&mut self, amount: u64) -> Result<(), StatusCode> {
        Self::draw(&mut self.balance, &mut self.io_used, amount)?;
        if self.io_used > self.limits.max_io_gas {
            return Err(StatusCode::IO_LIMIT_REACHED);
        }
        Ok(())
    }

    /// Reading a resource of `bytes` bytes (`None`: it does not exist).
    pub fn charge_resource_read(&mut self, bytes: Option<u64>) -> Result<(), StatusCode> {
        let per_byte = self.limits.read_per_byte.saturating_mul(bytes.unwrap_or(0));
        self.charge_io(self.limits.read_per_slot.saturating_add(per_byte))
    }

    /// Loading the module `address::…` of `size` bytes, once per
    /// transaction; free at the special addresses.
    pub fn charge_dependency(&mut self, address: &AccountAddress, size: u64) -> Result<(), StatusCode> {
        if is_special(address) {
            return Ok(());
        }
        self.charge_execution(self.dependency_cost(address, size))?;
        self.count_dependency(address, size)
    }

    /// What loading a module of `size` bytes at `address` costs (execution
    /// gas; nothing at a special address).
    pub fn dependency_cost(&self, address: &AccountAddress, size: u64) -> u64 {
        if is_special(address) {
            return 0;
        }
        let l = self.limits;
        l.dependency_per_module.saturating_add(l.dependency_per_byte.saturating_mul(size))
    }

    /// Counts a loaded module of `size` bytes at `address` (once charged)
    /// against the dependency limits.
    pub fn count_dependency(&mut self, address: &AccountAddress, size: u64) -> Result<(), StatusCode> {
        if is_special(address) {
            return Ok(());
        }
        let l = self.limits;
        self.dependencies += 1;
        self.dependency_bytes = self.dependency_bytes.saturating_add(size);
        if self.dependencies > l.max_num_dependencies || self.dependency_bytes > l.max_total_dependency_size {
            return Err(StatusCode::DEPENDENCY_LIMIT_REACHED);
        }
        Ok(())
    }

    /// Takes `amount` from `balance` into `used`; past the balance, what is
    /// left still counts as used.
    fn draw(balance: &mut u64, used: &mut u64, amount: u64) -> Result<(), StatusCode> {
        match balance.checked_sub(amount) {
            Some(rest) => {
                *balance = rest;
                *used += amount;
                Ok(())
            }
            None => {
                *used += std::mem::take(balance);
                Err(StatusCode::OUT_OF_GAS)
            }
        }
    }
}

/// Aptos's memory quota over one transaction, in abstract memory units:
/// values the VM creates use memory, values it destroys release it. The
/// rules are those of Aptos's `StandardMemoryAlgebra` at gas feature
/// versions ≥ 3, with the peak tracked after every use and release:
///
/// - a use larger than what is left of the quota ends with
///   `MEMORY_LIMIT_EXCEEDED`, and nothing is left;
/// - releases are never checked: what is left may rise above the quota
///   (values the VM never counted, such as arguments, are released too),
///   and then the usage counts as 0, the excess offsetting later uses.
///
/// Metered compiled code feeds uses and releases of constant amounts
/// inline, by these rules, on the fields at [`MemoryAlgebra::OFFSETS`]
/// (a use that does not fit goes to the `memory_use` helper, which fails).
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct MemoryAlgebra {
    quota: u64,
    remaining: u64,
    /// The lowest `remaining` so far, at most `quota`: the peak usage is
    /// `quota - lowest`, kept so that a use updates it with one minimum
    /// (compiled code does it inline on every use).
    lowest: u64,
}

/// Field offsets of [`MemoryAlgebra`], for code generators (all `u64`).
#[derive(Clone, Copy, Debug)]
pub struct MemoryOffsets {
    pub quota: usize,
    pub remaining: usize,
    pub lowest: usize,
}

impl MemoryAlgebra {
    pub const OFFSETS: MemoryOffsets = MemoryOffsets {
        quota: std::mem::offset_of!(MemoryAlgebra, quota),
        remaining: std::mem::offset_of!(MemoryAlgebra, remaining),
        lowest: std::mem::offset_of!(MemoryAlgebra, lowest),
    };

    pub fn new(quota: u64) -> Self {
        MemoryAlgebra { quota, remaining: quota, lowest: quota }
    }

    pub fn use_memory(&mut self, amount: u64) -> Result<(), StatusCode> {
        let r = match self.remaining.checked_sub(amount) {
            Some(rest) => {
                self.remaining = rest;
                Ok(())
            }
            None => {
                self.remaining = 0;
                Err(StatusCode::MEMORY_LIMIT_EXCEEDED)
            }
        };
        self.lowest = self.lowest.min(self.remaining);
        r
    }

    pub fn release_memory(&mut self, amount: u64) {
        self.remaining = self.remaining.saturating_add(amount);
    }

    /// Memory in use now (0 while more was released than used).
    pub fn current(&self) -> u64 {
        self.quota.saturating_sub(self.remaining)
    }

    /// The highest usage so far (what Aptos reports as `memory_used`).
    pub fn peak(&self) -> u64 {
        self.quota - self.lowest
    }
}

/// Aptos's special addresses: 0x0 to 0xf (`AccountAddress::is_special`).
pub fn is_special(a: &AccountAddress) -> bool {
    a.0[..31].iter().all(|&b| b == 0) && a.0[31] < 0x10
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> TransactionLimits {
        TransactionLimits {
            scaling_factor: 100,
            max_gas_units: 1000,
            max_execution_gas: 50,
            max_io_gas: 30,
            dependency_per_module: 10,
            dependency_per_byte: 1,
            max_num_dependencies: 2,
            max_total_dependency_size: 15,
            read_per_slot: 7,
            read_per_byte: 2,
            memory_quota: 0,
        }
    }

    /// (balance, charges, expected end, execution used, io used, balance left)
    #[test]
    fn charges_follow_aptos_rules() {
        type Step = fn(&mut GasAlgebra) -> Result<(), StatusCode>;
        type Case = (u64, &'static [Step], Result<(), StatusCode>, u64, u64, u64);
        let cases: &[Case] = &[
            (100, &[|g| g.charge_execution(40), |g| g.charge_io(20)], Ok(()), 40, 20, 40),
            // Over the balance: the rest counts as used, OUT_OF_GAS.
            (30, &[|g| g.charge_execution(20), |g| g.charge_execution(20)], Err(StatusCode::OUT_OF_GAS), 30, 0, 0),
            (30, &[|g| g.charge_io(25), |g| g.charge_io(10)], Err(StatusCode::OUT_OF_GAS), 0, 30, 0),
            // Over the limit (the charge is taken first).
            (100, &[|g| g.charge_execution(51)], Err(StatusCode::EXECUTION_LIMIT_REACHED), 51, 0, 49),
            (100, &[|g| g.charge_execution(50)], Ok(()), 50, 0, 50),
            (100, &[|g| g.charge_io(31)], Err(StatusCode::IO_LIMIT_REACHED), 0, 31, 69),
            // Both over: the balance decides first.
            (40, &[|g| g.charge_execution(60)], Err(StatusCode::OUT_OF_GAS), 40, 0, 0),
            // Resource reads: per slot plus per byte; a missing one per slot.
            (100, &[|g| g.charge_resource_read(Some(3)), |g| g.charge_resource_read(None)], Ok(()), 0, 20, 80),
            // Dependencies: special addresses are free; limits on count and bytes.
            (
                100,
                &[
                    |g| g.charge_dependency(&AccountAddress::from_u64(1), 999),
                    |g| g.charge_dependency(&AccountAddress::from_u64(0xcafe), 5),
                ],
                Ok(()),
                15,
                0,
                85,
            ),
            (
                100,
                &[
                    |g| g.charge_dependency(&AccountAddress::from_u64(0x10), 10),
                    |g| g.charge_dependency(&AccountAddress::from_u64(0x11), 6),
                ],
                Err(StatusCode::DEPENDENCY_LIMIT_REACHED),
                36,
                0,
                64,
            ),
        ];
        for (i, &(balance, steps, end, exec, io, left)) in cases.iter().enumerate() {
            let mut g = GasAlgebra::new(limits(), balance);
            let got = steps.iter().try_for_each(|s| s(&mut g));
            assert_eq!((got, g.execution_used(), g.io_used(), g.balance()), (end, exec, io, left), "case {i}");
            assert_eq!(g.total_used(), g.execution_used() + g.io_used(), "case {i}");
        }
    }

    /// (quota, steps: use (+) or release (-), expected end, current, peak)
    #[test]
    fn memory_follows_aptos_rules() {
        type Case = (u64, &'static [i64], Result<(), StatusCode>, u64, u64);
        let cases: &[Case] = &[
            (100, &[40, -30, 50], Ok(()), 60, 60),
            (100, &[40, 20, -60], Ok(()), 0, 60),
            // Releasing what was never used: usage 0, the excess offsets later uses.
            (100, &[-50, 30], Ok(()), 0, 0),
            (100, &[-50, 80], Ok(()), 30, 30),
            // Past the quota: nothing is left, the peak is the quota.
            (100, &[60, 50], Err(StatusCode::MEMORY_LIMIT_EXCEEDED), 100, 100),
            (100, &[100], Ok(()), 100, 100),
        ];
        for (i, &(quota, steps, end, current, peak)) in cases.iter().enumerate() {
            let mut m = MemoryAlgebra::new(quota);
            let mut got = Ok(());
            for &step in steps {
                if step >= 0 {
                    got = got.and(m.use_memory(step as u64));
                } else {
                    m.release_memory(step.unsigned_abs());
                }
            }
            assert_eq!((got, m.current(), m.peak()), (end, current, peak), "case {i}");
        }
    }

    #[test]
    fn external_units_round_up() {
        let mut g = GasAlgebra::new(limits(), limits().to_internal(10));
        g.charge_execution(1).unwrap();
        assert_eq!(g.total_used_external(), 1);
        g.charge_execution(49).unwrap();
        assert_eq!(g.total_used_external(), 1);
    }

    #[test]
    fn special_addresses() {
        for (a, special) in [(0u64, true), (1, true), (0xf, true), (0x10, false), (0x100, false)] {
            assert_eq!(is_special(&AccountAddress::from_u64(a)), special, "{a:#x}");
        }
        let mut high = AccountAddress::from_u64(1);
        high.0[0] = 1;
        assert!(!is_special(&high));
    }
}
