//! Publishing a bundle of modules over already-published ones, as Aptos's
//! module publishing stages it: a module named twice in the bundle is
//! DUPLICATE_MODULE_NAME; a module with the id of a published one is an
//! upgrade and must pass [`compat::check_upgrade`]; then every module of the
//! bundle is verified and linked against the published modules with the
//! bundle's versions in place of the ones they replace.

use crate::{
    compat,
    config::VerifierConfig,
    dependencies::{module_id, ModuleId},
    error::{VerifyError, VerifyResult},
    verify_module,
};
use movejit_format::{CompiledModule, StatusCode};
use std::collections::{BTreeMap, BTreeSet};

/// The modules visible after publishing `bundle` over `published`: each id
/// once, the bundle's version (its first, if named twice) in place of a
/// published one. Later entries of `published` replace earlier ones with
/// the same id (each was published after the one before).
pub fn linked_set<'a>(published: &[&'a CompiledModule], bundle: &[&'a CompiledModule]) -> Vec<&'a CompiledModule> {
    let mut store: BTreeMap<ModuleId, &CompiledModule> = BTreeMap::new();
    let mut unnamed = Vec::new();
    for m in published {
        match module_id(m) {
            Some(id) => {
                store.insert(id, m);
            }
            None => unnamed.push(*m),
        }
    }
    let mut staged = BTreeSet::new();
    for m in bundle {
        match module_id(m) {
            Some(id) if staged.insert(id.clone()) => {
                store.insert(id, m);
            }
            Some(_) => {}
            None => unnamed.push(*m),
        }
    }
    store.into_values().chain(unnamed).collect()
}

/// The staging checks for each module of `bundle` (in order): not named
/// earlier in the bundle, and compatible with the published module it
/// replaces, if any. `published` as for [`linked_set`].
pub fn check_staging(published: &[&CompiledModule], bundle: &[&CompiledModule]) -> Vec<VerifyResult> {
    let mut old: BTreeMap<ModuleId, &CompiledModule> = BTreeMap::new();
    for m in published {
        if let Some(id) = module_id(m) {
            old.insert(id, m);
        }
    }
    let mut staged = BTreeSet::new();
    bundle
        .iter()
        .map(|m| {
            let Some(id) = module_id(m) else {
                return Ok(());
            };
            if !staged.insert(id.clone()) {
                return Err(VerifyError::module(StatusCode::DUPLICATE_MODULE_NAME)
                    .with_message(format!("module {}::{} occurs more than once in the bundle", id.0, id.1)));
            }
            match old.get(&id) {
                Some(prev) => compat::check_upgrade(prev, m),
                None => Ok(()),
            }
        })
        .collect()
}

/// Every module of `bundle`'s own outcome: its staging check, else its
/// verification against [`linked_set`].
pub fn verify_bundle(
    published: &[&CompiledModule],
    bundle: &[&CompiledModule],
    config: &VerifierConfig,
) -> Vec<VerifyResult> {
    let all = linked_set(published, bundle);
    check_staging(published, bundle)
        .into_iter()
        .zip(bundle)
        .map(|(staging, m)| staging.and_then(|()| verify_module(m, &all, config)))
        .collect()
}

/// What publishing `bundle` gives as one transaction: the first staging
/// error in bundle order, else the first verification error.
pub fn publish(published: &[&CompiledModule], bundle: &[&CompiledModule], config: &VerifierConfig) -> VerifyResult {
    check_staging(published, bundle).into_iter().collect::<VerifyResult<Vec<()>>>()?;
    let all = linked_set(published, bundle);
    bundle.iter().try_for_each(|m| verify_module(m, &all, config))
}
