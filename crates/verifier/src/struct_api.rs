//! Aptos v10 struct APIs: functions named `pack$S`, `unpack$S$V`,
//! `test_variant$S$V`, `borrow$S$k[$t]`, `borrow_mut$S$k[$t]` must carry
//! the matching attribute (and vice versa), have exactly the signature the
//! struct implies, and consist of exactly `MoveLoc 0..n; <op>; Ret`.
//!
//! Reference safety treats a call to a `BorrowFieldMutable` function as the
//! field borrow itself, so this pass must run first and be exact.

use crate::error::{VerifyError, VerifyResult};
use movejit_format::{
    Bytecode, CodeUnit, CompiledModule, FieldDefinition, FunctionAttribute as FA, FunctionDefinition, FunctionHandle,
    SignatureIndex, SignatureToken as ST, StatusCode, StructDefinitionIndex, StructFieldInformation, StructHandleIndex,
    VariantDefinition,
};
use std::collections::BTreeMap;

type R<T = ()> = Result<T, &'static str>;

/// Per-module lookup tables built once.
pub(crate) struct Context {
    structs: BTreeMap<String, (StructHandleIndex, StructDefinitionIndex)>,
    /// Per enum: (offset, type) -> type order, and -> variants having it.
    type_orders: BTreeMap<String, BTreeMap<(u16, ST), u16>>,
    variant_sets: BTreeMap<String, BTreeMap<(u16, ST), Vec<u16>>>,
}

fn api_attr(attrs: &[FA]) -> R<Option<FA>> {
    let mut found = None;
    for a in attrs {
        if !matches!(a, FA::Persistent | FA::ModuleLock) {
            if found.is_some() {
                return Err("multiple struct API attributes");
            }
            found = Some(a.clone());
        }
    }
    Ok(found)
}

impl Context {
    pub fn new(m: &CompiledModule) -> VerifyResult<Context> {
        let fail = |msg: &str| VerifyError::module(StatusCode::INVALID_STRUCT_API_CODE).with_message(msg.to_string());
        let mut c = Context { structs: BTreeMap::new(), type_orders: BTreeMap::new(), variant_sets: BTreeMap::new() };
        for (i, d) in m.struct_defs.iter().enumerate() {
            let name = m.identifiers[m.struct_handles[d.struct_handle.idx()].name.idx()].clone();
            c.structs.insert(name.clone(), (d.struct_handle, StructDefinitionIndex(i as u16)));
            if let StructFieldInformation::DeclaredVariants(vs) = &d.field_information {
                let (orders, sets) = variant_maps(vs);
                c.type_orders.insert(name.clone(), orders);
                c.variant_sets.insert(name, sets);
            }
        }
        for h in &m.function_handles {
            api_attr(&h.attributes).map_err(fail)?;
        }
        Ok(c)
    }
}

/// Type orders are assigned by first appearance of (offset, type) across
/// variants in declaration order, as the compiler names borrow functions.
/// (field offset, field type) of an enum's variants.
type FieldKey = (u16, ST);

fn variant_maps(vs: &[VariantDefinition]) -> (BTreeMap<FieldKey, u16>, BTreeMap<FieldKey, Vec<u16>>) {
    let mut orders = BTreeMap::new();
    let mut sets: BTreeMap<(u16, ST), Vec<u16>> = BTreeMap::new();
    for (vi, v) in vs.iter().enumerate() {
        for (fi, f) in v.fields.iter().enumerate() {
            let key = (fi as u16, f.signature.clone());
            let n = orders.len() as u16;
            orders.entry(key.clone()).or_insert(n);
            sets.entry(key).or_default().push(vi as u16);
        }
    }
    (orders, sets)
}

#[derive(PartialEq)]
enum Prefix {
    Pack,
    Unpack,
    Test,
    Borrow,
}

struct Parsed {
    prefix: Prefix,
    mutable: bool,
    def: StructDefinitionIndex,
    handle: StructHandleIndex,
    name: String,
    variant: Option<String>,
    offset: Option<u16>,
    type_order: Option<u16>,
}

fn parse(name: &str, c: &Context, want_variant: bool) -> Option<Parsed> {
    let parts: Vec<&str> = name.split('$').collect();
    if parts.len() < 2 {
        return None;
    }
    let prefix = match parts[0] {
        "pack" => Prefix::Pack,
        "unpack" => Prefix::Unpack,
        "test_variant" => Prefix::Test,
        "borrow" | "borrow_mut" => Prefix::Borrow,
        _ => return None,
    };
    let mutable = parts[0] == "borrow_mut";
    // Struct names may contain '$': shortest match when a variant follows, else longest.
    let mut cand = String::new();
    let mut found: Option<(usize, String, (StructHandleIndex, StructDefinitionIndex))> = None;
    for (i, p) in parts.iter().enumerate().skip(1) {
        if i > 1 {
            cand.push('$');
        }
        cand.push_str(p);
        if let Some(s) = c.structs.get(&cand) {
            found = Some((i + 1, cand.clone(), *s));
            if want_variant {
                break;
            }
        }
    }
    let (end, sname, (handle, def)) = found?;
    let rest = &parts[end..];
    let (variant, offset, type_order) = match prefix {
        Prefix::Pack | Prefix::Unpack => ((!rest.is_empty()).then(|| rest.join("$")), None, None),
        Prefix::Test => {
            if rest.is_empty() {
                return None;
            }
            (Some(rest.join("$")), None, None)
        }
        Prefix::Borrow => match rest {
            [o] => (None, Some(o.parse().ok()?), None),
            [o, t] => (None, Some(o.parse().ok()?), Some(t.parse().ok()?)),
            _ => return None,
        },
    };
    Some(Parsed { prefix, mutable, def, handle, name: sname, variant, offset, type_order })
}

fn matches_attr(p: &Parsed, a: &FA) -> bool {
    match a {
        FA::Pack => p.prefix == Prefix::Pack && p.variant.is_none(),
        FA::PackVariant(_) => p.prefix == Prefix::Pack && p.variant.is_some(),
        FA::Unpack => p.prefix == Prefix::Unpack && p.variant.is_none(),
        FA::UnpackVariant(_) => p.prefix == Prefix::Unpack && p.variant.is_some(),
        FA::TestVariant(_) => p.prefix == Prefix::Test,
        FA::BorrowFieldImmutable(_) => p.prefix == Prefix::Borrow && !p.mutable,
        FA::BorrowFieldMutable(_) => p.prefix == Prefix::Borrow && p.mutable,
        FA::Persistent | FA::ModuleLock => false,
    }
}

fn canonical(args: &[ST], n: usize) -> R {
    let ok =
        args.len() == n && args.iter().enumerate().all(|(i, t)| matches!(t, ST::TypeParameter(j) if *j as usize == i));
    if ok {
        Ok(())
    } else {
        Err("non-canonical type parameters")
    }
}

fn canonical_in(t: &ST, h: StructHandleIndex, n: usize) -> R {
    for t in t.preorder() {
        if let ST::StructInstantiation(i, args) = t {
            if *i == h {
                canonical(args, n)?;
            }
        }
    }
    Ok(())
}

struct Wrapper<'a> {
    m: &'a CompiledModule,
    c: &'a Context,
    fh: &'a FunctionHandle,
    code: &'a CodeUnit,
    def: StructDefinitionIndex,
    handle: StructHandleIndex,
    n: usize,
}

impl Wrapper<'_> {
    fn sig(&self, i: SignatureIndex) -> &[ST] {
        &self.m.signatures[i.idx()].0
    }
    fn info(&self) -> &StructFieldInformation {
        &self.m.struct_defs[self.def.idx()].field_information
    }
    fn is_struct(&self, t: &ST) -> R {
        match t {
            ST::Struct(i) | ST::StructInstantiation(i, _) if *i == self.handle => Ok(()),
            _ => Err("type is not the struct"),
        }
    }
    fn fields_match(sig: &[ST], fields: &[FieldDefinition]) -> R {
        if sig.len() != fields.len() || sig.iter().zip(fields).any(|(s, f)| *s != f.signature) {
            return Err("signature does not match the fields");
        }
        Ok(())
    }
    fn sig_matches_fields(&self, sig: SignatureIndex, variant: Option<&str>) -> R {
        let sig = self.sig(sig);
        match (self.info(), variant) {
            (StructFieldInformation::Native, _) => Err("native struct"),
            (StructFieldInformation::Declared(f), None) => Self::fields_match(sig, f),
            (StructFieldInformation::Declared(_), Some(_)) => Err("variant op on a struct"),
            (StructFieldInformation::DeclaredVariants(_), None) => Err("plain op on an enum"),
            (StructFieldInformation::DeclaredVariants(vs), Some(v)) => {
                let var = vs.iter().find(|x| self.m.identifiers[x.name.idx()] == v).ok_or("unknown variant")?;
                Self::fields_match(sig, &var.fields)
            }
        }
    }
    fn returns_struct(&self) -> R {
        match self.sig(self.fh.return_) {
            [t] => self.is_struct(t),
            _ => Err("must return one value"),
        }
    }
    fn struct_param(&self, by_ref: bool) -> R {
        match (self.sig(self.fh.parameters), by_ref) {
            ([ST::Reference(inner)], true) => self.is_struct(inner),
            ([_], true) => Err("parameter must be &S"),
            ([t], false) => self.is_struct(t),
            _ => Err("must have one parameter"),
        }
    }
    fn borrow_param(&self, mutable: bool) -> R {
        match self.sig(self.fh.parameters) {
            [t @ (ST::Reference(inner) | ST::MutableReference(inner))] => {
                let (ST::Struct(i) | ST::StructInstantiation(i, _)) = &**inner else {
                    return Err("not a struct reference");
                };
                if *i != self.handle {
                    return Err("wrong struct");
                }
                if t.is_mutable_reference() != mutable {
                    return Err("mutability mismatch");
                }
                Ok(())
            }
            [_] => Err("parameter must be a reference"),
            _ => Err("must have one parameter"),
        }
    }
    fn variant_index(&self, name: &str, attr: u16) -> R<u16> {
        let StructFieldInformation::DeclaredVariants(vs) = self.info() else { return Err("not an enum") };
        match vs.iter().position(|v| self.m.identifiers[v.name.idx()] == name) {
            Some(i) if i as u16 == attr => Ok(attr),
            _ => Err("variant index mismatch"),
        }
    }
    fn borrow_return(&self, sname: &str, offset: u16, order: Option<u16>, mutable: bool) -> R<ST> {
        let inner = match (self.sig(self.fh.return_), mutable) {
            ([ST::Reference(i)], false) | ([ST::MutableReference(i)], true) => &**i,
            ([_], _) => return Err("return mutability mismatch"),
            _ => return Err("must return one value"),
        };
        let expected = match self.info() {
            StructFieldInformation::Native => return Err("native struct"),
            StructFieldInformation::Declared(f) => {
                if order.is_some() {
                    return Err("type order on a struct");
                }
                &f.get(offset as usize).ok_or("offset out of bounds")?.signature
            }
            StructFieldInformation::DeclaredVariants(_) => {
                let order = order.ok_or("missing type order")?;
                let map = self.c.type_orders.get(sname).ok_or("no type order map")?;
                map.iter()
                    .find(|((o, _), ord)| *o == offset && **ord == order)
                    .map(|((_, t), _)| t)
                    .ok_or("no such (offset, order)")?
            }
        };
        if inner != expected {
            return Err("return type does not match field");
        }
        Ok(expected.clone())
    }
    /// `MoveLoc 0..n; op; Ret`.
    fn pattern(&self, n: usize, op: impl Fn(&Bytecode) -> bool) -> R {
        let code = &self.code.code;
        if code.len() != n + 2 {
            return Err("wrong instruction count");
        }
        if !matches!(code[n + 1], Bytecode::Ret) || !op(&code[n]) {
            return Err("wrong instructions");
        }
        if code[..n].iter().enumerate().any(|(i, b)| !matches!(b, Bytecode::MoveLoc(l) if *l as usize == i)) {
            return Err("arguments not loaded in order");
        }
        Ok(())
    }
    fn def_inst(&self, i: movejit_format::StructDefInstantiationIndex) -> R<bool> {
        let inst = &self.m.struct_def_instantiations[i.idx()];
        if inst.def != self.def {
            return Err("wrong struct definition");
        }
        canonical(self.sig(inst.type_parameters), self.n)?;
        Ok(true)
    }
    fn second_last(&self) -> Option<&Bytecode> {
        self.code.code.len().checked_sub(2).and_then(|i| self.code.code.get(i))
    }
    fn variant_op(
        &self,
        n: usize,
        expected: u16,
        pick: impl Fn(&Bytecode) -> Option<(movejit_format::StructVariantHandleIndex, Option<SignatureIndex>)>,
    ) -> R {
        self.pattern(n, |b| pick(b).is_some())?;
        let (h, inst) = self.code.code.iter().find_map(&pick).ok_or("no variant instruction")?;
        if let Some(s) = inst {
            canonical(self.sig(s), self.n)?;
        }
        let vh = &self.m.struct_variant_handles[h.idx()];
        if vh.struct_index != self.def {
            return Err("variant of another struct");
        }
        if vh.variant != expected {
            return Err("variant index mismatch in code");
        }
        Ok(())
    }
    fn variant_pick(
        &self,
        plain: fn(&Bytecode) -> Option<movejit_format::StructVariantHandleIndex>,
        generic: fn(&Bytecode) -> Option<movejit_format::StructVariantInstantiationIndex>,
    ) -> impl Fn(&Bytecode) -> Option<(movejit_format::StructVariantHandleIndex, Option<SignatureIndex>)> + '_ {
        move |b| {
            if let Some(h) = plain(b) {
                return Some((h, None));
            }
            let i = generic(b)?;
            let inst = &self.m.struct_variant_instantiations[i.idx()];
            Some((inst.handle, Some(inst.type_parameters)))
        }
    }
    fn borrow_pattern(&self, mutable: bool, sname: &str, offset: u16, field_ty: &ST) -> R {
        use Bytecode::*;
        self.pattern(1, |b| match b {
            ImmBorrowField(_)
            | ImmBorrowFieldGeneric(_)
            | ImmBorrowVariantField(_)
            | ImmBorrowVariantFieldGeneric(_) => !mutable,
            MutBorrowField(_)
            | MutBorrowFieldGeneric(_)
            | MutBorrowVariantField(_)
            | MutBorrowVariantFieldGeneric(_) => mutable,
            _ => false,
        })?;
        let m = self.m;
        let b = &self.code.code[1];
        let (field, vfh) = match b {
            ImmBorrowField(h) | MutBorrowField(h) => (m.field_handles[h.idx()].clone(), None),
            ImmBorrowFieldGeneric(i) | MutBorrowFieldGeneric(i) => {
                let inst = &m.field_instantiations[i.idx()];
                canonical(self.sig(inst.type_parameters), self.n)?;
                (m.field_handles[inst.handle.idx()].clone(), None)
            }
            ImmBorrowVariantField(h) | MutBorrowVariantField(h) => {
                let v = &m.variant_field_handles[h.idx()];
                (movejit_format::FieldHandle { owner: v.struct_index, field: v.field }, Some(v))
            }
            ImmBorrowVariantFieldGeneric(i) | MutBorrowVariantFieldGeneric(i) => {
                let inst = &m.variant_field_instantiations[i.idx()];
                canonical(self.sig(inst.type_parameters), self.n)?;
                let v = &m.variant_field_handles[inst.handle.idx()];
                (movejit_format::FieldHandle { owner: v.struct_index, field: v.field }, Some(v))
            }
            _ => return Err("not a borrow"),
        };
        if field.owner != self.def {
            return Err("field of another struct");
        }
        if field.field != offset {
            return Err("offset mismatch in code");
        }
        let Some(v) = vfh else { return Ok(()) };
        let StructFieldInformation::DeclaredVariants(vs) = self.info() else {
            return Err("variant borrow on a struct");
        };
        let first = *v.variants.first().ok_or("no variants")?;
        let fields = &vs.get(first as usize).ok_or("variant out of bounds")?.fields;
        if &fields.get(offset as usize).ok_or("offset out of bounds")?.signature != field_ty {
            return Err("variant field type mismatch");
        }
        let expected =
            self.c.variant_sets.get(sname).and_then(|s| s.get(&(offset, field_ty.clone()))).ok_or("no variant set")?;
        if v.variants != *expected {
            return Err("variant set incomplete or unordered");
        }
        Ok(())
    }

    fn validate(&self, p: &Parsed, attr: &FA) -> R {
        match attr {
            FA::Pack => {
                self.sig_matches_fields(self.fh.parameters, None)?;
                self.returns_struct()?;
                let n = match self.info() {
                    StructFieldInformation::Declared(f) => f.len(),
                    _ => return Err("pack on non-struct"),
                };
                let generic = match self.second_last() {
                    Some(Bytecode::PackGeneric(i)) => self.def_inst(*i)?,
                    _ => false,
                };
                self.pattern(n, |b| match b {
                    Bytecode::Pack(d) => *d == self.def,
                    Bytecode::PackGeneric(_) => generic,
                    _ => false,
                })
            }
            FA::Unpack => {
                self.struct_param(false)?;
                self.sig_matches_fields(self.fh.return_, None)?;
                let generic = match self.second_last() {
                    Some(Bytecode::UnpackGeneric(i)) => self.def_inst(*i)?,
                    _ => false,
                };
                self.pattern(1, |b| match b {
                    Bytecode::Unpack(d) => *d == self.def,
                    Bytecode::UnpackGeneric(_) => generic,
                    _ => false,
                })
            }
            FA::PackVariant(idx) => {
                let v = p.variant.as_deref().ok_or("no variant")?;
                self.sig_matches_fields(self.fh.parameters, Some(v))?;
                self.returns_struct()?;
                let idx = self.variant_index(v, *idx)?;
                let StructFieldInformation::DeclaredVariants(vs) = self.info() else { return Err("not an enum") };
                let n = vs.get(idx as usize).ok_or("no variant")?.fields.len();
                self.variant_op(
                    n,
                    idx,
                    self.variant_pick(
                        |b| if let Bytecode::PackVariant(h) = b { Some(*h) } else { None },
                        |b| if let Bytecode::PackVariantGeneric(i) = b { Some(*i) } else { None },
                    ),
                )
            }
            FA::UnpackVariant(idx) => {
                let v = p.variant.as_deref().ok_or("no variant")?;
                self.struct_param(false)?;
                self.sig_matches_fields(self.fh.return_, Some(v))?;
                let idx = self.variant_index(v, *idx)?;
                self.variant_op(
                    1,
                    idx,
                    self.variant_pick(
                        |b| if let Bytecode::UnpackVariant(h) = b { Some(*h) } else { None },
                        |b| if let Bytecode::UnpackVariantGeneric(i) = b { Some(*i) } else { None },
                    ),
                )
            }
            FA::TestVariant(idx) => {
                let v = p.variant.as_deref().ok_or("no variant")?;
                self.struct_param(true)?;
                let idx = self.variant_index(v, *idx)?;
                self.variant_op(
                    1,
                    idx,
                    self.variant_pick(
                        |b| if let Bytecode::TestVariant(h) = b { Some(*h) } else { None },
                        |b| if let Bytecode::TestVariantGeneric(i) = b { Some(*i) } else { None },
                    ),
                )
            }
            FA::BorrowFieldImmutable(off) | FA::BorrowFieldMutable(off) => {
                if Some(*off) != p.offset {
                    return Err("offset mismatch with name");
                }
                self.borrow_param(p.mutable)?;
                let ty = self.borrow_return(&p.name, *off, p.type_order, p.mutable)?;
                self.borrow_pattern(p.mutable, &p.name, *off, &ty)
            }
            FA::Persistent | FA::ModuleLock => Err("not a struct API attribute"),
        }
    }
}

/// Checks one function definition (v10+ modules only).
pub(crate) fn check_function(m: &CompiledModule, c: &Context, fdef: &FunctionDefinition, index: u16) -> VerifyResult {
    check(m, c, fdef)
        .map_err(|msg| VerifyError::at_function(StatusCode::INVALID_STRUCT_API_CODE, index).with_message(msg))
}

fn check(m: &CompiledModule, c: &Context, fdef: &FunctionDefinition) -> R {
    let fh = &m.function_handles[fdef.function.idx()];
    let name = &m.identifiers[fh.name.idx()];
    let attr = api_attr(&fh.attributes)?;
    let want_variant = matches!(attr, Some(FA::PackVariant(_) | FA::UnpackVariant(_) | FA::TestVariant(_)));
    let (p, attr) = match (parse(name, c, want_variant), attr) {
        (None, None) => return Ok(()),
        (Some(_), None) => return Err("struct API name without attribute"),
        (None, Some(_)) => return Err("struct API attribute without matching name"),
        (Some(p), Some(a)) => {
            if !matches_attr(&p, &a) {
                return Err("attribute does not match the name");
            }
            (p, a)
        }
    };
    let sh = &m.struct_handles[p.handle.idx()];
    if sh.abilities.has_key() {
        return Err("key structs have no struct API");
    }
    let n = sh.type_parameters.len();
    if fh.type_parameters.len() != n {
        return Err("type parameter count differs from the struct's");
    }
    let code = fdef.code.as_ref().ok_or("struct API function is native")?;
    let w = Wrapper { m, c, fh, code, def: p.def, handle: p.handle, n };
    for s in [fh.parameters, fh.return_] {
        for t in w.sig(s) {
            canonical_in(t, p.handle, n)?;
        }
    }
    w.validate(&p, &attr)
}
