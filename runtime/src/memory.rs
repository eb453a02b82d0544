//! The memory budget of an execution: heap bytes Move values may hold.
//!
//! Accounting happens where value memory is allocated, not per instruction:
//! flat vector buffers and headers (`flat::raw`, the one place both
//! executors and every native result allocate them). Freed flat memory is given back, so the
//! budget bounds the *live* bytes a call adds, as a host's memory quota
//! does.
//!
//! The counter is per thread: an execution runs on one thread, and values
//! are freed from places (drops, the native bridge) that have no execution
//! context at hand. A top-level call opens a [`MemoryScope`] with its
//! budget; nested runs on the same thread (compiled code calling the
//! interpreter and back) stay inside the outer scope. A gas schedule with a
//! memory quota installs its quota as the scope's budget.

use crate::error::VmError;
use movejit_format::StatusCode;
use std::cell::Cell;

thread_local! {
    /// Live bytes of accounted value memory on this thread.
    static USED: Cell<u64> = const { Cell::new(0) };
    /// `USED` may not exceed this (`u64::MAX`: no scope open).
    static CEILING: Cell<u64> = const { Cell::new(u64::MAX) };
}

/// Bytes of accounted value memory live on this thread.
pub fn used() -> u64 {
    USED.with(|u| u.get())
}

/// Bytes the scope in force still allows (`u64::MAX`: no scope open).
pub fn remaining() -> u64 {
    let ceiling = CEILING.with(|c| c.get());
    if ceiling == u64::MAX {
        u64::MAX
    } else {
        ceiling.saturating_sub(used())
    }
}

/// The error of an exhausted budget (also of an allocation the system
/// refused: either way the program asked for more than it may have).
pub fn exceeded() -> VmError {
    VmError::new(StatusCode::MEMORY_LIMIT_EXCEEDED).with_message("memory limit exceeded")
}

/// Takes `bytes` from the budget, or fails with nothing taken.
#[inline]
pub fn charge(bytes: u64) -> Result<(), VmError> {
    let used = used();
    match used.checked_add(bytes) {
        Some(n) if n <= CEILING.with(|c| c.get()) => {
            USED.with(|u| u.set(n));
            Ok(())
        }
        _ => Err(exceeded()),
    }
}

/// Takes `bytes` without a check (memory that must exist for the program's
/// state to stay consistent); the next checked charge sees it.
#[inline]
pub fn charge_unchecked(bytes: u64) {
    USED.with(|u| u.set(u.get().saturating_add(bytes)));
}

/// Gives back `bytes` charged before.
#[inline]
pub fn release(bytes: u64) {
    USED.with(|u| u.set(u.get().saturating_sub(bytes)));
}

/// Runs `f` outside the budget of the call in force: what it allocates and
/// keeps (compiled code's constants, caches shared by later calls) is not
/// the call's and is never charged to it, whichever tier compiles when.
/// (Such memory is freed, and released, only when its owner is dropped.)
pub fn outside_budget<R>(f: impl FnOnce() -> R) -> R {
    let (used, ceiling) = (used(), CEILING.with(|c| c.replace(u64::MAX)));
    let r = f();
    USED.with(|u| u.set(used));
    CEILING.with(|c| c.set(ceiling));
    r
}

/// A budget in force on this thread until dropped.
#[must_use = "the budget ends when the scope is dropped"]
#[derive(Debug)]
pub struct MemoryScope {
    /// The ceiling to restore (`None`: an outer scope was already open and
    /// this one changed nothing).
    restore: Option<u64>,
}

impl MemoryScope {
    /// Allows `budget` more live bytes than are live now, unless a scope is
    /// already open on this thread (a nested run shares its caller's
    /// budget).
    pub fn enter(budget: u64) -> MemoryScope {
        let open = CEILING.with(|c| c.get()) != u64::MAX;
        if open {
            return MemoryScope { restore: None };
        }
        let ceiling = used().saturating_add(budget).min(u64::MAX - 1);
        CEILING.with(|c| c.set(ceiling));
        MemoryScope { restore: Some(u64::MAX) }
    }
}

impl Drop for MemoryScope {
    fn drop(&mut self) {
        if let Some(c) = self.restore {
            CEILING.with(|x| x.set(c));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_outside_the_budget_is_not_charged() {
        let scope = MemoryScope::enter(100);
        let before = used();
        let kept = outside_budget(|| {
            // Allowed past the call's budget, and not counted after.
            charge(1_000).expect("no budget applies here");
            1_000
        });
        assert_eq!((kept, used()), (1_000, before));
        assert!(charge(100).is_ok() && charge(1).is_err(), "the call's budget is intact");
        release(100);
        drop(scope);
    }

    #[test]
    fn scope_bounds_growth_and_nests() {
        let base = used();
        {
            let _s = MemoryScope::enter(100);
            assert!(charge(60).is_ok());
            {
                // A nested scope does not renew the budget.
                let _inner = MemoryScope::enter(1000);
                assert_eq!(charge(50).unwrap_err().status, StatusCode::MEMORY_LIMIT_EXCEEDED);
                assert_eq!(remaining(), 40);
            }
            release(60);
            assert!(charge(100).is_ok());
            assert!(charge(1).is_err());
            release(100);
        }
        assert_eq!(used(), base);
        assert_eq!(remaining(), u64::MAX);
        assert!(charge(1 << 40).is_ok());
        release(1 << 40);
    }
}
