//! The helper table: every operation compiled code will call into the
//! runtime for, declared once. The interpreter calls the same Rust functions
//! (`crate::arith`, `crate::natives`, ...) the table names, so both executors
//! share one implementation of each operation.
//!
//! Not yet: the `extern "C"` shims over flat-memory values (the JIT issue);
//! today the table records names and signatures (as value kinds) so the JIT
//! can generate its Cranelift signatures from this one place.

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
    ($( $name:ident ( $($arg:ident),* ) -> $ret:ident ; )*) => {
        /// One entry of the helper table.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct Helper {
            pub name: &'static str,
            pub params: &'static [Kind],
            pub result: Kind,
        }
        /// Every helper, in a fixed order (its index is its id).
        pub const HELPERS: &[Helper] = &[
            $( Helper { name: stringify!($name), params: &[$(Kind::$arg),*], result: Kind::$ret }, )*
        ];
    };
}

helper_table! {
    // 128/256-bit arithmetic on value slots: (ctx, dst, lhs, rhs, width code).
    int_binop(Ptr, Ptr, Ptr, Ptr, U8) -> Status;
    int_cmp(Ptr, Ptr, Ptr, U8) -> Status;
    int_shift(Ptr, Ptr, Ptr, U8) -> Status;
    int_cast(Ptr, Ptr, Ptr, U8) -> Status;
    // vectors: (ctx, vector slot, ...)
    vec_pack(Ptr, Ptr, U64) -> Status;
    vec_len(Ptr, Ptr) -> U64;
    vec_borrow(Ptr, Ptr, U64) -> Status;
    vec_push_back(Ptr, Ptr, Ptr) -> Status;
    vec_pop_back(Ptr, Ptr, Ptr) -> Status;
    vec_unpack(Ptr, Ptr, U64) -> Status;
    vec_swap(Ptr, Ptr, U64, U64) -> Status;
    // values
    value_copy(Ptr, Ptr, Ptr) -> Status;
    value_drop(Ptr, Ptr) -> Status;
    value_eq(Ptr, Ptr, Ptr) -> U8;
    // global storage: (ctx, type id, address slot, value slot)
    global_move_to(Ptr, U64, Ptr, Ptr) -> Status;
    global_move_from(Ptr, U64, Ptr, Ptr) -> Status;
    global_borrow(Ptr, U64, Ptr, Ptr) -> Status;
    global_exists(Ptr, U64, Ptr) -> U8;
    // calls into natives and closures: (ctx, function id, args base)
    call_native(Ptr, U64, Ptr) -> Status;
    call_closure(Ptr, Ptr) -> Status;
    // errors and gas
    abort(Ptr, U64) -> Status;
    abort_msg(Ptr, U64, Ptr) -> Status;
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
