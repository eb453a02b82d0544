//! The natives called directly, through the registry a host builds, with
//! expected values taken from the Aptos sources (framework unit tests in
//! `type_info.move`, abort codes of the table extension, transaction
//! context and aggregator natives, address-derivation schemes).

use movejit_aptos_natives::{aptos_registry, run_transaction, TableStore, ALREADY_EXISTS, FRAMEWORK, NOT_FOUND};
use movejit_runtime::natives::{with_extensions, NativeContext, NativeExtensions, TypeInfo};
use movejit_runtime::{
    AccountAddress, DatatypeId, GasMeter, Layout, Memory, RefRoot, Reference, StatusCode, Type, Value, VmError,
    VmResult,
};
use sha3::Digest;
use std::sync::Arc;

/// Layouts of the primitive types the tests use as table keys and values.
struct Primitives;

impl TypeInfo for Primitives {
    fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
        Ok(match ty {
            Type::U8 => Layout::U8,
            Type::U64 => Layout::U64,
            Type::Address => Layout::Address,
            Type::Vector(e) => Layout::Vector(Box::new(self.layout_of(e)?)),
            // Box<u64>
            Type::Datatype(id, args) if &*id.name == "Box" => {
                Layout::Struct(args.iter().map(|a| self.layout_of(a)).collect::<VmResult<_>>()?)
            }
            // 0x1::option::Option<T> as the framework declares it: enum None | Some { e: T }.
            Type::Datatype(id, args) if &*id.name == "Option" && args.len() == 1 => {
                Layout::Enum(vec![vec![], vec![self.layout_of(&args[0])?]])
            }
            t => return Err(VmError::invariant(format!("no test layout for {t}"))),
        })
    }
}

fn datatype(addr: u64, module: &str, name: &str, args: Vec<Type>) -> Type {
    Type::Datatype(
        Arc::new(DatatypeId { address: AccountAddress::from_u64(addr), module: module.into(), name: name.into() }),
        args,
    )
}

/// Calls `0x1::module::function` on `mem`.
fn call(mem: &mut Memory, module: &str, function: &str, ty: &[Type], args: Vec<Value>) -> VmResult<Vec<Value>> {
    let registry = aptos_registry();
    let f = registry.get(&FRAMEWORK, module, function).unwrap_or_else(|| panic!("{module}::{function} registered"));
    let mut gas = GasMeter::unmetered();
    let mut cx = NativeContext { mem, gas: &mut gas, types: &Primitives };
    f(&mut cx, ty, args)
}

fn abort_code(r: VmResult<Vec<Value>>) -> Option<u64> {
    match r {
        Err(e) if e.status == StatusCode::ABORTED => e.sub_status,
        _ => None,
    }
}

fn string(v: &Value) -> String {
    match v {
        Value::Struct(f) if f.len() == 1 => String::from_utf8(f[0].to_bytes().expect("bytes")).expect("utf8"),
        v => panic!("not a String: {v:?}"),
    }
}

#[test]
fn type_name_matches_the_framework_tests() {
    let type_info = datatype(1, "type_info", "TypeInfo", vec![]);
    let table = |k: Type, v: Type| datatype(1, "table", "Table", vec![k, v]);
    // From aptos-stdlib/sources/type_info.move `test_type_name`.
    let rows: Vec<(Type, &str)> = vec![
        (Type::Bool, "bool"),
        (Type::U8, "u8"),
        (Type::U64, "u64"),
        (Type::U128, "u128"),
        (Type::Address, "address"),
        (Type::Signer, "signer"),
        (Type::Vector(Box::new(Type::U8)), "vector<u8>"),
        (Type::Vector(Box::new(Type::Vector(Box::new(Type::U8)))), "vector<vector<u8>>"),
        (Type::Vector(Box::new(Type::Vector(Box::new(type_info.clone())))), "vector<vector<0x1::type_info::TypeInfo>>"),
        (type_info.clone(), "0x1::type_info::TypeInfo"),
        (
            table(type_info.clone(), table(Type::U8, Type::Vector(Box::new(type_info.clone())))),
            "0x1::table::Table<0x1::type_info::TypeInfo, 0x1::table::Table<u8, vector<0x1::type_info::TypeInfo>>>",
        ),
        // move-core-types' StructTag::to_canonical_string doc example.
        (
            datatype(0x234, "foo", "Bar", vec![datatype(0x123, "bar", "Foo", vec![Type::U64])]),
            "0x234::foo::Bar<0x123::bar::Foo<u64>>",
        ),
    ];
    for (t, expected) in rows {
        let r = call(&mut Memory::default(), "type_info", "type_name", std::slice::from_ref(&t), vec![])
            .expect("type_name");
        assert_eq!(string(&r[0]), expected, "type_name<{t}>");
    }
}

#[test]
fn type_of_matches_the_framework_tests() {
    let string_t = datatype(1, "string", "String", vec![]);
    // (type, Ok((address, module, struct name)) | Err(abort code))
    type Row = (Type, Result<(u64, &'static str, &'static str), u64>);
    let rows: Vec<Row> = vec![
        (datatype(1, "type_info", "TypeInfo", vec![]), Ok((1, "type_info", "TypeInfo"))),
        (
            datatype(1, "table", "Table", vec![string_t.clone(), string_t]),
            Ok((1, "table", "Table<0x1::string::String, 0x1::string::String>")),
        ),
        // Not a struct: NFE_EXPECTED_STRUCT_TYPE_TAG.
        (Type::U64, Err(1)),
        (Type::Vector(Box::new(Type::U8)), Err(1)),
    ];
    for (t, expected) in rows {
        let r = call(&mut Memory::default(), "type_info", "type_of", std::slice::from_ref(&t), vec![]);
        match expected {
            Ok((a, m, n)) => {
                let r = r.expect("type_of");
                let want = Value::Struct(vec![
                    Value::Address(AccountAddress::from_u64(a)),
                    Value::from_bytes(m.as_bytes()),
                    Value::from_bytes(n.as_bytes()),
                ]);
                assert_eq!(r, vec![want], "type_of<{t}>");
            }
            Err(code) => assert_eq!(abort_code(r), Some(code), "type_of<{t}>"),
        }
    }
}

/// A `&Table` / `&mut Table` argument: the table struct in a local.
fn table_ref(mem: &mut Memory, handle: AccountAddress) -> Value {
    let slot = mem.locals.len() as u32;
    mem.locals.push(Value::Struct(vec![Value::Address(handle)]));
    Value::Ref(Reference::new(RefRoot::Local(slot)))
}

fn boxed(v: u64) -> Value {
    Value::Struct(vec![Value::U64(v)])
}

#[test]
fn table_operations_and_abort_codes() {
    // The table extension's codes: error::invalid_argument(100 / 101).
    assert_eq!((ALREADY_EXISTS, NOT_FOUND), (0x6407, 0x6507));
    let box_t = datatype(1, "table", "Box", vec![Type::U64]);
    let ty = [Type::U64, Type::U64, box_t];
    let mut mem = Memory::default();
    let h = call(&mut mem, "table", "new_table_handle", &ty[..2], vec![]).expect("handle");
    let Value::Address(h) = h[0] else { panic!("handle {h:?}") };
    let t = table_ref(&mut mem, h);
    type Step = (&'static str, Vec<Value>, Result<Vec<Value>, u64>);
    let steps: Vec<Step> = vec![
        ("contains_box", vec![Value::U64(1)], Ok(vec![Value::Bool(false)])),
        ("borrow_box", vec![Value::U64(1)], Err(NOT_FOUND)),
        ("borrow_box_mut", vec![Value::U64(1)], Err(NOT_FOUND)),
        ("remove_box", vec![Value::U64(1)], Err(NOT_FOUND)),
        ("add_box", vec![Value::U64(1), boxed(10)], Ok(vec![])),
        ("add_box", vec![Value::U64(1), boxed(11)], Err(ALREADY_EXISTS)),
        ("contains_box", vec![Value::U64(1)], Ok(vec![Value::Bool(true)])),
        ("contains_box", vec![Value::U64(2)], Ok(vec![Value::Bool(false)])),
        ("add_box", vec![Value::U64(2), boxed(20)], Ok(vec![])),
        ("remove_box", vec![Value::U64(2)], Ok(vec![boxed(20)])),
        ("contains_box", vec![Value::U64(2)], Ok(vec![Value::Bool(false)])),
    ];
    for (f, args, expected) in steps {
        let mut a = vec![t.clone()];
        a.extend(args.clone());
        let r = call(&mut mem, "table", f, &ty, a);
        match expected {
            Ok(v) => assert_eq!(r.expect(f), v, "{f}({args:?})"),
            Err(code) => assert_eq!(abort_code(r), Some(code), "{f}({args:?})"),
        }
    }
    // A mutable borrow writes through; later reads and removal see the write.
    let r = call(&mut mem, "table", "borrow_box_mut", &ty, vec![t.clone(), Value::U64(1)]).expect("borrow_mut");
    let Value::Ref(entry) = &r[0] else { panic!("reference {r:?}") };
    assert!(matches!(entry.root, RefRoot::Native(_)));
    *mem.get_mut(entry).expect("entry") = boxed(99);
    let r = call(&mut mem, "table", "borrow_box", &ty, vec![t.clone(), Value::U64(1)]).expect("borrow");
    assert_eq!(mem.deref(&r[0]).expect("entry"), &boxed(99));
    assert_eq!(
        call(&mut mem, "table", "add_box", &ty, vec![t.clone(), Value::U64(1), boxed(5)]).map_err(|e| e.sub_status),
        Err(Some(ALREADY_EXISTS))
    );
    assert_eq!(
        call(&mut mem, "table", "remove_box", &ty, vec![t.clone(), Value::U64(1)]).expect("remove"),
        vec![boxed(99)]
    );
    assert_eq!(
        call(&mut mem, "table", "contains_box", &ty, vec![t, Value::U64(1)]).expect("contains"),
        vec![Value::Bool(false)]
    );
}

#[test]
fn installed_extensions_keep_tables_across_calls() {
    let box_t = datatype(1, "table", "Box", vec![Type::U64]);
    let ty = [Type::U64, Type::U64, box_t];
    let mut ext = NativeExtensions::new();
    let handle = with_extensions(&mut ext, || {
        // Call 1: create, add, borrow mutably and write (the entry stays parked in call 1's memory).
        let mut mem = Memory::default();
        let h = call(&mut mem, "table", "new_table_handle", &ty[..2], vec![]).expect("handle");
        let Value::Address(h) = h[0] else { panic!("handle") };
        let t = table_ref(&mut mem, h);
        call(&mut mem, "table", "add_box", &ty, vec![t.clone(), Value::U64(7), boxed(1)]).expect("add");
        let r = call(&mut mem, "table", "borrow_box_mut", &ty, vec![t, Value::U64(7)]).expect("borrow_mut");
        let Value::Ref(e) = &r[0] else { panic!("reference") };
        *mem.get_mut(e).expect("entry") = boxed(2);
        drop(mem);
        // Call 2: a new memory sees the write.
        let mut mem = Memory::default();
        let t = table_ref(&mut mem, h);
        let r = call(&mut mem, "table", "borrow_box", &ty, vec![t, Value::U64(7)]).expect("borrow");
        assert_eq!(mem.deref(&r[0]).expect("entry"), &boxed(2));
        h
    });
    let store = ext.get_mut::<TableStore>().expect("table store");
    let key = 7u64.to_le_bytes().to_vec();
    assert_eq!(store.entries(handle), Some(vec![(key, boxed(2))]));
    assert_eq!(store.new_tables().len(), 1);
}

#[test]
fn failed_transactions_leave_tables_as_they_were() {
    let box_t = datatype(1, "table", "Box", vec![Type::U64]);
    let ty = [Type::U64, Type::U64, box_t];
    let op = |mem: &mut Memory, t: &Value, f: &str, args: Vec<Value>| {
        let mut a = vec![t.clone()];
        a.extend(args);
        call(mem, "table", f, &ty, a).unwrap_or_else(|e| panic!("{f}: {e:?}"))
    };
    let new_table = |mem: &mut Memory| {
        let h = call(mem, "table", "new_table_handle", &ty[..2], vec![]).expect("handle");
        let Value::Address(h) = h[0] else { panic!("handle {h:?}") };
        (h, table_ref(mem, h))
    };
    let mut ext = NativeExtensions::new();
    // Transaction 1 commits: a table with keys 1..=3 and an empty table.
    let (h, empty) = run_transaction(&mut ext, || {
        let mut mem = Memory::default();
        let (h, t) = new_table(&mut mem);
        for k in 1..=3 {
            op(&mut mem, &t, "add_box", vec![Value::U64(k), boxed(10 * k)]);
        }
        Ok((h, new_table(&mut mem).0))
    })
    .expect("transaction 1");
    let key = |k: u64| k.to_le_bytes().to_vec();
    let committed = vec![(key(1), boxed(10)), (key(2), boxed(20)), (key(3), boxed(30))];
    // Transaction 2 changes every kind of thing, over two calls, then fails.
    let failed = run_transaction(&mut ext, || {
        let mut mem = Memory::default();
        let t = table_ref(&mut mem, h);
        op(&mut mem, &t, "add_box", vec![Value::U64(4), boxed(40)]);
        let r = op(&mut mem, &t, "borrow_box_mut", vec![Value::U64(1)]);
        let Value::Ref(e) = &r[0] else { panic!("reference") };
        *mem.get_mut(e).expect("entry") = boxed(11);
        op(&mut mem, &t, "remove_box", vec![Value::U64(2)]);
        drop(mem);
        let mut mem = Memory::default();
        let t = table_ref(&mut mem, h);
        op(&mut mem, &t, "add_box", vec![Value::U64(2), boxed(21)]);
        op(&mut mem, &t, "remove_box", vec![Value::U64(3)]);
        let e = table_ref(&mut mem, empty);
        call(&mut mem, "table", "destroy_empty_box", &ty, vec![e]).expect("destroy");
        new_table(&mut mem);
        Err::<(), _>(VmError::abort(1))
    });
    assert!(failed.is_err());
    let store = ext.get_mut::<TableStore>().expect("table store");
    assert_eq!(store.entries(h), Some(committed.clone()), "entries as transaction 1 left them");
    assert!(store.removed_tables().is_empty(), "the destroyed table is back");
    assert_eq!(store.new_tables().len(), 2, "the new table is gone");
    // Transaction 3 commits a change; it stays.
    run_transaction(&mut ext, || {
        let mut mem = Memory::default();
        let t = table_ref(&mut mem, h);
        op(&mut mem, &t, "remove_box", vec![Value::U64(1)]);
        Ok(())
    })
    .expect("transaction 3");
    let store = ext.get_mut::<TableStore>().expect("table store");
    assert_eq!(store.entries(h), Some(committed[1..].to_vec()));
}

#[test]
fn table_handles_follow_the_aptos_derivation() {
    // sha3_256(session hash || number of tables created so far, u32 big endian).
    let mut mem = Memory::default();
    for n in 0u32..3 {
        let h = call(&mut mem, "table", "new_table_handle", &[Type::U64, Type::U64], vec![]).expect("handle");
        let mut d = sha3::Sha3_256::new();
        d.update([0u8; 32]);
        d.update(n.to_be_bytes());
        assert_eq!(h, vec![Value::Address(AccountAddress(d.finalize().into()))], "table {n}");
    }
}

#[test]
fn transaction_context_without_a_user_transaction() {
    // (function, args, expected returns | abort code): the default context
    // (zero session hash, chain 4, no user transaction).
    let auid = |n: u64| {
        let mut d = sha3::Sha3_256::new();
        d.update([0u8; 32]);
        d.update(n.to_le_bytes());
        d.update([0xFBu8]);
        Value::Address(AccountAddress(d.finalize().into()))
    };
    type Row = (&'static str, &'static str, Vec<Value>, Result<Vec<Value>, u64>);
    let rows: Vec<Row> = vec![
        ("transaction_context", "get_txn_hash", vec![], Ok(vec![Value::from_bytes(&[0; 32])])),
        ("transaction_context", "generate_unique_address", vec![], Ok(vec![auid(1)])),
        ("transaction_context", "generate_unique_address", vec![], Ok(vec![auid(2)])),
        // error::invalid_state(ETRANSACTION_CONTEXT_NOT_AVAILABLE)
        ("transaction_context", "sender_internal", vec![], Err(0x3_0001)),
        ("transaction_context", "gas_payer_internal", vec![], Err(0x3_0001)),
        ("transaction_context", "monotonically_increasing_counter_internal", vec![Value::U64(5)], Err(0x3_0001)),
        (
            "transaction_context",
            "monotonically_increasing_counter_internal_for_test_only",
            vec![],
            Ok(vec![Value::U128(2)]),
        ),
        ("type_info", "chain_id_internal", vec![], Ok(vec![Value::U8(4)])),
    ];
    // One memory = one call = one transaction.
    let mut mem = Memory::default();
    for (m, f, args, expected) in rows {
        let r = call(&mut mem, m, f, &[], args);
        match expected {
            Ok(v) => assert_eq!(r.expect(f), v, "{m}::{f}"),
            Err(code) => assert_eq!(abort_code(r), Some(code), "{m}::{f}"),
        }
    }
}

#[test]
fn aggregator_v2_bounds_and_types() {
    let mut mem = Memory::default();
    let agg = call(&mut mem, "aggregator_v2", "create_aggregator", &[Type::U64], vec![Value::U64(10)]).expect("create");
    assert_eq!(agg, vec![Value::Struct(vec![Value::U64(0), Value::U64(10)])]);
    mem.locals.push(agg[0].clone());
    let a = Value::Ref(Reference::new(RefRoot::Local(0)));
    let rows: Vec<(&str, u64, Value, u64)> = vec![
        // (native, operand, result, value afterwards)
        ("try_add", 7, Value::Bool(true), 7),
        ("try_add", 4, Value::Bool(false), 7),
        ("try_add", 3, Value::Bool(true), 10),
        ("try_sub", 11, Value::Bool(false), 10),
        ("is_at_least_impl", 10, Value::Bool(true), 10),
        ("is_at_least_impl", 11, Value::Bool(false), 10),
        ("try_sub", 10, Value::Bool(true), 0),
    ];
    for (f, x, want, after) in rows {
        let r = call(&mut mem, "aggregator_v2", f, &[Type::U64], vec![a.clone(), Value::U64(x)]).expect(f);
        assert_eq!(r, vec![want], "{f}({x})");
        assert_eq!(
            call(&mut mem, "aggregator_v2", "read", &[Type::U64], vec![a.clone()]).expect("read"),
            vec![Value::U64(after)]
        );
    }
    let r = call(&mut mem, "aggregator_v2", "create_unbounded_aggregator", &[Type::U128], vec![]).expect("unbounded");
    assert_eq!(r, vec![Value::Struct(vec![Value::U128(0), Value::U128(u128::MAX)])]);
    // EUNSUPPORTED_AGGREGATOR_TYPE for anything but u64 / u128.
    let r = call(&mut mem, "aggregator_v2", "create_unbounded_aggregator", &[Type::U8], vec![]);
    assert_eq!(abort_code(r), Some(0x03_0007));
    // EUNSUPPORTED_AGGREGATOR_SNAPSHOT_TYPE
    let r = call(&mut mem, "aggregator_v2", "create_snapshot", &[Type::U8], vec![Value::U8(1)]);
    assert_eq!(abort_code(r), Some(0x03_0005));
}

#[test]
fn object_and_signer_natives() {
    let mut mem = Memory::default();
    let (source, from) = (AccountAddress::from_u64(0xcafe), AccountAddress::from_u64(0xbeef));
    let r = call(
        &mut mem,
        "object",
        "create_user_derived_object_address_impl",
        &[],
        vec![Value::Address(source), Value::Address(from)],
    )
    .expect("derive");
    // sha3_256(source || derive_from || DERIVE_OBJECT_ADDRESS_FROM_OBJECT 0xFC)
    let mut d = sha3::Sha3_256::new();
    d.update(source.0);
    d.update(from.0);
    d.update([0xFCu8]);
    assert_eq!(r, vec![Value::Address(AccountAddress(d.finalize().into()))]);
    let s = call(&mut mem, "create_signer", "create_signer", &[], vec![Value::Address(source)]).expect("signer");
    assert_eq!(s, vec![Value::signer(source)]);
    mem.locals.push(s[0].clone());
    let sref = Value::Ref(Reference::new(RefRoot::Local(mem.locals.len() as u32 - 1)));
    assert_eq!(
        call(&mut mem, "permissioned_signer", "is_permissioned_signer_impl", &[], vec![sref.clone()]).expect("is"),
        vec![Value::Bool(false)]
    );
    // ENOT_PERMISSIONED_SIGNER
    assert_eq!(abort_code(call(&mut mem, "permissioned_signer", "permission_address", &[], vec![sref])), Some(3));
}

#[test]
fn bcs_sizes() {
    let mut mem = Memory::default();
    let none = Value::Variant(0, vec![]);
    let some = |n| Value::Variant(1, vec![Value::U64(n)]);
    for (t, want) in [(Type::U64, some(8)), (Type::Address, some(32)), (Type::Vector(Box::new(Type::U8)), none)] {
        assert_eq!(
            call(&mut mem, "bcs", "constant_serialized_size", std::slice::from_ref(&t), vec![]).expect("size"),
            vec![want],
            "{t}"
        );
    }
    mem.locals.push(Value::from_bytes(&[1, 2, 3]));
    let r = Value::Ref(Reference::new(RefRoot::Local(0)));
    let t = Type::Vector(Box::new(Type::U8));
    assert_eq!(call(&mut mem, "bcs", "serialized_size", &[t], vec![r]).expect("size"), vec![Value::U64(4)]);
}

#[test]
fn module_events_must_be_structs() {
    let r = call(&mut Memory::default(), "event", "write_module_event_to_store", &[Type::U64], vec![Value::U64(1)]);
    assert_eq!(r.map_err(|e| e.status), Err(StatusCode::INTERNAL_TYPE_ERROR));
}

#[test]
fn string_utils_formats_as_the_framework_tests_expect() {
    let option = |t: Type| datatype(1, "option", "Option", vec![t]);
    let string_t = datatype(1, "string", "String", vec![]);
    let s = |b: &[u8]| Value::Struct(vec![Value::from_bytes(b)]);
    let addr = |a: u64| Value::Address(AccountAddress::from_u64(a));
    // (type, value, canonicalize, single_line, include_int_type, text).
    // The first rows are string_utils.move's `test_format`; the rest follow
    // the native's rules (short / canonical `@` addresses, `0x` bytes,
    // escaped quotes, integer suffixes, one element per line off single-line).
    let rows: Vec<(Type, Value, bool, bool, bool, &str)> = vec![
        (Type::U64, Value::U64(1), false, true, false, "1"),
        (Type::Bool, Value::Bool(false), false, true, false, "false"),
        (Type::U256, Value::U256(1u8.into()), false, true, false, "1"),
        (
            Type::Vector(Box::new(Type::U64)),
            Value::Vector(vec![Value::U64(1), Value::U64(2), Value::U64(3)]),
            false,
            true,
            false,
            "[ 1, 2, 3 ]",
        ),
        (option(Type::U64), Value::Variant(0, vec![]), false, true, false, "None"),
        (option(Type::U64), Value::Variant(1, vec![Value::U64(1)]), false, true, false, "Some(1)"),
        (Type::U64, Value::U64(7), false, true, true, "7u64"),
        (Type::Vector(Box::new(Type::U8)), Value::from_bytes(&[1, 0xab]), false, true, false, "0x01ab"),
        (Type::Address, addr(0xcafe), false, true, false, "@0xcafe"),
        (
            Type::Address,
            addr(1),
            true,
            true,
            false,
            "@0000000000000000000000000000000000000000000000000000000000000001",
        ),
        (string_t, s(b"say \"hi\" \\ ok"), false, true, false, "\"say \\\"hi\\\" \\\\ ok\""),
        (Type::Vector(Box::new(Type::U64)), Value::Vector(vec![]), false, true, false, "[]"),
        (
            Type::Vector(Box::new(Type::Vector(Box::new(Type::U8)))),
            Value::Vector(vec![Value::from_bytes(&[1]), Value::from_bytes(&[2])]),
            false,
            false,
            false,
            "[\n  0x01,\n  0x02\n]",
        ),
    ];
    for (t, v, canonical, single, ints, want) in rows {
        mem_call_format(&t, v, canonical, single, ints, want);
    }
}

fn mem_call_format(t: &Type, v: Value, canonical: bool, single: bool, ints: bool, want: &str) {
    let mut mem = Memory::default();
    mem.locals.push(v);
    let r = Value::Ref(Reference::new(RefRoot::Local(0)));
    let args = vec![r, Value::Bool(false), Value::Bool(canonical), Value::Bool(single), Value::Bool(ints)];
    let out = call(&mut mem, "string_utils", "native_format", std::slice::from_ref(t), args).expect("native_format");
    assert_eq!(string(&out[0]), want, "format {t}");
}

#[test]
fn derived_strings_are_padded_to_their_delayed_field_width() {
    let mut mem = Memory::default();
    let s = |b: &[u8]| Value::Struct(vec![Value::from_bytes(b)]);
    // Width of a constant string: max(bcs size + 1, 20 digits + 2) = 22 for short ones.
    let r = call(&mut mem, "aggregator_v2", "create_derived_string", &[], vec![s(b"abc")]).expect("derived");
    assert_eq!(r, vec![Value::Struct(vec![s(b"abc"), Value::from_bytes(&[0; 22 - 4 - 1])])]);
    // EINPUT_STRING_LENGTH_TOO_LARGE past 1024 bytes.
    let r = call(&mut mem, "aggregator_v2", "create_derived_string", &[], vec![s(&[b'a'; 1025])]);
    assert_eq!(abort_code(r), Some(0x03_0008));
    // prefix + u64 snapshot + suffix: width = bcs size of (len + 20 digits) + 1.
    mem.locals.push(Value::Struct(vec![Value::U64(42)]));
    let snap = Value::Ref(Reference::new(RefRoot::Local(0)));
    let r = call(&mut mem, "aggregator_v2", "derive_string_concat", &[Type::U64], vec![s(b"#"), snap, s(b"!")])
        .expect("concat");
    let width = 1 + (2 + 20) + 1;
    assert_eq!(r, vec![Value::Struct(vec![s(b"#42!"), Value::from_bytes(&vec![0; width - 5 - 1])])]);
}

#[test]
fn aggregator_v1_limits_and_keys() {
    let mut mem = Memory::default();
    let table = AccountAddress::from_u64(0x7ab1e);
    // &mut AggregatorFactory { phantom_table: Table { handle } }
    mem.locals.push(Value::Struct(vec![Value::Struct(vec![Value::Address(table)])]));
    let factory = Value::Ref(Reference::new(RefRoot::Local(0)));
    let a = call(&mut mem, "aggregator_factory", "new_aggregator", &[], vec![factory, Value::U128(10)]).expect("new");
    // key = sha3_256(session hash || aggregators so far as u32 big endian)
    let mut d = sha3::Sha3_256::new();
    d.update([0u8; 32]);
    d.update(0u32.to_be_bytes());
    let key = AccountAddress(d.finalize().into());
    assert_eq!(a, vec![Value::Struct(vec![Value::Address(table), Value::Address(key), Value::U128(10)])]);
    mem.locals.push(a[0].clone());
    let agg = Value::Ref(Reference::new(RefRoot::Local(1)));
    // (native, operand, abort code, value afterwards): EADD_OVERFLOW 0x020001, ESUB_UNDERFLOW 0x020002.
    let rows: Vec<(&str, u128, Option<u64>, u128)> = vec![
        ("add", 7, None, 7),
        ("add", 4, Some(0x02_0001), 7),
        ("add", 3, None, 10),
        ("sub", 11, Some(0x02_0002), 10),
        ("sub", 10, None, 0),
    ];
    for (f, x, code, after) in rows {
        let r = call(&mut mem, "aggregator", f, &[], vec![agg.clone(), Value::U128(x)]);
        match code {
            None => assert_eq!(r.expect(f), vec![]),
            Some(c) => assert_eq!(abort_code(r), Some(c), "{f}({x})"),
        }
        assert_eq!(
            call(&mut mem, "aggregator", "read", &[], vec![agg.clone()]).expect("read"),
            vec![Value::U128(after)]
        );
    }
}

#[test]
fn hash_natives_match_the_standard_vectors() {
    // Digests of "" and "abc" (NIST / Keccak / BLAKE2 / RIPEMD reference vectors).
    let rows: &[(&str, &[u8], &str)] = &[
        ("keccak256", b"", "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"),
        ("keccak256", b"abc", "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"),
        ("sha2_512_internal", b"abc", "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"),
        ("sha3_512_internal", b"abc", "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0"),
        ("blake2b_256_internal", b"", "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8"),
        ("ripemd160_internal", b"abc", "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc"),
    ];
    for (f, input, want) in rows {
        let r = call(&mut Memory::default(), "aptos_hash", f, &[], vec![Value::from_bytes(input)]).expect(f);
        assert_eq!(r, vec![Value::from_bytes(&hex::decode(want).expect("hex"))], "{f}({input:?})");
    }
}

/// The natives ported to the flat native ABI (jit-abi.md, "Native ABI"):
/// each has a flat form, which the flat executors call instead of the tree
/// bridge. The conformance suites check that both forms agree.
#[test]
fn ported_natives_have_a_flat_form() {
    let r = movejit_aptos_natives::aptos_registry();
    let one = movejit_runtime::AccountAddress::from_u64(1);
    let ported = [
        ("table", "add_box"),
        ("table", "borrow_box"),
        ("table", "borrow_box_mut"),
        ("table", "contains_box"),
        ("table", "remove_box"),
        ("table", "destroy_empty_box"),
        ("table", "drop_unchecked_box"),
        ("event", "write_module_event_to_store"),
        ("event", "write_to_event_store"),
        ("object", "exists_at"),
        ("object", "create_user_derived_object_address_impl"),
        ("create_signer", "create_signer"),
        ("type_info", "type_of"),
        ("type_info", "type_name"),
        ("aggregator_v2", "try_add"),
        ("aggregator_v2", "try_sub"),
        ("aggregator_v2", "is_at_least_impl"),
        ("aggregator_v2", "read"),
        ("bcs", "to_bytes"),
        ("hash", "sha2_256"),
        ("hash", "sha3_256"),
        ("signer", "borrow_address"),
        ("string", "internal_check_utf8"),
        ("string", "internal_is_char_boundary"),
        ("string", "internal_sub_string"),
        ("string", "internal_index_of"),
        ("type_name", "get"),
        ("mem", "swap"),
        ("aptos_hash", "keccak256"),
        ("aptos_hash", "sha2_512_internal"),
        ("aptos_hash", "sha3_512_internal"),
        ("aptos_hash", "blake2b_256_internal"),
        ("aptos_hash", "ripemd160_internal"),
        ("aptos_hash", "sip_hash"),
        ("debug", "native_print"),
        ("from_bcs", "from_bytes"),
        ("bcs", "serialized_size"),
        ("bcs", "constant_serialized_size"),
        ("table", "new_table_handle"),
        ("aggregator_v2", "create_aggregator"),
        ("aggregator_v2", "create_unbounded_aggregator"),
        ("function_info", "load_function_impl"),
        ("transaction_context", "generate_unique_address"),
        ("transaction_context", "monotonically_increasing_counter_internal"),
        ("transaction_context", "monotonically_increasing_counter_internal_for_test_only"),
        ("cmp", "compare"),
        ("function_info", "is_identifier"),
        ("aggregator_v2", "snapshot"),
        ("aggregator_v2", "create_snapshot"),
        ("aggregator_v2", "copy_snapshot"),
        ("aggregator_v2", "string_concat"),
        ("aggregator_v2", "create_derived_string"),
        ("aggregator_v2", "derive_string_concat"),
        ("aggregator_v2", "read_derived_string"),
        ("aggregator_v2", "read_snapshot"),
        ("aggregator_factory", "new_aggregator"),
        ("aggregator", "add"),
        ("aggregator", "sub"),
        ("aggregator", "read"),
        ("aggregator", "destroy"),
    ];
    for (m, f) in ported {
        assert!(r.get(&one, m, f).expect("registered").flat().is_some(), "{m}::{f} has a flat form");
    }
    // What still goes through the tree bridge (`--nocapture` lists it).
    for name in r.tree_only() {
        println!("tree-only: {name}");
    }
}

/// Calls `0x1::module::function` under Aptos's v50 schedule: its result and
/// the execution gas it charged.
fn call_aptos(
    mem: &mut Memory,
    module: &str,
    function: &str,
    ty: &[Type],
    args: Vec<Value>,
) -> (VmResult<Vec<Value>>, u64) {
    let registry = aptos_registry();
    let f = registry.get(&FRAMEWORK, module, function).unwrap_or_else(|| panic!("{module}::{function} registered"));
    let mut gas = GasMeter::aptos(movejit_runtime::gas::aptos::AptosPricing::v50(), u64::MAX / 4);
    let r = f(&mut NativeContext { mem, gas: &mut gas, types: &Primitives }, ty, args);
    (r, gas.aptos_meter().expect("an Aptos meter").algebra.execution_used())
}

/// Each native's charge under the v50 schedule, by Aptos's formulas
/// (parameter values from `schedule-v50.json`), aborts included.
#[test]
fn framework_natives_charge_aptos_gas() {
    let box_u64 = datatype(1, "table", "Box", vec![Type::U64]);
    let bytes = |b: &[u8]| Value::from_bytes(b);
    type Row = (&'static str, &'static str, Vec<Type>, Vec<Value>, Option<u64>, u64);
    let rows: Vec<Row> = vec![
        // base 11020, then 180 per byte of the canonical name.
        ("type_info", "type_name", vec![Type::U64], vec![], None, 11020 + 180 * 3),
        (
            "type_info",
            "type_of",
            vec![box_u64.clone()],
            vec![],
            None,
            11020 + 180 * "0x1::table::Box<u64>".len() as u64,
        ),
        ("type_info", "type_of", vec![Type::U64], vec![], Some(1), 11020 + 180 * 3),
        ("aptos_hash", "keccak256", vec![], vec![bytes(b"abc")], None, 147040 + 1650 * 3),
        ("aptos_hash", "sip_hash", vec![], vec![bytes(b"hello")], None, 36760 + 730 * 5),
        ("aptos_hash", "ripemd160_internal", vec![], vec![bytes(b"")], None, 110280),
        ("create_signer", "create_signer", vec![], vec![Value::Address(FRAMEWORK)], None, 11020),
        ("transaction_context", "get_txn_hash", vec![], vec![], None, 7350),
        // The base, then the abort: no user transaction.
        ("transaction_context", "sender_internal", vec![], vec![], Some(0x3_0001), 7350),
        ("object", "create_user_derived_object_address_impl", vec![], vec![Value::Address(FRAMEWORK); 2], None, 147040),
        // A struct of one u64: 80 abstract units.
        ("event", "write_module_event_to_store", vec![box_u64.clone()], vec![boxed(1)], None, 200060 + 610 * 80),
        // The base, then a message that is not 32 bytes aborts.
        (
            "secp256k1",
            "ecdsa_recover_internal",
            vec![],
            vec![bytes(b"m"), Value::U8(0), bytes(&[0; 64])],
            Some(0x1_0001),
            5510,
        ),
        // A key of the wrong length: deserialized, never checked for small order.
        ("ed25519", "public_key_validate_internal", vec![], vec![bytes(&[0; 31])], None, 5510 + 1396880),
        // One value node, then 30 per byte of a byte vector.
        ("string_utils", "native_format", vec![Type::U64], fmt_args(Value::U64(7)), None, 11020),
        (
            "string_utils",
            "native_format",
            vec![Type::Vector(Box::new(Type::U8))],
            fmt_args(bytes(b"abc")),
            None,
            11020 + 30 * 3,
        ),
        ("bcs", "constant_serialized_size", vec![box_u64], vec![], None, 7350 + 400 * 2),
        ("function_info", "is_identifier", vec![], vec![bytes(b"abc")], None, 5510 + 30 * 3),
        // Three bytes do not deserialize: the base and one deserialization.
        ("bls12381", "validate_pubkey_internal", vec![], vec![bytes(&[1, 2, 3])], None, 5510 + 4006840),
        // No threshold byte to check: the base only.
        ("multi_ed25519", "public_key_validate_v2_internal", vec![], vec![bytes(&[])], None, 5510),
        ("ristretto255", "point_identity_internal", vec![], vec![], None, 5510),
        ("ristretto255", "scalar_from_u64_internal", vec![], vec![Value::U64(5)], None, 6430),
    ];
    for (module, function, ty, args, abort, expected) in rows {
        let (r, used) = call_aptos(&mut Memory::default(), module, function, &ty, args);
        match abort {
            None => assert!(r.is_ok(), "{module}::{function}: {r:?}"),
            Some(code) => assert_eq!(abort_code(r), Some(code), "{module}::{function}"),
        }
        assert_eq!(used, expected, "{module}::{function}<{ty:?}>");
    }
}

/// `native_format(&v, type_tag, canonicalize, single_line, include_int_types)`'s arguments.
fn fmt_args(v: Value) -> Vec<Value> {
    vec![v, Value::Bool(false), Value::Bool(false), Value::Bool(true), Value::Bool(false)]
}

/// Table natives: the base and per key byte on every call, and loading an
/// entry on its first access in a transaction (4096-byte pages of it when
/// it exists, from an earlier transaction).
#[test]
fn table_natives_charge_aptos_gas() {
    let box_t = datatype(1, "table", "Box", vec![Type::U64]);
    let ty = [Type::U64, Type::U64, box_t];
    let (key_bytes, load_base, load_base_new) = (360 * 8, 3023850, 3023850);
    let first_access_absent = 44110 + key_bytes + load_base + load_base_new;
    let again = 44110 + key_bytes + load_base;
    let mut ext = NativeExtensions::default();
    let mut mem = Memory::default();
    let h = run_transaction(&mut ext, || {
        let (h, used) = call_aptos(&mut mem, "table", "new_table_handle", &ty[..2], vec![]);
        assert_eq!(used, 36760);
        let Value::Address(h) = h?[0] else { panic!("a handle") };
        let t = table_ref(&mut mem, h);
        type Step = (&'static str, Vec<Value>, Option<u64>, u64);
        let steps: Vec<Step> = vec![
            ("contains_box", vec![Value::U64(1)], None, first_access_absent),
            ("add_box", vec![Value::U64(1), boxed(10)], None, again),
            ("add_box", vec![Value::U64(1), boxed(11)], Some(ALREADY_EXISTS), again),
            ("borrow_box", vec![Value::U64(2)], Some(NOT_FOUND), first_access_absent),
            ("remove_box", vec![Value::U64(2)], Some(NOT_FOUND), again),
        ];
        for (f, args, abort, expected) in steps {
            let mut a = vec![t.clone()];
            a.extend(args.clone());
            let (r, used) = call_aptos(&mut mem, "table", f, &ty, a);
            match abort {
                None => assert!(r.is_ok(), "{f}({args:?}): {r:?}"),
                Some(code) => assert_eq!(abort_code(r), Some(code), "{f}({args:?})"),
            }
            assert_eq!(used, expected, "{f}({args:?})");
        }
        Ok(h)
    })
    .expect("first transaction");
    let mut mem = Memory::default();
    run_transaction(&mut ext, || {
        let t = table_ref(&mut mem, h);
        // Entry 1 exists: its 8 bytes load as one page, and its value's
        // heap size (a `Box<u64>`: 80 units less its struct node, 40) is
        // used in memory; a second access loads nothing.
        for (f, loaded) in [("contains_box", true), ("borrow_box", false)] {
            let mut gas = GasMeter::aptos(movejit_runtime::gas::aptos::AptosPricing::v50(), u64::MAX / 4);
            let types = &Primitives;
            let args = vec![t.clone(), Value::U64(1)];
            let r = aptos_registry().get(&FRAMEWORK, "table", f).expect("registered")(
                &mut NativeContext { mem: &mut mem, gas: &mut gas, types },
                &ty,
                args,
            );
            assert!(r.is_ok(), "{f}: {r:?}");
            let a = gas.aptos_meter().expect("an Aptos meter");
            let load = if loaded { load_base_new + 1510 * 4096 } else { 0 };
            assert_eq!(a.algebra.execution_used(), 44110 + key_bytes + load_base + load, "{f}");
            assert_eq!(a.memory_used(), if loaded { 40 } else { 0 }, "{f}");
        }
        Ok(())
    })
    .expect("second transaction");
}

/// A value in a new local of `mem`, and a reference to it.
fn local_ref(mem: &mut Memory, v: Value) -> Value {
    let slot = mem.locals.len() as u32;
    mem.locals.push(v);
    Value::Ref(Reference::new(RefRoot::Local(slot)))
}

/// [`Primitives`], plus one module outside the special addresses:
/// `0xcafe::m`, of 100 bytes.
struct WithModule;

impl TypeInfo for WithModule {
    fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
        Primitives.layout_of(ty)
    }
    fn module_size(&self, id: &movejit_runtime::storage::ModuleId) -> VmResult<Option<u64>> {
        Ok((id.address == AccountAddress::from_u64(0xcafe) && &*id.name == "m").then_some(100))
    }
}

/// `FunctionInfo { module_address, module_name, function_name }`.
fn function_info(address: u64, module: &str, function: &str) -> Value {
    let string = |s: &str| Value::Struct(vec![Value::from_bytes(s.as_bytes())]);
    Value::Struct(vec![Value::Address(AccountAddress::from_u64(address)), string(module), string(function)])
}

/// `function_info::load_function_impl`: its base, then (Aptos's lazy
/// loader, `charge_native_result_load_module`) the function's module,
/// once per transaction and free at the special addresses; names that are
/// not identifiers abort after the base, a module that does not exist is a
/// linker error.
#[test]
fn load_function_charges_the_module_once() {
    let registry = aptos_registry();
    let f = registry.get(&FRAMEWORK, "function_info", "load_function_impl").expect("registered");
    let (base, module) = (5510, 744600 + 420 * 100);
    let mut mem = Memory::default();
    let mut gas = GasMeter::aptos(movejit_runtime::gas::aptos::AptosPricing::v50(), u64::MAX / 4);
    type Row = (Value, Result<(), StatusCode>, Option<u64>, u64);
    let rows: Vec<Row> = vec![
        (function_info(1, "coin", "transfer"), Ok(()), None, base),
        (function_info(0xcafe, "m", "f"), Ok(()), None, base + module),
        (function_info(0xcafe, "m", "g"), Ok(()), None, base),
        (function_info(0xcafe, "m", "1f"), Err(StatusCode::ABORTED), Some(1), base),
        (function_info(0xcafe, "m-", "f"), Err(StatusCode::ABORTED), Some(1), base),
        (function_info(0xbeef, "m", "f"), Err(StatusCode::LINKER_ERROR), None, base),
    ];
    for (info, status, sub_status, expected) in rows {
        let arg = local_ref(&mut mem, info.clone());
        let before = gas.aptos_meter().expect("an Aptos meter").algebra.execution_used();
        let r = f(&mut NativeContext { mem: &mut mem, gas: &mut gas, types: &WithModule }, &[], vec![arg]);
        let used = gas.aptos_meter().expect("an Aptos meter").algebra.execution_used() - before;
        assert_eq!(r.as_ref().map(|_| ()).map_err(|e| e.status), status, "{info:?}");
        assert_eq!(r.err().and_then(|e| e.sub_status), sub_status, "{info:?}");
        assert_eq!(used, expected, "{info:?}");
    }
}

/// `bcs::serialized_size`: the base and 360 per byte; when the value's
/// layout cannot be built (here: a type without one), Aptos charges its
/// failure price and aborts as `to_bytes` does (0x1C5).
#[test]
fn serialized_size_charges_its_failure_path() {
    let mut mem = Memory::default();
    let seven = local_ref(&mut mem, Value::U64(7));
    let (r, used) = call_aptos(&mut mem, "bcs", "serialized_size", &[Type::U64], vec![seven]);
    assert_eq!(r.expect("a size"), vec![Value::U64(8)]);
    assert_eq!(used, 7350 + 360 * 8);
    let flag = local_ref(&mut mem, Value::Bool(true));
    let (r, used) = call_aptos(&mut mem, "bcs", "serialized_size", &[Type::Bool], vec![flag]);
    assert_eq!(abort_code(r), Some(0x1C5));
    assert_eq!(used, 7350 + 36760);
}

/// [`Primitives`] whose every layout reaches module `0xcafe::m` (100 bytes).
struct LayoutsInCafe;

impl TypeInfo for LayoutsInCafe {
    fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
        Primitives.layout_of(ty)
    }
    fn layout_modules(&self, _: &Type) -> VmResult<Arc<[(movejit_runtime::storage::ModuleId, u64)]>> {
        let id = movejit_runtime::storage::ModuleId { address: AccountAddress::from_u64(0xcafe), name: "m".into() };
        Ok(Arc::new([(id, 100)]))
    }
}

/// `string_utils::native_format_list` builds each formatted element's
/// (annotated) layout, loading the modules it reaches: charged once per
/// transaction, on top of the formatting charges.
#[test]
fn format_list_charges_its_elements_layout_modules() {
    let nil = datatype(1, "string_utils", "NIL", vec![]);
    let cons = |t: Type, rest: Type| datatype(1, "string_utils", "Cons", vec![t, rest]);
    let ty = cons(Type::U64, cons(Type::U64, nil));
    let nil_v = Value::Struct(vec![Value::Bool(false)]);
    let list = Value::Struct(vec![Value::U64(1), Value::Struct(vec![Value::U64(2), nil_v])]);
    let registry = aptos_registry();
    let f = registry.get(&FRAMEWORK, "string_utils", "native_format_list").expect("registered");
    let run = |types: &dyn TypeInfo| {
        let mut mem = Memory::default();
        let fmt = local_ref(&mut mem, Value::from_bytes(b"{} {}"));
        let list = local_ref(&mut mem, list.clone());
        let mut gas = GasMeter::aptos(movejit_runtime::gas::aptos::AptosPricing::v50(), u64::MAX / 4);
        let r =
            f(&mut NativeContext { mem: &mut mem, gas: &mut gas, types }, std::slice::from_ref(&ty), vec![fmt, list]);
        assert_eq!(r.expect("formatted"), vec![movejit_runtime::Value::Struct(vec![Value::from_bytes(b"1 2")])]);
        gas.aptos_meter().expect("an Aptos meter").algebra.execution_used()
    };
    assert_eq!(run(&LayoutsInCafe) - run(&Primitives), 744600 + 420 * 100);
}

/// [`Primitives`], plus `0xcafe::m::Pair { a: Box<u64>, b: Box<u64> }`,
/// whose field types it tells.
struct WithPair;

impl TypeInfo for WithPair {
    fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
        match ty {
            Type::Datatype(id, _) if &*id.name == "Pair" => {
                let b = Primitives.layout_of(&datatype(1, "table", "Box", vec![Type::U64]))?;
                Ok(Layout::Struct(vec![b.clone(), b]))
            }
            t => Primitives.layout_of(t),
        }
    }
    fn struct_field_types(&self, ty: &Type) -> VmResult<Option<Vec<Type>>> {
        Ok(match ty {
            Type::Datatype(id, _) if &*id.name == "Pair" => Some(vec![datatype(1, "table", "Box", vec![Type::U64]); 2]),
            Type::Datatype(id, args) if &*id.name == "Box" => Some(args.clone()),
            _ => None,
        })
    }
}

/// `bcs::constant_serialized_size` counts the layout nodes it visits, a
/// struct type met again as one node (Aptos's
/// `ConstantSerializedSizeLocalCache`): `Pair` 1, the first `Box<u64>` 2,
/// the second 1.
#[test]
fn constant_serialized_size_counts_a_repeated_struct_once() {
    let registry = aptos_registry();
    let f = registry.get(&FRAMEWORK, "bcs", "constant_serialized_size").expect("registered");
    let pair = datatype(0xcafe, "m", "Pair", vec![]);
    let mut mem = Memory::default();
    let mut gas = GasMeter::aptos(movejit_runtime::gas::aptos::AptosPricing::v50(), u64::MAX / 4);
    let r = f(&mut NativeContext { mem: &mut mem, gas: &mut gas, types: &WithPair }, &[pair], vec![]);
    assert_eq!(r.expect("a size"), vec![Value::Variant(1, vec![Value::U64(16)])]);
    assert_eq!(gas.aptos_meter().expect("an Aptos meter").algebra.execution_used(), 7350 + 400 * 4);
}

/// One call of a native's flat form (or, when `tree`, its tree form) on
/// tree values under Aptos's schedule: results and referenced arguments
/// afterwards, or the error, and the gas used.
type Outcome = (Result<(Vec<Value>, Vec<Value>), String>, u64);

fn run_form(
    tree: bool,
    module: &str,
    function: &str,
    ty: &[Type],
    args: &[(Value, Layout, Option<bool>)],
    rets: &[(Layout, bool)],
) -> Outcome {
    let registry = aptos_registry();
    let f = registry.get(&FRAMEWORK, module, function).unwrap_or_else(|| panic!("{module}::{function} registered"));
    assert!(f.flat().is_some(), "{module}::{function} has a flat form");
    let mut gas = GasMeter::aptos(movejit_runtime::gas::aptos::AptosPricing::v50(), u64::MAX / 4);
    let r = movejit_runtime::flat::native_abi::run_on_values(&f, tree, &Primitives, &mut gas, ty, args, rets);
    (r.map_err(|e| format!("{e:?}")), gas.used())
}

/// The aggregator, `cmp::compare` and `function_info::is_identifier`
/// natives ported to the flat ABI give the same results, errors, abort
/// codes and gas on both forms, on the same inputs (aggregator v1: one
/// transcript per form, over its own session state).
#[test]
fn ported_aggregator_cmp_and_identifier_forms_agree() {
    let bytes = Layout::Vector(Box::new(Layout::U8));
    let string_layout = Layout::Struct(vec![bytes.clone()]);
    let s = |b: &[u8]| Value::Struct(vec![Value::from_bytes(b)]);
    let snapshot = |t: Layout| Layout::Struct(vec![t]);
    let derived = Layout::Struct(vec![string_layout.clone(), bytes.clone()]);
    let agg64 = Layout::Struct(vec![Layout::U64, Layout::U64]);
    let ordering = Layout::Enum(vec![vec![], vec![], vec![]]);
    let words = Layout::Vector(Box::new(Layout::U64));
    let w = |xs: &[u64]| Value::Vector(xs.iter().map(|x| Value::U64(*x)).collect());
    let a64 = |v: u64, m: u64| Value::Struct(vec![Value::U64(v), Value::U64(m)]);
    #[allow(clippy::type_complexity)]
    let cases: Vec<(&str, &str, Vec<Type>, Vec<(Value, Layout, Option<bool>)>, Vec<(Layout, bool)>, bool)> = vec![
        (
            "aggregator_v2",
            "snapshot",
            vec![Type::U64],
            vec![(a64(7, 10), agg64.clone(), Some(false))],
            vec![(snapshot(Layout::U64), false)],
            true,
        ),
        (
            "aggregator_v2",
            "create_snapshot",
            vec![Type::U64],
            vec![(Value::U64(42), Layout::U64, None)],
            vec![(snapshot(Layout::U64), false)],
            true,
        ),
        (
            "aggregator_v2",
            "create_snapshot",
            vec![Type::U8],
            vec![(Value::U8(4), Layout::U8, None)],
            vec![(snapshot(Layout::U8), false)],
            false,
        ),
        (
            "aggregator_v2",
            "copy_snapshot",
            vec![Type::U64],
            vec![(Value::Struct(vec![Value::U64(1)]), snapshot(Layout::U64), Some(false))],
            vec![(snapshot(Layout::U64), false)],
            false,
        ),
        (
            "aggregator_v2",
            "read_snapshot",
            vec![Type::U64],
            vec![(Value::Struct(vec![Value::U64(9)]), snapshot(Layout::U64), Some(false))],
            vec![(Layout::U64, false)],
            true,
        ),
        (
            "aggregator_v2",
            "create_derived_string",
            vec![],
            vec![(s(b"name #"), string_layout.clone(), None)],
            vec![(derived.clone(), false)],
            true,
        ),
        (
            "aggregator_v2",
            "create_derived_string",
            vec![],
            vec![(s(&[b'x'; 1025]), string_layout.clone(), None)],
            vec![(derived.clone(), false)],
            false,
        ),
        (
            "aggregator_v2",
            "derive_string_concat",
            vec![Type::U64],
            vec![
                (s(b"#"), string_layout.clone(), None),
                (Value::Struct(vec![Value::U64(12345)]), snapshot(Layout::U64), Some(false)),
                (s(b" of many"), string_layout.clone(), None),
            ],
            vec![(derived.clone(), false)],
            true,
        ),
        (
            "aggregator_v2",
            "derive_string_concat",
            vec![Type::U8],
            vec![
                (s(b"#"), string_layout.clone(), None),
                (Value::Struct(vec![Value::U8(1)]), snapshot(Layout::U8), Some(false)),
                (s(b""), string_layout.clone(), None),
            ],
            vec![(derived.clone(), false)],
            false,
        ),
        (
            "aggregator_v2",
            "read_derived_string",
            vec![],
            vec![(Value::Struct(vec![s(b"abc"), Value::from_bytes(&[0; 5])]), derived.clone(), Some(false))],
            vec![(string_layout.clone(), false)],
            true,
        ),
        (
            "function_info",
            "is_identifier",
            vec![],
            vec![(Value::from_bytes(b"transfer_2"), bytes.clone(), Some(false))],
            vec![(Layout::Bool, false)],
            true,
        ),
        (
            "function_info",
            "is_identifier",
            vec![],
            vec![(Value::from_bytes(b"2x"), bytes.clone(), Some(false))],
            vec![(Layout::Bool, false)],
            true,
        ),
        (
            "cmp",
            "compare",
            vec![Type::Vector(Box::new(Type::U64))],
            vec![(w(&[1, 2, 3]), words.clone(), Some(false)), (w(&[1, 2]), words.clone(), Some(false))],
            vec![(ordering.clone(), false)],
            true,
        ),
        (
            "cmp",
            "compare",
            vec![Type::U64],
            vec![(Value::U64(1), Layout::U64, Some(false)), (Value::U64(1), Layout::U64, Some(false))],
            vec![(ordering.clone(), false)],
            true,
        ),
    ];
    for (m, f, ty, args, rets, ok) in cases {
        let flat = run_form(false, m, f, &ty, &args, &rets);
        let tree = run_form(true, m, f, &ty, &args, &rets);
        assert_eq!(flat, tree, "{m}::{f} on {args:?}");
        assert_eq!(flat.0.is_ok(), ok, "{m}::{f}: {flat:?}");
        assert!(!ok || flat.1 > 0, "{m}::{f} charges gas");
    }

    // Aggregator v1: a transcript per form over its own session state.
    let v1 = Layout::Struct(vec![Layout::Address, Layout::Address, Layout::U128]);
    let factory = Layout::Struct(vec![Layout::Struct(vec![Layout::Address])]);
    let transcript = |tree: bool| {
        let mut ext = NativeExtensions::new();
        with_extensions(&mut ext, || {
            let mut out = Vec::new();
            let handle = Value::Struct(vec![Value::Struct(vec![Value::Address(AccountAddress::from_u64(0x77))])]);
            let created = run_form(
                tree,
                "aggregator_factory",
                "new_aggregator",
                &[],
                &[(handle, factory.clone(), Some(true)), (Value::U128(10), Layout::U128, None)],
                &[(v1.clone(), false)],
            );
            let agg = created.0.as_ref().expect("new_aggregator").0[0].clone();
            out.push(created);
            for (f, x) in [("add", 7), ("add", 4), ("sub", 8), ("sub", 1)] {
                out.push(run_form(
                    tree,
                    "aggregator",
                    f,
                    &[],
                    &[(agg.clone(), v1.clone(), Some(true)), (Value::U128(x), Layout::U128, None)],
                    &[],
                ));
                out.push(run_form(
                    tree,
                    "aggregator",
                    "read",
                    &[],
                    &[(agg.clone(), v1.clone(), Some(false))],
                    &[(Layout::U128, false)],
                ));
            }
            out.push(run_form(tree, "aggregator", "destroy", &[], &[(agg.clone(), v1.clone(), None)], &[]));
            out.push(run_form(
                tree,
                "aggregator",
                "read",
                &[],
                &[(agg, v1.clone(), Some(false))],
                &[(Layout::U128, false)],
            ));
            out
        })
    };
    let (flat, tree) = (transcript(false), transcript(true));
    assert_eq!(flat, tree, "aggregator v1 transcripts");
    let reads: Vec<_> = flat.iter().filter_map(|o| o.0.as_ref().ok()).filter_map(|r| r.0.first().cloned()).collect();
    assert!(reads.contains(&Value::U128(7)) && reads.contains(&Value::U128(6)), "{reads:?}");
    assert!(flat.iter().filter(|o| o.0.is_err()).count() >= 2, "the overflow, and the read after destroy, fail");
}
