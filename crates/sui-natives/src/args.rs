//! Small helpers every native module uses: registration, argument popping
//! (the runtime's [`movejit_runtime::natives::args`]), object ids, typed
//! errors.

pub(crate) use movejit_runtime::natives::args::{pop, pop_address, pop_bytes, pop_u64, ty_arg, Args, Registrar};

use movejit_runtime::{AccountAddress, StatusCode, Value, VmError, VmResult};

/// The id of a `key` object: its first field is `UID { id: ID { bytes } }`.
pub(crate) fn object_id(obj: &Value) -> VmResult<AccountAddress> {
    let mut v = obj;
    for _ in 0..2 {
        v = match v {
            Value::Struct(f) => f.first().ok_or_else(|| VmError::invariant("object without a UID"))?,
            _ => return Err(VmError::invariant("object is not a struct")),
        };
    }
    match v {
        Value::Struct(f) => match f.first() {
            Some(Value::Address(a)) => Ok(*a),
            _ => Err(VmError::invariant("ID without an address")),
        },
        _ => Err(VmError::invariant("UID is not a struct")),
    }
}

/// An invariant violation as Sui reports it for states its verifier rules out.
pub(crate) fn invariant(m: impl Into<String>) -> VmError {
    VmError::new(StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR).with_message(m)
}

/// `MEMORY_LIMIT_EXCEEDED` with one of Sui's `VMMemoryLimitExceededSubStatusCode`s.
pub(crate) fn memory_limit(sub_status: u64, m: impl Into<String>) -> VmError {
    VmError::new(StatusCode::MEMORY_LIMIT_EXCEEDED).with_sub_status(sub_status).with_message(m)
}
