//! The native-function registry both executors use, and the Move stdlib
//! natives. Hosts add their own natives with [`NativeRegistry::register`]
//! (the Aptos framework natives of `movejit-aptos-natives` slot in that way).
//!
//! Natives with session state (tables, events, transaction context) keep it
//! in [`NativeExtensions`]: a type-keyed map the host fills and installs
//! around its calls with [`with_extensions`]; without one installed, each
//! call gets a fresh map of its own (kept in the call's [`Memory`]). Values a
//! native hands out references to (table entries) are parked in
//! [`NativeSlots`] of the memory, reached as [`RefRoot::Native`](crate::RefRoot).

pub mod args;
mod extensions;
mod parking;
mod stdlib;

pub use crate::flat::native_abi::FlatCall;
pub use extensions::{with_extensions, NativeExtensions, NativeSlots, ParkedHome};
pub use parking::Parking;
pub use stdlib::{bcs_to_bytes_terms, sha2_256, sha3_256, Hash256, BCS_FAILURE_TERMS, NFE_BCS_SERIALIZATION_FAILURE};

use crate::error::VmResult;
use crate::gas::GasMeter;
use crate::layout::Layout;
use crate::storage::ModuleId;
use crate::types::Type;
use crate::values::{Memory, Value};
use movejit_format::AccountAddress;
use std::collections::HashMap;
use std::sync::Arc;

/// What a native can ask the executor about types.
pub trait TypeInfo {
    /// The layout of a runtime type (`VM_MAX_TYPE_DEPTH_REACHED` etc. on error).
    fn layout_of(&self, ty: &Type) -> VmResult<Layout>;

    /// Whether resource `ty` exists at `address`, seen from inside the
    /// running call (the session's loaded resources, else storage).
    /// Executors that give natives no storage access keep this default
    /// (`VM_EXTENSION_ERROR`).
    fn resource_exists(&self, address: AccountAddress, ty: &Type) -> VmResult<bool> {
        let _ = address;
        Err(crate::VmError::new(movejit_format::StatusCode::VM_EXTENSION_ERROR)
            .with_message(format!("no storage access for natives (exists {ty})")))
    }

    /// What a native loading resource `ty` at `address` finds (Aptos's
    /// `object::exists_at`, which loads it into the transaction's data
    /// cache): see [`ResourceProbe`]. Executors that give natives no
    /// storage access keep this default (`VM_EXTENSION_ERROR`).
    fn resource_probe(&self, address: AccountAddress, ty: &Type) -> VmResult<ResourceProbe> {
        let _ = address;
        Err(crate::VmError::new(movejit_format::StatusCode::VM_EXTENSION_ERROR)
            .with_message(format!("no storage access for natives (load {ty})")))
    }

    /// The modules building `ty`'s layout loads, with their sizes in bytes
    /// ([`crate::resolve::layout_modules`]): what Aptos's lazy loader
    /// charges when a layout is built. Executors that do not track module
    /// sizes keep this default (none).
    fn layout_modules(&self, ty: &Type) -> VmResult<Arc<[(ModuleId, u64)]>> {
        let _ = ty;
        Ok(Arc::new([]))
    }

    /// The field types of struct type `ty` (not an enum), if it is one.
    /// Executors that do not tell keep this default (none).
    fn struct_field_types(&self, ty: &Type) -> VmResult<Option<Vec<Type>>> {
        let _ = ty;
        Ok(None)
    }

    /// The size in bytes of module `id` (loaded in the session, else in
    /// storage), `None` when there is no such module: what Aptos's lazy
    /// loader charges when a native loads it. Executors that do not track
    /// module sizes keep this default (none).
    fn module_size(&self, id: &ModuleId) -> VmResult<Option<u64>> {
        let _ = id;
        Ok(None)
    }
}

/// A resource as a native that loads it finds it ([`TypeInfo::resource_probe`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceProbe {
    pub exists: bool,
    /// Its interned type.
    pub ty: crate::intern::TypeId,
    /// The session's global slot of it, if the session has one.
    pub slot: Option<usize>,
    /// Its size in bytes as the session would load it (0 when absent).
    pub bytes: u64,
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
    /// Under the Aptos schedule: building the layout of `ty` loads the
    /// modules of its datatypes, each charged once per transaction.
    pub fn charge_layout(&mut self, ty: &Type) -> VmResult<()> {
        if !self.gas.is_aptos() {
            return Ok(());
        }
        for (id, size) in self.types.layout_modules(ty)?.iter() {
            if let Some(a) = self.gas.aptos_meter_mut() {
                a.charge_module(id, *size).map_err(crate::VmError::new)?;
            }
        }
        Ok(())
    }
    /// Under the Aptos schedule: a native loads module `id` (Aptos's lazy
    /// loader, `charge_native_result_load_module`): charged once per
    /// transaction, free at the special addresses; a module that does not
    /// exist is a `LINKER_ERROR`.
    pub fn charge_module_load(&mut self, id: &ModuleId) -> VmResult<()> {
        if !self.gas.is_aptos() || crate::gas::algebra::is_special(&id.address) {
            return Ok(());
        }
        let size = self.types.module_size(id)?.ok_or_else(|| {
            crate::VmError::new(movejit_format::StatusCode::LINKER_ERROR)
                .with_message(format!("module {}::{} does not exist", id.address, id.name))
        })?;
        match self.gas.aptos_meter_mut() {
            Some(a) => a.charge_module(id, size).map_err(crate::VmError::new),
            None => Ok(()),
        }
    }
    /// Whether resource `ty` exists at `address` (see [`TypeInfo::resource_exists`]).
    pub fn resource_exists(&self, address: AccountAddress, ty: &Type) -> VmResult<bool> {
        self.types.resource_exists(address, ty)
    }
    /// Runs `f` with the session's extensions: the ones the host installed
    /// with [`with_extensions`], else this call's own (fresh per call).
    pub fn with_extensions<R>(
        &mut self,
        f: impl FnOnce(&mut NativeExtensions, &mut NativeContext<'_>) -> VmResult<R>,
    ) -> VmResult<R> {
        extensions::run_with(self, f)
    }
}

/// What a native returns: its return values (errors and aborts are `Err`).
pub type NativeResult = Vec<Value>;

/// A native over tree values: type arguments and arguments (references as
/// [`Value::Ref`]).
pub type TreeNative = dyn Fn(&mut NativeContext<'_>, &[Type], Vec<Value>) -> VmResult<NativeResult> + Send + Sync;

/// A native over flat values: reads its arguments and writes its results
/// in the executor's slots through [`FlatCall`]'s typed accessors (see
/// `jit-abi.md`, "Native ABI").
pub type FlatNative = dyn Fn(&mut FlatCall<'_, '_>) -> VmResult<()> + Send + Sync;

/// A registered native: its tree form (what the native bridge calls) and, once ported, its flat form, which both flat
/// executors call instead of the bridge. The two forms have the same
/// semantics, errors and gas. Calling a `NativeFunction` calls the tree
/// form.
#[derive(Clone)]
pub struct NativeFunction {
    tree: Arc<TreeNative>,
    flat: Option<Arc<FlatNative>>,
}

impl NativeFunction {
    /// A native with only a tree form.
    pub fn new(
        f: impl Fn(&mut NativeContext<'_>, &[Type], Vec<Value>) -> VmResult<NativeResult> + Send + Sync + 'static,
    ) -> Self {
        NativeFunction { tree: Arc::new(f), flat: None }
    }
    /// The same native with flat form `f`.
    pub fn with_flat(mut self, f: impl Fn(&mut FlatCall<'_, '_>) -> VmResult<()> + Send + Sync + 'static) -> Self {
        self.flat = Some(Arc::new(f));
        self
    }
    /// The flat form, once ported.
    pub fn flat(&self) -> Option<&FlatNative> {
        self.flat.as_deref()
    }
}

impl std::ops::Deref for NativeFunction {
    type Target = TreeNative;
    fn deref(&self) -> &TreeNative {
        &*self.tree
    }
}

impl std::fmt::Debug for NativeFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.flat.is_some() { "NativeFunction(tree, flat)" } else { "NativeFunction(tree)" })
    }
}

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
        stdlib::register_flat_all(&mut r, AccountAddress::from_u64(1));
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
    /// Gives the registered native `module::function` at `address` its
    /// flat form; false (nothing changed) when there is no such native.
    pub fn register_flat(
        &mut self,
        address: AccountAddress,
        module: &str,
        function: &str,
        f: impl Fn(&mut FlatCall<'_, '_>) -> VmResult<()> + Send + Sync + 'static,
    ) -> bool {
        match self.map.get_mut(&(address, module.to_string(), function.to_string())) {
            Some(n) => {
                n.flat = Some(Arc::new(f));
                true
            }
            None => false,
        }
    }
    /// The natives without a flat form, as `address::module::function`
    /// (sorted): the ones still called through the tree bridge.
    pub fn tree_only(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .map
            .iter()
            .filter(|(_, n)| n.flat.is_none())
            .map(|((a, m, f), _)| format!("{}::{m}::{f}", a.to_hex_short()))
            .collect();
        v.sort();
        v
    }
    pub fn get(&self, address: &AccountAddress, module: &str, function: &str) -> Option<NativeFunction> {
        self.map.get(&(*address, module.to_string(), function.to_string())).cloned()
    }
}
