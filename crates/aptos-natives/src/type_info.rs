//! `0x1::type_info`: `type_of` and `type_name` with Aptos's canonical type
//! strings (`0x1::string::String`, `vector<u8>`, `0x1::m::S<u64, bool>`).

use crate::args::{ty_arg, Registrar};
use movejit_runtime::gas::native::NativeParam as P;
use movejit_runtime::{GasMeter, Type, Value, VmError, VmResult};

/// `type_of` of a type that is not a struct (`NFE_EXPECTED_STRUCT_TYPE_TAG`).
pub const NFE_EXPECTED_STRUCT_TYPE_TAG: u64 = 0x1;

/// `type_of` and `type_name`: (base, per byte of the canonical name).
const TYPE_OF: (P, P) = (
    P::named("aptos_framework.type_info.type_of.base"),
    P::named("aptos_framework.type_info.type_of.per_abstract_memory_unit"),
);
const TYPE_NAME: (P, P) = (
    P::named("aptos_framework.type_info.type_name.base"),
    P::named("aptos_framework.type_info.type_name.per_abstract_memory_unit"),
);

/// The base, then per byte of the type's canonical name (Aptos charges
/// them apart, the second after building the name).
fn charge_name(gas: &mut GasMeter, (base, per_byte): (P, P), name: &str) -> VmResult<()> {
    gas.charge_native(name.len())?;
    gas.charge_aptos_native(&[(base, 1)])?;
    gas.charge_aptos_native(&[(per_byte, name.len() as u64)])
}

/// A type's canonical string as Aptos's `TypeTag::to_canonical_string`
/// writes it: short `0x` addresses, `", "` between type arguments,
/// function types as `|args|(results) has abilities`.
pub fn canonical(t: &Type) -> String {
    match t {
        Type::Vector(e) => format!("vector<{}>", canonical(e)),
        Type::Datatype(id, args) => {
            format!("{}::{}::{}{}", id.address.to_hex_short(), id.module, id.name, type_args(args))
        }
        Type::Function(p, r, ab) => {
            let list = |l: &[Type]| l.iter().map(canonical).collect::<Vec<_>>().join(", ");
            let abilities = Type::Function(vec![], vec![], *ab).to_string();
            // `||` followed by the ability suffix in the runtime's form.
            let suffix = abilities.strip_prefix("||").unwrap_or("");
            format!("|{}|({}){}", list(p), list(r), suffix)
        }
        Type::Reference(e) => format!("&{}", canonical(e)),
        Type::MutableReference(e) => format!("&mut {}", canonical(e)),
        t => t.to_string(),
    }
}

fn type_args(args: &[Type]) -> String {
    if args.is_empty() {
        String::new()
    } else {
        format!("<{}>", args.iter().map(canonical).collect::<Vec<_>>().join(", "))
    }
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    r.add("type_info", "type_of", |cx, ty, _| {
        let t = ty_arg(ty, 0)?;
        charge_name(cx.gas, TYPE_OF, &canonical(t))?;
        match t {
            Type::Datatype(id, args) => {
                let name = format!("{}{}", id.name, type_args(args));
                Ok(vec![Value::Struct(vec![
                    Value::Address(id.address),
                    Value::from_bytes(id.module.as_bytes()),
                    Value::from_bytes(name.as_bytes()),
                ])])
            }
            _ => Err(VmError::abort(NFE_EXPECTED_STRUCT_TYPE_TAG)),
        }
    });
    r.add("type_info", "type_name", |cx, ty, _| {
        let name = canonical(ty_arg(ty, 0)?);
        charge_name(cx.gas, TYPE_NAME, &name)?;
        Ok(vec![crate::args::string_value(&name)])
    });
    // Flat forms: no arguments, results built as above.
    r.add_flat("type_info", "type_of", |call| {
        let t = call.ty_arg(0)?;
        charge_name(call.cx.gas, TYPE_OF, &canonical(t))?;
        match t {
            Type::Datatype(id, args) => {
                let name = format!("{}{}", id.name, type_args(args));
                let v = Value::Struct(vec![
                    Value::Address(id.address),
                    Value::from_bytes(id.module.as_bytes()),
                    Value::from_bytes(name.as_bytes()),
                ]);
                call.ret_tree(0, &v)
            }
            _ => Err(VmError::abort(NFE_EXPECTED_STRUCT_TYPE_TAG)),
        }
    });
    r.add_flat("type_info", "type_name", |call| {
        let name = canonical(call.ty_arg(0)?);
        charge_name(call.cx.gas, TYPE_NAME, &name)?;
        call.ret_tree(0, &crate::args::string_value(&name))
    });
}
