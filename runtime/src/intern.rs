//! Interned types: every fully instantiated type the executors meet gets a
//! dense 32-bit [`TypeId`] in one append-only table ([`TypeTable::shared`]).
//! Runtime paths (global storage, the resource types compiled code passes
//! to the shims as immediates) work on ids; a lookup by structure happens
//! only where a type is first met (preparing or compiling a function, the
//! API boundary), and the structural type comes back only at the
//! boundaries (storage reads, change sets, error messages).
//!
//! The table is process-wide, so every engine of the process (the
//! interpreter's and each generation of compiled code) agrees on the ids
//! without handing a table around: an id names a structural type, which
//! means the same thing in every engine. It only grows, by one entry per
//! distinct type ever interned; it is read-mostly (a read lock per lookup
//! by structure, none by id: [`Interner`]).

use crate::error::{VmError, VmResult};
use crate::functions::Interner;
use crate::storage::ModuleId;
use crate::types::Type;
use std::sync::{Arc, OnceLock};

/// A fully instantiated type, by its index in [`TypeTable::shared`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(pub u32);

impl TypeId {
    /// The id as the immediate compiled code passes.
    pub fn to_u64(self) -> u64 {
        self.0 as u64
    }

    /// The id compiled code passed (`None` when it cannot be one).
    pub fn from_u64(v: u64) -> Option<TypeId> {
        u32::try_from(v).ok().map(TypeId)
    }
}

/// Types by id and ids by type (module doc).
#[derive(Default)]
pub struct TypeTable {
    inner: Interner<Arc<Type>>,
}

impl TypeTable {
    /// The process-wide table (module doc).
    pub fn shared() -> &'static TypeTable {
        static TABLE: OnceLock<TypeTable> = OnceLock::new();
        TABLE.get_or_init(TypeTable::default)
    }

    /// The id of `t`, adding it when new.
    pub fn intern(&self, t: &Type) -> VmResult<TypeId> {
        self.inner.intern(t, || Arc::new(t.clone())).map(TypeId).ok_or_else(|| VmError::invariant("type table full"))
    }

    /// The id of `t` when it was interned.
    pub fn lookup(&self, t: &Type) -> Option<TypeId> {
        self.inner.lookup(t).map(TypeId)
    }

    /// The type of `id`, borrowed: for [`TypeTable::shared`] it lives as
    /// long as the process, so sessions keep it without a reference count
    /// (writing the shared count per use would be a write that every
    /// thread's sessions fight over).
    pub fn get(&self, id: TypeId) -> VmResult<&Type> {
        self.inner.get(id.0).map(|t| &**t).ok_or_else(|| VmError::invariant(format!("type id {} unknown", id.0)))
    }

    /// How many types are interned.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }
}

/// A function instance: its module, definition index and type arguments.
type InstanceKey = (ModuleId, u16, Vec<Type>);

/// The process-wide number of function instance `module::fdef<ty_args>`
/// (dense, append-only, as [`TypeTable::shared`]): Aptos's meter keys the
/// instantiations a caller resolved by it, so interpreted and compiled
/// frames of one caller agree. Looked up where an instance is prepared or
/// compiled, never per call.
pub fn instance_id(module: &ModuleId, fdef: u16, ty_args: &[Type]) -> VmResult<u32> {
    static INSTANCES: OnceLock<Interner<InstanceKey>> = OnceLock::new();
    let key = (module.clone(), fdef, ty_args.to_vec());
    INSTANCES
        .get_or_init(Interner::default)
        .intern(&key, || key.clone())
        .ok_or_else(|| VmError::invariant("instance table full"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::DatatypeId;
    use movejit_format::AccountAddress;

    fn resource(name: &str, args: Vec<Type>) -> Type {
        let id = DatatypeId { address: AccountAddress::from_u64(0xb0), module: "m".into(), name: name.into() };
        Type::Datatype(Arc::new(id), args)
    }

    #[test]
    fn ids_are_stable_dense_and_round_trip() {
        let table = TypeTable::default();
        let cases = [
            resource("R", vec![]),
            resource("R", vec![Type::U64]),
            resource("R", vec![Type::Vector(Box::new(Type::U8))]),
            resource("S", vec![]),
            Type::U64,
        ];
        let ids: Vec<TypeId> = cases.iter().map(|t| table.intern(t).unwrap()).collect();
        assert_eq!(ids, (0..cases.len() as u32).map(TypeId).collect::<Vec<_>>());
        for (t, id) in cases.iter().zip(&ids) {
            assert_eq!(table.intern(t).unwrap(), *id, "{t}");
            assert_eq!(table.lookup(t), Some(*id), "{t}");
            assert_eq!(*table.get(*id).unwrap(), *t);
        }
        assert_eq!(table.len(), cases.len());
        assert_eq!(table.lookup(&Type::U8), None);
        assert!(table.get(TypeId(cases.len() as u32)).is_err());
    }

    #[test]
    fn threads_agree_on_ids() {
        let table = Arc::new(TypeTable::default());
        let types: Vec<Type> = (0..64).map(|i| resource(&format!("R{i}"), vec![])).collect();
        let runs: Vec<Vec<TypeId>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|k| {
                    let (table, types) = (table.clone(), &types);
                    s.spawn(move || {
                        let mut ids = vec![TypeId(0); types.len()];
                        // Each thread interns in its own order.
                        for j in 0..types.len() {
                            let i = (j * (2 * k + 1)) % types.len();
                            ids[i] = table.intern(&types[i]).unwrap();
                        }
                        ids
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(runs.windows(2).all(|w| w[0] == w[1]));
        assert_eq!(table.len(), types.len());
    }
}
