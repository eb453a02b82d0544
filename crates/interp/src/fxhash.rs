//! The runtime's hasher, shared by both executors (one source of truth).

pub use movejit_runtime::fxhash::FxHashMap;
