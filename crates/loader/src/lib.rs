//! The module loader of movejit, one for both executors: it turns module
//! bytes from a store into [`LoadedModule`]s (decoded, linked against their
//! dependencies, verified, natives bound) and answers what follows from the
//! loaded modules alone.
//!
//! - [`ModuleCache`] (one per engine, `Send + Sync`): verified modules by
//!   content hash, and the warm module sets (a module with its transitive
//!   dependencies, as last loaded) that a session takes whole when its
//!   store has the same version of every member.
//! - [`SessionModules`] (one per session over a `Resolver`): the modules
//!   the session has, borrowed from a warm set until it loads beyond it;
//!   loading with cycle detection, the linking context of a module,
//!   function resolution by name, caller-given type arguments with their
//!   limits, abilities, datatype fields (`runtime::resolve::DatatypeSource`,
//!   so layouts and value depths follow).
//! - Verification ([`verify_linked`], [`Stage`]) with its one mapping of a
//!   verifier error to a located `VmError`, and linking checks for
//!   publishing ([`check_links`]).
//!
//! What it may assume: the `EngineConfig` a session loads under is the
//! engine's and does not change while the cache lives; a store's
//! `module_hash` is the SHA-256 of the bytes it returns. It never runs
//! code: nothing loaded here runs before it has been verified here (or at
//! publishing, through the same functions).

mod cache;
mod link;
mod module;
mod session;
mod verify;

pub use cache::{ModuleCache, ModuleSet};
pub use link::check_links;
pub use module::{function_name, DatatypeDef, FnInfo, LoadedModule};
pub use session::{SessionModules, EUSER_TYPE_LOADING_FAILURE};
pub use verify::{verification_error, verifier_config, verify_linked, Stage, UNVERIFIABLE_ON_CHAIN};
