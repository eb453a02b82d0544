//! Hand-written negative cases: minimal modules built in memory, each with
//! one defect, and the status Move gives for it. Plus property checks that
//! mutated real modules are rejected or accepted, never a panic.

mod common;

use common::*;
use movejit_format::{
    AbilitySet, AccountAddress, AddressIdentifierIndex, Bytecode as B, CodeUnit, CompiledModule, FieldDefinition,
    Flavour, FunctionDefinition, FunctionHandle, FunctionHandleIndex, IdentifierIndex, ModuleHandle, ModuleHandleIndex,
    Signature, SignatureIndex, SignatureToken as ST, StatusCode, StructDefinition, StructDefinitionIndex,
    StructFieldInformation, StructHandle, StructHandleIndex, Visibility,
};
use movejit_verifier::{verify_module, VerifierConfig};

/// A module `0x1::M` being built.
struct Builder(CompiledModule);

impl Builder {
    fn new(version: u32) -> Self {
        let m = CompiledModule {
            version,
            flavour: if version >= 7 { Flavour::Aptos } else { Flavour::Common },
            self_module_handle_idx: ModuleHandleIndex(0),
            module_handles: vec![ModuleHandle { address: AddressIdentifierIndex(0), name: IdentifierIndex(0) }],
            identifiers: vec!["M".into()],
            address_identifiers: vec![AccountAddress::from_u64(1)],
            ..Default::default()
        };
        Builder(m)
    }
    fn ident(&mut self, s: &str) -> IdentifierIndex {
        if let Some(i) = self.0.identifiers.iter().position(|x| x == s) {
            return IdentifierIndex(i as u16);
        }
        self.0.identifiers.push(s.into());
        IdentifierIndex(self.0.identifiers.len() as u16 - 1)
    }
    fn sig(&mut self, tys: Vec<ST>) -> SignatureIndex {
        let s = Signature(tys);
        if let Some(i) = self.0.signatures.iter().position(|x| *x == s) {
            return SignatureIndex(i as u16);
        }
        self.0.signatures.push(s);
        SignatureIndex(self.0.signatures.len() as u16 - 1)
    }
    fn strukt(&mut self, name: &str, abilities: u8, fields: Vec<ST>) -> StructHandleIndex {
        let name = self.ident(name);
        self.0.struct_handles.push(StructHandle {
            module: ModuleHandleIndex(0),
            name,
            abilities: AbilitySet(abilities),
            type_parameters: vec![],
        });
        let h = StructHandleIndex(self.0.struct_handles.len() as u16 - 1);
        let fields = fields
            .into_iter()
            .enumerate()
            .map(|(i, t)| FieldDefinition { name: self.ident(&format!("f{i}")), signature: t })
            .collect();
        self.0
            .struct_defs
            .push(StructDefinition { struct_handle: h, field_information: StructFieldInformation::Declared(fields) });
        h
    }
    fn fun(
        &mut self,
        name: &str,
        params: Vec<ST>,
        returns: Vec<ST>,
        locals: Vec<ST>,
        code: Vec<B>,
    ) -> FunctionHandleIndex {
        let name = self.ident(name);
        let (parameters, return_, locals) = (self.sig(params), self.sig(returns), self.sig(locals));
        self.0.function_handles.push(FunctionHandle {
            module: ModuleHandleIndex(0),
            name,
            parameters,
            return_,
            type_parameters: vec![],
            access_specifiers: None,
            attributes: vec![],
        });
        let h = FunctionHandleIndex(self.0.function_handles.len() as u16 - 1);
        self.0.function_defs.push(FunctionDefinition {
            function: h,
            visibility: Visibility::Public,
            is_entry: false,
            acquires_global_resources: vec![],
            code: Some(CodeUnit { locals, code, jump_tables: vec![] }),
        });
        h
    }
}

fn status_of(m: &CompiledModule) -> Option<StatusCode> {
    verify_module(m, &[], &VerifierConfig::aptos()).err().map(|e| e.status)
}

/// One function `f(params) -> returns` with `locals` and `code` in a v9 module.
fn one_fn(params: Vec<ST>, returns: Vec<ST>, locals: Vec<ST>, code: Vec<B>) -> CompiledModule {
    let mut b = Builder::new(9);
    b.fun("f", params, returns, locals, code);
    b.0
}

fn r(t: ST) -> ST {
    ST::Reference(Box::new(t))
}
fn rm(t: ST) -> ST {
    ST::MutableReference(Box::new(t))
}

#[test]
fn hand_written_defects_get_moves_status() {
    use StatusCode as S;
    let u64_ = || ST::U64;
    let mut cases: Vec<(&str, CompiledModule, Option<StatusCode>)> = vec![
        ("well-formed baseline", one_fn(vec![u64_()], vec![u64_()], vec![], vec![B::MoveLoc(0), B::Ret]), None),
        ("empty code", one_fn(vec![], vec![], vec![], vec![]), Some(S::EMPTY_CODE_UNIT)),
        ("falls off the end", one_fn(vec![], vec![], vec![], vec![B::Nop]), Some(S::INVALID_FALL_THROUGH)),
        ("branch out of range", one_fn(vec![], vec![], vec![], vec![B::Branch(7)]), Some(S::INDEX_OUT_OF_BOUNDS)),
        (
            "local out of range",
            one_fn(vec![], vec![], vec![], vec![B::CopyLoc(3), B::Pop, B::Ret]),
            Some(S::INDEX_OUT_OF_BOUNDS),
        ),
        (
            "pop on empty stack",
            one_fn(vec![], vec![], vec![], vec![B::Pop, B::Ret]),
            Some(S::NEGATIVE_STACK_SIZE_WITHIN_BLOCK),
        ),
        (
            "value left on the stack",
            one_fn(vec![], vec![], vec![], vec![B::LdU64(1), B::Ret]),
            Some(S::POSITIVE_STACK_SIZE_AT_BLOCK_END),
        ),
        (
            "stack overflow",
            one_fn(
                vec![],
                vec![],
                vec![],
                (0..1025).map(|_| B::LdTrue).chain((0..1025).map(|_| B::Pop)).chain([B::Ret]).collect(),
            ),
            Some(S::VALUE_STACK_OVERFLOW),
        ),
        (
            "u64 + u8",
            one_fn(vec![], vec![], vec![], vec![B::LdU64(1), B::LdU8(1), B::Add, B::Pop, B::Ret]),
            Some(S::INTEGER_OP_TYPE_MISMATCH_ERROR),
        ),
        (
            "negate unsigned",
            one_fn(vec![], vec![], vec![], vec![B::LdU64(1), B::Negate, B::Pop, B::Ret]),
            Some(S::INTEGER_OP_TYPE_MISMATCH_ERROR),
        ),
        (
            "branch on u64",
            one_fn(vec![], vec![], vec![], vec![B::LdU64(1), B::BrTrue(2), B::Ret]),
            Some(S::BR_TYPE_MISMATCH_ERROR),
        ),
        (
            "wrong return type",
            one_fn(vec![], vec![u64_()], vec![], vec![B::LdTrue, B::Ret]),
            Some(S::RET_TYPE_MISMATCH_ERROR),
        ),
        (
            "store wrong type",
            one_fn(vec![], vec![], vec![u64_()], vec![B::LdTrue, B::StLoc(0), B::Ret]),
            Some(S::STLOC_TYPE_MISMATCH_ERROR),
        ),
        (
            "read of unset local",
            one_fn(vec![], vec![], vec![u64_()], vec![B::CopyLoc(0), B::Pop, B::Ret]),
            Some(S::COPYLOC_UNAVAILABLE_ERROR),
        ),
        (
            "move twice",
            one_fn(vec![u64_()], vec![], vec![], vec![B::MoveLoc(0), B::Pop, B::MoveLoc(0), B::Pop, B::Ret]),
            Some(S::MOVELOC_UNAVAILABLE_ERROR),
        ),
        (
            "borrow a reference local",
            one_fn(vec![r(u64_())], vec![], vec![], vec![B::ImmBorrowLoc(0), B::Pop, B::Ret]),
            Some(S::BORROWLOC_REFERENCE_ERROR),
        ),
        (
            "return a reference to a local",
            one_fn(vec![], vec![r(u64_())], vec![u64_()], vec![B::LdU64(0), B::StLoc(0), B::ImmBorrowLoc(0), B::Ret]),
            Some(S::UNSAFE_RET_LOCAL_OR_RESOURCE_STILL_BORROWED),
        ),
        (
            "move a borrowed local",
            one_fn(
                vec![u64_()],
                vec![],
                vec![r(u64_())],
                vec![B::ImmBorrowLoc(0), B::StLoc(1), B::MoveLoc(0), B::Pop, B::MoveLoc(1), B::Pop, B::Ret],
            ),
            Some(S::MOVELOC_EXISTS_BORROW_ERROR),
        ),
        (
            "write through an aliased &mut",
            one_fn(
                vec![u64_()],
                vec![],
                vec![rm(u64_()), rm(u64_())],
                vec![
                    B::MutBorrowLoc(0),
                    B::StLoc(1),
                    B::MutBorrowLoc(0),
                    B::StLoc(2),
                    B::LdU64(1),
                    B::MoveLoc(2),
                    B::WriteRef,
                    B::MoveLoc(1),
                    B::Pop,
                    B::Ret,
                ],
            ),
            Some(S::WRITEREF_EXISTS_BORROW_ERROR),
        ),
        (
            "freeze while mutably borrowed",
            one_fn(
                vec![rm(u64_())],
                vec![],
                vec![rm(u64_())],
                vec![B::CopyLoc(0), B::StLoc(1), B::MoveLoc(0), B::FreezeRef, B::Pop, B::MoveLoc(1), B::Pop, B::Ret],
            ),
            Some(S::FREEZEREF_EXISTS_MUTABLE_BORROW_ERROR),
        ),
        (
            "reference in a vector type",
            one_fn(vec![], vec![], vec![ST::Vector(Box::new(r(u64_())))], vec![B::Ret]),
            Some(S::INVALID_SIGNATURE_TOKEN),
        ),
        (
            "irreducible loop (v6+)",
            one_fn(
                vec![],
                vec![],
                vec![],
                vec![B::LdFalse, B::BrTrue(5), B::Branch(3), B::LdFalse, B::BrTrue(7), B::Nop, B::Branch(3), B::Ret],
            ),
            Some(S::INVALID_LOOP_SPLIT),
        ),
        (
            "loops nested too deep",
            one_fn(vec![], vec![], vec![], {
                // six nested self-loops: 0..5 heads, each exits inward-out
                let mut c = vec![];
                for i in 0..6u16 {
                    let _ = i;
                    c.push(B::Nop);
                }
                for i in (0..6u16).rev() {
                    c.push(B::LdFalse);
                    c.push(B::BrTrue(i));
                }
                c.push(B::Ret);
                c
            }),
            Some(S::LOOP_MAX_DEPTH_REACHED),
        ),
    ];

    // Struct-based cases.
    let mut b = Builder::new(9);
    let s = b.strukt("S", 0, vec![ST::U64]);
    b.fun("f", vec![ST::Struct(s)], vec![], vec![], vec![B::MoveLoc(0), B::Pop, B::Ret]);
    cases.push(("pop a value without drop", b.0, Some(S::POP_WITHOUT_DROP_ABILITY)));

    let mut b = Builder::new(9);
    let s = b.strukt("S", 0, vec![ST::U64]);
    b.fun(
        "f",
        vec![rm(ST::Struct(s)), ST::Struct(s)],
        vec![],
        vec![],
        vec![B::MoveLoc(1), B::MoveLoc(0), B::WriteRef, B::Ret],
    );
    cases.push(("overwrite a value without drop", b.0, Some(S::WRITEREF_WITHOUT_DROP_ABILITY)));

    let mut b = Builder::new(9);
    let s = b.strukt("S", 0, vec![ST::U64]);
    b.fun("f", vec![ST::Struct(s)], vec![], vec![], vec![B::Ret]);
    cases.push(("leak a value without drop", b.0, Some(S::UNSAFE_RET_UNUSED_VALUES_WITHOUT_DROP)));

    let mut b = Builder::new(9);
    let s = b.strukt("S", AbilitySet::COPY | AbilitySet::DROP, vec![ST::U64]);
    b.0.struct_defs[0].field_information =
        StructFieldInformation::Declared(vec![FieldDefinition { name: IdentifierIndex(0), signature: ST::Struct(s) }]);
    cases.push(("struct containing itself", b.0, Some(S::RECURSIVE_STRUCT_DEFINITION)));

    let mut b = Builder::new(9);
    let s = b.strukt("S", AbilitySet::COPY, vec![ST::Signer]);
    let _ = s;
    cases.push(("copy struct with a non-copy field", b.0, Some(S::FIELD_MISSING_TYPE_ABILITY)));

    let mut b = Builder::new(9);
    b.fun("f", vec![], vec![], vec![], vec![B::Ret]);
    b.fun("f", vec![ST::U64], vec![], vec![], vec![B::MoveLoc(0), B::Pop, B::Ret]);
    cases.push(("two functions named f", b.0, Some(S::DUPLICATE_ELEMENT)));

    let mut b = Builder::new(9);
    let g = b.fun("g", vec![ST::U64], vec![], vec![], vec![B::MoveLoc(0), B::Pop, B::Ret]);
    b.fun("f", vec![], vec![], vec![], vec![B::LdTrue, B::Call(g), B::Ret]);
    cases.push(("call with a bool for a u64", b.0, Some(S::CALL_TYPE_MISMATCH_ERROR)));

    let mut b = Builder::new(9);
    let s = b.strukt("S", AbilitySet::DROP, vec![ST::U64]);
    b.fun("f", vec![], vec![], vec![], vec![B::LdTrue, B::Pack(StructDefinitionIndex(0)), B::Pop, B::Ret]);
    let _ = s;
    cases.push(("pack with a wrong field type", b.0, Some(S::PACK_TYPE_MISMATCH_ERROR)));

    let mut agree = 0;
    for (name, m, expected) in &cases {
        let got = status_of(m);
        assert_eq!(got, *expected, "{name}");
        agree += 1;
    }
    eprintln!("negative cases: {agree}/{} as expected", cases.len());
}

/// Access specifiers (`reads R(signer::address_of(s))`): Aptos's loader
/// refuses indices out of range and address functions other than
/// `0x1::signer::address_of` / `0x1::object::owner`.
#[test]
fn access_specifiers_as_aptos_loader_checks() {
    use movejit_format::{
        AccessKind, AccessSpecifier, AddressSpecifier, FunctionInstantiation, FunctionInstantiationIndex,
        ResourceSpecifier,
    };
    /// `0x1::M::f(s: &signer)` reading resource `R` at an address given by `address`.
    fn module(address: AddressSpecifier, resource: Option<ResourceSpecifier>, helper: (&str, &str)) -> CompiledModule {
        let mut b = Builder::new(9);
        let r_ = b.strukt("R", AbilitySet::KEY, vec![ST::U64]);
        let module_name = b.ident(helper.0);
        let helper_module = if helper.0 == "M" {
            ModuleHandleIndex(0)
        } else {
            b.0.module_handles.push(ModuleHandle { address: AddressIdentifierIndex(0), name: module_name });
            ModuleHandleIndex(b.0.module_handles.len() as u16 - 1)
        };
        let (fname, params, rets) = (b.ident(helper.1), b.sig(vec![r(ST::Signer)]), b.sig(vec![ST::Address]));
        b.0.function_handles.push(FunctionHandle {
            module: helper_module,
            name: fname,
            parameters: params,
            return_: rets,
            type_parameters: vec![],
            access_specifiers: None,
            attributes: vec![],
        });
        let helper_handle = FunctionHandleIndex(b.0.function_handles.len() as u16 - 1);
        let no_types = b.sig(vec![]);
        b.0.function_instantiations.push(FunctionInstantiation { handle: helper_handle, type_parameters: no_types });
        let f = b.fun("f", vec![r(ST::Signer)], vec![], vec![], vec![B::MoveLoc(0), B::Pop, B::Ret]);
        if helper.0 == "M" {
            // A local helper needs a body too.
            b.0.function_defs.push(FunctionDefinition {
                function: helper_handle,
                visibility: Visibility::Public,
                is_entry: false,
                acquires_global_resources: vec![],
                code: Some(CodeUnit {
                    locals: no_types,
                    code: vec![B::MoveLoc(0), B::Pop, B::LdConst(movejit_format::ConstantPoolIndex(0)), B::Ret],
                    jump_tables: vec![],
                }),
            });
            b.0.constant_pool.push(movejit_format::Constant { type_: ST::Address, data: vec![0; 32] });
        }
        let address = match address {
            AddressSpecifier::Parameter(p, Some(_)) => {
                AddressSpecifier::Parameter(p, Some(FunctionInstantiationIndex(0)))
            }
            other => other,
        };
        b.0.function_handles[f.idx()].access_specifiers = Some(vec![AccessSpecifier {
            kind: AccessKind::Reads,
            negated: false,
            resource: resource.unwrap_or(ResourceSpecifier::Resource(r_)),
            address,
        }]);
        b.0
    }
    use StatusCode as S;
    let via = |p: u8| AddressSpecifier::Parameter(p, Some(FunctionInstantiationIndex(0)));
    let cases: Vec<(&str, CompiledModule, Option<StatusCode>)> = vec![
        ("reads R(signer::address_of(s))", module(via(0), None, ("signer", "address_of")), None),
        ("reads R(object::owner(s))", module(via(0), None, ("object", "owner")), None),
        ("reads R(s) (identity)", module(AddressSpecifier::Parameter(0, None), None, ("signer", "address_of")), None),
        ("reads R(*)", module(AddressSpecifier::Any, None, ("signer", "address_of")), None),
        ("reads R(M::addr_of(s))", module(via(0), None, ("M", "addr_of")), Some(S::ACCESS_CONTROL_INVARIANT_VIOLATION)),
        (
            "reads R(signer::other(s))",
            module(via(0), None, ("signer", "other")),
            Some(S::ACCESS_CONTROL_INVARIANT_VIOLATION),
        ),
        (
            "resource handle out of range",
            module(
                AddressSpecifier::Any,
                Some(ResourceSpecifier::Resource(StructHandleIndex(40))),
                ("signer", "address_of"),
            ),
            Some(S::ACCESS_CONTROL_INVARIANT_VIOLATION),
        ),
        (
            "address out of range",
            module(AddressSpecifier::Literal(AddressIdentifierIndex(9)), None, ("signer", "address_of")),
            Some(S::ACCESS_CONTROL_INVARIANT_VIOLATION),
        ),
        (
            "parameter out of range",
            module(via(3), None, ("signer", "address_of")),
            Some(S::ACCESS_CONTROL_INVARIANT_VIOLATION),
        ),
    ];
    for (name, m, expected) in &cases {
        let got = movejit_verifier::verify_module_alone(m, &VerifierConfig::aptos()).err();
        assert_eq!(got.as_ref().map(|e| e.status), *expected, "{name}: {got:?}");
    }
    eprintln!("access specifier cases: {} as expected", cases.len());
}

/// Linking: attributes on an imported handle must be on the definition,
/// except `ModuleLock` (Aptos's `FunctionAttribute::is_compatible_with`); a
/// public definition without attributes counts as `Persistent`.
#[test]
fn imported_function_attributes_link_as_aptos() {
    use movejit_format::FunctionAttribute as A;
    let case = |def_vis: Visibility, def_attrs: Vec<A>, import_attrs: Vec<A>| {
        let mut dep = Builder::new(9);
        let g = dep.fun("g", vec![], vec![], vec![], vec![B::Ret]);
        dep.0.function_defs[0].visibility = def_vis;
        dep.0.function_handles[g.idx()].attributes = def_attrs;
        let mut user = Builder::new(9);
        user.0.identifiers[0] = "N".into();
        let m_name = user.ident("M");
        user.0.module_handles.push(ModuleHandle { address: AddressIdentifierIndex(0), name: m_name });
        let (g_name, empty) = (user.ident("g"), user.sig(vec![]));
        user.0.function_handles.push(FunctionHandle {
            module: ModuleHandleIndex(1),
            name: g_name,
            parameters: empty,
            return_: empty,
            type_parameters: vec![],
            access_specifiers: None,
            attributes: import_attrs,
        });
        let g_import = FunctionHandleIndex(user.0.function_handles.len() as u16 - 1);
        user.fun("f", vec![], vec![], vec![], vec![B::Call(g_import), B::Ret]);
        verify_module(&user.0, &[&dep.0], &VerifierConfig::aptos()).err().map(|e| e.status)
    };
    use Visibility::{Private, Public};
    let cases: Vec<(&str, Option<StatusCode>, Option<StatusCode>)> = vec![
        ("no attributes", case(Public, vec![], vec![]), None),
        ("persistent on both", case(Public, vec![A::Persistent], vec![A::Persistent]), None),
        ("persistent from a public definition", case(Public, vec![], vec![A::Persistent]), None),
        ("module lock only on the import", case(Public, vec![A::Persistent], vec![A::ModuleLock]), None),
        (
            "persistent missing on a public definition with other attributes",
            case(Public, vec![A::ModuleLock], vec![A::Persistent]),
            Some(StatusCode::LINKER_ERROR),
        ),
        ("import of a private definition", case(Private, vec![], vec![A::Persistent]), Some(StatusCode::LOOKUP_FAILED)),
    ];
    for (name, got, expected) in &cases {
        assert_eq!(got, expected, "{name}");
    }
}

/// Tiny deterministic PRNG (SplitMix64).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Instructions to splice into real code; operands are small so that some
/// mutations stay in bounds and reach the deeper passes.
fn random_instr(rng: &mut Rng, len: usize) -> B {
    let t = rng.below(len) as u16;
    let l = rng.below(4) as u8;
    match rng.below(24) {
        0 => B::Pop,
        1 => B::Ret,
        2 => B::BrTrue(t),
        3 => B::Branch(t),
        4 => B::LdU64(7),
        5 => B::LdTrue,
        6 => B::CopyLoc(l),
        7 => B::MoveLoc(l),
        8 => B::StLoc(l),
        9 => B::MutBorrowLoc(l),
        10 => B::ImmBorrowLoc(l),
        11 => B::ReadRef,
        12 => B::WriteRef,
        13 => B::FreezeRef,
        14 => B::Add,
        15 => B::Eq,
        16 => B::LdU8(1),
        17 => B::Shl,
        18 => B::CastU8,
        19 => B::Abort,
        20 => B::Nop,
        21 => B::Not,
        22 => B::BrFalse(t),
        _ => B::LdFalse,
    }
}

#[test]
fn mutated_real_modules_never_panic() {
    let mut mods = load_dir(&shared_dir().join("corpus/versions/v9"));
    mods.extend(load_dir(&shared_dir().join("corpus/sui/move-stdlib")));
    // Framework modules exercise Sui's package rules (objects, id leak, ...).
    mods.extend(load_dir(&shared_dir().join("corpus/sui/sui-framework")));
    let mut rng = Rng(0x5eed);
    let (mut rejected, mut accepted) = (0usize, 0usize);
    let start = std::time::Instant::now();
    for round in 0..2000 {
        let (_, base) = &mods[round % mods.len()];
        let mut m = base.clone();
        let config =
            if m.flavour.is_sui() || m.version == 6 { VerifierConfig::sui_protocol() } else { VerifierConfig::aptos() };
        // One to three edits to one function's code.
        let with_code: Vec<usize> = (0..m.function_defs.len()).filter(|i| m.function_defs[*i].code.is_some()).collect();
        if with_code.is_empty() {
            continue;
        }
        let fi = with_code[rng.below(with_code.len())];
        let code = &mut m.function_defs[fi].code.as_mut().expect("code").code;
        for _ in 0..1 + rng.below(3) {
            let len = code.len();
            let pos = rng.below(len);
            match rng.below(3) {
                0 => code[pos] = random_instr(&mut rng, len),
                1 => code.insert(pos, random_instr(&mut rng, len + 1)),
                _ => {
                    code.remove(pos);
                }
            }
            if code.is_empty() {
                break;
            }
        }
        match verify_module(&m, &[], &config) {
            Ok(()) => accepted += 1,
            Err(e) => {
                assert_ne!(e.status, StatusCode::VERIFIER_INVARIANT_VIOLATION, "round {round}: {e}");
                rejected += 1;
            }
        }
    }
    eprintln!("mutations: {rejected} rejected, {accepted} accepted in {:?}", start.elapsed());
    assert!(rejected > accepted, "most random edits must be caught");
}

#[test]
fn byte_mutated_modules_never_panic() {
    let files = mv_files(&shared_dir().join("corpus/aptos/MoveStdlib"));
    let mut rng = Rng(42);
    let mut decoded = 0;
    for round in 0..3000 {
        let mut bytes = std::fs::read(&files[round % files.len()]).expect("read");
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(bytes.len());
            bytes[i] = rng.next() as u8;
        }
        if let Ok(m) = movejit_format::decode_module(&bytes) {
            decoded += 1;
            if let Err(e) = verify_module(&m, &[], &VerifierConfig::aptos()) {
                assert_ne!(e.status, StatusCode::VERIFIER_INVARIANT_VIOLATION, "round {round}: {e}");
            }
        }
    }
    eprintln!("byte mutations: {decoded} of 3000 still decoded and were verified without panic");
}
