//! Small helpers every native module uses: registration, argument popping
//! (the runtime's [`movejit_runtime::natives::args`]), typed errors.

pub(crate) use movejit_runtime::natives::args::{pop, pop_address, pop_u64, ty_arg, Args, Registrar};

use movejit_runtime::natives::NativeContext;
use movejit_runtime::{AccountAddress, StatusCode, Type, Value, VmError, VmResult};
use std::sync::Arc;

/// An error of the VM-extension kind (what Aptos reports when a native's
/// environment cannot do what was asked).
pub(crate) fn extension_error(m: impl Into<String>) -> VmError {
    VmError::new(StatusCode::VM_EXTENSION_ERROR).with_message(m)
}

/// `sha3_256(preimage || scheme)`: how Aptos derives addresses.
pub(crate) fn derive_address(preimage: &[u8], scheme: u8) -> AccountAddress {
    use sha3::Digest;
    let mut h = sha3::Sha3_256::new();
    h.update(preimage);
    h.update([scheme]);
    AccountAddress(h.finalize().into())
}

/// A `0x1::string::String` (a struct holding the UTF-8 bytes).
pub(crate) fn string_value(s: &str) -> Value {
    string_value_bytes(s.as_bytes())
}

pub(crate) fn string_value_bytes(b: &[u8]) -> Value {
    Value::Struct(vec![Value::from_bytes(b)])
}

/// An `0x1::option::Option<elem>` holding `value`, shaped as the loaded
/// `option` module declares it (an enum `None | Some { e }` in current
/// frameworks, a struct over a vector in older ones).
pub(crate) fn option_value(cx: &NativeContext<'_>, elem: &Type, value: Option<Value>) -> VmResult<Value> {
    let option = Type::Datatype(
        Arc::new(movejit_runtime::DatatypeId {
            address: crate::FRAMEWORK,
            module: "option".into(),
            name: "Option".into(),
        }),
        vec![elem.clone()],
    );
    Ok(match cx.types.layout_of(&option)? {
        movejit_runtime::Layout::Enum(_) => match value {
            None => Value::Variant(0, vec![]),
            Some(v) => Value::Variant(1, vec![v]),
        },
        _ => Value::Struct(vec![Value::Vector(value.into_iter().collect())]),
    })
}
