//! `0x1::table`: table contents keyed by table handle and the BCS of the
//! key, as Aptos's table extension keeps them.
//!
//! `borrow_box` / `borrow_box_mut` return references into the table, so a
//! borrowed entry is *parked* in the call's memory (`RefRoot::Native`) and
//! stays there for the rest of the call; the other natives find it there.
//! When the call's memory is dropped the parked values come home
//! (`NativeSlots::home`) and the next call folds them back into the store.
//! Move's reference rules make this sound: while a reference into a table
//! is alive the table is borrowed, so nothing can remove or replace it.

use crate::args::{extension_error, pop, ty_arg, Args, Registrar};
use crate::transaction_context::context as txn_context;
use movejit_runtime::bcs;
use movejit_runtime::fxhash::{FxHashMap, FxHashSet};
use movejit_runtime::gas::native::NativeParam as P;
use movejit_runtime::natives::{FlatCall, NativeContext, Parking};
use movejit_runtime::{AccountAddress, GasMeter, Memory, RefRoot, Reference, Type, Value, VmError, VmResult};
use std::cell::RefCell;
use std::collections::BTreeSet;

const LOAD_BASE: P = P::named("table.common.load.base");
const LOAD_BASE_NEW: P = P::named("table.common.load.base_new");
const LOAD_PER_BYTE: P = P::named("table.common.load.per_byte");
const LOAD_FAILURE: P = P::named("table.common.load.failure");
const NEW_TABLE_HANDLE: P = P::named("table.new_table_handle.base");
const ADD_BOX: (P, P) = (P::named("table.add_box.base"), P::named("table.add_box.per_byte_serialized"));
const BORROW_BOX: (P, P) = (P::named("table.borrow_box.base"), P::named("table.borrow_box.per_byte_serialized"));
const CONTAINS_BOX: (P, P) = (P::named("table.contains_box.base"), P::named("table.contains_box.per_byte_serialized"));
const REMOVE_BOX: (P, P) = (P::named("table.remove_box.base"), P::named("table.remove_box.per_byte_serialized"));
const DESTROY_EMPTY_BOX: P = P::named("table.destroy_empty_box.base");
const DROP_UNCHECKED_BOX: P = P::named("table.drop_unchecked_box.base");

/// Aptos rounds a table entry's bytes up to whole pages when it loads one.
const PAGE_BYTES: u64 = 4096;

/// How an entry was reached, for gas: `None` when the transaction touched
/// it before; else its first access, which loads it from storage:
/// `Some((bytes, heap))` of an entry there (its BCS size and the heap size
/// of its value, [`AbstractSizes::tree_heap`](movejit_runtime::gas::abstract_size::AbstractSizes::tree_heap)),
/// `None` when there is none.
type Load = Option<Option<(u64, u64)>>;

/// What a keyed native pays after its work (Aptos charges there, before
/// its result or abort): per key byte, then the loaded entry's heap size
/// in memory (Aptos's natives with `FixTableNativesMemoryDoubleCounting`,
/// on from the start on the test chain: only an entry loaded now), then
/// loading the entry.
/// Unmetered and unit-metered calls pay one inline test; the charge is
/// out of line (it kept the lean path of the keyed natives from inlining).
#[inline]
fn charge_key_and_load(gas: &mut GasMeter, per_byte: P, key_len: usize, load: Load) -> VmResult<()> {
    if !gas.is_aptos() {
        return Ok(());
    }
    charge_aptos_key_and_load(gas, per_byte, key_len, load)
}

#[inline(never)]
fn charge_aptos_key_and_load(gas: &mut GasMeter, per_byte: P, key_len: usize, load: Load) -> VmResult<()> {
    gas.charge_aptos_native(&[(per_byte, key_len as u64)])?;
    if let (Some(Some((_, heap))), Some(a)) = (load, gas.aptos_meter_mut()) {
        a.use_memory(heap).map_err(VmError::new)?;
    }
    gas.charge_aptos_native(&[(LOAD_BASE, 1)])?;
    match load {
        Some(Some((bytes, _))) => {
            let pages = bytes.div_ceil(PAGE_BYTES) * PAGE_BYTES;
            gas.charge_aptos_native(&[(LOAD_BASE_NEW, 1), (LOAD_PER_BYTE, pages)])
        }
        Some(None) => gas.charge_aptos_native(&[(LOAD_BASE_NEW, 1), (LOAD_FAILURE, 1)]),
        None => Ok(()),
    }
}

/// Abort code of `add` when the key is present: `error::invalid_argument(100)`.
pub const ALREADY_EXISTS: u64 = (100 << 8) + 7;
/// Abort code of `borrow` / `remove` when the key is absent: `error::invalid_argument(101)`.
pub const NOT_FOUND: u64 = (101 << 8) + 7;

/// Where an entry's value is.
#[derive(Clone, Debug)]
enum Entry {
    Here(Value),
    /// In slot `n` of the current call's parked values.
    Parked(u32),
}

/// Table contents by handle, then by key BCS. Hashed (the natives look
/// entries up per call); [`TableStore::entries`] sorts by key.
type Contents = FxHashMap<AccountAddress, FxHashMap<Vec<u8>, Entry>>;

/// The tables of a session.
#[derive(Debug, Default)]
pub struct TableStore {
    /// Tables created in this session: (handle, key type, value type).
    new_tables: Vec<(AccountAddress, Type, Type)>,
    removed: BTreeSet<AccountAddress>,
    content: Contents,
    /// Entries parked in the current call's memory: (handle, key).
    parking: Parking<(AccountAddress, Vec<u8>)>,
    /// What the running transaction changed, to undo it on failure.
    undo: Option<Undo>,
    /// Entries the running transaction has accessed (Aptos loads each
    /// once per transaction, and charges for it then).
    accessed: FxHashSet<(AccountAddress, Vec<u8>)>,
    /// Tables the running transaction has used (their layouts are built,
    /// under Aptos, once per transaction).
    opened: FxHashSet<AccountAddress>,
}

/// The state a transaction found, for what it changed only: going back
/// costs what the transaction touched, not what the store holds.
#[derive(Debug, Default)]
struct Undo {
    new_tables: usize,
    /// Handles the transaction added to `removed`.
    removed: Vec<AccountAddress>,
    /// Each changed entry's first state (`None`: absent).
    entries: FxHashMap<(AccountAddress, Vec<u8>), Option<Entry>>,
    /// Tables destroyed, with their contents then, in order.
    dropped: Vec<(AccountAddress, FxHashMap<Vec<u8>, Entry>)>,
}

/// Notes `old` as the state of entry `(handle, key)` unless the running
/// transaction (if any) changed it before.
fn note_entry(undo: &mut Option<Undo>, handle: AccountAddress, key: &[u8], old: Option<&Entry>) {
    if let Some(u) = undo {
        u.entries.entry((handle, key.to_vec())).or_insert_with(|| old.cloned());
    }
}

impl TableStore {
    /// Starts a transaction whose changes [`TableStore::rollback`] undoes
    /// (taking back values an ended call parked first); `false`, and no
    /// undo, while a call still has entries parked.
    pub fn begin_transaction(&mut self) -> bool {
        self.fold_back();
        self.accessed.clear();
        self.opened.clear();
        let clean = !self.parking.any_parked();
        self.undo = clean.then(|| Undo { new_tables: self.new_tables.len(), ..Undo::default() });
        clean
    }

    /// Keeps the running transaction's changes.
    pub fn commit(&mut self) {
        self.undo = None;
    }

    /// Undoes the running transaction's changes (after its call ended).
    pub fn rollback(&mut self) {
        self.parking.clear();
        let Some(u) = self.undo.take() else { return };
        self.new_tables.truncate(u.new_tables);
        for h in &u.removed {
            self.removed.remove(h);
        }
        for (h, table) in u.dropped.into_iter().rev() {
            self.content.insert(h, table);
        }
        for ((h, k), old) in u.entries {
            match old {
                Some(e) => {
                    self.content.entry(h).or_default().insert(k, e);
                }
                None => {
                    if let Some(t) = self.content.get_mut(&h) {
                        t.remove(&k);
                    }
                }
            }
        }
    }

    /// Destroys table `handle` (empty, as Move checked).
    fn destroy(&mut self, handle: AccountAddress) {
        let table = self.content.remove(&handle);
        let newly = self.removed.insert(handle);
        if let Some(u) = &mut self.undo {
            if let Some(t) = table {
                u.dropped.push((handle, t));
            }
            if newly {
                u.removed.push(handle);
            }
        }
    }

    /// The first access in this transaction to entry `(handle, key)`
    /// loads it (see [`Load`]); its bytes are those of `box_ty`, the
    /// stored type. Nothing is measured unless `gas` charges Aptos gas.
    /// One inline test unless Aptos gas is charged.
    #[inline]
    fn access(&mut self, cx: &NativeContext<'_>, box_ty: &Type, handle: AccountAddress, key: &[u8]) -> VmResult<Load> {
        if !cx.gas.is_aptos() {
            return Ok(None);
        }
        self.aptos_access(cx, box_ty, handle, key)
    }

    #[inline(never)]
    fn aptos_access(
        &mut self,
        cx: &NativeContext<'_>,
        box_ty: &Type,
        handle: AccountAddress,
        key: &[u8],
    ) -> VmResult<Load> {
        if !self.accessed.insert((handle, key.to_vec())) {
            return Ok(None);
        }
        let loaded = match self.content.get(&handle).and_then(|t| t.get(key)) {
            None => None,
            Some(Entry::Here(v)) => {
                let layout = cx.types.layout_of(box_ty)?;
                let bytes =
                    bcs::serialize(v, &layout).map_err(|_| extension_error("cannot serialize table value"))?.len();
                let heap = cx.gas.aptos_meter().map_or(0, |a| a.pricing.sizes.tree_heap(&layout, v));
                Some((bytes as u64, heap))
            }
            // Parked by this call: accessed before.
            Some(Entry::Parked(_)) => return Ok(None),
        };
        Ok(Some(loaded))
    }

    /// Tables created so far: (handle, key type, value type).
    pub fn new_tables(&self) -> &[(AccountAddress, Type, Type)] {
        &self.new_tables
    }
    /// Tables destroyed with `destroy_empty`.
    pub fn removed_tables(&self) -> &BTreeSet<AccountAddress> {
        &self.removed
    }
    /// The entries of table `handle` (key BCS → value) after the calls so
    /// far, or `None` if some are still parked in a live call's memory.
    pub fn entries(&mut self, handle: AccountAddress) -> Option<Vec<(Vec<u8>, Value)>> {
        self.fold_back();
        let t = match self.content.get(&handle) {
            Some(t) => t,
            None => return Some(Vec::new()),
        };
        let mut entries: Vec<(Vec<u8>, Value)> = t
            .iter()
            .map(|(k, e)| match e {
                Entry::Here(v) => Some((k.clone(), v.clone())),
                Entry::Parked(_) => None,
            })
            .collect::<Option<_>>()?;
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Some(entries)
    }

    /// Makes `mem` this store's parking place, first taking back what an
    /// earlier call's memory parked.
    fn attach(&mut self, mem: &mut Memory) -> VmResult<()> {
        let content = &mut self.content;
        self.parking.attach(mem, "table", |(handle, key), slot, value| put_back(content, handle, key, slot, value))
    }

    /// Takes back the values an ended call parked.
    fn fold_back(&mut self) {
        let content = &mut self.content;
        self.parking.fold_back(|(handle, key), slot, value| put_back(content, handle, key, slot, value));
    }
}

/// Entry `(handle, key)` gets back the value it parked in `slot` (gone when
/// the value could not come back).
fn put_back(content: &mut Contents, handle: AccountAddress, key: Vec<u8>, slot: u32, value: Option<Value>) {
    let Some(table) = content.get_mut(&handle) else { return };
    if matches!(table.get(&key), Some(Entry::Parked(s)) if *s == slot) {
        match value {
            Some(v) => {
                table.insert(key, Entry::Here(v));
            }
            None => {
                table.remove(&key);
            }
        }
    }
}

/// The handle of the `Table` a reference argument points to.
fn handle_of(cx: &NativeContext<'_>, table_ref: &Value) -> VmResult<AccountAddress> {
    match cx.deref(table_ref)? {
        Value::Struct(f) => match f.first() {
            Some(Value::Address(a)) => Ok(*a),
            _ => Err(VmError::invariant("table: handle field")),
        },
        v => Err(VmError::invariant(format!("table: expected a Table, got {v:?}"))),
    }
}

/// The BCS of a key by the table's key type.
fn key_bytes(cx: &NativeContext<'_>, key_ty: &Type, key: &Value) -> VmResult<Vec<u8>> {
    let layout = cx.types.layout_of(key_ty)?;
    bcs::serialize(key, &layout).map_err(|_| extension_error("cannot serialize table key"))
}

/// A table's first use in a transaction builds the layouts of its key
/// and stored value (`ty`: key, value, box): under Aptos, loading the
/// modules of their datatypes.
/// One inline test unless Aptos gas is charged.
#[inline]
fn open(cx: &mut NativeContext<'_>, ty: &[Type], handle: AccountAddress) -> VmResult<()> {
    if !cx.gas.is_aptos() {
        return Ok(());
    }
    open_aptos(cx, ty, handle)
}

#[inline(never)]
fn open_aptos(cx: &mut NativeContext<'_>, ty: &[Type], handle: AccountAddress) -> VmResult<()> {
    let first = cx.with_extensions(|ext, _| Ok(ext.get_or_default::<TableStore>().opened.insert(handle)))?;
    if first {
        cx.charge_layout(ty_arg(ty, 0)?)?;
        cx.charge_layout(ty_arg(ty, 2)?)?;
    }
    Ok(())
}

/// Common start of the keyed natives: (table handle, key bytes), charging
/// per key byte.
fn table_and_key(
    cx: &mut NativeContext<'_>,
    ty: &[Type],
    table_ref: &Value,
    key: &Value,
) -> VmResult<(AccountAddress, Vec<u8>)> {
    let handle = handle_of(cx, table_ref)?;
    open(cx, ty, handle)?;
    let k = key_bytes(cx, ty_arg(ty, 0)?, key)?;
    cx.gas.charge_native(k.len())?;
    Ok((handle, k))
}

/// The flat form of [`table_and_key`]: argument 0 is the `&Table`,
/// argument 1 the key.
/// The key's BCS goes into `key` (empty).
fn flat_table_and_key(call: &mut FlatCall<'_, '_>, key: &mut Vec<u8>) -> VmResult<AccountAddress> {
    let handle = call.arg_address_field(0, 0)?;
    let ty = call.ty_args;
    open(&mut call.cx, ty, handle)?;
    call.arg_bcs_into(1, key).map_err(|_| extension_error("cannot serialize table key"))?;
    call.cx.gas.charge_native(key.len())?;
    Ok(handle)
}

thread_local! {
    /// The key of the running flat keyed native, reused: looking an entry
    /// up allocates nothing (a key is copied only when an entry is added
    /// or parked).
    static KEY: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with an empty key buffer (this thread's, unless in use).
fn with_key_buffer<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    KEY.with(|k| match k.try_borrow_mut() {
        Ok(mut buf) => {
            buf.clear();
            f(&mut buf)
        }
        Err(_) => f(&mut Vec::new()),
    })
}

/// A reference to the entry's value, parking it first.
fn borrow(cx: &mut NativeContext<'_>, store: &mut TableStore, handle: AccountAddress, key: &[u8]) -> VmResult<Value> {
    Ok(Value::Ref(Reference::new(RefRoot::Native(borrow_slot(cx, store, handle, key)?))))
}

/// The parked slot of the entry's value, parking it first.
fn borrow_slot(
    cx: &mut NativeContext<'_>,
    store: &mut TableStore,
    handle: AccountAddress,
    key: &[u8],
) -> VmResult<u32> {
    let table = store.content.get_mut(&handle).ok_or_else(|| VmError::abort(NOT_FOUND))?;
    let slot = match table.get_mut(key) {
        None => return Err(VmError::abort(NOT_FOUND)),
        Some(Entry::Parked(s)) => *s,
        Some(e) => {
            // The call may change the value in place: keep what it was.
            note_entry(&mut store.undo, handle, key, Some(&*e));
            let Entry::Here(v) = std::mem::replace(e, Entry::Parked(u32::MAX)) else {
                return Err(VmError::invariant("table: entry state"));
            };
            let s = store.parking.park(&mut cx.mem.native, (handle, key.to_vec()), v)?;
            *e = Entry::Parked(s);
            s
        }
    };
    Ok(slot)
}

/// A new table's handle: sha3_256(session hash || tables created so far,
/// as u32 big endian).
fn new_handle(ext: &mut movejit_runtime::natives::NativeExtensions, key_ty: Type, value_ty: Type) -> AccountAddress {
    use sha3::Digest;
    let seed = txn_context(ext).session_hash;
    let store = ext.get_or_default::<TableStore>();
    let count = store.new_tables.len() as u32;
    let mut h = sha3::Sha3_256::new();
    h.update(seed);
    h.update(count.to_be_bytes());
    let handle = AccountAddress(h.finalize().into());
    store.new_tables.push((handle, key_ty, value_ty));
    handle
}

fn with_store<R>(
    cx: &mut NativeContext<'_>,
    f: impl FnOnce(&mut TableStore, &mut NativeContext<'_>) -> VmResult<R>,
) -> VmResult<R> {
    cx.with_extensions(|ext, cx| {
        let store = ext.get_or_default::<TableStore>();
        store.attach(cx.mem)?;
        f(store, cx)
    })
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    let m = "table";
    r.add(m, "new_table_handle", |cx, ty, _| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(NEW_TABLE_HANDLE, 1)])?;
        let (key_ty, value_ty) = (ty_arg(ty, 0)?.clone(), ty_arg(ty, 1)?.clone());
        cx.with_extensions(|ext, _| Ok(vec![Value::Address(new_handle(ext, key_ty, value_ty))]))
    });
    r.add(m, "add_box", |cx, ty, mut args: Args| {
        cx.gas.charge_aptos_native(&[(ADD_BOX.0, 1)])?;
        let value = pop(&mut args)?;
        let key = pop(&mut args)?;
        let t = pop(&mut args)?;
        let (handle, k) = table_and_key(cx, ty, &t, &key)?;
        let box_ty = ty_arg(ty, 2)?;
        let (load, r) = with_store(cx, |store, cx| Ok(add(store, cx, box_ty, handle, k.clone(), value)))?;
        charge_key_and_load(cx.gas, ADD_BOX.1, k.len(), load)?;
        r.map(|()| vec![])
    });
    for name in ["borrow_box", "borrow_box_mut"] {
        r.add(m, name, |cx, ty, mut args: Args| {
            cx.gas.charge_aptos_native(&[(BORROW_BOX.0, 1)])?;
            let key = pop(&mut args)?;
            let t = pop(&mut args)?;
            let (handle, k) = table_and_key(cx, ty, &t, &key)?;
            let (box_ty, key_len) = (ty_arg(ty, 2)?, k.len());
            let (load, r) = with_store(cx, |store, cx| {
                let load = store.access(cx, box_ty, handle, &k)?;
                Ok((load, borrow(cx, store, handle, &k)))
            })?;
            charge_key_and_load(cx.gas, BORROW_BOX.1, key_len, load)?;
            Ok(vec![r?])
        });
    }
    r.add(m, "contains_box", |cx, ty, mut args: Args| {
        cx.gas.charge_aptos_native(&[(CONTAINS_BOX.0, 1)])?;
        let key = pop(&mut args)?;
        let t = pop(&mut args)?;
        let (handle, k) = table_and_key(cx, ty, &t, &key)?;
        let box_ty = ty_arg(ty, 2)?;
        let (load, found) = with_store(cx, |store, cx| {
            let load = store.access(cx, box_ty, handle, &k)?;
            Ok((load, store.content.get(&handle).is_some_and(|t| t.contains_key(&k))))
        })?;
        charge_key_and_load(cx.gas, CONTAINS_BOX.1, k.len(), load)?;
        Ok(vec![Value::Bool(found)])
    });
    r.add(m, "remove_box", |cx, ty, mut args: Args| {
        cx.gas.charge_aptos_native(&[(REMOVE_BOX.0, 1)])?;
        let key = pop(&mut args)?;
        let t = pop(&mut args)?;
        let (handle, k) = table_and_key(cx, ty, &t, &key)?;
        let box_ty = ty_arg(ty, 2)?;
        let (load, r) = with_store(cx, |store, cx| Ok(remove(store, cx, box_ty, handle, &k)))?;
        charge_key_and_load(cx.gas, REMOVE_BOX.1, k.len(), load)?;
        Ok(vec![r?])
    });
    r.add(m, "destroy_empty_box", |cx, ty, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(DESTROY_EMPTY_BOX, 1)])?;
        let t = pop(&mut args)?;
        let handle = handle_of(cx, &t)?;
        open(cx, ty, handle)?;
        with_store(cx, |store, _| {
            store.destroy(handle);
            Ok(vec![])
        })
    });
    r.add(m, "drop_unchecked_box", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(DROP_UNCHECKED_BOX, 1)])?;
        Ok(vec![])
    });
    register_flat(r);
}

/// The flat forms of the table natives (same order of checks, errors and
/// charges as the tree forms above). Entries stay in tree form in the
/// store: `add_box` converts the value once, `borrow_box` parks it and
/// hands out a reference into its flat form.
fn register_flat(r: &mut Registrar<'_>) {
    let m = "table";
    r.add_flat(m, "new_table_handle", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(NEW_TABLE_HANDLE, 1)])?;
        let (key_ty, value_ty) = (call.ty_arg(0)?.clone(), call.ty_arg(1)?.clone());
        let handle = call.cx.with_extensions(|ext, _| Ok(new_handle(ext, key_ty, value_ty)))?;
        call.ret_address(0, handle)
    });
    r.add_flat(m, "add_box", |call| {
        call.cx.gas.charge_aptos_native(&[(ADD_BOX.0, 1)])?;
        with_key_buffer(|k| {
            let handle = flat_table_and_key(call, k)?;
            let value = call.arg_tree(2)?;
            let box_ty = call.ty_arg(2)?;
            let (load, r) =
                with_store(&mut call.cx, |store, cx| Ok(add(store, cx, box_ty, handle, k.to_vec(), value)))?;
            charge_key_and_load(call.cx.gas, ADD_BOX.1, k.len(), load)?;
            r
        })
    });
    for name in ["borrow_box", "borrow_box_mut"] {
        r.add_flat(m, name, |call| {
            call.cx.gas.charge_aptos_native(&[(BORROW_BOX.0, 1)])?;
            with_key_buffer(|k| {
                let handle = flat_table_and_key(call, k)?;
                let box_ty = call.ty_arg(2)?;
                let (load, slot) = with_store(&mut call.cx, |store, cx| {
                    let load = store.access(cx, box_ty, handle, k)?;
                    Ok((load, borrow_slot(cx, store, handle, k)))
                })?;
                charge_key_and_load(call.cx.gas, BORROW_BOX.1, k.len(), load)?;
                call.ret_parked_ref(0, slot?)
            })
        });
    }
    r.add_flat(m, "contains_box", |call| {
        call.cx.gas.charge_aptos_native(&[(CONTAINS_BOX.0, 1)])?;
        with_key_buffer(|k| {
            let handle = flat_table_and_key(call, k)?;
            let box_ty = call.ty_arg(2)?;
            let (load, found) = with_store(&mut call.cx, |store, cx| {
                let load = store.access(cx, box_ty, handle, k)?;
                Ok((load, store.content.get(&handle).is_some_and(|t| t.contains_key(k.as_slice()))))
            })?;
            charge_key_and_load(call.cx.gas, CONTAINS_BOX.1, k.len(), load)?;
            call.ret_bool(0, found)
        })
    });
    r.add_flat(m, "remove_box", |call| {
        call.cx.gas.charge_aptos_native(&[(REMOVE_BOX.0, 1)])?;
        with_key_buffer(|k| {
            let handle = flat_table_and_key(call, k)?;
            let box_ty = call.ty_arg(2)?;
            let (load, v) = with_store(&mut call.cx, |store, cx| Ok(remove(store, cx, box_ty, handle, k)))?;
            charge_key_and_load(call.cx.gas, REMOVE_BOX.1, k.len(), load)?;
            call.ret_tree(0, &v?)
        })
    });
    r.add_flat(m, "destroy_empty_box", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(DESTROY_EMPTY_BOX, 1)])?;
        let handle = call.arg_address_field(0, 0)?;
        let ty = call.ty_args;
        open(&mut call.cx, ty, handle)?;
        with_store(&mut call.cx, |store, _| {
            store.destroy(handle);
            Ok(())
        })
    });
    r.add_flat(m, "drop_unchecked_box", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(DROP_UNCHECKED_BOX, 1)])
    });
}

/// `add_box`'s work: the entry's load, and the insert (or the abort of a
/// key already there).
fn add(
    store: &mut TableStore,
    cx: &mut NativeContext<'_>,
    box_ty: &Type,
    handle: AccountAddress,
    k: Vec<u8>,
    value: Value,
) -> (Load, VmResult<()>) {
    let load = match store.access(cx, box_ty, handle, &k) {
        Ok(l) => l,
        Err(e) => return (None, Err(e)),
    };
    let table = store.content.entry(handle).or_default();
    if table.contains_key(&k) {
        return (load, Err(VmError::abort(ALREADY_EXISTS)));
    }
    note_entry(&mut store.undo, handle, &k, None);
    table.insert(k, Entry::Here(value));
    (load, Ok(()))
}

/// `remove_box`'s work: the entry's load, and its value (or the abort of
/// a key not there).
fn remove(
    store: &mut TableStore,
    cx: &mut NativeContext<'_>,
    box_ty: &Type,
    handle: AccountAddress,
    k: &[u8],
) -> (Load, VmResult<Value>) {
    let load = match store.access(cx, box_ty, handle, k) {
        Ok(l) => l,
        Err(e) => return (None, Err(e)),
    };
    let Some(entry) = store.content.get_mut(&handle).and_then(|t| t.remove(k)) else {
        return (load, Err(VmError::abort(NOT_FOUND)));
    };
    note_entry(&mut store.undo, handle, k, Some(&entry));
    let v = match entry {
        Entry::Here(v) => Ok(v),
        Entry::Parked(s) => store.parking.take(&mut cx.mem.native, s),
    };
    (load, v)
}
