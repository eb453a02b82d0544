//! Storage: what a session reads through (modules and resources as bytes)
//! and the change set it yields.

use crate::types::Type;
use movejit_format::AccountAddress;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A module's address and name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModuleId {
    pub address: AccountAddress,
    pub name: Arc<str>,
}

impl ModuleId {
    pub fn new(address: AccountAddress, name: &str) -> Self {
        ModuleId { address, name: name.into() }
    }
    /// `0x<64 hex>::name`, as status reports print it.
    pub fn long_string(&self) -> String {
        format!("{}::{}", self.address.to_hex_long(), self.name)
    }
}

impl std::fmt::Display for ModuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}::{}", self.address.to_hex_short(), self.name)
    }
}

/// The content hash of a module's bytes (SHA-256): what the engine's caches
/// of loaded and compiled code are keyed by.
pub type ModuleHash = [u8; 32];

/// SHA-256 of `bytes`, as [`Resolver::module_hash`] answers it.
pub fn module_hash(bytes: &[u8]) -> ModuleHash {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}

/// See [`Resolver::modules_version`].
pub type ModulesVersion = u64;

/// A process-wide fresh [`ModulesVersion`] (never 0): a store takes one
/// whenever its modules change, so equal versions mean equal modules, also
/// across stores (a clone keeps its original's version and modules).
pub fn fresh_modules_version() -> ModulesVersion {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Read access to published modules and resources.
pub trait Resolver: Sync {
    /// The bytes of a published module.
    fn get_module(&self, id: &ModuleId) -> Option<Arc<[u8]>>;
    /// The [`module_hash`] of the bytes [`Resolver::get_module`] returns for
    /// `id` (`None` when it returns none). A session checks its warm modules
    /// against it, so it must change whenever the bytes do. Stores should
    /// take it once, when a module is published (as [`InMemoryStorage`]
    /// does): the default hashes the bytes at every call.
    fn module_hash(&self, id: &ModuleId) -> Option<ModuleHash> {
        self.get_module(id).map(|b| module_hash(&b))
    }
    /// A version of the store's modules: two calls (on this store or any
    /// other) that give the same version must see the same module bytes
    /// under every id, so a session over a warm engine checks its modules
    /// once per version instead of one [`Resolver::module_hash`] per module.
    /// `None` (the default): no such promise, every module is checked.
    fn modules_version(&self) -> Option<ModulesVersion> {
        None
    }
    /// The BCS bytes of a resource of type `ty` (a struct type) at `address`.
    fn get_resource(&self, address: &AccountAddress, ty: &Type) -> Option<Vec<u8>>;
}

/// A write to one resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteOp {
    /// Created or modified: the new BCS bytes.
    Write(Vec<u8>),
    Delete,
}

/// The resource writes of a session, by (address, type).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChangeSet {
    pub resources: BTreeMap<(AccountAddress, Type), WriteOp>,
}

/// A published module's bytes and their hash, taken once when published.
#[derive(Clone, Debug)]
pub struct StoredModule {
    bytes: Arc<[u8]>,
    hash: ModuleHash,
}

impl StoredModule {
    pub fn new(bytes: Arc<[u8]>) -> Self {
        let hash = module_hash(&bytes);
        StoredModule { bytes, hash }
    }
    pub fn bytes(&self) -> &Arc<[u8]> {
        &self.bytes
    }
    pub fn hash(&self) -> ModuleHash {
        self.hash
    }
}

/// A simple in-memory store: modules and resources, and applying change sets.
#[derive(Clone, Debug)]
pub struct InMemoryStorage {
    /// Private: every change takes a fresh `modules_version`.
    modules: BTreeMap<ModuleId, StoredModule>,
    modules_version: ModulesVersion,
    pub resources: BTreeMap<(AccountAddress, Type), Vec<u8>>,
}

impl Default for InMemoryStorage {
    fn default() -> Self {
        InMemoryStorage {
            modules: BTreeMap::new(),
            modules_version: fresh_modules_version(),
            resources: BTreeMap::new(),
        }
    }
}

impl InMemoryStorage {
    pub fn publish(&mut self, id: ModuleId, bytes: Vec<u8>) {
        self.modules.insert(id, StoredModule::new(bytes.into()));
        self.modules_version = fresh_modules_version();
    }
    /// The published modules.
    pub fn modules(&self) -> &BTreeMap<ModuleId, StoredModule> {
        &self.modules
    }
    pub fn apply(&mut self, cs: &ChangeSet) {
        for (k, op) in &cs.resources {
            match op {
                WriteOp::Write(b) => {
                    self.resources.insert(k.clone(), b.clone());
                }
                WriteOp::Delete => {
                    self.resources.remove(k);
                }
            }
        }
    }
}

impl Resolver for InMemoryStorage {
    fn get_module(&self, id: &ModuleId) -> Option<Arc<[u8]>> {
        self.modules.get(id).map(|m| m.bytes.clone())
    }
    fn module_hash(&self, id: &ModuleId) -> Option<ModuleHash> {
        self.modules.get(id).map(|m| m.hash)
    }
    fn modules_version(&self) -> Option<ModulesVersion> {
        Some(self.modules_version)
    }
    fn get_resource(&self, address: &AccountAddress, ty: &Type) -> Option<Vec<u8>> {
        self.resources.get(&(*address, ty.clone())).cloned()
    }
}
