//! Native gas parameters resolved to indices. A native names each parameter
//! it charges once, as a [`NativeParam`] constant (checked against the
//! built-in schedule's names when the crate compiles); [`NativePrices`]
//! holds their values under one schedule, resolved when the schedule is
//! loaded. Charging a native is then an index per term, never a name.

use super::aptos_v50::PARAMETERS;
use super::schedule::{MissingParameter, Schedule};

/// The prefixes of the schedule's native parameters (Aptos's
/// `NativeGasParameters`: the Move stdlib, the framework and tables).
pub const NATIVE_PREFIXES: [&str; 3] = ["move_stdlib.", "aptos_framework.", "table."];

/// Native parameters Aptos's `initial()` schedule prices but the v50
/// on-chain schedule does not list (they were named at one release only):
/// a schedule that lacks them charges these values.
pub const UNLISTED: &[(&str, u64)] = &[
    ("aptos_framework.permissioned_signer.permission_address.base", 11020),
    ("aptos_framework.permissioned_signer.is_permissioned_signer.base", 11020),
    ("aptos_framework.permissioned_signer.signer_from_permissioned_handle.base", 11020),
];

/// One native gas parameter: its index in the built-in schedule's list of
/// names ([`PARAMETERS`]), then in [`UNLISTED`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NativeParam(u16);

impl NativeParam {
    /// The parameter called `name`. In a `const` an unknown or non-native
    /// name fails the build.
    pub const fn named(name: &str) -> NativeParam {
        assert!(is_native(name), "not a native gas parameter");
        let mut i = 0;
        while i < PARAMETERS.len() {
            if str_eq(PARAMETERS[i].0, name) {
                return NativeParam(i as u16);
            }
            i += 1;
        }
        let mut j = 0;
        while j < UNLISTED.len() {
            if str_eq(UNLISTED[j].0, name) {
                return NativeParam((PARAMETERS.len() + j) as u16);
            }
            j += 1;
        }
        panic!("no such gas parameter in the built-in schedule")
    }

    /// The parameter's on-chain name.
    pub fn name(self) -> &'static str {
        let i = self.0 as usize;
        PARAMETERS.get(i).unwrap_or_else(|| &UNLISTED[i - PARAMETERS.len()]).0
    }
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn starts_with(s: &str, prefix: &str) -> bool {
    let (s, p) = (s.as_bytes(), prefix.as_bytes());
    if s.len() < p.len() {
        return false;
    }
    let mut i = 0;
    while i < p.len() {
        if s[i] != p[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether `name` is a native gas parameter.
pub const fn is_native(name: &str) -> bool {
    let mut i = 0;
    while i < NATIVE_PREFIXES.len() {
        if starts_with(name, NATIVE_PREFIXES[i]) {
            return true;
        }
        i += 1;
    }
    false
}

/// A native's charge: `parameter × count` summed over its terms.
pub type NativeTerms<'a> = &'a [(NativeParam, u64)];

/// Every native parameter's value under one schedule, by [`NativeParam`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NativePrices {
    prices: Box<[u64]>,
}

impl NativePrices {
    /// Resolves every native parameter the built-in schedule names in
    /// `schedule`; a schedule lacking one is refused.
    pub fn from_schedule(schedule: &Schedule) -> Result<Self, MissingParameter> {
        let listed = PARAMETERS.iter().map(|&(name, _)| if is_native(name) { schedule.get(name) } else { Ok(0) });
        let unlisted = UNLISTED.iter().map(|&(name, default)| Ok(schedule.get(name).unwrap_or(default)));
        let prices = listed.chain(unlisted).collect::<Result<_, _>>()?;
        Ok(NativePrices { prices })
    }

    pub fn price(&self, p: NativeParam) -> u64 {
        self.prices[p.0 as usize]
    }

    /// The cost of `terms` (saturating).
    pub fn cost(&self, terms: NativeTerms<'_>) -> u64 {
        terms.iter().fold(0u64, |sum, &(p, n)| sum.saturating_add(self.price(p).saturating_mul(n)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_resolve_to_their_names_and_values() {
        const SHA: NativeParam = NativeParam::named("move_stdlib.hash.sha2_256.per_byte");
        const TABLE: NativeParam = NativeParam::named("table.add_box.base");
        let prices = NativePrices::from_schedule(&Schedule::aptos_v50()).unwrap();
        for (p, name, value) in
            [(SHA, "move_stdlib.hash.sha2_256.per_byte", 1830), (TABLE, "table.add_box.base", 44110)]
        {
            assert_eq!(p.name(), name);
            assert_eq!(prices.price(p), value);
        }
        assert_eq!(prices.cost(&[(SHA, 2), (TABLE, 1)]), 2 * 1830 + 44110);
        const PERMISSION: NativeParam =
            NativeParam::named("aptos_framework.permissioned_signer.permission_address.base");
        assert_eq!(PERMISSION.name(), "aptos_framework.permissioned_signer.permission_address.base");
        assert_eq!(prices.price(PERMISSION), 11020);
    }

    #[test]
    fn a_schedule_without_a_native_parameter_is_refused() {
        let mut params = Schedule::aptos_v50().params().clone();
        params.remove("table.add_box.base");
        let err = NativePrices::from_schedule(&Schedule::from_params(50, params)).unwrap_err();
        assert_eq!(err.0, "table.add_box.base");
    }
}
