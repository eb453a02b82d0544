//! Small helpers every native module uses: registration, argument popping,
//! object ids, typed errors.

use movejit_runtime::natives::{NativeContext, NativeFunction, NativeResult};
use movejit_runtime::{AccountAddress, NativeRegistry, StatusCode, Type, Value, VmError, VmResult};
use std::sync::Arc;

pub(crate) type Args = Vec<Value>;

/// Registers natives of one address.
pub(crate) struct Registrar<'a> {
    pub registry: &'a mut NativeRegistry,
    pub address: AccountAddress,
}

impl Registrar<'_> {
    pub fn add(
        &mut self,
        module: &str,
        function: &str,
        f: impl Fn(&mut NativeContext<'_>, &[Type], Args) -> VmResult<NativeResult> + Send + Sync + 'static,
    ) {
        let f: NativeFunction = Arc::new(f);
        self.registry.register(self.address, module, function, f);
    }
}

/// The last argument (natives pop their arguments from the back).
pub(crate) fn pop(args: &mut Args) -> VmResult<Value> {
    args.pop().ok_or_else(|| VmError::invariant("native: missing argument"))
}

pub(crate) fn pop_u64(args: &mut Args) -> VmResult<u64> {
    Ok(pop(args)?.as_u64()?)
}

pub(crate) fn pop_address(args: &mut Args) -> VmResult<AccountAddress> {
    match pop(args)? {
        Value::Address(a) => Ok(a),
        v => Err(VmError::invariant(format!("native: expected address, got {v:?}"))),
    }
}

pub(crate) fn pop_bytes(args: &mut Args) -> VmResult<Vec<u8>> {
    Ok(pop(args)?.to_bytes()?)
}

/// Type argument `i`.
pub(crate) fn ty_arg(ty: &[Type], i: usize) -> VmResult<&Type> {
    ty.get(i).ok_or_else(|| VmError::invariant("native: missing type argument"))
}

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
