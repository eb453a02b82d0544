//! Session state of natives: a type-keyed map the host installs around its
//! calls, and the memory slots natives park values in when they hand out
//! references to them.
//!
//! The executors build [`NativeContext`] with a fixed set of fields, so the
//! installed extensions are found through the calling thread (executors run
//! natives on the thread that called them). Without an installed map each
//! call gets its own, kept in the call's memory and dropped with it: one call
//! is then one transaction.

use super::NativeContext;
use crate::error::{VmError, VmResult};
use crate::flat::{native_bridge, FlatLayout, FlatValue};
use crate::fxhash::FxHashMap;
use crate::values::Value;
use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::sync::{Arc, Mutex};

/// Native state by type: one value of each type (a table store, an event
/// log, the transaction context...).
#[derive(Default)]
pub struct NativeExtensions {
    /// Hashed fast: natives look their state up on every call.
    map: FxHashMap<TypeId, Box<dyn Any + Send>>,
}

impl std::fmt::Debug for NativeExtensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NativeExtensions({} entries)", self.map.len())
    }
}

impl NativeExtensions {
    pub fn new() -> Self {
        NativeExtensions::default()
    }
    /// Adds `value`, returning the one of the same type it replaces.
    pub fn insert<T: Any + Send>(&mut self, value: T) -> Option<T> {
        self.map.insert(TypeId::of::<T>(), Box::new(value)).and_then(|b| b.downcast().ok().map(|b| *b))
    }
    pub fn get<T: Any + Send>(&self) -> Option<&T> {
        self.map.get(&TypeId::of::<T>()).and_then(|b| b.downcast_ref())
    }
    pub fn get_mut<T: Any + Send>(&mut self) -> Option<&mut T> {
        self.map.get_mut(&TypeId::of::<T>()).and_then(|b| b.downcast_mut())
    }
    /// The value of type `T`, created with `T::default()` on first use.
    pub fn get_or_default<T: Any + Send + Default>(&mut self) -> &mut T {
        let b = self.map.entry(TypeId::of::<T>()).or_insert_with(|| Box::new(T::default()));
        // Keys are the TypeId of the boxed value, so the downcast holds; a
        // mismatch would only replace the entry.
        if !b.is::<T>() {
            *b = Box::new(T::default());
        }
        b.downcast_mut().expect("entry of type T")
    }
    pub fn remove<T: Any + Send>(&mut self) -> Option<T> {
        self.map.remove(&TypeId::of::<T>()).and_then(|b| b.downcast().ok().map(|b| *b))
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

thread_local! {
    /// Extensions installed by [`with_extensions`] on this thread, innermost
    /// last; `None` while a native is using them.
    static INSTALLED: RefCell<Vec<Option<NativeExtensions>>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` (typically one or more `execute_function` calls of one session)
/// with `ext` as the extensions natives see; `ext` holds their state
/// afterwards (also when `f` panics). Calls nest: the innermost wins.
pub fn with_extensions<R>(ext: &mut NativeExtensions, f: impl FnOnce() -> R) -> R {
    struct Restore<'a>(&'a mut NativeExtensions);
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            let back = INSTALLED.with(|s| s.borrow_mut().pop()).flatten();
            *self.0 = back.unwrap_or_default();
        }
    }
    INSTALLED.with(|s| s.borrow_mut().push(Some(std::mem::take(ext))));
    let _restore = Restore(ext);
    f()
}

/// [`NativeContext::with_extensions`]: the installed extensions, else the
/// call's own.
pub(super) fn run_with<R>(
    cx: &mut NativeContext<'_>,
    f: impl FnOnce(&mut NativeExtensions, &mut NativeContext<'_>) -> VmResult<R>,
) -> VmResult<R> {
    let taken = INSTALLED.with(|s| s.borrow_mut().last_mut().map(Option::take));
    match taken {
        Some(Some(mut ext)) => {
            let r = f(&mut ext, cx);
            INSTALLED.with(|s| {
                if let Some(slot) = s.borrow_mut().last_mut() {
                    *slot = Some(ext);
                }
            });
            r
        }
        Some(None) => Err(VmError::invariant("native extensions used re-entrantly")),
        None => {
            let mut ext = cx.mem.native.extensions.take().unwrap_or_default();
            let r = f(&mut ext, cx);
            cx.mem.native.extensions = Some(ext);
            r
        }
    }
}

/// Where parked values go when the memory holding them is dropped.
pub type ParkedHome = Arc<Mutex<Option<Vec<Option<Value>>>>>;

/// A parked value: its tree form, or the flat value Move code holds
/// references into (the flat interpreter's native bridge converts a parked
/// value once, when a native first hands out a reference to it).
#[derive(Debug)]
enum Parked {
    Tree(Value),
    Flat(FlatValue),
}

impl Parked {
    /// The tree form (a flat value is converted and freed).
    fn into_value(self) -> VmResult<Value> {
        match self {
            Parked::Tree(v) => Ok(v),
            Parked::Flat(fv) => native_bridge::to_value(fv.layout(), fv.bytes()),
        }
    }
}

/// Values natives own for the length of one call and hand out references
/// to (`RefRoot::Native(slot)`), e.g. the table entries `borrow_box`
/// returns. When the call's memory is dropped the values go to `home`, so a
/// native whose state outlives the call can take them back.
///
/// Natives never change a parked value in place (they only park and take
/// it), so a value lives in one form at a time and nothing is synchronised
/// per call: the tree form is made again only when a native takes the value
/// ([`NativeSlots::take`]) or the memory goes home.
#[derive(Debug, Default)]
pub struct NativeSlots {
    values: Vec<Option<Parked>>,
    /// Set by the native that parked the values.
    pub home: Option<ParkedHome>,
    /// The call's own extensions (when the host installed none).
    extensions: Option<NativeExtensions>,
    /// (engine's layout, this memory's copy of it) of each layout a parked
    /// value was made flat with. A flat value holds a count on its layout;
    /// on the engine's, every thread's sessions would write one cache line
    /// per parked value (`clob`: ~1,500 a call).
    layouts: Vec<(Arc<FlatLayout>, Arc<FlatLayout>)>,
}

fn dangling() -> VmError {
    VmError::invariant("dangling native reference")
}

impl NativeSlots {
    /// Parks `v`, returning its slot (for `RefRoot::Native`).
    pub fn park(&mut self, v: Value) -> VmResult<u32> {
        let slot = u32::try_from(self.values.len()).map_err(|_| VmError::invariant("too many parked values"))?;
        self.values.push(Some(Parked::Tree(v)));
        Ok(slot)
    }

    /// Takes the value out of `slot` (references to it must be dead).
    pub fn take(&mut self, slot: u32) -> VmResult<Value> {
        self.values.get_mut(slot as usize).and_then(Option::take).ok_or_else(dangling)?.into_value()
    }

    /// The parked value in tree form (`None` when the slot is empty or
    /// holds a flat value: only the flat bridge references those).
    pub fn get(&self, slot: u32) -> Option<&Value> {
        match self.values.get(slot as usize)? {
            Some(Parked::Tree(v)) => Some(v),
            _ => None,
        }
    }

    pub fn get_mut(&mut self, slot: u32) -> Option<&mut Value> {
        match self.values.get_mut(slot as usize)? {
            Some(Parked::Tree(v)) => Some(v),
            _ => None,
        }
    }

    /// The flat form of the value in `slot`, converted from the tree form
    /// (with layout `layout`) on first use; its address stays valid while
    /// the value is parked.
    pub fn flat(&mut self, slot: u32, layout: Option<&Arc<FlatLayout>>) -> VmResult<&FlatValue> {
        let i = slot as usize;
        if !matches!(self.values.get(i), Some(Some(Parked::Flat(_)))) {
            self.make_flat(i, layout)?;
        }
        match self.values.get(i) {
            Some(Some(Parked::Flat(fv))) => Ok(fv),
            _ => Err(VmError::invariant("parked value form")),
        }
    }

    /// Converts the tree value parked in slot `i` to its flat form.
    #[cold]
    fn make_flat(&mut self, i: usize, layout: Option<&Arc<FlatLayout>>) -> VmResult<()> {
        if !matches!(self.values.get(i), Some(Some(_))) {
            return Err(dangling());
        }
        let l = layout.ok_or_else(|| VmError::invariant("reference into a parked value of unknown layout"))?;
        let mut fv = FlatValue::zeroed(self.own_layout(l));
        let p = self.values.get_mut(i).and_then(Option::as_mut).ok_or_else(dangling)?;
        if let Parked::Tree(v) = p {
            let (l, bytes) = fv.parts_mut();
            native_bridge::from_value(v, l, bytes)?;
            *p = Parked::Flat(fv);
        }
        Ok(())
    }

    /// This memory's copy of the engine's layout `l` (made on first use).
    fn own_layout(&mut self, l: &Arc<FlatLayout>) -> Arc<FlatLayout> {
        if let Some((_, own)) = self.layouts.iter().find(|(shared, _)| Arc::ptr_eq(shared, l)) {
            return own.clone();
        }
        let own = Arc::new(FlatLayout::clone(l));
        self.layouts.push((l.clone(), own.clone()));
        own
    }
}

impl Drop for NativeSlots {
    fn drop(&mut self) {
        if let Some(home) = self.home.take() {
            // A flat value that no longer converts (an invariant broken
            // elsewhere) goes home as missing rather than half-built.
            let values =
                std::mem::take(&mut self.values).into_iter().map(|p| p.and_then(|p| p.into_value().ok())).collect();
            if let Ok(mut h) = home.lock() {
                *h = Some(values);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default, Debug, PartialEq)]
    struct Counter(u64);

    #[test]
    fn type_keyed_map() {
        let mut e = NativeExtensions::new();
        assert!(e.get::<Counter>().is_none());
        e.get_or_default::<Counter>().0 += 2;
        assert_eq!(e.insert(Counter(5)), Some(Counter(2)));
        assert_eq!(e.get::<Counter>(), Some(&Counter(5)));
        assert_eq!(e.remove::<Counter>(), Some(Counter(5)));
        assert!(e.is_empty());
    }

    #[test]
    fn installed_extensions_come_back_and_nest() {
        let mut outer = NativeExtensions::new();
        outer.insert(Counter(1));
        with_extensions(&mut outer, || {
            assert!(INSTALLED.with(|s| s.borrow().len()) == 1);
            let mut inner = NativeExtensions::new();
            with_extensions(&mut inner, || {
                let top = INSTALLED.with(|s| s.borrow().last().map(|e| e.as_ref().map(|e| e.is_empty())));
                assert_eq!(top, Some(Some(true)));
            });
        });
        assert_eq!(outer.get::<Counter>(), Some(&Counter(1)));
        assert!(INSTALLED.with(|s| s.borrow().is_empty()));
    }

    /// Making parked values flat takes one count on the engine's layout
    /// per memory, not one per value (flat values count on the memory's
    /// own copy, which no other thread writes).
    #[test]
    fn flat_parked_values_share_the_memory_s_own_layout() {
        let engine =
            Arc::new(FlatLayout::from_layout(&crate::Layout::Vector(Box::new(crate::Layout::U64)), 8).unwrap());
        let mut slots = NativeSlots::default();
        for i in 0..10 {
            let s = slots.park(Value::Vector(vec![Value::U64(i)])).unwrap();
            let fv = slots.flat(s, Some(&engine)).unwrap();
            assert_eq!(**fv.layout(), *engine);
        }
        assert_eq!(Arc::strong_count(&engine), 2, "the engine's layout is counted once by the memory");
        assert_eq!(slots.take(3).unwrap(), Value::Vector(vec![Value::U64(3)]));
    }

    #[test]
    fn parked_values_go_home_on_drop() {
        let home: ParkedHome = Arc::new(Mutex::new(None));
        let mut slots = NativeSlots::default();
        assert_eq!(slots.park(Value::U64(7)).unwrap(), 0);
        assert_eq!(slots.park(Value::U64(8)).unwrap(), 1);
        assert_eq!(slots.take(1).unwrap(), Value::U64(8));
        slots.home = Some(home.clone());
        drop(slots);
        assert_eq!(home.lock().unwrap().take(), Some(vec![Some(Value::U64(7)), None]));
    }

    #[test]
    fn flat_form_is_made_once_and_goes_home_as_a_tree_value() {
        let home: ParkedHome = Arc::new(Mutex::new(None));
        let l = Arc::new(FlatLayout::from_layout(&crate::Layout::Vector(Box::new(crate::Layout::U64)), 8).unwrap());
        let v = Value::Vector(vec![Value::U64(1), Value::U64(2)]);
        let live = crate::flat::live_allocations();
        let mut slots = NativeSlots::default();
        let s = slots.park(v.clone()).unwrap();
        let a = slots.flat(s, Some(&l)).unwrap().as_ptr();
        // The second use finds the same flat value (no layout needed).
        assert_eq!(slots.flat(s, None).unwrap().as_ptr(), a);
        assert!(slots.get(s).is_none(), "a flat value has no tree form to lend");
        slots.home = Some(home.clone());
        drop(slots);
        assert_eq!(home.lock().unwrap().take(), Some(vec![Some(v)]));
        assert_eq!(crate::flat::live_allocations(), live, "the flat form is freed");
    }
}
