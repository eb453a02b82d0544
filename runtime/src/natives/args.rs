//! Helpers for writing natives over tree values: registering a family of
//! natives at one address and taking arguments off the argument list.
//! Framework-native crates (movejit-aptos-natives, movejit-sui-natives)
//! use these; any host's natives may.

use super::{NativeContext, NativeFunction, NativeRegistry, NativeResult};
use crate::{AccountAddress, Type, Value, VmError, VmResult};

/// A native's value arguments, in Move order.
pub type Args = Vec<Value>;

/// Registers natives of one address.
pub struct Registrar<'a> {
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
        self.registry.register(self.address, module, function, NativeFunction::new(f));
    }
    /// Gives the native `module::function` (added before) its flat form.
    pub fn add_flat(
        &mut self,
        module: &str,
        function: &str,
        f: impl Fn(&mut super::FlatCall<'_, '_>) -> VmResult<()> + Send + Sync + 'static,
    ) {
        let added = self.registry.register_flat(self.address, module, function, f);
        debug_assert!(added, "flat form of an unregistered native {module}::{function}");
    }
}

/// The last argument (natives pop their arguments from the back).
pub fn pop(args: &mut Args) -> VmResult<Value> {
    args.pop().ok_or_else(|| VmError::invariant("native: missing argument"))
}

pub fn pop_u64(args: &mut Args) -> VmResult<u64> {
    Ok(pop(args)?.as_u64()?)
}

pub fn pop_address(args: &mut Args) -> VmResult<AccountAddress> {
    match pop(args)? {
        Value::Address(a) => Ok(a),
        v => Err(VmError::invariant(format!("native: expected address, got {v:?}"))),
    }
}

pub fn pop_bytes(args: &mut Args) -> VmResult<Vec<u8>> {
    Ok(pop(args)?.to_bytes()?)
}

/// Type argument `i`.
pub fn ty_arg(ty: &[Type], i: usize) -> VmResult<&Type> {
    ty.get(i).ok_or_else(|| VmError::invariant("native: missing type argument"))
}
