//! Caller-given type arguments are checked before anything runs, the same
//! way on every executor (`Session::load_type`): struct arity at any depth,
//! no references or type parameters, known modules and datatypes, datatype
//! constraints, Aptos's type depth (20) and size (128 nodes) limits, then
//! the function's own type-parameter count and constraints; and arguments
//! nest no deeper than code can build values.

use movejit_engine::runtime::{AccountAddress, GasMeter, InMemoryStorage, ModuleId, StatusCode, Type};
use movejit_engine::EUSER_TYPE_LOADING_FAILURE;
use movejit_engine::{new_engine, EngineConfig, ExecutorKind};
use std::path::PathBuf;

fn shared() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/aptos")
}

/// `id<T>(x: T): T` returns its argument; `pack<T>(x: T): vector<T>` builds
/// a value one level deeper than its argument; `Copyable` constrains its
/// type parameter.
const DEEP: &str = "module 0xcafe::deep

struct Copyable<T0: copy> has drop
    x: T0

public fun id<T0>(x: T0): T0
    move_loc x
    ret

public fun pack<T0>(x: T0): vector<T0>
    move_loc x
    vec_pack <T0> 1
    ret
";

/// The conformance suite's `generics` module and `DEEP` (assembled).
fn storage() -> InMemoryStorage {
    let mut st = InMemoryStorage::default();
    for p in ["modules/stdlib3p/vector.mv", "modules/generics/generics.mv"] {
        let bytes = std::fs::read(shared().join(p)).expect("module file");
        let m = movejit_format::decode_module(&bytes).expect("decodes");
        st.publish(ModuleId::new(*m.address(), m.name()), bytes);
    }
    movejit_testkit::masm::publish_masm(&mut st, DEEP);
    st
}

fn tag(s: &str) -> Type {
    Type::parse_tag(s).unwrap_or_else(|| panic!("type tag {s}"))
}

fn vectors(n: usize, inner: Type) -> Type {
    (0..n).fold(inner, |t, _| Type::Vector(Box::new(t)))
}

/// A full binary tree of `Pair`s with `u8` leaves: 2^height - 1 nodes.
fn pairs(height: u32) -> Type {
    if height <= 1 {
        return Type::U8;
    }
    let t = pairs(height - 1);
    match tag("0xcafe::generics::Pair<u8, u8>") {
        Type::Datatype(id, _) => Type::Datatype(id, vec![t.clone(), t]),
        _ => unreachable!(),
    }
}

/// (function, type arguments, expected status). `wrap<T>(x: T)` is called
/// with one byte, `marker()` takes no type argument, `dup<T: copy>`.
fn cases() -> Vec<(&'static str, Vec<Type>, &'static str)> {
    let r = |t: Type| Type::Reference(Box::new(t));
    let box_u8 = tag("0xcafe::generics::Box<u8>");
    vec![
        ("wrap", vec![Type::U8], "EXECUTED"),
        ("wrap", vec![box_u8.clone()], "EXECUTED"),
        ("wrap", vec![Type::U64], "FAILED_TO_DESERIALIZE_ARGUMENT"),
        // Datatype arity, at any depth.
        ("wrap", vec![tag("0xcafe::generics::Box<u8, u64>")], "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH"),
        ("wrap", vec![tag("0xcafe::generics::Box")], "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH"),
        ("wrap", vec![tag("0xcafe::generics::Marker<u8>")], "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH"),
        (
            "wrap",
            vec![tag("vector<0xcafe::generics::Box<0xcafe::generics::Pair<u8>>>")],
            "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH",
        ),
        ("wrap", vec![tag("0xcafe::generics::Tagged<0xcafe::generics::Box>")], "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH"),
        // What a type tag cannot hold.
        ("wrap", vec![r(Type::U64)], "TYPE_RESOLUTION_FAILURE"),
        ("wrap", vec![Type::MutableReference(Box::new(Type::U64))], "TYPE_RESOLUTION_FAILURE"),
        ("wrap", vec![Type::Vector(Box::new(r(Type::U8)))], "TYPE_RESOLUTION_FAILURE"),
        ("wrap", vec![Type::TyParam(0)], "TYPE_RESOLUTION_FAILURE"),
        // Unknown datatypes and modules.
        ("wrap", vec![tag("0xcafe::generics::Nope")], "TYPE_RESOLUTION_FAILURE"),
        ("wrap", vec![tag("0xcafe::missing::S")], "LINKER_ERROR"),
        ("wrap", vec![tag("vector<0xbeef::generics::Box<u8>>")], "LINKER_ERROR"),
        // Depth: 20 levels pass (then marker's count fails), 21 do not.
        ("marker", vec![vectors(19, Type::U8)], "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH"),
        ("marker", vec![vectors(20, Type::U8)], "VM_MAX_TYPE_DEPTH_REACHED"),
        // Size: 128 nodes pass, 129 do not.
        ("marker", vec![vectors(1, pairs(7))], "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH"),
        ("marker", vec![vectors(2, pairs(7))], "TOO_MANY_TYPE_NODES"),
        // The function's own count and constraints, after the arguments.
        ("wrap", vec![], "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH"),
        ("wrap", vec![Type::U8, Type::U8], "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH"),
        ("wrap", vec![Type::U8, r(Type::U8)], "TYPE_RESOLUTION_FAILURE"),
        ("marker", vec![box_u8], "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH"),
        ("dup", vec![Type::Signer], "CONSTRAINT_NOT_SATISFIED"),
        ("dup", vec![vectors(1, Type::Signer)], "CONSTRAINT_NOT_SATISFIED"),
    ]
}

#[test]
fn bad_type_arguments_fail_alike_on_every_executor() {
    let st = storage();
    let module = ModuleId::new(AccountAddress::parse("0xcafe").expect("address"), "generics");
    let mut wrong = Vec::new();
    for executor in [ExecutorKind::Interpreter, ExecutorKind::Jit, ExecutorKind::Auto] {
        let engine = new_engine(EngineConfig { executor, ..EngineConfig::aptos() });
        for (function, ty_args, expect) in cases() {
            let args: Vec<Vec<u8>> = if function == "marker" { vec![] } else { vec![vec![0xff]] };
            let mut session = engine.new_session(&st);
            let got = match session.execute_function(&module, function, &ty_args, &args, &mut GasMeter::unmetered()) {
                Ok(_) => "EXECUTED",
                Err(e)
                    if e.status == StatusCode::TYPE_RESOLUTION_FAILURE
                        && e.sub_status != Some(EUSER_TYPE_LOADING_FAILURE) =>
                {
                    "TYPE_RESOLUTION_FAILURE without its user sub-status"
                }
                Err(e) => e.status.name(),
            };
            // The signature query checks the same things first.
            let sig =
                engine.new_session(&st).function_signature(&module, function, &ty_args).err().map(|e| e.status.name());
            let sig_expect = Some(expect).filter(|e| !["EXECUTED", "FAILED_TO_DESERIALIZE_ARGUMENT"].contains(e));
            let names: Vec<String> = ty_args.iter().map(|t| t.to_string()).collect();
            let call = format!("{executor:?} {function}<{}>", names.join(", "));
            if got != expect {
                wrong.push(format!("{call}: expected {expect}, got {got}"));
            }
            if sig != sig_expect {
                wrong.push(format!("{call}: function_signature gives {sig:?}, expected {sig_expect:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// BCS of a `vector^levels<u8>` value nesting all the way down (one
/// element per level, `7` innermost), or whose innermost vector is empty.
fn nested_bcs(levels: usize, empty_innermost: bool) -> Vec<u8> {
    let mut b = vec![1u8; levels - 1];
    b.extend(if empty_innermost { vec![0] } else { vec![1, 7] });
    b
}

/// Arguments nest as deep as code can build values, not deeper: the value
/// depth limit (128, a `u8` counting 1) bounds both, with the same status
/// on every executor. Type arguments this deep need a raised type-argument
/// depth limit (Aptos's own is 20, which keeps them far below it).
#[test]
fn argument_depth_matches_what_code_builds() {
    let st = storage();
    let module = ModuleId::new(AccountAddress::parse("0xcafe").expect("address"), "deep");
    let max = movejit_engine::runtime::Limits::default().max_value_depth;
    // (function, vector levels of T, innermost empty, expected status)
    let cases = [
        ("id", max - 1, false, "EXECUTED"),
        ("id", max - 1, true, "EXECUTED"),
        ("id", max, false, "VM_MAX_VALUE_DEPTH_REACHED"),
        ("id", max, true, "VM_MAX_VALUE_DEPTH_REACHED"),
        ("id", max + 1, true, "VM_MAX_VALUE_DEPTH_REACHED"),
        ("pack", max - 2, false, "EXECUTED"),
        ("pack", max - 1, false, "VM_MAX_VALUE_DEPTH_REACHED"),
    ];
    let mut wrong = Vec::new();
    for executor in [ExecutorKind::Interpreter, ExecutorKind::Jit, ExecutorKind::Auto] {
        let mut config = EngineConfig { executor, ..EngineConfig::aptos() };
        config.limits.max_type_arg_depth = 256;
        config.limits.max_type_arg_nodes = None;
        let engine = new_engine(config);
        for (function, levels, empty, expect) in cases {
            let ty = vectors(levels, Type::U8);
            let arg = nested_bcs(levels, empty);
            let r = engine.new_session(&st).execute_function(
                &module,
                function,
                &[ty],
                std::slice::from_ref(&arg),
                &mut GasMeter::unmetered(),
            );
            let got = match &r {
                Ok(out) if function == "id" && out.returns != [arg] => "WRONG_RETURN",
                Ok(_) => "EXECUTED",
                Err(e) => e.status.name(),
            };
            if got != expect {
                wrong.push(format!("{executor:?} {function}<vector^{levels}<u8>> (empty innermost: {empty}): expected {expect}, got {got}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
