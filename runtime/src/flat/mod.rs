//! Flat values: the one value representation both executors are to share
//! (jit-abi.md 1.3). Every instantiated type gets a [`FlatLayout`] (size,
//! alignment, field offsets; enums as tag + payload; vectors as a pointer to
//! a heap header); values live in plain memory of that layout; vectors,
//! copy, drop, equality and BCS work directly on that memory; and the
//! `extern "C"` helpers of the runtime's helper table ([`shims`]) expose the
//! same operations to compiled code.
//!
//! Raw memory is touched only in [`raw`] (and the pointer-to-slice step of
//! [`shims`]); the rest is safe code over byte slices.
//!
//! [`FrameLayout`] places a frame's locals and operand slots.
//!
//! Both the flat interpreter and compiled code run on this representation:
//! closures are boxed [`FlatClosure`]s (pack/call shims in
//! [`closure_shims`]), global storage is reached through [`host`], and
//! natives through [`native_bridge`] (flat forms over the slots,
//! [`native_abi`]; tree-only natives over tree values).

pub mod bcs;
pub mod closure;
pub mod closure_shims;
pub mod context;
pub mod frame;
pub mod host;
pub mod inline;
pub mod layout;
pub mod mem;
pub mod native_abi;
pub mod native_bridge;
pub mod raw;
pub mod shims;
pub mod value;
pub mod vec;

pub use closure::FlatClosure;
pub use context::ExecContext;
pub use frame::FrameLayout;
pub use inline::InlineValues;
pub use layout::{Field, FlatLayout, FlatLayouts, Shape, MAX_FLAT_DEPTH};
pub use mem::{Addr, FrameStack};
pub use raw::live_allocations;
pub use value::FlatValue;
