//! Random verifiable modules, written as `.masm` text.
//!
//! Well-typedness is by construction: expressions are generated for a
//! wanted scalar type and emitted as stack code; every statement leaves the
//! operand stack empty (Move's verifier requires it at block boundaries);
//! every local is initialised in the function's prologue and only moved in
//! the final return (or moved and stored back at once), so locals are
//! always available. Termination is by construction too: loops count a
//! reserved counter up to a constant below 6, calls go to later functions
//! only (a DAG; loop bodies call only leaf functions), and a recursive
//! function recurses once per frame on a depth parameter its callers pass
//! as a constant.

#![forbid(unsafe_code)]

use super::ty::{Int, IntGen, Sc};
use crate::rng::Rng;
use std::fmt::Write as _;

/// Which non-scalar families a module uses (all off: a scalar program,
/// which today's JIT compiles).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Features {
    pub structs: bool,
    pub vectors: bool,
    pub refs: bool,
    pub globals: bool,
    pub enums: bool,
    pub closures: bool,
    pub natives: bool,
    pub abort_msg: bool,
}

/// A generated unit: `.masm` texts (dependencies first) and the calls to
/// make on it.
#[derive(Clone, Debug)]
pub struct Program {
    pub version: u32,
    pub sui: bool,
    pub features: Features,
    /// `.masm` texts, dependencies (native modules at 0x1) first; the last
    /// is the generated module `0xcafe::g`.
    pub units: Vec<String>,
    /// (function, type arguments, BCS arguments) of each call to make.
    pub calls: Vec<(String, Vec<Sc>, Vec<Vec<u8>>)>,
    /// What Move's rules give for the first call, when known independently
    /// of both executors (single integer instructions): [`Expect`].
    pub expect: Option<Expect>,
}

/// An expected result: the value of type `result` (a bool as 0 or 1), or
/// `ARITHMETIC_ERROR` (`None`) at `offset` of the function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expect {
    pub result: Sc,
    pub value: Option<ethnum::I256>,
    pub offset: u16,
}

/// The module every generated program lives in.
pub const MODULE: &str = "g";
pub const ADDRESS: &str = "0xcafe";

#[derive(Clone, Debug, PartialEq)]
enum LTy {
    Sc(Sc),
    /// A reserved `u64` loop counter (read, never assigned by statements).
    Counter,
    MutRef(Sc),
    Signer,
    Address,
    S,
    BoxT(Sc),
    Vec(Sc),
    VecS,
    VecVec,
    E,
    O(Sc),
}

#[derive(Clone, Debug)]
struct Sig {
    name: String,
    params: Vec<Sc>,
    rets: Vec<Sc>,
    recursive: bool,
    /// Has loops or calls (so callers' loop bodies may not call it).
    heavy: bool,
}

struct ModCtx {
    sui: bool,
    ints: Vec<Int>,
    f: Features,
    generics: bool,
    sigs: Vec<Sig>,
    /// Field types of `S { a, b }` and the field of `E::B { y, z: bool }`.
    s_fields: (Sc, Sc),
    box_t: Sc,
    vec_t: Sc,
}

fn random_sc(rng: &mut Rng, ints: &[Int]) -> Sc {
    if rng.chance(1, 6) {
        Sc::Bool
    } else {
        Sc::Int(rng.pick(ints))
    }
}

/// Generates one program from `rng`.
pub fn generate(rng: &mut Rng) -> Program {
    generate_of(rng, None)
}

/// Generates one program from `rng`, of the Sui flavour when `sui` says so
/// (`None`: one in six).
pub fn generate_of(rng: &mut Rng, sui: Option<bool>) -> Program {
    let drawn = rng.chance(1, 6);
    let sui = sui.unwrap_or(drawn);
    let version = if sui { 7 } else { rng.pick(&[10, 10, 10, 10, 10, 9, 8, 7, 6]) };
    let ints = Int::available(version, sui);
    let rich = rng.chance(1, 2);
    let on = |rng: &mut Rng| rich && rng.chance(2, 3);
    let f = Features {
        structs: on(rng),
        vectors: on(rng),
        refs: on(rng),
        globals: on(rng) && !sui,
        enums: on(rng) && version >= 7,
        closures: on(rng) && !sui && version >= 8,
        natives: on(rng),
        abort_msg: on(rng) && !sui && version >= 10,
    };
    let generics = rng.chance(1, 2);
    let s_fields = (random_sc(rng, &ints), random_sc(rng, &ints));
    let box_t = random_sc(rng, &ints);
    let vec_t = random_sc(rng, &ints);
    let mut ctx = ModCtx { sui, ints, f, generics, sigs: Vec::new(), s_fields, box_t, vec_t };

    // Signatures: f0 (the entry) then helpers h1..hn.
    let n_helpers = rng.below(5);
    let entry_rets = (0..rng.below(4)).map(|_| random_sc(rng, &ctx.ints)).collect();
    let entry_params = (0..rng.below(4)).map(|_| random_sc(rng, &ctx.ints)).collect();
    ctx.sigs.push(Sig { name: "f0".into(), params: entry_params, rets: entry_rets, recursive: false, heavy: true });
    for i in 1..=n_helpers {
        let recursive = rng.chance(1, 4);
        let mut params: Vec<Sc> = (0..rng.range(1, 3)).map(|_| random_sc(rng, &ctx.ints)).collect();
        if recursive {
            params.insert(0, Sc::Int(Int::U64));
        }
        let rets = (0..if rng.chance(1, 5) { 2 } else { 1 }).map(|_| random_sc(rng, &ctx.ints)).collect();
        ctx.sigs.push(Sig { name: format!("h{i}"), params, rets, recursive, heavy: true });
    }

    // Bodies, callees first so their weight is known.
    let mut bodies = vec![String::new(); ctx.sigs.len()];
    let mut uses_natives = (false, false, false); // vector, signer, hash
    for me in (0..ctx.sigs.len()).rev() {
        let mut g = FnGen::new(rng, &ctx, me);
        let text = g.function();
        let heavy = g.heavy;
        uses_natives.0 |= g.natives.0;
        uses_natives.1 |= g.natives.1;
        uses_natives.2 |= g.natives.2;
        ctx.sigs[me].heavy = heavy;
        bodies[me] = text;
    }

    // Module text.
    let mut units = Vec::new();
    let mut header = String::new();
    let flavour = if sui { "flavour sui\n" } else { "" };
    if uses_natives.0 {
        units.push(format!(
            "version {version}\n{flavour}module 0x1::vector\npublic native fun length<T>(v: &vector<T>): u64\n"
        ));
        let _ = writeln!(header, "use 0x1::vector\n    fun length<T0>(l0: &vector<T0>): u64");
    }
    if uses_natives.1 {
        units.push(format!(
            "version {version}\n{flavour}module 0x1::signer\npublic native fun borrow_address(s: &signer): &address\n"
        ));
        let _ = writeln!(header, "use 0x1::signer\n    fun borrow_address(l0: &signer): &address");
    }
    if uses_natives.2 {
        units.push(format!(
            "version {version}\n{flavour}module 0x1::hash\npublic native fun sha3_256(data: vector<u8>): vector<u8>\n"
        ));
        let _ = writeln!(header, "use 0x1::hash\n    fun sha3_256(l0: vector<u8>): vector<u8>");
    }
    let mut text = format!("version {version}\n{flavour}module {ADDRESS}::{MODULE}\n{header}\n");
    let (a, b) = ctx.s_fields;
    if f.structs || f.vectors {
        let _ = write!(text, "struct S has copy + drop + store\n  a: {}\n  b: {}\n\n", a.name(), b.name());
        text.push_str("struct Box<T> has copy + drop + store\n  v: T\n\n");
    }
    if f.globals {
        text.push_str("struct R has key\n  n: u64\n\nstruct G<T> has key\n  v: T\n\n");
    }
    if f.enums {
        let _ = write!(text, "enum E has copy + drop\n  A\n    x: u64\n  B\n    y: {}\n    z: bool\n  C\n\n", a.name());
        text.push_str("enum O<T> has copy + drop\n  N\n  V\n    v: T\n\n");
    }
    if generics {
        text.push_str(
            "public fun g_sel<T: copy + drop>(c: bool, a: T, b: T): T\n    move_loc c\n    br_false other\n    move_loc a\n    ret\nother: move_loc b\n    ret\n\n",
        );
        text.push_str(
            "public fun g_eq<T: copy + drop>(a: T, b: T): bool\n    move_loc a\n    move_loc b\n    eq\n    ret\n\n",
        );
    }
    for b in &bodies {
        text.push_str(b);
        text.push('\n');
    }
    units.push(text);

    // Calls: the entry, then every helper on its own (scalar, so the JIT
    // compares them even when the entry uses what it does not compile yet).
    let mut calls = Vec::new();
    for (i, sig) in ctx.sigs.iter().enumerate() {
        let mut args = Vec::new();
        if i == 0 && f.globals {
            let addr = rng.bytes(32);
            let mut signer = vec![0u8];
            signer.extend(&addr);
            args.push(signer);
            args.push(if rng.chance(3, 4) { addr } else { rng.bytes(32) });
        }
        for (k, p) in sig.params.iter().enumerate() {
            if sig.recursive && k == 0 {
                args.push(rng.range(0, 12).to_le_bytes().to_vec());
            } else {
                args.push(p.random_bcs(rng));
            }
        }
        if i == 0 && f.refs {
            args.push(Sc::Int(Int::U64).random_bcs(rng));
        }
        calls.push((sig.name.clone(), Vec::new(), args));
    }
    if generics {
        for _ in 0..2 {
            let t = random_sc(rng, &ctx.ints);
            let args = vec![vec![rng.below(2) as u8], t.random_bcs(rng), t.random_bcs(rng)];
            calls.push(("g_sel".into(), vec![t], args));
        }
    }
    Program { version, sui, features: f, units, calls, expect: None }
}

struct FnGen<'a> {
    rng: &'a mut Rng,
    m: &'a ModCtx,
    me: usize,
    lines: Vec<String>,
    locals: Vec<(String, LTy)>,
    nparams: usize,
    moved: Vec<bool>,
    labels: usize,
    loop_depth: usize,
    self_calls: usize,
    heavy_calls: usize,
    budget: usize,
    heavy: bool,
    in_ret: bool,
    acquires: Vec<&'static str>,
    natives: (bool, bool, bool),
}

const ARITH: [&str; 5] = ["add", "sub", "mul", "div", "mod"];
const BITS: [&str; 3] = ["bit_or", "bit_and", "xor"];
const CMP: [&str; 4] = ["lt", "gt", "le", "ge"];

impl<'a> FnGen<'a> {
    fn new(rng: &'a mut Rng, m: &'a ModCtx, me: usize) -> Self {
        let rich = me == 0 && m.f != Features::default();
        let budget = if rich { rng.range(10, 30) } else { rng.range(3, 14) } as usize;
        FnGen {
            rng,
            m,
            me,
            lines: Vec::new(),
            locals: Vec::new(),
            nparams: 0,
            moved: Vec::new(),
            labels: 0,
            loop_depth: 0,
            self_calls: 0,
            heavy_calls: 0,
            budget,
            heavy: false,
            in_ret: false,
            acquires: Vec::new(),
            natives: (false, false, false),
        }
    }

    fn sig(&self) -> &'a Sig {
        &self.m.sigs[self.me]
    }
    fn is_entry(&self) -> bool {
        self.me == 0
    }
    fn emit(&mut self, s: impl Into<String>) {
        self.lines.push(s.into());
    }
    fn label(&mut self) -> String {
        self.labels += 1;
        format!("L{}", self.labels)
    }
    fn place(&mut self, l: &str) {
        self.lines.push(format!("{l}:"));
    }
    fn add_local(&mut self, name: String, t: LTy) -> usize {
        self.locals.push((name, t));
        self.moved.push(false);
        self.locals.len() - 1
    }
    fn local_of(&self, t: &LTy) -> Option<usize> {
        self.locals.iter().position(|(_, lt)| lt == t)
    }
    fn name(&self, i: usize) -> String {
        self.locals[i].0.clone()
    }
    fn feature_locals(&self) -> bool {
        self.is_entry()
    }

    /// The whole function as text.
    fn function(&mut self) -> String {
        let sig = self.sig();
        let f = self.m.f;
        let entry = self.is_entry();
        if entry && f.globals {
            self.add_local("sg".into(), LTy::Signer);
            self.add_local("ad".into(), LTy::Address);
        }
        for (i, p) in sig.params.iter().enumerate() {
            let t = if sig.recursive && i == 0 { LTy::Counter } else { LTy::Sc(*p) };
            self.add_local(format!("p{i}"), t);
        }
        if entry && f.refs {
            self.add_local("pm".into(), LTy::MutRef(Sc::Int(Int::U64)));
        }
        self.nparams = self.locals.len();
        // Scalar locals, counters, feature locals.
        for i in 0..self.rng.below(4) {
            let t = random_sc(self.rng, &self.m.ints);
            self.add_local(format!("x{i}"), LTy::Sc(t));
        }
        self.add_local("c0".into(), LTy::Counter);
        self.add_local("c1".into(), LTy::Counter);
        if self.feature_locals() {
            let (m, box_t, vec_t) = (self.m, self.m.box_t, self.m.vec_t);
            if m.f.structs || m.f.vectors {
                self.add_local("ls".into(), LTy::S);
                self.add_local("lb".into(), LTy::BoxT(box_t));
            }
            if m.f.vectors || m.f.natives {
                self.add_local("lv".into(), LTy::Vec(vec_t));
                self.add_local("lv8".into(), LTy::Vec(Sc::Int(Int::U8)));
            }
            if m.f.vectors {
                self.add_local("lvs".into(), LTy::VecS);
                self.add_local("lvv".into(), LTy::VecVec);
            }
            if m.f.enums {
                self.add_local("le".into(), LTy::E);
                self.add_local("lo".into(), LTy::O(box_t));
            }
        }
        // Prologue: initialise every non-parameter local (unavailable
        // until then, so initialisers read only what is initialised).
        for i in self.nparams..self.locals.len() {
            self.moved[i] = true;
        }
        for i in self.nparams..self.locals.len() {
            self.init_local(i);
            self.moved[i] = false;
        }
        if sig.recursive {
            let l = self.label();
            self.emit("copy_loc p0");
            self.emit("ld_u64 0");
            self.emit("eq");
            self.emit(format!("br_false {l}"));
            self.ret();
            self.place(&l);
        }
        let n = self.rng.range(1, 6) as usize;
        self.block(n, 3);
        self.ret();

        // Header.
        let params: Vec<String> =
            self.locals[..self.nparams].iter().map(|(n, t)| format!("{n}: {}", self.ty_text(t))).collect();
        let rets: Vec<&str> = sig.rets.iter().map(|t| t.name()).collect();
        let rets = match rets.len() {
            0 => String::new(),
            1 => format!(": {}", rets[0]),
            _ => format!(": ({})", rets.join(", ")),
        };
        let mut acq = self.acquires.clone();
        acq.sort_unstable();
        acq.dedup();
        let acquires = if acq.is_empty() { String::new() } else { format!(" acquires {}", acq.join(", ")) };
        let mut out = format!("public fun {}({}){rets}{acquires}\n", sig.name, params.join(", "));
        for (n, t) in &self.locals[self.nparams..] {
            let _ = writeln!(out, "    local {n}: {}", self.ty_text(t));
        }
        for l in &self.lines {
            if l.ends_with(':') {
                let _ = writeln!(out, "{l}");
            } else {
                let _ = writeln!(out, "    {l}");
            }
        }
        out
    }

    fn ty_text(&self, t: &LTy) -> String {
        match t {
            LTy::Sc(s) => s.name().into(),
            LTy::Counter => "u64".into(),
            LTy::MutRef(s) => format!("&mut {}", s.name()),
            LTy::Signer => "&signer".into(),
            LTy::Address => "address".into(),
            LTy::S => "S".into(),
            LTy::BoxT(s) => format!("Box<{}>", s.name()),
            LTy::Vec(s) => format!("vector<{}>", s.name()),
            LTy::VecS => "vector<S>".into(),
            LTy::VecVec => "vector<vector<u8>>".into(),
            LTy::E => "E".into(),
            LTy::O(s) => format!("O<{}>", s.name()),
        }
    }

    fn init_local(&mut self, i: usize) {
        let name = self.name(i);
        match self.locals[i].1.clone() {
            LTy::Sc(s) => self.expr(s, 1),
            LTy::Counter => self.emit("ld_u64 0"),
            LTy::S => self.pack_s(),
            LTy::BoxT(s) => {
                self.expr(s, 1);
                self.emit(format!("pack Box<{}>", s.name()));
            }
            LTy::Vec(s) => {
                let n = self.rng.below(4);
                for _ in 0..n {
                    self.expr(s, 1);
                }
                self.emit(format!("vec_pack <{}>, {n}", s.name()));
            }
            LTy::VecS => {
                let n = self.rng.below(3);
                for _ in 0..n {
                    self.pack_s();
                }
                self.emit(format!("vec_pack <S>, {n}"));
            }
            LTy::VecVec => {
                self.emit("ld_const <vector<u8>> [1, 2, 3]");
                self.emit("vec_pack <u8>, 0");
                self.emit("vec_pack <vector<u8>>, 2");
            }
            LTy::E => self.pack_e(),
            LTy::O(s) => self.pack_o(s),
            LTy::MutRef(_) | LTy::Signer | LTy::Address => return,
        }
        self.emit(format!("st_loc {name}"));
    }

    fn pack_s(&mut self) {
        let (a, b) = self.m.s_fields;
        self.expr(a, 1);
        self.expr(b, 1);
        self.emit("pack S");
    }
    fn pack_e(&mut self) {
        match self.rng.below(3) {
            0 => {
                self.expr(Sc::Int(Int::U64), 1);
                self.emit("pack_variant E, A");
            }
            1 => {
                self.expr(self.m.s_fields.0, 1);
                self.expr(Sc::Bool, 1);
                self.emit("pack_variant E, B");
            }
            _ => self.emit("pack_variant E, C"),
        }
    }
    fn pack_o(&mut self, s: Sc) {
        if self.rng.chance(1, 3) {
            self.emit(format!("pack_variant O<{}>, N", s.name()));
        } else {
            self.expr(s, 1);
            self.emit(format!("pack_variant O<{}>, V", s.name()));
        }
    }

    // ---- statements ----

    fn block(&mut self, n: usize, depth: u32) {
        for _ in 0..n {
            if self.budget == 0 {
                return;
            }
            self.budget -= 1;
            self.stmt(depth);
        }
    }

    /// Scalar locals statements may assign (not counters or refs).
    fn assignable(&self, t: Option<Sc>) -> Vec<usize> {
        (0..self.locals.len())
            .filter(|&i| matches!(self.locals[i].1, LTy::Sc(s) if t.is_none_or(|t| t == s)) && !self.moved[i])
            .collect()
    }

    fn stmt(&mut self, depth: u32) {
        let features = self.is_entry() && self.m.f != Features::default();
        let choice = self.rng.below(if features { 32 } else { 16 });
        match choice {
            0..=4 => {
                let vars = self.assignable(None);
                if let Some(&i) = vars.get(self.rng.below(vars.len().max(1))) {
                    let LTy::Sc(t) = self.locals[i].1 else { return };
                    self.expr(t, 3);
                    let n = self.name(i);
                    self.emit(format!("st_loc {n}"));
                }
            }
            5 | 6 if depth > 0 => {
                // if / else (br_false or br_true with swapped arms)
                let (l_else, l_end) = (self.label(), self.label());
                self.expr(Sc::Bool, 2);
                let swapped = self.rng.chance(1, 3);
                self.emit(format!("{} {l_else}", if swapped { "br_true" } else { "br_false" }));
                let n = self.rng.range(1, 3) as usize;
                self.block(n, depth - 1);
                self.emit(format!("branch {l_end}"));
                self.place(&l_else);
                if self.rng.chance(2, 3) {
                    let n = self.rng.range(1, 2) as usize;
                    self.block(n, depth - 1);
                }
                self.emit("nop");
                self.place(&l_end);
            }
            7 if depth > 0 && self.loop_depth < 2 => self.loop_stmt(depth),
            8 => {
                // abort if
                let l = self.label();
                self.expr(Sc::Bool, 2);
                self.emit(format!("br_false {l}"));
                self.expr(Sc::Int(Int::U64), 1);
                self.emit("abort");
                self.place(&l);
            }
            9 if depth < 3 => {
                // early return
                let l = self.label();
                self.expr(Sc::Bool, 2);
                self.emit(format!("br_false {l}"));
                self.ret();
                self.place(&l);
            }
            10 => {
                let t = random_sc(self.rng, &self.m.ints);
                self.expr(t, 3);
                self.emit("pop");
            }
            11 => self.emit("nop"),
            12 | 13 => {
                // x = op(move x, e)
                let vars: Vec<usize> = self
                    .assignable(None)
                    .into_iter()
                    .filter(|&i| matches!(self.locals[i].1, LTy::Sc(Sc::Int(_))))
                    .collect();
                if vars.is_empty() {
                    return;
                }
                let i = vars[self.rng.below(vars.len())];
                let LTy::Sc(Sc::Int(t)) = self.locals[i].1 else { return };
                let n = self.name(i);
                self.emit(format!("move_loc {n}"));
                self.moved[i] = true;
                self.expr(Sc::Int(t), 2);
                self.moved[i] = false;
                let op = self.int_binop(t);
                self.emit(op);
                self.emit(format!("st_loc {n}"));
            }
            14 | 15 => {
                // call for effect; results stored or dropped
                if let Some(j) = self.callee(None) {
                    self.call_args(j);
                    let rets = self.m.sigs[j].rets.clone();
                    for t in rets.iter().rev() {
                        let vars = self.assignable(Some(*t));
                        match vars.first() {
                            Some(&v) if self.rng.chance(1, 2) => {
                                let n = self.name(v);
                                self.emit(format!("st_loc {n}"))
                            }
                            _ => self.emit("pop"),
                        }
                    }
                }
            }
            16.. if features => self.feature_stmt(),
            _ => {}
        }
    }

    fn loop_stmt(&mut self, depth: u32) {
        let counter = if self.loop_depth == 0 { "c0" } else { "c1" };
        let trips = self.rng.range(0, 5);
        let (head, end) = (self.label(), self.label());
        self.emit("ld_u64 0");
        self.emit(format!("st_loc {counter}"));
        self.place(&head);
        self.emit(format!("copy_loc {counter}"));
        self.emit(format!("ld_u64 {trips}"));
        self.emit("lt");
        self.emit(format!("br_false {end}"));
        self.loop_depth += 1;
        self.heavy = true;
        let n = self.rng.range(1, 3) as usize;
        self.block(n, depth - 1);
        self.loop_depth -= 1;
        self.emit(format!("move_loc {counter}"));
        self.emit("ld_u64 1");
        self.emit("add");
        self.emit(format!("st_loc {counter}"));
        self.emit(format!("branch {head}"));
        self.place(&end);
    }

    fn ret(&mut self) {
        self.in_ret = true;
        let rets = self.sig().rets.clone();
        for t in rets {
            self.expr(t, 2);
        }
        self.in_ret = false;
        self.emit("ret");
        self.moved.iter_mut().for_each(|m| *m = false);
    }

    // ---- expressions ----

    fn int_binop(&mut self, t: Int) -> &'static str {
        if !t.signed() && self.rng.chance(1, 3) {
            self.rng.pick(&BITS)
        } else {
            self.rng.pick(&ARITH)
        }
    }

    /// A function this one may call returning `ret` (any when `None`).
    fn callee(&mut self, ret: Option<Sc>) -> Option<usize> {
        let me = self.me;
        let in_loop = self.loop_depth > 0;
        let heavy_ok = self.heavy_calls < 3 && !in_loop;
        let cands: Vec<usize> = (me + 1..self.m.sigs.len())
            .filter(|&j| {
                let s = &self.m.sigs[j];
                (heavy_ok || !s.heavy) && ret.is_none_or(|r| s.rets.len() == 1 && s.rets[0] == r)
            })
            .collect();
        if cands.is_empty() {
            return None;
        }
        let j = cands[self.rng.below(cands.len())];
        if self.m.sigs[j].heavy {
            self.heavy_calls += 1;
        }
        self.heavy = true;
        Some(j)
    }

    fn call_args(&mut self, j: usize) {
        let s = &self.m.sigs[j];
        let (params, recursive, name) = (s.params.clone(), s.recursive, s.name.clone());
        for (k, p) in params.iter().enumerate() {
            if recursive && k == 0 {
                let d = if self.rng.chance(1, 40) { 1100 } else { self.rng.range(0, 10) };
                self.emit(format!("ld_u64 {d}"));
            } else {
                self.expr(*p, 1);
            }
        }
        self.emit(format!("call {name}"));
    }

    fn readable(&self, t: Sc) -> Vec<usize> {
        (0..self.locals.len())
            .filter(|&i| {
                !self.moved[i]
                    && match &self.locals[i].1 {
                        LTy::Sc(s) => *s == t,
                        LTy::Counter => t == Sc::Int(Int::U64),
                        _ => false,
                    }
            })
            .collect()
    }

    fn leaf(&mut self, t: Sc) {
        let vars = self.readable(t);
        if !vars.is_empty() && self.rng.chance(1, 2) {
            let i = vars[self.rng.below(vars.len())];
            let n = self.name(i);
            if self.in_ret && matches!(self.locals[i].1, LTy::Sc(_)) && self.rng.chance(1, 2) {
                self.emit(format!("move_loc {n}"));
                self.moved[i] = true;
            } else {
                self.emit(format!("copy_loc {n}"));
            }
            return;
        }
        if t == Sc::Int(Int::U64) && self.is_entry() && self.m.f.refs && self.rng.chance(1, 4) {
            if let Some(p) = self.local_of(&LTy::MutRef(Sc::Int(Int::U64))) {
                let n = self.name(p);
                self.emit(format!("copy_loc {n}"));
                self.emit("read_ref");
                return;
            }
        }
        self.constant(t);
    }

    fn constant(&mut self, t: Sc) {
        match t {
            Sc::Bool => {
                let o = if self.rng.chance(1, 2) { "ld_true" } else { "ld_false" };
                self.emit(o)
            }
            Sc::Int(i) => {
                let v = if self.rng.chance(1, 2) {
                    ethnum::I256::from(self.rng.below(10) as i64)
                } else {
                    i.edge_value(self.rng)
                };
                let text = i.text(v);
                if self.rng.chance(1, 6) {
                    self.emit(format!("ld_const <{}> {text}", i.name()));
                } else {
                    self.emit(format!("ld_{} {text}", i.name()));
                }
            }
        }
    }

    fn expr(&mut self, t: Sc, depth: u32) {
        if depth == 0 || self.rng.chance(1, 4) {
            return self.leaf(t);
        }
        let d = depth - 1;
        match t {
            Sc::Bool => match self.rng.below(8) {
                0 => {
                    self.expr(Sc::Bool, d);
                    self.emit("not");
                }
                1 => {
                    self.expr(Sc::Bool, d);
                    self.expr(Sc::Bool, d);
                    {
                        let o = self.rng.pick(&["and", "or"]);
                        self.emit(o);
                    }
                }
                2 | 3 => {
                    let s = random_sc(self.rng, &self.m.ints);
                    self.expr(s, d);
                    self.expr(s, d);
                    {
                        let o = self.rng.pick(&["eq", "neq"]);
                        self.emit(o);
                    }
                }
                4 | 5 => {
                    let i = self.rng.pick(&self.m.ints);
                    self.expr(Sc::Int(i), d);
                    self.expr(Sc::Int(i), d);
                    {
                        let o = self.rng.pick(&CMP);
                        self.emit(o);
                    }
                }
                6 if self.m.generics => {
                    let s = random_sc(self.rng, &self.m.ints);
                    self.expr(s, d);
                    self.expr(s, d);
                    self.emit(format!("call g_eq<{}>", s.name()));
                }
                _ => self.call_or_leaf(t, d),
            },
            Sc::Int(i) => match self.rng.below(12) {
                0..=3 => {
                    self.expr(t, d);
                    self.expr(t, d);
                    let op = self.int_binop(i);
                    self.emit(op);
                }
                4 if !i.signed() => {
                    self.expr(t, d);
                    if self.rng.chance(3, 4) {
                        let k = super::ty::shift_amount(self.rng, i.bits());
                        self.emit(format!("ld_u8 {k}"));
                    } else {
                        self.expr(Sc::Int(Int::U8), d);
                    }
                    {
                        let o = self.rng.pick(&["shl", "shr"]);
                        self.emit(o);
                    }
                }
                5 | 6 => {
                    let from = self.rng.pick(&self.m.ints);
                    if self.rng.chance(1, 3) {
                        // A constant at the edge of the target's range.
                        let v = from.edge_at_width(self.rng, i.bits().min(from.bits()));
                        self.emit(format!("ld_{} {}", from.name(), from.text(v)));
                    } else {
                        self.expr(Sc::Int(from), d);
                    }
                    self.emit(format!("cast_{}", i.name()));
                }
                7 if i.signed() => {
                    self.expr(t, d);
                    self.emit("negate");
                }
                8 if self.m.generics => {
                    self.expr(Sc::Bool, d);
                    self.expr(t, d);
                    self.expr(t, d);
                    self.emit(format!("call g_sel<{}>", i.name()));
                }
                9 | 10 => self.call_or_leaf(t, d),
                _ => self.leaf(t),
            },
        }
    }

    fn call_or_leaf(&mut self, t: Sc, d: u32) {
        let sig = self.sig();
        if sig.recursive && self.self_calls == 0 && self.loop_depth == 0 && sig.rets == [t] && self.rng.chance(1, 2) {
            self.self_calls += 1;
            self.heavy = true;
            self.emit("copy_loc p0");
            self.emit("ld_u64 1");
            self.emit("sub");
            for p in sig.params[1..].iter().copied() {
                self.expr(p, d.min(1));
            }
            let name = sig.name.clone();
            self.emit(format!("call {name}"));
            return;
        }
        match self.callee(Some(t)) {
            Some(j) => self.call_args(j),
            None => self.leaf(t),
        }
    }

    // ---- non-scalar families (entry function only) ----

    fn feature_stmt(&mut self) {
        let f = self.m.f;
        let mut fams: Vec<u8> = Vec::new();
        if f.structs {
            fams.push(0);
        }
        if f.vectors {
            fams.push(1);
        }
        if f.refs {
            fams.push(2);
        }
        if f.globals {
            fams.push(3);
        }
        if f.enums {
            fams.push(4);
        }
        if f.closures && self.m.sigs.len() > 1 {
            fams.push(5);
        }
        if f.natives {
            fams.push(6);
        }
        if f.abort_msg {
            fams.push(7);
        }
        if fams.is_empty() {
            return;
        }
        match self.rng.pick(&fams) {
            0 => self.struct_stmt(),
            1 => self.vector_stmt(),
            2 => self.ref_stmt(),
            3 => self.global_stmt(),
            4 => self.enum_stmt(),
            5 => self.closure_stmt(),
            6 => self.native_stmt(),
            _ => self.abort_msg_stmt(),
        }
    }

    /// Stores a scalar result of type `t` into a local of that type, or drops it.
    fn sink(&mut self, t: Sc) {
        let vars = self.assignable(Some(t));
        match vars.first() {
            Some(&v) if self.rng.chance(1, 2) => {
                let n = self.name(v);
                self.emit(format!("st_loc {n}"));
            }
            _ => self.emit("pop"),
        }
    }

    fn struct_stmt(&mut self) {
        let (a, b) = self.m.s_fields;
        let bt = self.m.box_t;
        match self.rng.below(7) {
            0 => {
                self.pack_s();
                self.emit("st_loc ls");
            }
            1 => {
                self.expr(a, 2);
                self.emit("mut_borrow_loc ls");
                self.emit("mut_borrow_field S, a");
                self.emit("write_ref");
            }
            2 => {
                self.emit("borrow_loc ls");
                self.emit("borrow_field S, b");
                self.emit("read_ref");
                self.sink(b);
            }
            3 => {
                self.emit("copy_loc ls");
                self.emit("unpack S");
                self.sink(b);
                self.sink(a);
            }
            4 => {
                self.expr(bt, 2);
                self.emit(format!("pack Box<{}>", bt.name()));
                self.emit(format!("unpack Box<{}>", bt.name()));
                self.sink(bt);
            }
            5 => {
                self.emit("borrow_loc lb");
                self.emit(format!("borrow_field Box<{}>, v", bt.name()));
                self.emit("read_ref");
                self.sink(bt);
            }
            _ => {
                self.expr(bt, 2);
                self.emit("mut_borrow_loc lb");
                self.emit(format!("mut_borrow_field Box<{}>, v", bt.name()));
                self.emit("write_ref");
            }
        }
    }

    fn index(&mut self) {
        let i = if self.rng.chance(1, 6) { self.rng.range(3, 9) } else { self.rng.range(0, 2) };
        self.emit(format!("ld_u64 {i}"));
    }

    fn vector_stmt(&mut self) {
        let t = self.m.vec_t;
        let tn = t.name();
        match self.rng.below(11) {
            0 => {
                self.emit("mut_borrow_loc lv");
                self.expr(t, 2);
                self.emit(format!("vec_push_back <{tn}>"));
            }
            1 => {
                self.emit("borrow_loc lv");
                self.emit(format!("vec_len <{tn}>"));
                self.sink(Sc::Int(Int::U64));
            }
            2 => {
                self.emit("borrow_loc lv");
                self.index();
                self.emit(format!("vec_borrow <{tn}>"));
                self.emit("read_ref");
                self.sink(t);
            }
            3 => {
                self.expr(t, 2);
                self.emit("mut_borrow_loc lv");
                self.index();
                self.emit(format!("vec_mut_borrow <{tn}>"));
                self.emit("write_ref");
            }
            4 => {
                self.emit("mut_borrow_loc lv");
                self.index();
                self.index();
                self.emit(format!("vec_swap <{tn}>"));
            }
            5 => {
                self.emit("mut_borrow_loc lv");
                self.emit(format!("vec_pop_back <{tn}>"));
                self.sink(t);
            }
            6 => {
                let n = self.rng.below(4);
                self.emit("copy_loc lv");
                self.emit(format!("vec_unpack <{tn}>, {n}"));
                for _ in 0..n {
                    self.emit("pop");
                }
            }
            7 => {
                self.emit("mut_borrow_loc lvs");
                self.pack_s();
                self.emit("vec_push_back <S>");
            }
            8 => {
                let (_, b) = self.m.s_fields;
                self.emit("borrow_loc lvs");
                self.index();
                self.emit("vec_borrow <S>");
                self.emit("borrow_field S, b");
                self.emit("read_ref");
                self.sink(b);
            }
            9 => {
                self.emit("mut_borrow_loc lvv");
                self.index();
                self.emit("vec_mut_borrow <vector<u8>>");
                self.expr(Sc::Int(Int::U8), 1);
                self.emit("vec_push_back <u8>");
            }
            _ => {
                self.emit("mut_borrow_loc lvv");
                self.emit("copy_loc lv8");
                self.emit("vec_push_back <vector<u8>>");
            }
        }
    }

    fn ref_stmt(&mut self) {
        let vars = self.assignable(None);
        match self.rng.below(4) {
            0 if !vars.is_empty() => {
                let i = vars[self.rng.below(vars.len())];
                let LTy::Sc(t) = self.locals[i].1 else { return };
                let n = self.name(i);
                self.expr(t, 2);
                self.emit(format!("mut_borrow_loc {n}"));
                self.emit("write_ref");
            }
            1 if !vars.is_empty() => {
                let i = vars[self.rng.below(vars.len())];
                let LTy::Sc(t) = self.locals[i].1 else { return };
                let n = self.name(i);
                self.emit(format!("mut_borrow_loc {n}"));
                self.emit("freeze_ref");
                self.emit("read_ref");
                self.sink(t);
            }
            2 if !vars.is_empty() => {
                let i = vars[self.rng.below(vars.len())];
                let LTy::Sc(t) = self.locals[i].1 else { return };
                let n = self.name(i);
                self.emit(format!("borrow_loc {n}"));
                self.emit("read_ref");
                self.sink(t);
            }
            _ => {
                self.expr(Sc::Int(Int::U64), 2);
                self.emit("copy_loc pm");
                self.emit("write_ref");
            }
        }
    }

    fn global_stmt(&mut self) {
        let t = self.m.box_t;
        let tn = t.name();
        match self.rng.below(9) {
            0 | 1 => {
                self.emit("copy_loc sg");
                self.expr(Sc::Int(Int::U64), 1);
                self.emit("pack R");
                self.emit("move_to R");
            }
            2 => {
                self.emit("copy_loc ad");
                self.emit("exists R");
                self.sink(Sc::Bool);
            }
            3 => {
                let l = self.label();
                self.emit("copy_loc ad");
                self.emit("exists R");
                self.emit(format!("br_false {l}"));
                self.expr(Sc::Int(Int::U64), 1);
                self.emit("copy_loc ad");
                self.emit("mut_borrow_global R");
                self.emit("mut_borrow_field R, n");
                self.emit("write_ref");
                self.place(&l);
                self.acquires.push("R");
            }
            4 => {
                self.emit("copy_loc ad");
                self.emit("borrow_global R");
                self.emit("borrow_field R, n");
                self.emit("read_ref");
                self.sink(Sc::Int(Int::U64));
                self.acquires.push("R");
            }
            5 => {
                self.emit("copy_loc ad");
                self.emit("move_from R");
                self.emit("unpack R");
                self.sink(Sc::Int(Int::U64));
                self.acquires.push("R");
            }
            6 => {
                self.emit("copy_loc sg");
                self.expr(t, 1);
                self.emit(format!("pack G<{tn}>"));
                self.emit(format!("move_to G<{tn}>"));
            }
            7 => {
                self.emit("copy_loc ad");
                self.emit(format!("exists G<{tn}>"));
                self.sink(Sc::Bool);
                if self.rng.chance(1, 2) {
                    self.emit("copy_loc ad");
                    self.emit(format!("borrow_global G<{tn}>"));
                    self.emit(format!("borrow_field G<{tn}>, v"));
                    self.emit("read_ref");
                    self.sink(t);
                    self.acquires.push("G");
                }
            }
            _ => {
                self.emit("copy_loc ad");
                self.emit(format!("mut_borrow_global G<{tn}>"));
                self.emit(format!("mut_borrow_field G<{tn}>, v"));
                self.emit("read_ref");
                self.sink(t);
                if self.rng.chance(1, 2) {
                    self.emit("copy_loc ad");
                    self.emit(format!("move_from G<{tn}>"));
                    self.emit(format!("unpack G<{tn}>"));
                    self.sink(t);
                }
                self.acquires.push("G");
            }
        }
    }

    fn enum_stmt(&mut self) {
        let a = self.m.s_fields.0;
        let ot = self.m.box_t;
        let on = ot.name();
        if self.m.sui {
            match self.rng.below(8) {
                5 => {
                    self.emit("copy_loc lo");
                    self.emit(format!("unpack_variant O<{on}>, V"));
                    self.sink(ot);
                }
                6 => {
                    self.emit("borrow_loc lo");
                    self.emit(format!("unpack_variant_ref O<{on}>, V"));
                    self.emit("read_ref");
                    self.sink(ot);
                }
                7 => {
                    self.expr(ot, 1);
                    self.emit("mut_borrow_loc lo");
                    self.emit(format!("unpack_variant_mut_ref O<{on}>, V"));
                    self.emit("write_ref");
                }
                0 => {
                    self.pack_e();
                    self.emit("st_loc le");
                }
                1 => {
                    self.emit("copy_loc le");
                    self.emit("unpack_variant E, A");
                    self.sink(Sc::Int(Int::U64));
                }
                2 => {
                    self.emit("borrow_loc le");
                    self.emit("unpack_variant_ref E, B");
                    self.emit("pop");
                    self.emit("read_ref");
                    self.sink(a);
                }
                3 => {
                    self.expr(Sc::Int(Int::U64), 1);
                    self.emit("mut_borrow_loc le");
                    self.emit("unpack_variant_mut_ref E, A");
                    self.emit("write_ref");
                }
                _ => {
                    let (la, lb, lc, end) = (self.label(), self.label(), self.label(), self.label());
                    self.emit("borrow_loc le");
                    self.emit(format!("variant_switch E, [{la}, {lb}, {lc}]"));
                    for l in [&la, &lb, &lc] {
                        self.place(l);
                        self.emit("nop");
                        if self.rng.chance(1, 2) {
                            let vars = self.assignable(None);
                            if let Some(&v) = vars.first() {
                                let LTy::Sc(t) = self.locals[v].1 else { continue };
                                let n = self.name(v);
                                self.expr(t, 1);
                                self.emit(format!("st_loc {n}"));
                            }
                        }
                        self.emit(format!("branch {end}"));
                    }
                    self.place(&end);
                    self.emit("nop");
                }
            }
            return;
        }
        match self.rng.below(9) {
            0 => {
                self.pack_e();
                self.emit("st_loc le");
            }
            1 => {
                self.emit("borrow_loc le");
                let v = self.rng.pick(&["A", "B", "C"]);
                self.emit(format!("test_variant E, {v}"));
                self.sink(Sc::Bool);
            }
            2 => {
                self.emit("copy_loc le");
                self.emit("unpack_variant E, B");
                self.sink(Sc::Bool);
                self.sink(a);
            }
            3 => {
                self.emit("borrow_loc le");
                self.emit("borrow_variant_field E, A::x");
                self.emit("read_ref");
                self.sink(Sc::Int(Int::U64));
            }
            4 => {
                self.expr(Sc::Int(Int::U64), 1);
                self.emit("mut_borrow_loc le");
                self.emit("mut_borrow_variant_field E, A::x");
                self.emit("write_ref");
            }
            5 => {
                self.pack_o(ot);
                self.emit("st_loc lo");
            }
            6 => {
                self.emit("borrow_loc lo");
                self.emit(format!("test_variant O<{on}>, V"));
                self.sink(Sc::Bool);
            }
            7 => {
                self.emit("borrow_loc lo");
                self.emit(format!("borrow_variant_field O<{on}>, V::v"));
                self.emit("read_ref");
                self.sink(ot);
            }
            _ => {
                if self.rng.chance(1, 2) {
                    self.emit("copy_loc lo");
                    self.emit(format!("unpack_variant O<{on}>, V"));
                    self.sink(ot);
                } else {
                    self.expr(ot, 1);
                    self.emit("mut_borrow_loc lo");
                    self.emit(format!("mut_borrow_variant_field O<{on}>, V::v"));
                    self.emit("write_ref");
                }
            }
        }
    }

    fn closure_stmt(&mut self) {
        // A closure over a helper (or a generic instance), capturing a
        // prefix of its parameters, called at once.
        if self.m.generics && self.rng.chance(1, 3) {
            let t = random_sc(self.rng, &self.m.ints);
            let tn = t.name();
            self.expr(t, 1);
            self.expr(t, 1);
            self.expr(Sc::Bool, 1);
            self.emit(format!("pack_closure g_sel<{tn}>, 1"));
            self.emit(format!("call_closure <|{tn}, {tn}|{tn} has copy + drop>"));
            self.sink(t);
            return;
        }
        let j = self.rng.range(1, (self.m.sigs.len() - 1) as u64) as usize;
        let sig = &self.m.sigs[j];
        if sig.recursive || sig.heavy && self.loop_depth > 0 {
            return;
        }
        let (params, rets, name) = (sig.params.clone(), sig.rets.clone(), sig.name.clone());
        let k = self.rng.range(1, params.len() as u64) as usize;
        for p in &params[k..] {
            self.expr(*p, 1);
        }
        for p in &params[..k] {
            self.expr(*p, 1);
        }
        let mask = (1u64 << k) - 1;
        self.emit(format!("pack_closure {name}, {mask}"));
        let rest: Vec<&str> = params[k..].iter().map(|p| p.name()).collect();
        let r: Vec<&str> = rets.iter().map(|p| p.name()).collect();
        let r = if r.len() == 1 { r[0].to_string() } else { format!("({})", r.join(", ")) };
        self.emit(format!("call_closure <|{}|{r} has copy + drop>", rest.join(", ")));
        for t in rets.iter().rev() {
            self.sink(*t);
        }
    }

    fn native_stmt(&mut self) {
        let globals = self.m.f.globals;
        match self.rng.below(3) {
            0 => {
                self.natives.0 = true;
                let tn = self.m.vec_t.name();
                self.emit("borrow_loc lv");
                self.emit(format!("call vector::length<{tn}>"));
                self.sink(Sc::Int(Int::U64));
            }
            1 if globals => {
                self.natives.1 = true;
                self.emit("copy_loc sg");
                self.emit("call signer::borrow_address");
                self.emit("read_ref");
                self.emit("st_loc ad");
            }
            _ => {
                self.natives.2 = true;
                self.emit("copy_loc lv8");
                self.emit("call hash::sha3_256");
                self.emit("st_loc lv8");
            }
        }
    }

    fn abort_msg_stmt(&mut self) {
        let l = self.label();
        self.expr(Sc::Bool, 1);
        self.emit(format!("br_false {l}"));
        self.expr(Sc::Int(Int::U64), 1);
        let bytes: Vec<String> = if self.rng.chance(1, 5) {
            vec!["255".into(), "254".into()]
        } else {
            (0..self.rng.below(12)).map(|_| (b'a' + self.rng.below(26) as u8).to_string()).collect()
        };
        self.emit(format!("ld_const <vector<u8>> [{}]", bytes.join(", ")));
        self.emit("abort_msg");
        self.place(&l);
    }
}
