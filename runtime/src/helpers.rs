//! The helper table: every operation compiled code will call into the
//! runtime for, declared once. The interpreter calls the same Rust functions
//! (`crate::arith`, `crate::natives`, ...) the table names, so both executors
//! share one implementation of each operation.
//!
//! Each entry names its `extern "C"` implementation when it has one
//! (`crate::flat::shims`, over the flat values of jit-abi.md 1.3, with the
//! execution context `crate::flat::ExecContext` first); entries without one
//! (`abort`, `charge_gas`) are *not yet* shims.
//! `*const FlatLayout` arguments are `Ptr`s to layouts the engine's
//! `FlatLayouts` cache keeps alive.

/// An argument or result kind of a helper, as compiled code sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A pointer (to a value slot, frame, or the execution context).
    Ptr,
    U8,
    U64,
    /// A status word: 0 = continue, otherwise an error recorded in the context.
    Status,
}

macro_rules! helper_table {
    ($( $name:ident ( $($arg:ident),* ) -> $ret:ident $(= $shim:path)? ; )*) => {
        /// One entry of the helper table.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct Helper {
            pub name: &'static str,
            pub params: &'static [Kind],
            pub result: Kind,
            /// The address of the `extern "C"` implementation, if any.
            pub shim: Option<*const u8>,
        }
        /// Every helper, in a fixed order (its index is its id).
        pub const HELPERS: &[Helper] = &[
            $( Helper {
                name: stringify!($name),
                params: &[$(Kind::$arg),*],
                result: Kind::$ret,
                shim: helper_table!(@shim $($shim)?),
            }, )*
        ];
    };
    (@shim $shim:path) => { Some($shim as *const u8) };
    (@shim) => { None };
}

helper_table! {
    // Integers over flat slots: (ctx, dst, operands..., code); code = kind
    // (low nibble, `flat::shims::kind`) | operation << 4 (see each shim).
    int_binop(Ptr, Ptr, Ptr, Ptr, U8) -> Status = crate::flat::shims::int_binop;
    int_cmp(Ptr, Ptr, Ptr, Ptr, U8) -> Status = crate::flat::shims::int_cmp;
    int_shift(Ptr, Ptr, Ptr, U8, U8) -> Status = crate::flat::shims::int_shift;
    int_cast(Ptr, Ptr, Ptr, U8) -> Status = crate::flat::shims::int_cast;
    int_negate(Ptr, Ptr, Ptr, U8) -> Status = crate::flat::shims::int_negate;
    // Vectors: (ctx, element layout, vector slot, ...).
    vec_pack(Ptr, Ptr, Ptr, Ptr, U64) -> Status = crate::flat::shims::vec_pack;
    vec_len(Ptr, Ptr) -> U64 = crate::flat::shims::vec_len;
    vec_borrow(Ptr, Ptr, Ptr, U64, Ptr) -> Status = crate::flat::shims::vec_borrow;
    vec_push_back(Ptr, Ptr, Ptr, Ptr) -> Status = crate::flat::shims::vec_push_back;
    vec_pop_back(Ptr, Ptr, Ptr, Ptr) -> Status = crate::flat::shims::vec_pop_back;
    vec_unpack(Ptr, Ptr, Ptr, U64, Ptr) -> Status = crate::flat::shims::vec_unpack;
    vec_swap(Ptr, Ptr, Ptr, U64, U64) -> Status = crate::flat::shims::vec_swap;
    vec_destroy_empty(Ptr, Ptr, Ptr) -> Status = crate::flat::shims::vec_destroy_empty;
    vec_move_range(Ptr, Ptr, Ptr, U64, U64, Ptr, U64) -> Status = crate::flat::shims::vec_move_range;
    // Values: (ctx, layout, ...).
    value_copy(Ptr, Ptr, Ptr, Ptr) -> Status = crate::flat::shims::value_copy;
    value_drop(Ptr, Ptr, Ptr) -> Status = crate::flat::shims::value_drop;
    value_eq(Ptr, Ptr, Ptr, Ptr) -> U8 = crate::flat::shims::value_eq;
    // global storage: (ctx, type number, address, value slot); see
    // `crate::flat::host` (borrow: type number << 1 | mutable; exists: 2 = failed)
    global_move_to(Ptr, U64, Ptr, Ptr) -> Status = crate::flat::host::global_move_to;
    global_move_from(Ptr, U64, Ptr, Ptr) -> Status = crate::flat::host::global_move_from;
    global_borrow(Ptr, U64, Ptr, Ptr) -> Status = crate::flat::host::global_borrow;
    global_exists(Ptr, U64, Ptr) -> U8 = crate::flat::host::global_exists;
    // calls into natives and closures: (ctx, function id, args base)
    // (ctx, native site, pointers to the argument slots then the result
    // slots; a reference argument's slot holds its target's address)
    call_native(Ptr, U64, Ptr) -> Status = crate::flat::shims::call_native;
    // (ctx, call site, closure slot: consumed, pointers to the provided
    // argument slots then the result slots; `flat::closure_shims`)
    call_closure(Ptr, Ptr, Ptr, Ptr) -> Status = crate::flat::closure_shims::call_closure;
    // (ctx, pack site, pointers to the captured slots, closure slot)
    pack_closure(Ptr, Ptr, Ptr, Ptr) -> Status = crate::flat::closure_shims::pack_closure;
    // (ctx, interpreted-call site, pointers to the argument slots (a
    // reference: its target) then the result slots): a callee compiled
    // code runs on the session's interpreter (`flat::closure_shims`)
    call_interpreted(Ptr, Ptr, Ptr) -> Status = crate::flat::closure_shims::call_interpreted;
    // errors and gas
    abort(Ptr, U64) -> Status;
    // (ctx, a `VmError` the engine keeps alive with the code): records it
    fail_with(Ptr, Ptr) -> Status = crate::flat::shims::fail_with;
    // (ctx, abort code, message vector slot: consumed)
    abort_msg(Ptr, U64, Ptr, U64) -> Status = crate::flat::shims::abort_msg;
    charge_gas(Ptr, U64) -> Status;
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = super::HELPERS.iter().map(|h| h.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), super::HELPERS.len());
    }
}
