//! Caller-given type arguments are checked before anything runs, the same
//! way on every executor (`Session::load_type`): struct arity at any depth,
//! no references or type parameters, known modules and datatypes, Aptos's
//! type depth (20) and size (128 nodes) limits, then the function's own
//! type-parameter count and constraints. Over `generics.move` of the Aptos
//! conformance suite.

use movejit_engine::{new_engine, EngineConfig, ExecutorKind};
use movejit_interp::runtime::{AccountAddress, GasMeter, InMemoryStorage, ModuleId, Type};
use std::path::PathBuf;

fn shared() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/aptos")
}

fn storage() -> InMemoryStorage {
    let mut st = InMemoryStorage::default();
    for p in ["modules/stdlib3p/vector.mv", "modules/generics/generics.mv"] {
        let bytes = std::fs::read(shared().join(p)).expect("module file");
        let m = movejit_format::decode_module(&bytes).expect("decodes");
        st.publish(ModuleId::new(*m.address(), m.name()), bytes);
    }
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
        (
            "wrap",
            vec![tag("0xcafe::generics::Box<u8, u64>")],
            "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH",
        ),
        (
            "wrap",
            vec![tag("0xcafe::generics::Box")],
            "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH",
        ),
        (
            "wrap",
            vec![tag("0xcafe::generics::Marker<u8>")],
            "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH",
        ),
        (
            "wrap",
            vec![tag(
                "vector<0xcafe::generics::Box<0xcafe::generics::Pair<u8>>>",
            )],
            "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH",
        ),
        (
            "wrap",
            vec![tag("0xcafe::generics::Tagged<0xcafe::generics::Box>")],
            "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH",
        ),
        // What a type tag cannot hold.
        ("wrap", vec![r(Type::U64)], "TYPE_RESOLUTION_FAILURE"),
        (
            "wrap",
            vec![Type::MutableReference(Box::new(Type::U64))],
            "TYPE_RESOLUTION_FAILURE",
        ),
        (
            "wrap",
            vec![Type::Vector(Box::new(r(Type::U8)))],
            "TYPE_RESOLUTION_FAILURE",
        ),
        ("wrap", vec![Type::TyParam(0)], "TYPE_RESOLUTION_FAILURE"),
        // Unknown datatypes and modules.
        (
            "wrap",
            vec![tag("0xcafe::generics::Nope")],
            "TYPE_RESOLUTION_FAILURE",
        ),
        ("wrap", vec![tag("0xcafe::missing::S")], "LINKER_ERROR"),
        (
            "wrap",
            vec![tag("vector<0xbeef::generics::Box<u8>>")],
            "LINKER_ERROR",
        ),
        // Depth: 20 levels pass (then marker's count fails), 21 do not.
        (
            "marker",
            vec![vectors(19, Type::U8)],
            "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH",
        ),
        (
            "marker",
            vec![vectors(20, Type::U8)],
            "VM_MAX_TYPE_DEPTH_REACHED",
        ),
        // Size: 128 nodes pass, 129 do not.
        (
            "marker",
            vec![vectors(1, pairs(7))],
            "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH",
        ),
        ("marker", vec![vectors(2, pairs(7))], "TOO_MANY_TYPE_NODES"),
        // The function's own count and constraints, after the arguments.
        ("wrap", vec![], "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH"),
        (
            "wrap",
            vec![Type::U8, Type::U8],
            "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH",
        ),
        (
            "wrap",
            vec![Type::U8, r(Type::U8)],
            "TYPE_RESOLUTION_FAILURE",
        ),
        ("marker", vec![box_u8], "NUMBER_OF_TYPE_ARGUMENTS_MISMATCH"),
        ("dup", vec![Type::Signer], "CONSTRAINT_NOT_SATISFIED"),
        (
            "dup",
            vec![vectors(1, Type::Signer)],
            "CONSTRAINT_NOT_SATISFIED",
        ),
    ]
}

#[test]
fn bad_type_arguments_fail_alike_on_every_executor() {
    let st = storage();
    let module = ModuleId::new(
        AccountAddress::parse("0xcafe").expect("address"),
        "generics",
    );
    let mut wrong = Vec::new();
    for executor in [
        ExecutorKind::Interpreter,
        ExecutorKind::Jit,
        ExecutorKind::Auto,
    ] {
        let engine = new_engine(EngineConfig {
            executor,
            ..EngineConfig::aptos()
        });
        for (function, ty_args, expect) in cases() {
            let args: Vec<Vec<u8>> = if function == "marker" {
                vec![]
            } else {
                vec![vec![0xff]]
            };
            let mut session = engine.new_session(&st);
            let got = match session.execute_function(
                &module,
                function,
                &ty_args,
                &args,
                &mut GasMeter::unmetered(),
            ) {
                Ok(_) => "EXECUTED",
                Err(e) => e.status.name(),
            };
            // The signature query checks the same things first.
            let sig = engine
                .new_session(&st)
                .function_signature(&module, function, &ty_args)
                .err()
                .map(|e| e.status.name());
            let sig_expect = Some(expect)
                .filter(|e| !["EXECUTED", "FAILED_TO_DESERIALIZE_ARGUMENT"].contains(e));
            let names: Vec<String> = ty_args.iter().map(|t| t.to_string()).collect();
            let call = format!("{executor:?} {function}<{}>", names.join(", "));
            if got != expect {
                wrong.push(format!("{call}: expected {expect}, got {got}"));
            }
            if sig != sig_expect {
                wrong.push(format!(
                    "{call}: function_signature gives {sig:?}, expected {sig_expect:?}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
