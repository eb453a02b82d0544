//! The engine-wide module cache: verified modules by content, and the warm
//! module sets sessions take whole.

use crate::LoadedModule;
use movejit_runtime::fxhash::FxHashMap;
use movejit_runtime::{ModuleHash, ModuleId};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// Decoded and verified modules of one engine, shared by its sessions and
/// threads (`Send + Sync`).
pub struct ModuleCache {
    /// By content hash: a module is decoded and verified once per version.
    pub(crate) by_hash: Mutex<HashMap<ModuleHash, Arc<LoadedModule>>>,
    /// The warm module cache: by module id, the module as last loaded with
    /// its transitive dependencies (an index into `warm_sets`). A session
    /// takes the whole set at once when its store has the same version
    /// (content hash) of every member.
    pub(crate) warm: RwLock<WarmSets>,
    /// Every warm set made, append-only while the engine lives: a session
    /// borrows its set for the engine's lifetime and threads remember sets
    /// by index.
    pub(crate) warm_sets: boxcar::Vec<ModuleSet>,
    /// Empty module and hash maps a new session starts with (shared, not
    /// allocated per session; the first module it loads copies them).
    pub(crate) no_modules: FxHashMap<ModuleId, Arc<LoadedModule>>,
    pub(crate) no_hashes: FxHashMap<ModuleId, ModuleHash>,
}

/// The warm module cache's indices into `ModuleCache::warm_sets`.
#[derive(Default)]
pub(crate) struct WarmSets {
    /// By module: the set it was last loaded with.
    pub(crate) by_module: FxHashMap<ModuleId, usize>,
    /// By members (ids and versions): a module set loaded again is the
    /// same set (the cache gives the same modules for the same versions),
    /// so the sets grow only with new versions.
    pub(crate) by_members: FxHashMap<Vec<(ModuleId, ModuleHash)>, usize>,
}

/// A module loaded with its transitive dependencies, as the warm module
/// cache hands it to sessions.
pub struct ModuleSet {
    /// Unique while the process runs (`ModuleSource::module_set_id`).
    pub(crate) id: u64,
    /// Every member with the content hash it was loaded from: the set is
    /// valid for a store that has these versions of all of them.
    pub(crate) members: Vec<(ModuleId, ModuleHash)>,
    pub(crate) modules: FxHashMap<ModuleId, Arc<LoadedModule>>,
    pub(crate) hashes: FxHashMap<ModuleId, ModuleHash>,
    /// The last store version (`Resolver::modules_version`) found to have
    /// every member (0: none yet): sessions over it skip the per-member
    /// check. Written only when the version changes.
    pub(crate) checked_version: AtomicU64,
}

impl ModuleSet {
    /// The set's number, unique while the process runs.
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl Default for ModuleCache {
    fn default() -> Self {
        ModuleCache {
            by_hash: Mutex::new(HashMap::new()),
            warm: RwLock::default(),
            warm_sets: boxcar::Vec::new(),
            no_modules: FxHashMap::default(),
            no_hashes: FxHashMap::default(),
        }
    }
}

impl ModuleCache {
    /// The index of the warm set module `id` was last loaded with.
    pub fn warm_index(&self, id: &ModuleId) -> Option<usize> {
        self.warm.read().ok()?.by_module.get(id).copied()
    }

    /// Warm set `index` (sets live as long as the cache).
    pub fn warm_set(&self, index: usize) -> Option<&ModuleSet> {
        self.warm_sets.get(index)
    }

    pub(crate) fn cached(&self, key: &ModuleHash) -> Option<Arc<LoadedModule>> {
        self.by_hash.lock().ok()?.get(key).cloned()
    }

    pub(crate) fn insert(&self, key: ModuleHash, m: Arc<LoadedModule>) {
        if let Ok(mut c) = self.by_hash.lock() {
            c.insert(key, m);
        }
    }

    /// Records the warm set of `id` (its members and their versions):
    /// the existing set when one has the same members.
    pub(crate) fn remember(
        &self,
        id: &ModuleId,
        members: Vec<(ModuleId, ModuleHash)>,
        modules: FxHashMap<ModuleId, Arc<LoadedModule>>,
    ) {
        let Ok(mut warm) = self.warm.write() else { return };
        let index = match warm.by_members.get(&members) {
            Some(i) => *i,
            None => {
                let hashes = members.iter().cloned().collect();
                static NEXT_SET_ID: AtomicU64 = AtomicU64::new(0);
                let set_id = NEXT_SET_ID.fetch_add(1, Ordering::Relaxed);
                let set = ModuleSet {
                    id: set_id,
                    members: members.clone(),
                    modules,
                    hashes,
                    checked_version: AtomicU64::new(0),
                };
                let i = self.warm_sets.push(set);
                warm.by_members.insert(members, i);
                i
            }
        };
        warm.by_module.insert(id.clone(), index);
    }
}
