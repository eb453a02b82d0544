//! Sui's package rules (`VerifierConfig::sui_protocol`): hand-built modules,
//! each with one property that Sui's `sui-verifier` checks, and whether Sui
//! accepts it. Every rejection is Sui's `SuiMoveVerificationError`
//! (UNKNOWN_VERIFICATION_ERROR here) and names the rule; the same module
//! passes under plain `VerifierConfig::sui()` (Move's rules only), so the
//! rejection is the Sui rule's. Acceptance of the real framework is in
//! `corpus.rs`.

use movejit_format::{
    AbilitySet, AccountAddress, AddressIdentifierIndex, Bytecode as B, CodeUnit, CompiledModule, EnumDefinition,
    FieldDefinition, Flavour, FunctionDefinition, FunctionHandle, FunctionHandleIndex, FunctionInstantiation,
    FunctionInstantiationIndex, IdentifierIndex, ModuleHandle, ModuleHandleIndex, Signature, SignatureIndex,
    SignatureToken as ST, StatusCode, StructDefinition, StructDefinitionIndex, StructFieldInformation, StructHandle,
    StructHandleIndex, StructTypeParameter, VariantDefinition, Visibility,
};
use movejit_verifier::{verify_module_alone, VerifierConfig};

const COPY: u8 = AbilitySet::COPY;
const DROP: u8 = AbilitySet::DROP;
const STORE: u8 = AbilitySet::STORE;
const KEY: u8 = AbilitySet::KEY;

/// A Sui (v7) module under construction, with handles for the framework
/// types and functions the cases use.
struct M {
    m: CompiledModule,
    uid: StructHandleIndex,
    ctx: StructHandleIndex,
    object_new: FunctionHandleIndex,
}

struct Fun {
    name: &'static str,
    visibility: Visibility,
    entry: bool,
    type_params: Vec<AbilitySet>,
    params: Vec<ST>,
    returns: Vec<ST>,
    locals: Vec<ST>,
    code: Vec<B>,
}

fn fun(name: &'static str, params: Vec<ST>, code: Vec<B>) -> Fun {
    Fun {
        name,
        visibility: Visibility::Public,
        entry: false,
        type_params: vec![],
        params,
        returns: vec![],
        locals: vec![],
        code,
    }
}

impl Fun {
    fn entry(mut self) -> Self {
        self.entry = true;
        self
    }
    fn private(mut self) -> Self {
        self.visibility = Visibility::Private;
        self
    }
    fn returns(mut self, r: Vec<ST>) -> Self {
        self.returns = r;
        self
    }
    fn locals(mut self, l: Vec<ST>) -> Self {
        self.locals = l;
        self
    }
    fn generic(mut self, t: Vec<u8>) -> Self {
        self.type_params = t.into_iter().map(AbilitySet).collect();
        self
    }
}

impl M {
    fn new(addr: u64, name: &str) -> Self {
        let m = CompiledModule {
            version: 7,
            flavour: Flavour::Sui,
            self_module_handle_idx: ModuleHandleIndex(0),
            module_handles: vec![ModuleHandle { address: AddressIdentifierIndex(0), name: IdentifierIndex(0) }],
            identifiers: vec![name.into()],
            address_identifiers: vec![AccountAddress::from_u64(addr)],
            ..Default::default()
        };
        let mut b = M { m, uid: StructHandleIndex(0), ctx: StructHandleIndex(0), object_new: FunctionHandleIndex(0) };
        b.uid = b.import_type(2, "object", "UID", STORE, 0);
        b.ctx = b.import_type(2, "tx_context", "TxContext", DROP, 0);
        b.object_new = b.import_fn(2, "object", "new", vec![], vec![rm(ST::Struct(b.ctx))], vec![ST::Struct(b.uid)]);
        b
    }
    fn ident(&mut self, s: &str) -> IdentifierIndex {
        if let Some(i) = self.m.identifiers.iter().position(|x| x == s) {
            return IdentifierIndex(i as u16);
        }
        self.m.identifiers.push(s.into());
        IdentifierIndex(self.m.identifiers.len() as u16 - 1)
    }
    fn sig(&mut self, tys: Vec<ST>) -> SignatureIndex {
        let s = Signature(tys);
        if let Some(i) = self.m.signatures.iter().position(|x| *x == s) {
            return SignatureIndex(i as u16);
        }
        self.m.signatures.push(s);
        SignatureIndex(self.m.signatures.len() as u16 - 1)
    }
    fn module(&mut self, addr: u64, name: &str) -> ModuleHandleIndex {
        let a = AccountAddress::from_u64(addr);
        let address = match self.m.address_identifiers.iter().position(|x| *x == a) {
            Some(i) => AddressIdentifierIndex(i as u16),
            None => {
                self.m.address_identifiers.push(a);
                AddressIdentifierIndex(self.m.address_identifiers.len() as u16 - 1)
            }
        };
        let h = ModuleHandle { address, name: self.ident(name) };
        if let Some(i) = self.m.module_handles.iter().position(|x| *x == h) {
            return ModuleHandleIndex(i as u16);
        }
        self.m.module_handles.push(h);
        ModuleHandleIndex(self.m.module_handles.len() as u16 - 1)
    }
    /// A datatype of another module with `type_params` unconstrained, non-phantom parameters.
    fn import_type(
        &mut self,
        addr: u64,
        module: &str,
        name: &str,
        abilities: u8,
        type_params: usize,
    ) -> StructHandleIndex {
        let module = self.module(addr, module);
        let name = self.ident(name);
        let type_parameters =
            vec![StructTypeParameter { constraints: AbilitySet::EMPTY, is_phantom: false }; type_params];
        self.m.struct_handles.push(StructHandle { module, name, abilities: AbilitySet(abilities), type_parameters });
        StructHandleIndex(self.m.struct_handles.len() as u16 - 1)
    }
    fn import_fn(
        &mut self,
        addr: u64,
        module: &str,
        name: &str,
        type_params: Vec<u8>,
        params: Vec<ST>,
        returns: Vec<ST>,
    ) -> FunctionHandleIndex {
        let module = self.module(addr, module);
        let name = self.ident(name);
        let (parameters, return_) = (self.sig(params), self.sig(returns));
        self.m.function_handles.push(FunctionHandle {
            module,
            name,
            parameters,
            return_,
            type_parameters: type_params.into_iter().map(AbilitySet).collect(),
            access_specifiers: None,
            attributes: vec![],
        });
        FunctionHandleIndex(self.m.function_handles.len() as u16 - 1)
    }
    fn inst(&mut self, handle: FunctionHandleIndex, tys: Vec<ST>) -> FunctionInstantiationIndex {
        let type_parameters = self.sig(tys);
        self.m.function_instantiations.push(FunctionInstantiation { handle, type_parameters });
        FunctionInstantiationIndex(self.m.function_instantiations.len() as u16 - 1)
    }
    fn strukt(
        &mut self,
        name: &str,
        abilities: u8,
        fields: Vec<(&str, ST)>,
    ) -> (StructHandleIndex, StructDefinitionIndex) {
        let name = self.ident(name);
        self.m.struct_handles.push(StructHandle {
            module: ModuleHandleIndex(0),
            name,
            abilities: AbilitySet(abilities),
            type_parameters: vec![],
        });
        let h = StructHandleIndex(self.m.struct_handles.len() as u16 - 1);
        let fields = fields.into_iter().map(|(n, t)| FieldDefinition { name: self.ident(n), signature: t }).collect();
        self.m
            .struct_defs
            .push(StructDefinition { struct_handle: h, field_information: StructFieldInformation::Declared(fields) });
        (h, StructDefinitionIndex(self.m.struct_defs.len() as u16 - 1))
    }
    /// An object type `name { id: UID }` of this module.
    fn object(&mut self, name: &str, abilities: u8) -> (StructHandleIndex, StructDefinitionIndex) {
        let uid = ST::Struct(self.uid);
        self.strukt(name, abilities, vec![("id", uid)])
    }
    fn define(&mut self, f: Fun) -> FunctionHandleIndex {
        let name = self.ident(f.name);
        let (parameters, return_, locals) = (self.sig(f.params), self.sig(f.returns), self.sig(f.locals));
        self.m.function_handles.push(FunctionHandle {
            module: ModuleHandleIndex(0),
            name,
            parameters,
            return_,
            type_parameters: f.type_params,
            access_specifiers: None,
            attributes: vec![],
        });
        let h = FunctionHandleIndex(self.m.function_handles.len() as u16 - 1);
        self.m.function_defs.push(FunctionDefinition {
            function: h,
            visibility: f.visibility,
            is_entry: f.entry,
            acquires_global_resources: vec![],
            code: Some(CodeUnit { locals, code: f.code, jump_tables: vec![] }),
        });
        h
    }
    fn ctx_mut(&self) -> ST {
        rm(ST::Struct(self.ctx))
    }
}

fn r(t: ST) -> ST {
    ST::Reference(Box::new(t))
}
fn rm(t: ST) -> ST {
    ST::MutableReference(Box::new(t))
}
fn vec_of(t: ST) -> ST {
    ST::Vector(Box::new(t))
}

/// An entry function `f(p)` that drops its argument, in a module with an
/// object type `Obj` (key) and a droppable `Val`.
fn entry_param(p: impl FnOnce(&mut M, StructHandleIndex) -> ST) -> M {
    let mut b = M::new(0x42, "m");
    let (obj, _) = b.object("Obj", KEY | STORE);
    let ty = p(&mut b, obj);
    // Every case type can be dropped, so the body just drops it.
    let code = vec![B::MoveLoc(0), B::Pop, B::Ret];
    b.define(fun("f", vec![ty], code).entry().generic(vec![KEY, DROP]));
    b
}

/// `(case, module, Ok(()) or Err(message fragment))`.
type Case = (&'static str, M, Result<(), &'static str>);

fn cases() -> Vec<Case> {
    let mut out: Vec<Case> = Vec::new();

    // ---- objects: key structs start with `id: UID`; enums have no key ----
    {
        let mut b = M::new(0x42, "m");
        b.object("Obj", KEY);
        out.push(("key struct with id: UID", b, Ok(())));
    }
    {
        let mut b = M::new(0x42, "m");
        let uid = ST::Struct(b.uid);
        b.strukt("Obj", KEY, vec![("uid", uid)]);
        out.push(("key struct whose first field is not named id", b, Err("must be 'id'")));
    }
    {
        let mut b = M::new(0x42, "m");
        b.strukt("Obj", KEY, vec![("id", ST::Address)]);
        out.push(("key struct whose id is an address", b, Err("0x2::object::UID")));
    }
    {
        let mut b = M::new(0x42, "m");
        let fake_uid = b.import_type(0x42, "object", "UID", STORE, 0);
        b.strukt("Obj", KEY, vec![("id", ST::Struct(fake_uid))]);
        out.push(("key struct whose id is a UID from another address", b, Err("0x2::object::UID")));
    }
    {
        let mut b = M::new(0x42, "m");
        let name = b.ident("E");
        b.m.struct_handles.push(StructHandle {
            module: ModuleHandleIndex(0),
            name,
            abilities: AbilitySet(KEY),
            type_parameters: vec![],
        });
        let h = StructHandleIndex(b.m.struct_handles.len() as u16 - 1);
        let (v, f) = (b.ident("V"), b.ident("x"));
        b.m.enum_defs.push(EnumDefinition {
            enum_handle: h,
            variants: vec![VariantDefinition {
                name: v,
                fields: vec![FieldDefinition { name: f, signature: ST::U64 }],
            }],
        });
        out.push(("enum with key", b, Err("cannot have the 'key' ability")));
    }

    // ---- global storage ----
    {
        let mut b = M::new(0x42, "m");
        let (_, d) = b.object("R", KEY);
        b.define(fun("f", vec![ST::Address], vec![B::MoveLoc(0), B::Exists(d), B::Pop, B::Ret]));
        out.push(("Exists", b, Err("global storage")));
    }

    // ---- id leak: objects are packed with a fresh UID ----
    {
        let mut b = M::new(0x42, "m");
        let (obj, d) = b.object("Obj", KEY);
        let ctx = b.ctx_mut();
        let new = b.object_new;
        b.define(
            fun("make", vec![ctx], vec![B::MoveLoc(0), B::Call(new), B::StLoc(1), B::MoveLoc(1), B::Pack(d), B::Ret])
                .returns(vec![ST::Struct(obj)])
                .locals(vec![ST::Struct(b.uid)]),
        );
        out.push(("object packed with object::new's UID through a local", b, Ok(())));
    }
    {
        let mut b = M::new(0x42, "m");
        let (obj, d) = b.object("Obj", KEY);
        let uid = ST::Struct(b.uid);
        b.define(fun("wrap", vec![uid], vec![B::MoveLoc(0), B::Pack(d), B::Ret]).returns(vec![ST::Struct(obj)]));
        out.push(("object packed with a UID parameter", b, Err("without a newly created UID")));
    }
    {
        let mut b = M::new(0x42, "m");
        let (obj, d) = b.object("Obj", KEY);
        let (uid, ctx) = (ST::Struct(b.uid), b.ctx_mut());
        let new = b.object_new;
        let destroy = b.import_fn(2, "object", "delete", vec![], vec![uid.clone()], vec![]);
        // if (b) { object::delete(old); x = object::new(ctx) } else x = old; Obj { id: x }
        let code = vec![
            B::MoveLoc(2),
            B::BrFalse(8),
            B::MoveLoc(0),
            B::Call(destroy),
            B::MoveLoc(1),
            B::Call(new),
            B::StLoc(3),
            B::Branch(12),
            B::MoveLoc(1),
            B::Pop,
            B::MoveLoc(0),
            B::StLoc(3),
            // 12:
            B::MoveLoc(3),
            B::Pack(d),
            B::Ret,
        ];
        b.define(
            fun("maybe_fresh", vec![uid.clone(), ctx, ST::Bool], code).returns(vec![ST::Struct(obj)]).locals(vec![uid]),
        );
        out.push(("object packed with a UID fresh on one path only", b, Err("without a newly created UID")));
    }
    {
        let mut b = M::new(0x2, "clock");
        let (obj, d) = b.object("Clock", KEY);
        let uid = ST::Struct(b.uid);
        b.define(fun("create", vec![uid], vec![B::MoveLoc(0), B::Pack(d), B::Ret]).returns(vec![ST::Struct(obj)]));
        out.push(("0x2::clock::create packs a system object (exempt)", b, Ok(())));
    }
    {
        let mut b = M::new(0x2, "clock");
        let (obj, d) = b.object("Clock", KEY);
        let uid = ST::Struct(b.uid);
        b.define(fun("create2", vec![uid], vec![B::MoveLoc(0), B::Pack(d), B::Ret]).returns(vec![ST::Struct(obj)]));
        out.push(("0x2::clock::create2 is not exempt", b, Err("without a newly created UID")));
    }

    // ---- private generics ----
    let transfer_case = |fname: &'static str, own: bool| {
        let mut b = M::new(0x42, "m");
        let (mine, _) = b.object("Obj", KEY | STORE);
        let theirs = b.import_type(0x43, "other", "Obj", KEY | STORE, 0);
        let h = b.import_fn(2, "transfer", fname, vec![KEY], vec![ST::TypeParameter(0), ST::Address], vec![]);
        let ty = ST::Struct(if own { mine } else { theirs });
        let i = b.inst(h, vec![ty.clone()]);
        b.define(fun("send", vec![ty, ST::Address], vec![B::MoveLoc(0), B::MoveLoc(1), B::CallGeneric(i), B::Ret]));
        b
    };
    out.push(("transfer::transfer of an own type", transfer_case("transfer", true), Ok(())));
    out.push((
        "transfer::transfer of another module's type",
        transfer_case("transfer", false),
        Err("must be a type defined in the current module"),
    ));
    out.push(("transfer::public_transfer of another module's type", transfer_case("public_transfer", false), Ok(())));
    out.push((
        "transfer::share_object of another module's type",
        transfer_case("share_object", false),
        Err("must be a type defined in the current module"),
    ));
    out.push((
        "transfer::transfer of this name at 0x42 is not Sui's",
        {
            let mut b = M::new(0x42, "m");
            let theirs = b.import_type(0x43, "other", "Obj", KEY | STORE, 0);
            let h =
                b.import_fn(0x43, "transfer", "transfer", vec![KEY], vec![ST::TypeParameter(0), ST::Address], vec![]);
            let i = b.inst(h, vec![ST::Struct(theirs)]);
            b.define(fun(
                "send",
                vec![ST::Struct(theirs), ST::Address],
                vec![B::MoveLoc(0), B::MoveLoc(1), B::CallGeneric(i), B::Ret],
            ));
            b
        },
        Ok(()),
    ));
    let emit_case = |ty: fn(StructHandleIndex) -> ST| {
        let mut b = M::new(0x42, "m");
        let (ev, _) = b.strukt("Ev", COPY | DROP, vec![("x", ST::U64)]);
        let h = b.import_fn(2, "event", "emit", vec![COPY | DROP], vec![ST::TypeParameter(0)], vec![]);
        let t = ty(ev);
        let i = b.inst(h, vec![t.clone()]);
        b.define(fun("e", vec![t], vec![B::MoveLoc(0), B::CallGeneric(i), B::Ret]));
        b
    };
    out.push(("event::emit of an own type", emit_case(ST::Struct), Ok(())));
    out.push(("event::emit of u64", emit_case(|_| ST::U64), Err("must be a type defined in the current module")));
    out.push((
        "event::emit of vector<own type>",
        emit_case(|h| vec_of(ST::Struct(h))),
        Err("must be a type defined in the current module"),
    ));
    out.push((
        "std::internal::permit of u64",
        {
            let mut b = M::new(0x42, "m");
            let permit = b.import_type(1, "internal", "Permit", DROP, 1);
            let h = b.import_fn(
                1,
                "internal",
                "permit",
                vec![0],
                vec![],
                vec![ST::StructInstantiation(permit, vec![ST::TypeParameter(0)])],
            );
            let i = b.inst(h, vec![ST::U64]);
            b.define(fun("p", vec![], vec![B::CallGeneric(i), B::Pop, B::Ret]));
            b
        },
        Err("must be a type defined in the current module"),
    ));
    out.push((
        "0x2::event with a public function the rule does not list",
        {
            let mut b = M::new(2, "event");
            b.define(fun("emit_everything", vec![], vec![B::Ret]));
            b
        },
        Err("invariant"),
    ));
    out.push((
        "0x2::event with an unlisted private function",
        {
            let mut b = M::new(2, "event");
            b.define(fun("helper", vec![], vec![B::Ret]).private());
            b
        },
        Ok(()),
    ));

    // ---- init ----
    let init_case = |f: fn(Fun) -> Fun, params: fn(&M) -> Vec<ST>| {
        let mut b = M::new(0x42, "m");
        let p = params(&b);
        let pops: Vec<B> = (0..p.len() as u8).flat_map(|i| [B::MoveLoc(i), B::Pop]).chain([B::Ret]).collect();
        b.define(f(fun("init", p, pops).private()));
        b
    };
    out.push(("init(&mut TxContext)", init_case(|f| f, |b| vec![b.ctx_mut()]), Ok(())));
    out.push(("init(&TxContext)", init_case(|f| f, |b| vec![r(ST::Struct(b.ctx))]), Ok(())));
    out.push((
        "public init",
        init_case(
            |mut f| {
                f.visibility = Visibility::Public;
                f
            },
            |b| vec![b.ctx_mut()],
        ),
        Err("must be private"),
    ));
    out.push(("entry init", init_case(|f| f.entry(), |b| vec![b.ctx_mut()]), Err("cannot be 'entry'")));
    out.push(("generic init", init_case(|f| f.generic(vec![DROP]), |b| vec![b.ctx_mut()]), Err("type parameters")));
    out.push(("init with no parameter", init_case(|f| f, |_| vec![]), Err("one or two parameters")));
    out.push(("init(u64)", init_case(|f| f, |_| vec![ST::U64]), Err("last parameter")));
    out.push((
        "init(u64, u64, &mut TxContext)",
        init_case(|f| f, |b| vec![ST::U64, ST::U64, b.ctx_mut()]),
        Err("one or two parameters"),
    ));
    out.push((
        "init(u64, &mut TxContext) without a one-time witness type",
        init_case(|f| f, |b| vec![ST::U64, b.ctx_mut()]),
        Err("only if the module declares one"),
    ));
    out.push((
        "a call to a function named init",
        {
            let mut b = M::new(0x42, "m");
            let other_init = b.import_fn(0x43, "other", "init", vec![], vec![], vec![]);
            b.define(fun("f", vec![], vec![B::Call(other_init), B::Ret]));
            b
        },
        Err("init cannot be called"),
    ));

    // ---- one-time witness ----
    let otw_case = |abilities: u8, init_takes_it: bool, pack_it: bool| {
        let mut b = M::new(0x42, "coin_x");
        let (w, d) = b.strukt("COIN_X", abilities, vec![("dummy_field", ST::Bool)]);
        let ctx = b.ctx_mut();
        let params = if init_takes_it { vec![ST::Struct(w), ctx] } else { vec![ctx] };
        let pops: Vec<B> = (0..params.len() as u8).flat_map(|i| [B::MoveLoc(i), B::Pop]).chain([B::Ret]).collect();
        b.define(fun("init", params, pops).private());
        if pack_it {
            b.define(fun("forge", vec![], vec![B::LdTrue, B::Pack(d), B::Ret]).returns(vec![ST::Struct(w)]));
        }
        b
    };
    out.push(("one-time witness taken by init", otw_case(DROP, true, false), Ok(())));
    out.push(("one-time witness with copy", otw_case(COPY | DROP, true, false), Err("single ability: drop")));
    out.push((
        "one-time witness type but init without it",
        otw_case(DROP, false, false),
        Err("first of two parameters"),
    ));
    out.push(("one-time witness packed by a function", otw_case(DROP, true, true), Err("must never be")));
    out.push((
        "0x2::sui packs its SUI witness (exempt)",
        {
            let mut b = M::new(2, "sui");
            let (w, d) = b.strukt("SUI", DROP, vec![("dummy_field", ST::Bool)]);
            b.define(fun("forge", vec![], vec![B::LdTrue, B::Pack(d), B::Ret]).returns(vec![ST::Struct(w)]));
            b
        },
        Ok(()),
    ));
    out.push((
        "an upper-case struct with two fields is no witness",
        {
            let mut b = M::new(0x42, "coin_x");
            let (w, d) = b.strukt("COIN_X", DROP | COPY, vec![("a", ST::Bool), ("b", ST::Bool)]);
            b.define(
                fun("forge", vec![], vec![B::LdTrue, B::LdFalse, B::Pack(d), B::Ret]).returns(vec![ST::Struct(w)]),
            );
            b
        },
        Ok(()),
    ));

    // ---- entry function parameters and results ----
    let imported = |addr: u64, module: &'static str, name: &'static str, abilities: u8, wrap: fn(ST) -> ST| {
        move |b: &mut M, _: StructHandleIndex| wrap(ST::Struct(b.import_type(addr, module, name, abilities, 0)))
    };
    out.push(("entry(u64)", entry_param(|_, _| ST::U64), Ok(())));
    out.push(("entry(vector<u8>)", entry_param(|_, _| vec_of(ST::U8)), Ok(())));
    out.push(("entry(&Obj)", entry_param(|_, o| r(ST::Struct(o))), Ok(())));
    out.push(("entry(&mut Obj)", entry_param(|_, o| rm(ST::Struct(o))), Ok(())));
    out.push(("entry(&T) with T: key", entry_param(|_, _| r(ST::TypeParameter(0))), Ok(())));
    out.push(("entry(T: drop), optimistic primitive", entry_param(|_, _| ST::TypeParameter(1)), Ok(())));
    out.push(("entry(&0x2::clock::Clock)", entry_param(imported(2, "clock", "Clock", KEY, r)), Ok(())));
    out.push((
        "entry(&mut 0x2::clock::Clock)",
        entry_param(imported(2, "clock", "Clock", KEY, rm)),
        Err("Clock must be passed by immutable reference"),
    ));
    out.push((
        "entry(&mut 0x2::random::Random)",
        entry_param(imported(2, "random", "Random", KEY, rm)),
        Err("Random must be passed by immutable reference"),
    ));
    out.push((
        "entry(0x1::string::String)",
        entry_param(imported(1, "string", "String", COPY | DROP | STORE, |t| t)),
        Ok(()),
    ));
    out.push(("entry(0x2::object::ID)", entry_param(imported(2, "object", "ID", COPY | DROP | STORE, |t| t)), Ok(())));
    out.push(("entry(&u64)", entry_param(|_, _| r(ST::U64)), Err("expected a primitive or object type")));
    out.push(("entry(signer)", entry_param(|_, _| ST::Signer), Err("expected a primitive or object type")));
    out.push((
        "entry(a droppable non-object struct)",
        entry_param(imported(0x43, "other", "Val", DROP, |t| t)),
        Err("expected a primitive or object type"),
    ));
    out.push((
        "entry(Option<u64>)",
        entry_param(|b, _| {
            let o = b.import_type(1, "option", "Option", COPY | DROP | STORE, 1);
            ST::StructInstantiation(o, vec![ST::U64])
        }),
        Ok(()),
    ));
    out.push((
        "entry(Option<Val>)",
        entry_param(|b, _| {
            let o = b.import_type(1, "option", "Option", COPY | DROP | STORE, 1);
            let v = b.import_type(0x43, "other", "Val", COPY | DROP | STORE, 0);
            ST::StructInstantiation(o, vec![ST::Struct(v)])
        }),
        Err("expected a primitive or object type"),
    ));
    out.push((
        "entry(&Receiving<Obj>)",
        entry_param(|b, o| {
            let rcv = b.import_type(2, "transfer", "Receiving", DROP, 1);
            r(ST::StructInstantiation(rcv, vec![ST::Struct(o)]))
        }),
        Ok(()),
    ));
    out.push((
        "entry returning u64",
        {
            let mut b = M::new(0x42, "m");
            b.define(fun("f", vec![], vec![B::LdU64(1), B::Ret]).entry().returns(vec![ST::U64]));
            b
        },
        Ok(()),
    ));
    out.push((
        "entry returning a struct without drop",
        {
            let mut b = M::new(0x42, "m");
            let (s, d) = b.strukt("S", STORE, vec![("x", ST::U64)]);
            b.define(fun("f", vec![], vec![B::LdU64(1), B::Pack(d), B::Ret]).entry().returns(vec![ST::Struct(s)]));
            b
        },
        Err("does not have 'drop'"),
    ));
    out.push((
        "entry with a TxContext that is not last",
        {
            let mut b = M::new(0x42, "m");
            let ctx = b.ctx_mut();
            b.define(fun("f", vec![ctx, ST::U64], vec![B::MoveLoc(0), B::Pop, B::Ret]).entry());
            b
        },
        Err("expected a primitive or object type"),
    ));
    out
}

#[test]
fn sui_package_rules() {
    let mut failures = Vec::new();
    let cases = cases();
    for (name, b, expected) in &cases {
        // Move's own rules accept every case module: the outcome is the Sui rule's.
        if let Err(e) = verify_module_alone(&b.m, &VerifierConfig::sui()) {
            failures.push(format!("{name}: Move's rules reject the case module: {e}"));
            continue;
        }
        let got = verify_module_alone(&b.m, &VerifierConfig::sui_protocol());
        match (expected, &got) {
            (Ok(()), Ok(())) => {}
            (Err(fragment), Err(e)) => {
                let status_ok = if fragment.contains("invariant") {
                    e.status == StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR
                } else {
                    e.status == StatusCode::UNKNOWN_VERIFICATION_ERROR
                };
                let lower = e.message.to_ascii_lowercase();
                if !status_ok || !lower.contains(&fragment.to_ascii_lowercase()) {
                    failures.push(format!("{name}: expected {fragment:?}, got {e}"));
                }
            }
            _ => failures.push(format!("{name}: expected {expected:?}, got {got:?}")),
        }
    }
    for f in &failures {
        eprintln!("{f}");
    }
    assert!(failures.is_empty(), "{} of {} Sui rule cases wrong", failures.len(), cases.len());
    eprintln!("sui rules: {} cases as Sui decides", cases.len());
}

/// Sui's Move-level limits (`limits.rs` in Sui's verifier): the status under
/// Sui's defaults (`sui()`) and under its protocol limits (`sui_protocol()`).
#[test]
fn sui_limits() {
    let status = |b: &M, c: VerifierConfig| verify_module_alone(&b.m, &c).err().map(|e| e.status);
    let enum_with = |b: &mut M, name: &str, variants: usize, fields_each: usize| {
        let n = b.ident(name);
        b.m.struct_handles.push(StructHandle {
            module: ModuleHandleIndex(0),
            name: n,
            abilities: AbilitySet(DROP),
            type_parameters: vec![],
        });
        let h = StructHandleIndex(b.m.struct_handles.len() as u16 - 1);
        let variants = (0..variants)
            .map(|i| {
                let vn = b.ident(&format!("V{i}"));
                let fields = (0..fields_each)
                    .map(|j| FieldDefinition { name: b.ident(&format!("f{j}")), signature: ST::U64 })
                    .collect();
                VariantDefinition { name: vn, fields }
            })
            .collect();
        b.m.enum_defs.push(EnumDefinition { enum_handle: h, variants });
    };
    let mut cases: Vec<(&str, M, Option<StatusCode>, Option<StatusCode>)> = Vec::new();
    let mut b = M::new(0x42, "m");
    b.ident(&"x".repeat(128));
    cases.push(("identifier of 128 bytes", b, None, None));
    let mut b = M::new(0x42, "m");
    b.ident(&"x".repeat(129));
    cases.push((
        "identifier of 129 bytes",
        b,
        Some(StatusCode::IDENTIFIER_TOO_LONG),
        Some(StatusCode::IDENTIFIER_TOO_LONG),
    ));
    let mut b = M::new(0x42, "m");
    b.ident("<SELF>");
    cases.push(("identifier <SELF>", b, None, Some(StatusCode::INVALID_IDENTIFIER)));
    let constant = |n: usize| {
        let mut b = M::new(0x42, "m");
        let mut data = Vec::new();
        let mut len = n as u64;
        loop {
            let byte = (len & 0x7f) as u8;
            len >>= 7;
            if len == 0 {
                data.push(byte);
                break;
            }
            data.push(byte | 0x80);
        }
        data.resize(data.len() + n, 7);
        b.m.constant_pool.push(movejit_format::Constant { type_: vec_of(ST::U8), data });
        b
    };
    cases.push(("vector constant of 256 Ki elements", constant(256 * 1024), None, None));
    cases.push((
        "vector constant of 256 Ki + 1 elements",
        constant(256 * 1024 + 1),
        None,
        Some(StatusCode::TOO_MANY_VECTOR_ELEMENTS),
    ));
    let mut b = M::new(0x42, "m");
    let names: Vec<String> = (0..33).map(|i| format!("f{i}")).collect();
    b.strukt("S", DROP, names.iter().map(|n| (n.as_str(), ST::U64)).collect());
    cases.push(("struct with 33 fields", b, None, Some(StatusCode::MAX_FIELD_DEFINITIONS_REACHED)));
    let mut b = M::new(0x42, "m");
    enum_with(&mut b, "E", 127, 0);
    cases.push(("enum with 127 variants", b, None, None));
    let mut b = M::new(0x42, "m");
    enum_with(&mut b, "E", 128, 0);
    cases.push(("enum with 128 variants", b, None, Some(StatusCode::MAX_VARIANTS_REACHED)));
    let mut b = M::new(0x42, "m");
    enum_with(&mut b, "E", 3, 11);
    cases.push(("enum with 33 fields over its variants", b, None, Some(StatusCode::MAX_FIELD_DEFINITIONS_REACHED)));
    let mut b = M::new(0x42, "m");
    for i in 0..150 {
        b.strukt(&format!("S{i}"), DROP, vec![("x", ST::U64)]);
    }
    for i in 0..51 {
        enum_with(&mut b, &format!("E{i}"), 1, 1);
    }
    cases.push(("150 structs and 51 enums", b, None, Some(StatusCode::MAX_STRUCT_DEFINITIONS_REACHED)));
    for (name, b, under_sui, under_protocol) in &cases {
        assert_eq!(status(b, VerifierConfig::sui()), *under_sui, "{name} under sui()");
        assert_eq!(status(b, VerifierConfig::sui_protocol()), *under_protocol, "{name} under sui_protocol()");
    }
}
