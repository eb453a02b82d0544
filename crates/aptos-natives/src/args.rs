//! Small helpers every native module uses: registration, argument popping,
//! typed errors.

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

/// Type argument `i`.
pub(crate) fn ty_arg(ty: &[Type], i: usize) -> VmResult<&Type> {
    ty.get(i).ok_or_else(|| VmError::invariant("native: missing type argument"))
}

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
pub(crate) fn option_value(
    cx: &NativeContext<'_>,
    elem: &Type,
    value: Option<Value>,
) -> VmResult<Value> {
    let option = Type::Datatype(
        Arc::new(movejit_runtime::DatatypeId { address: crate::FRAMEWORK, module: "option".into(), name: "Option".into() }),
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
