//! `0x1::code::request_publish[_with_allowed_deps]`: a transaction asks to
//! publish a module bundle; the host publishes it after the transaction
//! (as Aptos's adapter does), taking the request with
//! [`take_publish_request`].

use crate::args::{pop, pop_address, Args, Registrar};
use movejit_runtime::gas::native::NativeParam as P;
use movejit_runtime::natives::NativeExtensions;
use movejit_runtime::{AccountAddress, StatusCode, Value, VmError, VmResult};
use std::collections::{BTreeMap, BTreeSet};

/// A second request in one transaction: `error::invalid_state(0)`.
pub const EALREADY_REQUESTED: u64 = 0x03_0000;
const REQUEST_PUBLISH_BASE: P = P::named("aptos_framework.code.request_publish.base");
const REQUEST_PUBLISH_PER_BYTE: P = P::named("aptos_framework.code.request_publish.per_byte");

/// The upgrade policy that skips compatibility checks.
const ARBITRARY_POLICY: u8 = 0;

/// A module bundle a transaction asked to publish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublishRequest {
    pub destination: AccountAddress,
    pub bundle: Vec<Vec<u8>>,
    pub expected_modules: BTreeSet<String>,
    /// With `request_publish_with_allowed_deps`: the modules the bundle may
    /// depend on (its own included).
    pub allowed_deps: Option<BTreeMap<AccountAddress, BTreeSet<String>>>,
    pub check_compat: bool,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct CodeRequests {
    request: Option<PublishRequest>,
}

/// The publish request of the transaction that just ran, if it made one.
pub fn take_publish_request(ext: &mut NativeExtensions) -> Option<PublishRequest> {
    ext.get_mut::<CodeRequests>().and_then(|c| c.request.take())
}

/// Forgets a request (its transaction failed).
pub(crate) fn discard(ext: &mut NativeExtensions) {
    ext.remove::<CodeRequests>();
}

fn move_string(v: &Value) -> VmResult<String> {
    match v {
        Value::Struct(f) if f.len() == 1 => {
            String::from_utf8(f[0].to_bytes()?).map_err(|_| VmError::new(StatusCode::INTERNAL_TYPE_ERROR))
        }
        _ => Err(VmError::new(StatusCode::INTERNAL_TYPE_ERROR)),
    }
}

fn request(
    cx: &mut movejit_runtime::NativeContext<'_>,
    mut args: Args,
    with_allowed_deps: bool,
) -> VmResult<Vec<Value>> {
    cx.gas.charge_aptos_native(&[(REQUEST_PUBLISH_BASE, 1)])?;
    let policy = match pop(&mut args)? {
        Value::U8(p) => p,
        v => return Err(VmError::invariant(format!("policy {v:?}"))),
    };
    let bundle: Vec<Vec<u8>> =
        pop(&mut args)?.into_vec()?.iter().map(|m| Ok(m.to_bytes()?)).collect::<VmResult<_>>()?;
    let mut bytes: usize = bundle.iter().map(Vec::len).sum();
    // Aptos prices an allowed dependency's account (32 bytes) once per account.
    let mut aptos_bytes = bytes;
    let allowed_deps = if with_allowed_deps {
        let mut deps: BTreeMap<AccountAddress, BTreeSet<String>> = BTreeMap::new();
        // AllowedDep { account: address, module_name: String }
        for d in pop(&mut args)?.into_vec()? {
            let f = d.into_fields()?;
            let (Some(Value::Address(a)), Some(name)) = (f.first(), f.get(1)) else {
                return Err(VmError::new(StatusCode::INTERNAL_TYPE_ERROR));
            };
            let name = move_string(name)?;
            bytes += name.len() + 32;
            aptos_bytes += name.len() + if deps.contains_key(a) { 0 } else { 32 };
            deps.entry(*a).or_default().insert(name);
        }
        Some(deps)
    } else {
        None
    };
    let mut expected_modules = BTreeSet::new();
    for n in pop(&mut args)?.into_vec()? {
        let s = move_string(&n)?;
        bytes += s.len();
        aptos_bytes += s.len();
        expected_modules.insert(s);
    }
    let destination = pop_address(&mut args)?;
    cx.gas.charge_native(bytes)?;
    cx.gas.charge_aptos_native(&[(REQUEST_PUBLISH_PER_BYTE, aptos_bytes as u64)])?;
    let allowed_deps = allowed_deps.map(|mut a| {
        a.entry(destination).or_default().extend(expected_modules.iter().cloned());
        a
    });
    cx.with_extensions(|ext, _| {
        let c = ext.get_or_default::<CodeRequests>();
        if c.request.is_some() {
            return Err(VmError::abort(EALREADY_REQUESTED));
        }
        c.request = Some(PublishRequest {
            destination,
            bundle,
            expected_modules,
            allowed_deps,
            check_compat: policy != ARBITRARY_POLICY,
        });
        Ok(vec![])
    })
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    r.add("code", "request_publish", |cx, _, args| request(cx, args, false));
    r.add("code", "request_publish_with_allowed_deps", |cx, _, args| request(cx, args, true));
}
