//! The helper table: every operation compiled code calls into the runtime
//! for, declared once with its exact `extern "C"` signature. The macro
//! checks each shim against that signature at compile time and generates
//! the typed index ([`HelperId`]) the code generator names helpers by, and
//! the parameter kinds its Cranelift signatures are made from: nothing is
//! looked up by string. The interpreter calls the same Rust functions the
//! shims wrap (`crate::arith`, `crate::flat::mem`, ...), so both executors
//! share one implementation of each operation.
//!
//! Each shim takes the execution context ([`ExecContext`]) first. Unless
//! its entry says otherwise, it returns a status word ([`status`]).
//! Each entry also declares whether it may read or write the gas left
//! ([`GasAccess`]).
//! `*const FlatLayout` arguments point to layouts the engine keeps alive.

use crate::error::VmError;
use crate::flat::closure_shims::{CallSite, InterpSite, PackSite};
use crate::flat::{ExecContext, FlatLayout};
use crate::gas::aptos::AptosCallSite;

/// The status words helpers return (a `u32` result).
pub mod status {
    /// Continue: the operation succeeded.
    pub const OK: u32 = 0;
    /// The helper recorded its error (status, sub-status, message) in the
    /// context; the calling site records the location and unwinds.
    pub const FAILED: u32 = 1;
    /// `call_closure`: the callee failed and recorded its own location
    /// (`FAILED` means the error belongs to the calling instruction).
    pub const CALLEE_FAILED: u32 = 2;
    /// `global_exists` (a `u8` result: 0 or 1 otherwise): the helper
    /// recorded an error.
    pub const EXISTS_FAILED: u8 = 2;
}

/// An argument or result kind of a helper, as compiled code sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A pointer (to a value slot, a site, a layout, or the execution context).
    Ptr,
    U8,
    U64,
    /// A status word (a `u32`, see [`status`]).
    Status,
}

/// The ABI kind of a Rust parameter or result type of a shim.
pub trait AbiKind {
    const KIND: Kind;
}

impl<T> AbiKind for *mut T {
    const KIND: Kind = Kind::Ptr;
}
impl<T> AbiKind for *const T {
    const KIND: Kind = Kind::Ptr;
}
impl AbiKind for u8 {
    const KIND: Kind = Kind::U8;
}
impl AbiKind for u64 {
    const KIND: Kind = Kind::U64;
}
impl AbiKind for u32 {
    const KIND: Kind = Kind::Status;
}

/// One entry of the helper table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Helper {
    pub name: &'static str,
    pub params: &'static [Kind],
    pub result: Kind,
    /// Whether it may read or write `ExecContext::gas_left`.
    pub gas: GasAccess,
    /// The address of the `extern "C"` implementation.
    pub shim: *const u8,
}

/// What a helper does with the gas left (`ExecContext::gas_left`), declared
/// with each entry: metered compiled code keeps the gas in a register and
/// writes it out before, and reads it back after, only the helpers that may
/// read or write it. Declaring a helper `untouched` is a promise that its
/// shim never reads nor changes the gas left (it may fail; the calling
/// site then writes the gas out itself on its failure path).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GasAccess {
    /// Never reads or writes the gas left (integer, vector, value and
    /// memory-meter shims).
    Untouched,
    /// May read or charge it (Aptos charges, global storage, natives,
    /// calls out of compiled code).
    ReadsWrites,
}

/// A helper's index in [`HELPERS`], named by a constructor per helper
/// (`HelperId::vec_len()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HelperId(u32);

impl HelperId {
    /// Its entry in the table.
    pub fn entry(self) -> &'static Helper {
        &HELPERS[self.0 as usize]
    }

    /// Every helper, in table order.
    pub fn all() -> impl Iterator<Item = HelperId> {
        (0..HELPERS.len() as u32).map(HelperId)
    }
}

macro_rules! helper_table {
    (@gas untouched) => { GasAccess::Untouched };
    (@gas reads_writes) => { GasAccess::ReadsWrites };
    ($( $(#[$doc:meta])* $name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty = $shim:path, gas: $gas:ident ; )*) => {
        #[allow(non_camel_case_types, dead_code)]
        #[repr(u32)]
        enum Index { $($name),* }

        #[allow(non_snake_case)]
        impl HelperId {
            $( $(#[$doc])* pub const fn $name() -> HelperId { HelperId(Index::$name as u32) } )*
        }

        /// Every helper, in a fixed order (its index is its [`HelperId`]).
        pub const HELPERS: &[Helper] = &[
            $( Helper {
                name: stringify!($name),
                params: &[$(<$ty as AbiKind>::KIND),*],
                result: <$ret as AbiKind>::KIND,
                gas: helper_table!(@gas $gas),
                shim: {
                    // The shim must have exactly the declared signature.
                    let f: unsafe extern "C" fn($($ty),*) -> $ret = $shim;
                    f as *const u8
                },
            }, )*
        ];
    };
}

helper_table! {
    /// `dst = a op b`; `code = kind | op << 4` (`flat::shims::kind`; op: add, sub, mul, div, mod, bit or, and, xor).
    int_binop(ctx: *mut ExecContext, dst: *mut u8, a: *const u8, b: *const u8, code: u8) -> u32 = crate::flat::shims::int_binop, gas: untouched;
    /// `dst = a cmp b` (a bool byte); `code = kind | cmp << 4` (lt, gt, le, ge).
    int_cmp(ctx: *mut ExecContext, dst: *mut u8, a: *const u8, b: *const u8, code: u8) -> u32 = crate::flat::shims::int_cmp, gas: untouched;
    /// `dst = a shift amount`; `code = kind | direction << 4` (left, right).
    int_shift(ctx: *mut ExecContext, dst: *mut u8, a: *const u8, amount: u8, code: u8) -> u32 = crate::flat::shims::int_shift, gas: untouched;
    /// `dst = a as target`; `code = source kind | target kind << 4`.
    int_cast(ctx: *mut ExecContext, dst: *mut u8, a: *const u8, code: u8) -> u32 = crate::flat::shims::int_cast, gas: untouched;
    /// `dst = -a` (signed kinds).
    int_negate(ctx: *mut ExecContext, dst: *mut u8, a: *const u8, code: u8) -> u32 = crate::flat::shims::int_negate, gas: untouched;
    /// Packs `n` elements of layout `e` from `src` into a new vector at `dst`.
    vec_pack(ctx: *mut ExecContext, e: *const FlatLayout, dst: *mut u8, src: *const u8, n: u64) -> u32 = crate::flat::shims::vec_pack, gas: untouched;
    /// Aptos's memory meter uses `amount` abstract units (`MEMORY_LIMIT_EXCEEDED` past the quota).
    memory_use(ctx: *mut ExecContext, amount: u64) -> u32 = crate::flat::shims::memory_use, gas: untouched;
    /// Aptos's memory meter releases `amount` abstract units.
    /// Aptos's memory meter releases the heap size of the value at `v` (a returning frame's local; all-zero: none).
    memory_release_value(ctx: *mut ExecContext, l: *const FlatLayout, v: *const u8) -> u32 = crate::flat::shims::memory_release_value, gas: untouched;
    /// Aptos's memory meter releases the heap size of the live value at `v` (a `ret` local, a popped or overwritten value).
    memory_release_heap(ctx: *mut ExecContext, l: *const FlatLayout, v: *const u8) -> u32 = crate::flat::shims::memory_release_heap, gas: untouched;
    /// Aptos's charges of `copy_loc` / `read_ref` (opcode number `op`) of the value at `v` (`flat::host::aptos_copy`).
    aptos_copy(ctx: *mut ExecContext, op: u64, l: *const FlatLayout, v: *const u8, rest: u64) -> u32 = crate::flat::host::aptos_copy, gas: reads_writes;
    /// Aptos's charges of `eq` / `neq` (opcode number `op`) of the values at `a` and `b` (`flat::host::aptos_compare`).
    aptos_compare(ctx: *mut ExecContext, op: u64, l: *const FlatLayout, a: *const u8, b: *const u8, values: u64, rest: u64) -> u32 = crate::flat::host::aptos_compare, gas: reads_writes;
    /// Aptos's charges of a call that only the transaction fixes (`flat::host::aptos_call`).
    aptos_call(ctx: *mut ExecContext, site: *const AptosCallSite) -> u32 = crate::flat::host::aptos_call, gas: reads_writes;
    /// A native called under Aptos's schedule: settles compiled code's gas, then runs it on the meter (`flat::host::aptos_native`); 0, 1 (failed here) or 2 (out of gas in the native, located there).
    aptos_native(ctx: *mut ExecContext, site: u64, slots: *const *mut u8, rest: u64, at: *const VmError) -> u32 = crate::flat::host::aptos_native, gas: reads_writes;
    /// `aptos_native` for `0x1::hash::sha2_256` / `sha3_256` / `0x1::bcs::to_bytes` (`op`, as `native_fast`'s) on the meter and the slots, no native bridge (`flat::host::aptos_native_fast`).
    aptos_native_fast(ctx: *mut ExecContext, site: u64, slots: *const *mut u8, rest: u64, at: *const VmError, op: u64) -> u32 = crate::flat::host::aptos_native_fast, gas: reads_writes;
    /// The length of the vector at `v` (a `u64` result).
    vec_len(ctx: *mut ExecContext, v: *const u8) -> u64 = crate::flat::shims::vec_len, gas: untouched;
    /// The address of element `i` of the vector at `v`, written to `out`.
    vec_borrow(ctx: *mut ExecContext, e: *const FlatLayout, v: *mut u8, i: u64, out: *mut *mut u8) -> u32 = crate::flat::shims::vec_borrow, gas: untouched;
    vec_push_back(ctx: *mut ExecContext, e: *const FlatLayout, v: *mut u8, src: *const u8) -> u32 = crate::flat::shims::vec_push_back, gas: untouched;
    vec_pop_back(ctx: *mut ExecContext, e: *const FlatLayout, v: *mut u8, dst: *mut u8) -> u32 = crate::flat::shims::vec_pop_back, gas: untouched;
    /// Unpacks exactly `n` elements of the vector at `v` (consumed) to `dst`.
    vec_unpack(ctx: *mut ExecContext, e: *const FlatLayout, v: *mut u8, n: u64, dst: *mut u8) -> u32 = crate::flat::shims::vec_unpack, gas: untouched;
    vec_swap(ctx: *mut ExecContext, e: *const FlatLayout, v: *mut u8, i: u64, j: u64) -> u32 = crate::flat::shims::vec_swap, gas: untouched;
    vec_destroy_empty(ctx: *mut ExecContext, e: *const FlatLayout, v: *mut u8) -> u32 = crate::flat::shims::vec_destroy_empty, gas: untouched;
    vec_move_range(ctx: *mut ExecContext, e: *const FlatLayout, from: *mut u8, removal: u64, len: u64, to: *mut u8, insert: u64) -> u32 = crate::flat::shims::vec_move_range, gas: untouched;
    value_copy(ctx: *mut ExecContext, l: *const FlatLayout, dst: *mut u8, src: *const u8) -> u32 = crate::flat::shims::value_copy, gas: untouched;
    value_drop(ctx: *mut ExecContext, l: *const FlatLayout, slot: *mut u8) -> u32 = crate::flat::shims::value_drop, gas: untouched;
    /// Structural equality (a `u8` result: 0 or 1).
    value_eq(ctx: *mut ExecContext, l: *const FlatLayout, a: *const u8, b: *const u8) -> u8 = crate::flat::shims::value_eq, gas: untouched;
    /// Global storage (`crate::flat::host`): `code = opcode number << 32 | the resource's type number`;
    /// `rest`: under Aptos's schedule, the segment's charges from the instruction's price on (`flat::host::charge_global`).
    global_move_to(ctx: *mut ExecContext, code: u64, signer: *const u8, src: *mut u8) -> u32 = crate::flat::host::global_move_to, gas: reads_writes;
    global_move_from(ctx: *mut ExecContext, code: u64, addr: *const u8, dst: *mut u8) -> u32 = crate::flat::host::global_move_from, gas: reads_writes;
    /// The address as its four words (memory order). Returns the reference
    /// (a `u64`), 0 when it failed.
    global_borrow(ctx: *mut ExecContext, code: u64, a0: u64, a1: u64, a2: u64, a3: u64) -> u64 = crate::flat::host::global_borrow, gas: reads_writes;
    /// As `global_borrow`, for `borrow_global_mut`.
    global_borrow_mut(ctx: *mut ExecContext, code: u64, a0: u64, a1: u64, a2: u64, a3: u64) -> u64 = crate::flat::host::global_borrow_mut, gas: reads_writes;
    /// The address as its four words. 0 or 1, or [`status::EXISTS_FAILED`].
    global_exists(ctx: *mut ExecContext, code: u64, a0: u64, a1: u64, a2: u64, a3: u64) -> u8 = crate::flat::host::global_exists, gas: reads_writes;
    /// A registry native at `site`: pointers to the argument slots (a
    /// reference argument's slot holds its target's address), then the result slots.
    call_native(ctx: *mut ExecContext, site: u64, slots: *const *mut u8) -> u32 = crate::flat::shims::call_native, gas: reads_writes;
    /// A vector or hash native straight on flat memory (`flat::shims::native_fast`).
    native_fast(ctx: *mut ExecContext, op: u64, arg: *mut u8, l: *const FlatLayout, dst: *mut u8, metered: u64, native_base: u64, per_byte: u64) -> u32 = crate::flat::shims::native_fast, gas: reads_writes;
    /// Calls the closure at `closure` (consumed): pointers to the provided
    /// argument slots, then the result slots (`flat::closure_shims`).
    call_closure(ctx: *mut ExecContext, site: *const CallSite, closure: *mut u8, slots: *const *mut u8) -> u32 = crate::flat::closure_shims::call_closure, gas: reads_writes;
    /// The adapter of the closure at `closure` (left in place) when the
    /// site may call it directly, its captured values copied to `caps`; 0
    /// otherwise (a `u64` result; `flat::closure_shims`).
    closure_fast(ctx: *mut ExecContext, site: *const CallSite, closure: *const u8, caps: *mut u8) -> u64 = crate::flat::closure_shims::closure_fast, gas: untouched;
    /// Under Aptos's schedule, the `copy_loc` of the closure local (layout
    /// `l`) at `closure` before the borrowed site's call (`rest` as for
    /// `aptos_copy`; `COPY_FAILED` when it does not fit), then
    /// `closure_fast`, also 0 unless the target's module is loaded in this
    /// transaction and the call's constant price fits the gas left, which
    /// it then charges (`flat::closure_shims`).
    aptos_closure_fast(ctx: *mut ExecContext, site: *const CallSite, l: *const FlatLayout, closure: *const u8, caps: *mut u8, rest: u64) -> u64 = crate::flat::closure_shims::aptos_closure_fast, gas: reads_writes;
    /// Packs a closure from the captured slots into `dst`.
    pack_closure(ctx: *mut ExecContext, site: *const PackSite, captured: *const *mut u8, dst: *mut u8) -> u32 = crate::flat::closure_shims::pack_closure, gas: untouched;
    /// `pack_closure` under Aptos's schedule: settles compiled code's gas, then charges the target's module and a storable closure's captured layouts' modules (`flat::closure_shims::aptos_pack`).
    aptos_pack(ctx: *mut ExecContext, site: *const PackSite, rest: u64) -> u32 = crate::flat::closure_shims::aptos_pack, gas: reads_writes;
    /// A callee compiled code runs on the session's interpreter: pointers to
    /// the argument slots (a reference: its target), then the result slots.
    call_interpreted(ctx: *mut ExecContext, site: *const InterpSite, slots: *const *mut u8) -> u32 = crate::flat::closure_shims::call_interpreted, gas: reads_writes;
    /// Records a `VmError` the engine keeps alive with the code.
    fail_with(ctx: *mut ExecContext, err: *const VmError) -> u32 = crate::flat::shims::fail_with, gas: untouched;
    /// Aborts with `code` and the message in the vector slot `msg` (consumed).
    abort_msg(ctx: *mut ExecContext, code: u64, msg: *mut u8, max: u64) -> u32 = crate::flat::shims::abort_msg, gas: untouched;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_ids_index_the_table() {
        let mut names: Vec<_> = HELPERS.iter().map(|h| h.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), HELPERS.len());
        assert_eq!(HelperId::all().count(), HELPERS.len());
        assert_eq!(HelperId::vec_len().entry().name, "vec_len");
        assert_eq!(HelperId::abort_msg().entry().name, "abort_msg");
        for h in HELPERS {
            assert_eq!(h.params.first(), Some(&Kind::Ptr), "{}: context first", h.name);
            assert!(!h.shim.is_null());
            // Aptos charges and global storage settle gas on the meter.
            if h.name.starts_with("aptos_") || h.name.starts_with("global_") {
                assert_eq!(h.gas, GasAccess::ReadsWrites, "{}", h.name);
            }
        }
        assert_eq!(HelperId::memory_use().entry().gas, GasAccess::Untouched);
        assert_eq!(HelperId::call_closure().entry().gas, GasAccess::ReadsWrites);
    }
}
