//! The native-function registry both executors use, and the Move stdlib
//! natives. Hosts add their own natives with [`NativeRegistry::register`]
//! (the Aptos framework natives will slot in the same way).

mod stdlib;

use crate::error::VmResult;
use crate::gas::GasMeter;
use crate::layout::Layout;
use crate::types::Type;
use crate::values::{Memory, Value};
use movejit_format::AccountAddress;
use std::collections::HashMap;
use std::sync::Arc;

/// What a native can ask the executor about types.
pub trait TypeInfo {
    /// The layout of a runtime type (`VM_MAX_TYPE_DEPTH_REACHED` etc. on error).
    fn layout_of(&self, ty: &Type) -> VmResult<Layout>;
}

/// The state a native runs against.
pub struct NativeContext<'a> {
    /// Memory, to follow reference arguments.
    pub mem: &'a mut Memory,
    pub gas: &'a mut GasMeter,
    pub types: &'a dyn TypeInfo,
}

impl NativeContext<'_> {
    /// The value a reference argument points to.
    pub fn deref<'b>(&'b self, v: &'b Value) -> VmResult<&'b Value> {
        Ok(self.mem.deref(v)?)
    }
    pub fn deref_mut(&mut self, v: &Value) -> VmResult<&mut Value> {
        match v {
            Value::Ref(r) => Ok(self.mem.get_mut(r)?),
            v => Err(crate::VmError::invariant(format!("expected a reference, got {v:?}"))),
        }
    }
}

/// What a native returns: its return values (errors and aborts are `Err`).
pub type NativeResult = Vec<Value>;

/// A native: type arguments and arguments (references as [`Value::Ref`]).
pub type NativeFunction =
    Arc<dyn Fn(&mut NativeContext<'_>, &[Type], Vec<Value>) -> VmResult<NativeResult> + Send + Sync>;

/// Natives by (address, module, function).
#[derive(Clone, Default)]
pub struct NativeRegistry {
    map: HashMap<(AccountAddress, String, String), NativeFunction>,
}

impl std::fmt::Debug for NativeRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NativeRegistry({} natives)", self.map.len())
    }
}

impl NativeRegistry {
    pub fn empty() -> Self {
        NativeRegistry::default()
    }
    /// The Move stdlib natives at `0x1` (Aptos semantics).
    pub fn with_stdlib() -> Self {
        let mut r = NativeRegistry::default();
        stdlib::register_all(&mut r, AccountAddress::from_u64(1));
        r
    }
    /// The Move stdlib natives at `0x1` with Sui's semantics where they
    /// differ (type names print full addresses without `0x`).
    pub fn with_sui_stdlib() -> Self {
        let mut r = NativeRegistry::with_stdlib();
        stdlib::register_sui_overrides(&mut r, AccountAddress::from_u64(1));
        r
    }
    /// Adds or replaces a native.
    pub fn register(&mut self, address: AccountAddress, module: &str, function: &str, f: NativeFunction) {
        self.map.insert((address, module.to_string(), function.to_string()), f);
    }
    pub fn get(&self, address: &AccountAddress, module: &str, function: &str) -> Option<NativeFunction> {
        self.map.get(&(*address, module.to_string(), function.to_string())).cloned()
    }
}
