//! Hand-written `.masm` units: assembled, their structure checked, and taken
//! through serialize → decode → disassemble → assemble.

use movejit_format::*;
use movejit_masm::normalize::{first_difference, normalize_module};
use movejit_masm::{assemble, disassemble_module, AsmErrorKind, Assembled, Pos};

fn module(src: &str) -> CompiledModule {
    match assemble(src) {
        Ok(Assembled::Module(m)) => m,
        Ok(Assembled::Script(_)) => panic!("expected a module"),
        Err(e) => panic!("assemble failed: {e}"),
    }
}

/// serialize → decode → disassemble → assemble gives the same module.
fn assert_stable(m: &CompiledModule) {
    let decoded = decode_module(&serialize_module(m)).expect("serialized module decodes");
    let text = disassemble_module(&decoded).expect("disassembles");
    let again = module(&text);
    let (a, b) = (normalize_module(m).unwrap(), normalize_module(&again).unwrap());
    assert_eq!(first_difference(&a, &b), None, "text:\n{text}");
    assert_eq!(first_difference(&a, &normalize_module(&decoded).unwrap()), None);
}

fn name(m: &CompiledModule, i: IdentifierIndex) -> &str {
    &m.identifiers[i.idx()]
}

const SUI_SWITCH: &str = "
version 7
flavour sui
module 0x2::colors

enum Color<T> has copy + drop
  Red
  Green
    level: T
  Blue
    r: u8
    g: u8

// The jump table is written inline: one label per variant, in tag order.
public fun score(c: &Color<u64>): u64
    local g: &u64
    copy_loc c
    variant_switch Color, [red, green, blue]
red: move_loc c
    unpack_variant_ref Color<u64>, Red
    ld_u64 1
    ret
green:
    move_loc c
    unpack_variant_ref Color<u64>, Green
    st_loc g
    move_loc g
    read_ref
    ret
blue: move_loc c
    pop
    ld_u64 3
    ret

public fun make(): Color<u64>
    ld_u8 1
    ld_u8 2
    pack_variant Color<u64>, Blue
    ret
";

#[test]
fn sui_enum_and_jump_table() {
    let m = module(SUI_SWITCH);
    assert_eq!((m.version, m.flavour), (7, Flavour::Sui));
    assert!(m.struct_defs.is_empty(), "Sui enums live in the enum table");
    assert_eq!(m.enum_defs.len(), 1);
    let e = &m.enum_defs[0];
    let variants: Vec<&str> = e.variants.iter().map(|v| name(&m, v.name)).collect();
    assert_eq!(variants, ["Red", "Green", "Blue"]);
    assert_eq!(e.variants[2].fields.len(), 2);
    let h = &m.struct_handles[e.enum_handle.idx()];
    assert_eq!(h.abilities, AbilitySet(AbilitySet::COPY | AbilitySet::DROP));
    assert_eq!(h.type_parameters.len(), 1);

    let score = m.function_defs[m.find_function("score").unwrap().idx()].code.as_ref().unwrap();
    assert_eq!(
        score.jump_tables,
        vec![VariantJumpTable { head_enum: EnumDefinitionIndex(0), jump_table: vec![2, 6, 12] }]
    );
    assert_eq!(score.code[1], Bytecode::VariantSwitch(VariantJumpTableIndex(0)));
    assert!(matches!(score.code[3], Bytecode::SuiUnpackVariantGenericImmRef(_)));
    assert_eq!(m.signatures[score.locals.idx()].0, vec![SignatureToken::Reference(Box::new(SignatureToken::U64))]);
    let make = m.function_defs[m.find_function("make").unwrap().idx()].code.as_ref().unwrap();
    let Bytecode::SuiPackVariantGeneric(vi) = make.code[2] else { panic!("{:?}", make.code[2]) };
    assert_eq!(m.variant_instantiation_handles[vi.0 as usize].variant, 2);
    assert_stable(&m);

    let text = disassemble_module(&m).unwrap();
    assert!(text.contains("variant_switch Color, [L0, L1, L2]"), "{text}");
    assert!(text.contains("flavour sui"), "{text}");
}

#[test]
fn aptos_enum_struct_closure_and_imports() {
    let m = module(
        "
version 8
module 0xcafe::shapes
use 0x1::vector
    fun length<T0>(l0: &vector<T0>): u64
use 0x1::signer
    struct Dummy has drop
friend 0xcafe::other
metadata x\"6b6579\", x\"0102\"
const <vector<u8>> [1, 2, 3]

struct Counter has key
  n: u64

enum Shape has drop
  Circle
    r: u64
  Square
    r: u64

native struct Handle<phantom T: store> has drop

#[persistent] public fun area(s: &Shape): u64
    copy_loc s
    test_variant Shape, Circle
    br_false other
    move_loc s
    borrow_variant_field Shape, Circle::r, Square::r
    read_ref
    ret
other: move_loc s
    pop
    ld_u64 0
    ret

entry fun bump(a: address) acquires Counter
    copy_loc a
    mut_borrow_global Counter
    mut_borrow_field Counter, n
    pop
    ret

fun len(v: &vector<u8>): u64
    move_loc v
    call vector::length<u8>
    ret

fun adder(): |u64|u64 has drop
    ld_u64 1
    pack_closure add, 1
    ret

fun add(a: u64, b: u64): u64
    move_loc a
    move_loc b
    add
    ret

native fun hash(v: vector<u8>): vector<u8>
",
    );
    assert_eq!((m.version, m.flavour), (8, Flavour::Aptos));
    assert_eq!(m.name(), "shapes");
    assert_eq!(m.struct_defs.len(), 3);
    assert!(
        matches!(m.struct_defs[1].field_information, StructFieldInformation::DeclaredVariants(ref v) if v.len() == 2)
    );
    assert_eq!(m.struct_defs[2].field_information, StructFieldInformation::Native);
    let handle = &m.struct_handles[m.struct_defs[2].struct_handle.idx()];
    assert_eq!(
        handle.type_parameters,
        vec![StructTypeParameter { constraints: AbilitySet(AbilitySet::STORE), is_phantom: true }]
    );
    assert_eq!(m.friend_decls.len(), 1);
    assert_eq!(m.metadata, vec![Metadata { key: b"key".to_vec(), value: vec![1, 2] }]);
    assert_eq!(
        m.constant_pool,
        vec![Constant { type_: SignatureToken::Vector(Box::new(SignatureToken::U8)), data: vec![3, 1, 2, 3] }]
    );
    assert_eq!(m.variant_field_handles.len(), 1);
    assert_eq!(m.variant_field_handles[0].variants, vec![0, 1]);
    // Imported handles: vector::length, signer::Dummy.
    assert!(m.function_handles.iter().any(|h| name(&m, h.name) == "length"));
    assert!(m.struct_handles.iter().any(|h| name(&m, h.name) == "Dummy"));
    let area = m.function_handles.iter().find(|h| name(&m, h.name) == "area").unwrap();
    assert_eq!(area.attributes, vec![FunctionAttribute::Persistent]);
    let bump = &m.function_defs[m.find_function("bump").unwrap().idx()];
    assert!(bump.is_entry);
    assert_eq!(bump.acquires_global_resources, vec![StructDefinitionIndex(0)]);
    let hash = &m.function_defs[m.find_function("hash").unwrap().idx()];
    assert!(hash.is_native());
    let adder = &m.function_defs[m.find_function("adder").unwrap().idx()];
    assert!(matches!(adder.code.as_ref().unwrap().code[1], Bytecode::PackClosure(_, ClosureMask(1))));
    assert_stable(&m);
}

#[test]
fn access_specifiers_round_trip() {
    let m = module(
        "
version 9
module 0xcafe::acc
use 0x1::m
    struct R<T0> has key
    fun addr(l0: u64): address
struct S has key
  x: u64
public fun f(a: address, n: u64) access [reads S(a), !writes m::R<u64>(*), writes 0x1::*(0x2), reads 0x1::m::*(m::addr(n)), writes *(*)]
    ret
fun g() access []
    ret
",
    );
    let f = m.function_handles.iter().find(|h| name(&m, h.name) == "f").unwrap();
    let specs = f.access_specifiers.as_ref().unwrap();
    assert_eq!(specs.len(), 5);
    assert!(specs[1].negated && specs[1].kind == AccessKind::Writes);
    assert_eq!(specs[0].address, AddressSpecifier::Parameter(0, None));
    assert!(matches!(specs[3].address, AddressSpecifier::Parameter(1, Some(_))));
    let g = m.function_handles.iter().find(|h| name(&m, h.name) == "g").unwrap();
    assert_eq!(g.access_specifiers, Some(vec![]));
    assert_stable(&m);
}

#[test]
fn script_round_trip() {
    let src = "
version 9
script
use 0x1::coin
    fun transfer<T0>(l0: &signer, l1: address, l2: u64)
fun main<T0>(s: &signer, to: address)
    move_loc s
    move_loc to
    ld_u64 10
    call coin::transfer<T0>
    ret
";
    let Assembled::Script(s) = assemble(src).unwrap() else { panic!("expected a script") };
    assert_eq!(s.type_parameters.len(), 1);
    assert_eq!(s.signatures[s.parameters.idx()].0.len(), 2);
    assert_eq!(s.function_handles.len(), 1);
    assert_eq!(s.function_instantiations.len(), 1);
    let back = decode_script(&serialize_script(&s)).unwrap();
    let text = movejit_masm::disassemble_script(&back).unwrap();
    assert!(text.contains("call coin::transfer<T0>"), "{text}");
    assert_eq!(assemble(&text).unwrap(), Assembled::Script(back));
}

#[test]
fn default_version_follows_the_instructions() {
    let v = |src: &str| match assemble(src).unwrap() {
        Assembled::Module(m) => (m.version, m.flavour),
        Assembled::Script(s) => (s.version, s.flavour),
    };
    assert_eq!(v("module 0x1::a\nfun f()\n  ret\n"), (9, Flavour::Aptos));
    assert_eq!(
        v("module 0x1::a\nfun f(c: u64, m: vector<u8>)\n  move_loc c\n  move_loc m\n  abort_msg\n"),
        (10, Flavour::Aptos)
    );
    assert_eq!(v("flavour sui\nmodule 0x1::a\nfun f()\n  ret\n"), (7, Flavour::Sui));
    assert_eq!(v("version 6\nmodule 0x1::a\nfun f()\n  ret\n"), (6, Flavour::Common));
}

/// Bad input: every error is typed and points at the right line:column.
#[test]
fn errors_have_kind_and_position() {
    let cases: &[(&str, AsmErrorKind, (u32, u32))] = &[
        ("modul 0x1::m\n", AsmErrorKind::Syntax, (1, 1)),
        ("module 0x1::m\nfun f()\n    ld_u8 256\n    ret\n", AsmErrorKind::Operand, (3, 5)),
        ("module 0x1::m\nfun f()\n    branch nowhere\n", AsmErrorKind::Unresolved, (3, 5)),
        ("module 0x1::m\nfun f()\n    copy_loc x\n", AsmErrorKind::Unresolved, (3, 5)),
        ("module 0x1::m\nfun f()\n    frobnicate\n", AsmErrorKind::Unresolved, (3, 5)),
        ("module 0x1::m\nfun f(): u64\n    call 0x1::other::g\n", AsmErrorKind::Unresolved, (3, 10)),
        ("module 0x1::m\nfun f(): u64\n    ld_u64 1\n    ld_u64 2 3\n", AsmErrorKind::Syntax, (4, 14)),
        ("module 0x1::m\nfun f()\n  a: nop\n  a: ret\n", AsmErrorKind::Duplicate, (4, 6)),
        ("module 0x1::m\nfun f()\n    ld_const <u8> [1]\n", AsmErrorKind::Operand, (3, 5)),
        ("module 0x1::m\nfun f(\n", AsmErrorKind::Syntax, (2, 7)),
        ("module 0x1::m\nfun f()\n  ld_u8 1 ?\n", AsmErrorKind::Syntax, (3, 11)),
        ("version 6\nmodule 0x1::m\nfun f(): i8\n    ld_i8 -1\n    ret\n", AsmErrorKind::Unsupported, (4, 5)),
        ("module 0x1::m\nfun f()\n    variant_switch E, [a]\n", AsmErrorKind::Unresolved, (3, 20)),
        ("version 11\nmodule 0x1::m\n", AsmErrorKind::Unsupported, (1, 1)),
        ("flavour sui\nmodule 0x1::m\nfun f(): i8\n    ld_i8 1\n    ret\n", AsmErrorKind::Unsupported, (4, 5)),
        ("module 0x1::m\nenum E\nfun f()\n  ret\n", AsmErrorKind::Syntax, (2, 6)),
    ];
    for (src, kind, (line, col)) in cases {
        let e = assemble(src).expect_err(src);
        assert_eq!((e.kind, e.pos), (*kind, Pos { line: *line, col: *col }), "{src:?}: {e}");
    }
}

/// Truncated and line-deleted variants of real disassemblies never panic.
#[test]
fn mangled_text_gives_errors_not_panics() {
    let m = module(SUI_SWITCH);
    let text = disassemble_module(&m).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for skip in 0..lines.len() {
        let mangled: String =
            lines.iter().enumerate().filter(|(i, _)| *i != skip).map(|(_, l)| format!("{l}\n")).collect();
        let _ = assemble(&mangled);
    }
    for cut in 0..text.len() {
        if text.is_char_boundary(cut) {
            let _ = assemble(&text[..cut]);
        }
    }
    let deep = format!("module 0x1::m\nfun f(): {}u8{}\n  ret\n", "vector<".repeat(100_000), ">".repeat(100_000));
    assert!(assemble(&deep).is_err());
}

/// The comparator is not blind: changing one operand or one type is seen.
#[test]
fn comparator_sees_differences() {
    let m = module(SUI_SWITCH);
    let base = normalize_module(&m).unwrap();
    let mut changed = m.clone();
    let code = &mut changed.function_defs[1].code.as_mut().unwrap().code;
    code[0] = Bytecode::LdU8(9);
    assert!(first_difference(&base, &normalize_module(&changed).unwrap()).is_some());
    let mut changed = m.clone();
    changed.enum_defs[0].variants[2].fields[0].signature = SignatureToken::U16;
    assert!(first_difference(&base, &normalize_module(&changed).unwrap()).is_some());
    let mut changed = m.clone();
    changed.function_defs[0].code.as_mut().unwrap().jump_tables[0].jump_table.swap(0, 1);
    assert!(first_difference(&base, &normalize_module(&changed).unwrap()).is_some());
}

/// The assembler knows every mnemonic of the opcode table.
#[test]
fn every_mnemonic_is_known() {
    for &op in Opcode::ALL {
        let header = if op.aptos_byte().is_some() { "version 10\n" } else { "version 7\nflavour sui\n" };
        let src = format!("{header}module 0x1::m\nfun f()\n    {}\n    ret\n", op.mnemonic());
        if let Err(e) = assemble(&src) {
            assert!(!e.message.contains("unknown instruction"), "{op:?}: {e}");
        }
    }
}

/// move-asm's address aliases, module aliases and fully qualified names.
#[test]
fn address_and_module_aliases() {
    let m = module(
        "
address acc = 0x66
module acc::test
use 0x66::other as o
    fun h(l0: u64)
fun f(x: u64)
    ret
fun g()
    ld_u64 1
    call acc::test::f
    ld_u64 2
    call 0x66::test::f
    ld_u64 3
    call o::h
    ld_u64 4
    call acc::other::h
    ret
",
    );
    assert_eq!(m.address(), &AccountAddress::from_u64(0x66));
    let g = m.function_defs[1].code.as_ref().unwrap();
    let targets: Vec<&str> = g
        .code
        .iter()
        .filter_map(|b| match b {
            Bytecode::Call(fh) => Some(name(&m, m.function_handles[fh.idx()].name)),
            _ => None,
        })
        .collect();
    assert_eq!(targets, ["f", "f", "h", "h"]);
    assert_eq!(m.function_handles.len(), 3);
}
