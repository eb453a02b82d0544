//! `string_utils::native_format_list` with the expectations of the
//! framework's own Move tests (`string_utils.move`: `test_format_list`,
//! `test_format_list_to_many_vals`, `..._to_few_vals`,
//! `test_format_unclosed_braces`, `..._unclosed_braces_2`,
//! `..._unopened_braces`, `test_format_escape_braces_works`), called
//! directly and through the framework's `format1..4` on the tree and flat
//! interpreters and the JIT.

mod common;

use common::framework::{bytes_arg, Framework};
use movejit_aptos_natives::native_format_list;
use movejit_engine::runtime::{AccountAddress, DatatypeId, StatusCode, Type, Value, VmError};
use std::sync::Arc;

fn framework_type(module: &str, name: &str, args: Vec<Type>) -> Type {
    Type::Datatype(
        Arc::new(DatatypeId { address: AccountAddress::from_u64(1), module: module.into(), name: name.into() }),
        args,
    )
}

/// `Cons<T0, Cons<T1, .. NIL>>` over `items` (type, value).
fn list(items: Vec<(Type, Value)>) -> (Type, Value) {
    let mut ty = framework_type("string_utils", "NIL", vec![]);
    let mut val = Value::Struct(vec![Value::Bool(false)]);
    for (t, v) in items.into_iter().rev() {
        ty = framework_type("string_utils", "Cons", vec![t, ty]);
        val = Value::Struct(vec![v, val]);
    }
    (ty, val)
}

fn string(s: &str) -> (Type, Value) {
    (framework_type("string", "String", vec![]), Value::Struct(vec![Value::from_bytes(s.as_bytes())]))
}

fn u64s(v: &[u64]) -> Vec<(Type, Value)> {
    v.iter().map(|&x| (Type::U64, Value::U64(x))).collect()
}

const EARGS_MISMATCH: u64 = 1;
const EINVALID_FORMAT: u64 = 2;

fn abort_code(e: &VmError) -> Option<u64> {
    (e.status == StatusCode::ABORTED).then_some(e.sub_status).flatten()
}

#[test]
fn format_list_as_the_framework_tests_expect() {
    type Row = (&'static str, Vec<(Type, Value)>, Result<&'static str, u64>);
    let rows: Vec<Row> = vec![
        (
            "a = {} b = {} c = {}",
            [u64s(&[1, 2]), vec![string("My string")]].concat(),
            Ok("a = 1 b = 2 c = \"My string\""),
        ),
        ("a = {} b = {} c = {}", u64s(&[1, 2, 3, 4]), Err(EARGS_MISMATCH)),
        ("a = {} b = {} c = {}", u64s(&[1, 2]), Err(EARGS_MISMATCH)),
        ("a = {} b = {} c = {", u64s(&[1, 2, 3]), Err(EINVALID_FORMAT)),
        ("a = {} b = { c = {}", u64s(&[1, 2, 3]), Err(EINVALID_FORMAT)),
        ("a = } b = {} c = {}", u64s(&[1, 2, 3]), Err(EINVALID_FORMAT)),
        ("{{a = {} b = {} c = {}}}", u64s(&[1, 2, 3]), Ok("{a = 1 b = 2 c = 3}")),
        // Beyond the framework's tests: no placeholders, nested values,
        // errors found left to right (a bad brace before the list runs out).
        ("plain", vec![], Ok("plain")),
        ("", vec![], Ok("")),
        ("{}", vec![], Err(EARGS_MISMATCH)),
        ("x}{}", vec![], Err(EINVALID_FORMAT)),
        (
            "{} {}",
            vec![
                (Type::Vector(Box::new(Type::U64)), Value::Vector(vec![Value::U64(1), Value::U64(2)])),
                (Type::Address, Value::Address(AccountAddress::from_u64(0xcafe))),
            ],
            Ok("[ 1, 2 ] @0xcafe"),
        ),
        ("é{}", vec![(Type::Vector(Box::new(Type::U8)), Value::from_bytes(&[0xab]))], Ok("é0xab")),
    ];
    for (fmt, items, want) in rows {
        let (ty, val) = list(items);
        let got = native_format_list(fmt.as_bytes(), &ty, &val);
        match want {
            Ok(s) => assert_eq!(got.expect(fmt), s, "{fmt}"),
            Err(code) => assert_eq!(got.as_ref().map_err(abort_code), Err(Some(code)), "{fmt}"),
        }
    }
    // A format that is not UTF-8.
    let (ty, val) = list(vec![]);
    assert_eq!(native_format_list(&[0xff], &ty, &val).map_err(|e| abort_code(&e)), Err(Some(EINVALID_FORMAT)));
    // A list of another module's `Cons` (framework test `test_format_list_wrong_type`).
    let fake = Type::Datatype(
        Arc::new(DatatypeId { address: AccountAddress::from_u64(0xcafe), module: "m".into(), name: "Cons".into() }),
        vec![Type::U64, framework_type("string_utils", "NIL", vec![])],
    );
    let r =
        native_format_list(b"{}", &fake, &Value::Struct(vec![Value::U64(1), Value::Struct(vec![Value::Bool(false)])]));
    assert_eq!(r.map_err(|e| abort_code(&e)), Err(Some(EARGS_MISMATCH)));
}

/// Calls the framework's `format1..4` (their format argument is a reference).
const WRAPPER: &str = "
module 0xcafe::format_calls

public fun f2(fmt: vector<u8>, a: u64, b: u64): 0x1::string::String
    borrow_loc fmt
    move_loc a
    move_loc b
    call 0x1::string_utils::format2<u64, u64>
    ret

public fun f3(fmt: vector<u8>, a: u64, b: u64, s: vector<u8>): 0x1::string::String
    borrow_loc fmt
    move_loc a
    move_loc b
    move_loc s
    call 0x1::string::utf8
    call 0x1::string_utils::format3<u64, u64, 0x1::string::String>
    ret

public fun f4(fmt: vector<u8>, a: u64, b: u64, c: u64, d: u64): 0x1::string::String
    borrow_loc fmt
    move_loc a
    move_loc b
    move_loc c
    move_loc d
    call 0x1::string_utils::format4<u64, u64, u64, u64>
    ret

public fun mixed(fmt: vector<u8>, v: vector<u64>, a: address, o: bool): 0x1::string::String
    borrow_loc fmt
    move_loc v
    move_loc a
    move_loc o
    call 0x1::string_utils::format3<vector<u64>, address, bool>
    ret
";

#[test]
fn framework_format_functions_agree_on_every_executor() {
    let fw = Framework::with_wrapper(WRAPPER);
    let u = |x: u64| x.to_le_bytes().to_vec();
    let text = |s: &str| Ok(vec![bytes_arg(s.as_bytes())]);
    let aborted = |code: u64| Err((StatusCode::ABORTED, Some(code)));
    type Row = (&'static str, Vec<Vec<u8>>, common::framework::Outcome);
    let fmt = |s: &str| bytes_arg(s.as_bytes());
    let rows: Vec<Row> = vec![
        (
            "f3",
            vec![fmt("a = {} b = {} c = {}"), u(1), u(2), bytes_arg(b"My string")],
            text("a = 1 b = 2 c = \"My string\""),
        ),
        ("f4", vec![fmt("a = {} b = {} c = {}"), u(1), u(2), u(3), u(4)], aborted(EARGS_MISMATCH)),
        ("f2", vec![fmt("a = {} b = {} c = {}"), u(1), u(2)], aborted(EARGS_MISMATCH)),
        ("f3", vec![fmt("a = {} b = {} c = {"), u(1), u(2), bytes_arg(b"3")], aborted(EINVALID_FORMAT)),
        ("f3", vec![fmt("a = {} b = { c = {}"), u(1), u(2), bytes_arg(b"3")], aborted(EINVALID_FORMAT)),
        ("f3", vec![fmt("a = } b = {} c = {}"), u(1), u(2), bytes_arg(b"3")], aborted(EINVALID_FORMAT)),
        ("f4", vec![fmt("{{a = {} b = {} c = {} d = {}}}"), u(1), u(2), u(3), u(4)], text("{a = 1 b = 2 c = 3 d = 4}")),
        ("f2", vec![fmt("{}+{}"), u(u64::MAX), u(0)], text("18446744073709551615+0")),
        (
            "mixed",
            vec![
                fmt("v={} a={} o={}"),
                [vec![2], u(7), u(8)].concat(),
                AccountAddress::from_u64(0xcafe).0.to_vec(),
                vec![1],
            ],
            text("v=[ 7, 8 ] a=@0xcafe o=true"),
        ),
    ];
    for (f, args, want) in rows {
        let got = fw.call_everywhere(&format!("0xcafe::format_calls::{f}"), &args);
        assert_eq!(got, want, "{f}");
    }
}
