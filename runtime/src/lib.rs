//! The movejit runtime: everything both executors (the reference interpreter
//! and, later, the Cranelift JIT) share: runtime types and type tags, values
//! and references, integer arithmetic with Move's error rules, BCS encoding of
//! any value by its layout, the native-function registry and the Move stdlib
//! natives, the gas meter and its cost table, limits, storage (resolver trait
//! and change set) and the VM error type.
//!
//! It assumes its input was decoded and verified (movejit-format,
//! movejit-verifier) but still reports every inconsistency it meets as a
//! typed [`VmError`] rather than panicking. It knows nothing of Cranelift.

// Unsafe code is confined to `flat::raw` and `flat::shims` (raw memory of
// flat values), each of which allows it explicitly.
#![deny(unsafe_code)]

pub mod arith;
pub mod bcs;
pub mod compiled;
pub mod config;
pub mod error;
pub mod flat;
pub mod fmt;
pub mod functions;
pub mod fxhash;
pub mod gas;
pub mod helpers;
pub mod intern;
pub mod layout;
pub mod limits;
pub mod memory;
pub mod natives;
pub mod resolve;
pub mod scalar;
pub mod storage;
pub mod types;
pub mod values;

pub use config::{EngineConfig, ExecutorKind, JitOptions};
pub use error::{ErrorLocation, VmError, VmResult};
pub use ethnum;
pub use functions::FunctionIndex;
pub use gas::{CostTable, GasMeter};
pub use intern::{TypeId, TypeTable};
pub use layout::Layout;
pub use limits::Limits;
pub use movejit_format::{AccountAddress, StatusCode, StatusFlavour};
pub use natives::{NativeContext, NativeFunction, NativeRegistry, NativeResult};
pub use scalar::ScalarKind;
pub use storage::{
    fresh_modules_version, module_hash, ChangeSet, InMemoryStorage, ModuleHash, ModuleId, ModulesVersion, Resolver,
    StoredModule, WriteOp,
};
pub use types::{DatatypeId, Type};
pub use values::{ClosureValue, FunctionId, Memory, RefRoot, Reference, Value};
