//! Cases for given modules: every public (or entry) function with
//! generated arguments, generic ones instantiated with primitive types.

#![forbid(unsafe_code)]

use crate::case::Case;
use crate::gen::ty::{Int, IntGen, Sc};
use crate::rng::Rng;
use movejit_format::{
    decode_module, version_and_flavour, AccountAddress, CompiledModule, Flavour, SignatureToken as T, StatusFlavour,
    StructFieldInformation, Visibility,
};
use movejit_runtime::bcs::write_uleb;
use movejit_runtime::Type;
use std::path::Path;

/// Primitive types generic functions are instantiated with.
const INSTANCES: [(Type, Option<Sc>); 4] = [
    (Type::U64, Some(Sc::Int(Int::U64))),
    (Type::U8, Some(Sc::Int(Int::U8))),
    (Type::Bool, Some(Sc::Bool)),
    (Type::Address, None),
];

/// A random BCS value of `tok` (type parameters replaced by `ty_args`);
/// `None` for types arguments cannot have here (datatypes: see
/// [`cases_for`], which generates them from the given modules; functions).
pub fn value_bcs(tok: &T, ty_args: &[usize], flavour: StatusFlavour, rng: &mut Rng, out: &mut Vec<u8>) -> Option<()> {
    let args: Vec<Arg> = ty_args.iter().map(|k| Arg::Primitive(*k)).collect();
    let scope = Scope { all: &[], module: None, flavour };
    scope.value(tok, &args, rng, out, 0)
}

/// What a type parameter stands for: one of [`INSTANCES`], or a token of
/// a module with that module's own type parameters.
#[derive(Clone)]
enum Arg<'a> {
    Primitive(usize),
    Token(&'a CompiledModule, &'a T, Vec<Arg<'a>>),
}

/// Where tokens are read: the modules datatypes are defined in, and the
/// module of the token (none: datatypes cannot be generated).
#[derive(Clone, Copy)]
struct Scope<'a> {
    all: &'a [CompiledModule],
    module: Option<&'a CompiledModule>,
    flavour: StatusFlavour,
}

/// Datatypes nest at most this deep in a generated value; vectors below
/// half of it are empty, so values stay small.
const MAX_DEPTH: usize = 8;

impl<'a> Scope<'a> {
    fn value(self, tok: &'a T, args: &[Arg<'a>], rng: &mut Rng, out: &mut Vec<u8>, depth: usize) -> Option<()> {
        let int = |i: Int, rng: &mut Rng, out: &mut Vec<u8>| out.extend(i.bcs(i.edge_value(rng)));
        match tok {
            T::Bool => out.push(rng.below(2) as u8),
            t if Int::of_token(t).is_some_and(Int::is_integer) => int(Int::of_token(t)?, rng, out),
            T::Address => out.extend(address(rng)),
            T::Signer => {
                // Aptos passes a signer as its enum (variant 0, Master).
                if self.flavour == StatusFlavour::Aptos {
                    out.push(0);
                }
                out.extend(address(rng));
            }
            T::Vector(e) => {
                let n = if depth > MAX_DEPTH / 2 { 0 } else { rng.below(5) };
                write_uleb(out, n as u64);
                for _ in 0..n {
                    self.value(e, args, rng, out, depth + 1)?;
                }
            }
            T::Reference(e) | T::MutableReference(e) => self.value(e, args, rng, out, depth)?,
            T::TypeParameter(i) => match args.get(*i as usize)? {
                Arg::Primitive(k) => match &INSTANCES.get(*k)?.1 {
                    Some(s) => out.extend(s.random_bcs(rng)),
                    None => out.extend(address(rng)),
                },
                Arg::Token(m, t, a) => Scope { module: Some(m), ..self }.value(t, a, rng, out, depth)?,
            },
            T::Struct(h) => self.datatype(*h, &[], args, rng, out, depth)?,
            T::StructInstantiation(h, targs) => self.datatype(*h, targs, args, rng, out, depth)?,
            _ => return None,
        }
        Some(())
    }

    /// A random value of the datatype `h` of this scope's module with type
    /// arguments `targs`: its fields in order, or a variant's tag and
    /// fields. `None` for native datatypes and those of modules not given.
    fn datatype(
        self,
        h: movejit_format::StructHandleIndex,
        targs: &'a [T],
        args: &[Arg<'a>],
        rng: &mut Rng,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Option<()> {
        let m = self.module?;
        if depth >= MAX_DEPTH {
            return None;
        }
        let handle = m.struct_handles.get(h.idx())?;
        let mh = m.module_handles.get(handle.module.idx())?;
        let (address, module, name) = (
            m.address_identifiers.get(mh.address.idx())?,
            m.identifiers.get(mh.name.idx())?,
            m.identifiers.get(handle.name.idx())?,
        );
        let d = self.all.iter().find(|d| d.address() == address && d.name() == module.as_str())?;
        let named = |i: movejit_format::StructHandleIndex| {
            d.struct_handles.get(i.idx()).and_then(|x| d.identifiers.get(x.name.idx())) == Some(name)
        };
        let inner: Vec<Arg<'a>> = targs.iter().map(|t| Arg::Token(m, t, args.to_vec())).collect();
        let scope = Scope { module: Some(d), ..self };
        let fields: &'a [movejit_format::FieldDefinition] =
            match d.struct_defs.iter().find(|s| named(s.struct_handle)).map(|s| &s.field_information) {
                Some(StructFieldInformation::Declared(fields)) => fields,
                Some(StructFieldInformation::DeclaredVariants(variants)) => pick_variant(variants, rng, out)?,
                Some(StructFieldInformation::Native) => return None,
                None => pick_variant(&d.enum_defs.iter().find(|e| named(e.enum_handle))?.variants, rng, out)?,
            };
        for f in fields {
            scope.value(&f.signature, &inner, rng, out, depth + 1)?;
        }
        Some(())
    }
}

/// Picks one of `variants`, writes its tag, and gives its fields.
fn pick_variant<'a>(
    variants: &'a [movejit_format::VariantDefinition],
    rng: &mut Rng,
    out: &mut Vec<u8>,
) -> Option<&'a [movejit_format::FieldDefinition]> {
    if variants.is_empty() {
        return None;
    }
    let k = rng.below(variants.len());
    write_uleb(out, k as u64);
    Some(&variants[k].fields)
}

fn address(rng: &mut Rng) -> Vec<u8> {
    match rng.below(3) {
        0 => {
            let mut a = vec![0u8; 32];
            a[31] = 1;
            a
        }
        1 => rng.bytes(32),
        _ => {
            let mut a = vec![0u8; 32];
            a[30] = 0xca;
            a[31] = 0xfe;
            a
        }
    }
}

/// One case per public or entry function of `module` (generic functions
/// once per primitive instantiation their constraints allow; those whose
/// parameters cannot be generated are counted in the second result).
pub fn cases_for(all: &[CompiledModule], module: usize, flavour: StatusFlavour, rng: &mut Rng) -> (Vec<Case>, u64) {
    let Some(m) = all.get(module) else { return (Vec::new(), 0) };
    let (mut cases, mut skipped) = (Vec::new(), 0);
    for f in &m.function_defs {
        if f.code.is_none() || (f.visibility != Visibility::Public && !f.is_entry) {
            continue;
        }
        let Some(h) = m.function_handles.get(f.function.idx()) else { continue };
        let Some(name) = m.identifiers.get(h.name.idx()) else { continue };
        let Some(params) = m.signatures.get(h.parameters.idx()) else { continue };
        // Instantiations: all type parameters to the same primitive, each of
        // the first two that satisfy every constraint.
        let mut insts: Vec<Vec<usize>> = Vec::new();
        if h.type_parameters.is_empty() {
            insts.push(Vec::new());
        } else {
            for k in 0..INSTANCES.len() {
                if h.type_parameters.iter().all(|c| c.0 & !movejit_format::AbilitySet::PRIMITIVES.0 == 0) {
                    insts.push(vec![k; h.type_parameters.len()]);
                }
                if insts.len() == 2 {
                    break;
                }
            }
        }
        if insts.is_empty() {
            skipped += 1;
        }
        for inst in insts {
            let mut args = Vec::new();
            let ok = params.0.iter().all(|p| {
                let mut out = Vec::new();
                let r = if flavour == StatusFlavour::Sui && is_tx_context(m, p) {
                    out = crate::exec::sui_transaction().move_bcs();
                    Some(())
                } else {
                    let args: Vec<Arg> = inst.iter().map(|k| Arg::Primitive(*k)).collect();
                    Scope { all, module: Some(m), flavour }.value(p, &args, rng, &mut out, 0)
                };
                args.push(out);
                r.is_some()
            });
            if !ok {
                skipped += 1;
                continue;
            }
            cases.push(Case {
                name: format!("{}::{}::{name}", m.address().to_hex_short(), m.name()),
                flavour,
                modules: all.to_vec(),
                address: *m.address(),
                module: m.name().to_string(),
                function: name.clone(),
                type_args: inst.iter().map(|k| INSTANCES[*k].0.clone()).collect(),
                args,
            });
        }
    }
    (cases, skipped)
}

/// Whether `tok` is `&TxContext` or `&mut TxContext` (Sui's
/// `0x2::tx_context::TxContext`), which a Sui transaction passes itself.
fn is_tx_context(m: &CompiledModule, tok: &T) -> bool {
    let (T::Reference(inner) | T::MutableReference(inner)) = tok else { return false };
    let T::Struct(s) = inner.as_ref() else { return false };
    let Some(h) = m.struct_handles.get(s.idx()) else { return false };
    let Some(mh) = m.module_handles.get(h.module.idx()) else { return false };
    m.address_identifiers.get(mh.address.idx()) == Some(&AccountAddress::from_u64(2))
        && m.identifiers.get(mh.name.idx()).is_some_and(|n| n == "tx_context")
        && m.identifiers.get(h.name.idx()).is_some_and(|n| n == "TxContext")
}

/// Given modules split into link sets, as `movejit diff PATH...` runs them.
#[derive(Debug, Default)]
pub struct Given {
    /// One set per version of the modules: the first holds the first
    /// version of every module id given (those that verify, in dependency
    /// order); each further version of a module gets a set of its own.
    pub sets: Vec<LinkSet>,
    /// Files that are unreadable, of the other flavour, or do not verify
    /// (bad dependencies included): (file label, reason).
    pub rejected: Vec<(String, String)>,
}

/// Modules that link with each other (one version per module id), and
/// which of them are under test.
#[derive(Debug)]
pub struct LinkSet {
    pub modules: Vec<CompiledModule>,
    /// Indexes into `modules` whose functions become cases.
    pub tested: Vec<usize>,
}

impl Given {
    /// Modules verified, each version counted once.
    pub fn verified(&self) -> usize {
        self.sets.iter().map(|s| s.tested.len()).sum()
    }
}

/// The flavour a set of module files runs as: Sui when any of them carries
/// Sui's flavour (unflavoured v5 and v6 modules run as either), else Aptos,
/// unless `forced`. As `movejit run` decides.
pub fn flavour_of<'a>(files: impl IntoIterator<Item = &'a [u8]>, forced: Option<StatusFlavour>) -> StatusFlavour {
    forced.unwrap_or_else(|| {
        let sui = files.into_iter().any(|b| matches!(version_and_flavour(b), Ok((_, Flavour::Sui))));
        if sui {
            StatusFlavour::Sui
        } else {
            StatusFlavour::Aptos
        }
    })
}

/// The `.mv` files of `path` (a file, or a folder searched recursively) as
/// (path, bytes), files nearer `path` first, then by path: a folder's own
/// modules come before the older versions a subfolder keeps of them, so
/// [`load_given`] takes them as the base versions.
pub fn module_files(path: &Path) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let mut found = Vec::new();
    let mut folders = vec![path.to_path_buf()];
    if !path.is_dir() {
        found.push(path.to_path_buf());
        folders.clear();
    }
    while let Some(dir) = folders.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let p = entry?.path();
            if p.is_dir() {
                folders.push(p);
            } else if p.extension().is_some_and(|x| x == "mv") {
                found.push(p);
            }
        }
    }
    found.sort_by(|a, b| (a.components().count(), a).cmp(&(b.components().count(), b)));
    found.into_iter().map(|p| Ok((p.display().to_string(), std::fs::read(&p)?))).collect()
}

/// Decodes and verifies module files (label, bytes) of `flavour` (see
/// [`flavour_of`]) into link sets. A folder may hold several versions of
/// one module (Sui's protocol snapshots do), which one link set cannot: the
/// first version given of each module id forms the base set, linked as one
/// bundle publish; every later version is verified in a copy of the base
/// with itself in place of the first one, without the base modules that
/// depend on that module (they were linked against the other version). A
/// file whose bytes repeat an earlier file's is the same version, skipped.
pub fn load_given(files: &[(String, Vec<u8>)], flavour: StatusFlavour) -> Given {
    let mut given = Given::default();
    let mut seen: Vec<&[u8]> = Vec::new();
    let (mut first, mut later) = (Vec::new(), Vec::new());
    for (label, bytes) in files {
        if seen.contains(&bytes.as_slice()) {
            continue;
        }
        seen.push(bytes);
        let of_flavour = match version_and_flavour(bytes) {
            Ok((_, Flavour::Sui)) => flavour == StatusFlavour::Sui,
            Ok((_, Flavour::Aptos)) => flavour == StatusFlavour::Aptos,
            Ok(_) | Err(_) => true,
        };
        match decode_module(bytes) {
            Ok(m) if of_flavour => {
                let same = |x: &CompiledModule| x.address() == m.address() && x.name() == m.name();
                if first.iter().any(|(_, f)| same(f)) {
                    later.push((label.clone(), m));
                } else {
                    first.push((label.clone(), m));
                }
            }
            Ok(_) => given.rejected.push((label.clone(), "of the other flavour".into())),
            Err(e) => given.rejected.push((label.clone(), format!("unreadable: {}", e.status.name()))),
        }
    }
    let (base, failed) = verified_in_order(first, flavour);
    given.rejected.extend(failed);
    let config = verifier_config(flavour);
    for (label, version) in later {
        let dependents = dependents_of(&base, version.address(), version.name());
        let mut modules: Vec<CompiledModule> =
            base.iter().zip(&dependents).filter(|(_, d)| !**d).map(|(m, _)| m.clone()).collect();
        let linked: Vec<&CompiledModule> = modules.iter().chain([&version]).collect();
        match movejit_verifier::verify_module(&version, &linked, &config) {
            Ok(()) => {
                modules.push(version);
                given.sets.push(LinkSet { tested: vec![modules.len() - 1], modules });
            }
            Err(e) => given.rejected.push((label, e.status.name().to_string())),
        }
    }
    if !base.is_empty() {
        given.sets.insert(0, LinkSet { tested: (0..base.len()).collect(), modules: base });
    }
    given
}

/// Which of `modules` (in dependency order) depend on `address::name`,
/// directly or not, itself included.
fn dependents_of(modules: &[CompiledModule], address: &AccountAddress, name: &str) -> Vec<bool> {
    let mut hit = Vec::with_capacity(modules.len());
    for m in modules {
        let deps = m.immediate_dependencies();
        let depends = deps.iter().any(|(a, n)| {
            modules.iter().zip(&hit).any(|(d, h): (&CompiledModule, &bool)| *h && d.address() == a && d.name() == n)
        });
        hit.push(depends || (m.address() == address && m.name() == name));
    }
    hit
}

fn verifier_config(flavour: StatusFlavour) -> movejit_verifier::VerifierConfig {
    match flavour {
        StatusFlavour::Aptos => movejit_verifier::VerifierConfig::aptos(),
        StatusFlavour::Sui => movejit_verifier::VerifierConfig::sui(),
    }
}

/// The modules of `given` (label, module) that verify against each other,
/// in dependency order, and the others with why: (label, status, or the
/// dependency missing).
pub fn verified_in_order(
    given: Vec<(String, CompiledModule)>,
    flavour: StatusFlavour,
) -> (Vec<CompiledModule>, Vec<(String, String)>) {
    let config = verifier_config(flavour);
    // Linking looks past the immediate dependencies (friends, which depend
    // on the module, and a dependency's own dependencies), so every module
    // links against all the given ones, as a bundle publish would.
    let bundle: Vec<CompiledModule> = given.iter().map(|(_, m)| m.clone()).collect();
    let linked: Vec<&CompiledModule> = bundle.iter().collect();
    let mut done: Vec<CompiledModule> = Vec::new();
    let mut failed = Vec::new();
    let mut pending = given;
    loop {
        let before = pending.len();
        let mut rest = Vec::new();
        for (label, m) in pending {
            let deps = m.immediate_dependencies();
            if !deps.iter().all(|(a, n)| done.iter().any(|d| d.address() == a && d.name() == n)) {
                rest.push((label, m));
                continue;
            }
            match movejit_verifier::verify_module(&m, &linked, &config) {
                Ok(()) => done.push(m),
                Err(e) => failed.push((label, e.status.name().to_string())),
            }
        }
        pending = rest;
        if pending.len() == before || pending.is_empty() {
            for (label, m) in pending {
                let missing = m
                    .immediate_dependencies()
                    .into_iter()
                    .find(|(a, n)| !done.iter().any(|d| d.address() == a && d.name() == n))
                    .map(|(a, n)| format!("{}::{n}", a.to_hex_short()))
                    .unwrap_or_default();
                failed.push((label, format!("dependency {missing} not verified")));
            }
            return (done, failed);
        }
    }
}
