//! Memory of the engine-wide id tables (issue 14): the interned types
//! (`TypeTable::shared`) and function names (`functions::table`) after
//! the whole Aptos framework (`shared/corpus/aptos`) is compiled in a
//! session-configured JIT engine. Types are interned where code names a
//! resource type (global storage operations: the id is the immediate), and
//! function names where a closure is made (at run time, so none here);
//! everything else is reached through per-module tables, not these.
//!
//! The bytes are measured, not estimated: every interned key is interned
//! again into a fresh table of the same kind under a counting allocator,
//! so the figure is what the tables allocate (slots, hash index, the keys'
//! own heap), excluding what they share with the loaded modules (the
//! `Arc`ed datatype names inside types).
//!
//! `cargo bench -p movejit-benches --bench id_tables [DIR]`.

use movejit_benches::compile_cost::{compile_all, load_verified, module_files, CompileMode};
use movejit_benches::{criterion_filter, shared_dir};
use movejit_runtime::functions::{self, Interner};
use movejit_runtime::{FunctionId, Type, TypeId, TypeTable};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;

/// The system allocator, keeping the net count of bytes it holds.
struct Counting;

static HELD: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call forwards to the system allocator unchanged; the
// counter only observes sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        HELD.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract is System's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract is System's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        HELD.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract is System's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes `build` leaves allocated (what it returns holds).
fn held_by<T>(build: impl FnOnce() -> T) -> (T, isize) {
    let before = HELD.load(Ordering::Relaxed);
    let out = build();
    (out, HELD.load(Ordering::Relaxed) - before)
}

fn kib(b: isize) -> String {
    format!("{:.1} KiB", b as f64 / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = criterion_filter(&args)
        .into_iter()
        .next()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| shared_dir().join("corpus/aptos"));
    let files = module_files(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let (modules, _) = load_verified(&files);
    let n_modules = modules.len();
    let report = compile_all(modules, CompileMode::Session).unwrap_or_else(|e| panic!("{e}"));

    let types = TypeTable::shared();
    let names = functions::table();
    let (copy_types, type_bytes) = held_by(|| {
        let t: Interner<Arc<Type>> = Interner::default();
        for i in 0..types.len() as u32 {
            let ty = types.get(TypeId(i)).unwrap_or_else(|e| panic!("{e:?}"));
            t.intern(ty, || Arc::new(ty.clone()));
        }
        t
    });
    let (copy_names, name_bytes) = held_by(|| {
        let t: Interner<FunctionId> = Interner::default();
        for i in 0..names.len() as u32 {
            let f = names.get(i).expect("dense ids");
            t.intern(f, || f.clone());
        }
        t
    });
    assert_eq!((copy_types.len(), copy_names.len()), (types.len(), names.len()), "the copies are whole");
    println!(
        "id tables after compiling {} ({n_modules} modules, {} functions compiled):",
        dir.display(),
        report.compiled().count()
    );
    println!("  types:          {:>6} ids, {}", types.len(), kib(type_bytes));
    println!("  function names: {:>6} ids, {}", names.len(), kib(name_bytes));
    println!("  total:          {}", kib(type_bytes + name_bytes));
}
