//! Type helpers: abilities of a signature token, substitution, assignability.

use crate::error::VerifyError;
use movejit_format::{AbilitySet, CompiledModule, SignatureToken as ST, StatusCode, StructHandleIndex};

/// The abilities a struct's declared abilities leave after applying its type
/// arguments' abilities (phantom arguments do not count).
pub(crate) fn polymorphic_abilities(
    declared: AbilitySet,
    phantoms: impl Iterator<Item = bool>,
    args: impl Iterator<Item = AbilitySet>,
) -> AbilitySet {
    let mut abs = declared;
    for (phantom, arg) in phantoms.zip(args) {
        if phantom {
            continue;
        }
        // copy/drop/store need the argument's own; key needs the argument's store.
        let mut allowed = arg.0 & (AbilitySet::COPY | AbilitySet::DROP | AbilitySet::STORE);
        if arg.has_store() {
            allowed |= AbilitySet::KEY;
        }
        abs = abs.intersect(AbilitySet(allowed));
    }
    abs
}

/// What a type argument must have for a struct to have `abs`: key needs store.
pub(crate) fn requires(abs: AbilitySet) -> AbilitySet {
    let mut r = abs.0 & (AbilitySet::COPY | AbilitySet::DROP | AbilitySet::STORE);
    if abs.has_key() {
        r |= AbilitySet::STORE;
    }
    AbilitySet(r)
}

/// The abilities of `ty` where type parameter `i` has `constraints[i]`.
pub(crate) fn abilities(
    module: &CompiledModule,
    ty: &ST,
    constraints: &[AbilitySet],
) -> Result<AbilitySet, VerifyError> {
    let bad = || VerifyError::module(StatusCode::VERIFIER_INVARIANT_VIOLATION);
    Ok(match ty {
        ST::Bool
        | ST::U8
        | ST::U16
        | ST::U32
        | ST::U64
        | ST::U128
        | ST::U256
        | ST::Address
        | ST::I8
        | ST::I16
        | ST::I32
        | ST::I64
        | ST::I128
        | ST::I256 => AbilitySet::PRIMITIVES,
        ST::Reference(_) | ST::MutableReference(_) => AbilitySet::REFERENCES,
        ST::Signer => AbilitySet::SIGNER,
        ST::TypeParameter(i) => *constraints.get(*i as usize).ok_or_else(bad)?,
        ST::Vector(inner) => {
            let a = abilities(module, inner, constraints)?;
            polymorphic_abilities(AbilitySet::VECTOR, std::iter::once(false), std::iter::once(a))
        }
        ST::Function(_, _, a) => *a,
        ST::Struct(idx) => module.struct_handles.get(idx.idx()).ok_or_else(bad)?.abilities,
        ST::StructInstantiation(idx, args) => {
            let sh = module.struct_handles.get(idx.idx()).ok_or_else(bad)?;
            let mut arg_abs = Vec::with_capacity(args.len());
            for a in args {
                arg_abs.push(abilities(module, a, constraints)?);
            }
            polymorphic_abilities(sh.abilities, sh.type_parameters.iter().map(|p| p.is_phantom), arg_abs.into_iter())
        }
    })
}

/// `token` with type parameters replaced by `args` (unchanged if `args` is
/// empty). Out-of-range parameters stay as they are; the signature pass has
/// rejected them already.
pub(crate) fn instantiate(token: &ST, args: &[ST]) -> ST {
    if args.is_empty() {
        return token.clone();
    }
    let all = |v: &[ST]| v.iter().map(|t| instantiate(t, args)).collect::<Vec<_>>();
    match token {
        ST::TypeParameter(i) => args.get(*i as usize).cloned().unwrap_or_else(|| token.clone()),
        ST::Vector(t) => ST::Vector(Box::new(instantiate(t, args))),
        ST::Reference(t) => ST::Reference(Box::new(instantiate(t, args))),
        ST::MutableReference(t) => ST::MutableReference(Box::new(instantiate(t, args))),
        ST::StructInstantiation(h, ts) => ST::StructInstantiation(*h, all(ts)),
        ST::Function(p, r, a) => ST::Function(all(p), all(r), *a),
        other => other.clone(),
    }
}

/// The type of a struct handle applied to `args`.
pub(crate) fn struct_type(handle: StructHandleIndex, args: &[ST]) -> ST {
    if args.is_empty() {
        ST::Struct(handle)
    } else {
        ST::StructInstantiation(handle, args.to_vec())
    }
}

/// Whether a value of type `source` may flow where `target` is expected:
/// equality, except that a function value may carry more abilities than
/// required (and that nests through immutable references).
pub(crate) fn is_assignable(target: &ST, source: &ST) -> bool {
    match (target, source) {
        (ST::Function(a1, r1, ab1), ST::Function(a2, r2, ab2)) => a1 == a2 && r1 == r2 && ab2.contains(*ab1),
        (ST::Reference(t1), ST::Reference(t2)) => is_assignable(t1, t2),
        _ => target == source,
    }
}

/// Number of nodes in a type (for metering).
pub(crate) fn node_count(ty: &ST) -> usize {
    // Most types pushed are leaves: no walk (and no allocation) for them.
    if !matches!(
        ty,
        ST::Vector(_) | ST::Reference(_) | ST::MutableReference(_) | ST::StructInstantiation(..) | ST::Function(..)
    ) {
        return 1;
    }
    let mut n = 0;
    let mut stack = vec![ty];
    while let Some(t) = stack.pop() {
        n += 1;
        match t {
            ST::Vector(i) | ST::Reference(i) | ST::MutableReference(i) => stack.push(i),
            ST::StructInstantiation(_, a) => stack.extend(a.iter()),
            ST::Function(p, r, _) => {
                stack.extend(p.iter());
                stack.extend(r.iter())
            }
            _ => {}
        }
    }
    n
}

/// The fields of a struct definition (`variant` None) or of one of its
/// variants; None if the definition has no such shape.
pub(crate) fn struct_fields(
    def: &movejit_format::StructDefinition,
    variant: Option<u16>,
) -> Option<&[movejit_format::FieldDefinition]> {
    use movejit_format::StructFieldInformation as I;
    match (&def.field_information, variant) {
        (I::Declared(f), None) => Some(f),
        (I::DeclaredVariants(v), Some(i)) => v.get(i as usize).map(|v| &v.fields[..]),
        _ => None,
    }
}
