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
use crate::values::Value;
use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Native state by type: one value of each type (a table store, an event
/// log, the transaction context...).
#[derive(Default)]
pub struct NativeExtensions {
    map: HashMap<TypeId, Box<dyn Any + Send>>,
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

/// Values natives own for the length of one call and hand out references
/// to (`RefRoot::Native(slot)`), e.g. the table entries `borrow_box`
/// returns. When the call's memory is dropped the values go to `home`, so a
/// native whose state outlives the call can take them back.
#[derive(Debug, Default)]
pub struct NativeSlots {
    pub values: Vec<Option<Value>>,
    /// Set by the native that parked the values.
    pub home: Option<ParkedHome>,
    /// The call's own extensions (when the host installed none).
    extensions: Option<NativeExtensions>,
}

impl Drop for NativeSlots {
    fn drop(&mut self) {
        if let Some(home) = self.home.take() {
            if let Ok(mut h) = home.lock() {
                *h = Some(std::mem::take(&mut self.values));
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

    #[test]
    fn parked_values_go_home_on_drop() {
        let home: ParkedHome = Arc::new(Mutex::new(None));
        let mut slots = NativeSlots::default();
        slots.values = vec![Some(Value::U64(7)), None];
        slots.home = Some(home.clone());
        drop(slots);
        assert_eq!(home.lock().unwrap().take(), Some(vec![Some(Value::U64(7)), None]));
    }
}
