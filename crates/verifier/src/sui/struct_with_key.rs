//! Objects: a struct with `key` has a first field `id: sui::object::UID`;
//! enums never have `key`.

use super::{failure, is_datatype, SUI};
use crate::error::{VerifyError, VerifyResult};
use movejit_format::{CompiledModule, StatusCode, StructFieldInformation};

pub(super) fn verify_module(m: &CompiledModule) -> VerifyResult {
    for (si, def) in m.struct_defs.iter().enumerate() {
        let handle = m.struct_handle_at(def.struct_handle);
        if !handle.abilities.has_key() {
            continue;
        }
        let name = m.identifier_at(handle.name);
        let at = |msg: String| {
            VerifyError::at_struct(StatusCode::UNKNOWN_VERIFICATION_ERROR, si as u16).with_message(failure(msg).message)
        };
        let first = match &def.field_information {
            StructFieldInformation::Declared(fields) => fields.first(),
            _ => None,
        };
        let Some(first) = first else {
            return Err(at(format!("first field of struct {name} must be 'id', no field found")));
        };
        if m.identifier_at(first.name) != "id" {
            return Err(at(format!(
                "first field of struct {name} must be 'id', {} found",
                m.identifier_at(first.name)
            )));
        }
        if !is_datatype(m, &first.signature, SUI, "object", "UID") {
            return Err(at(format!("first field of struct {name} must be of type 0x2::object::UID")));
        }
    }
    for def in &m.enum_defs {
        let handle = m.struct_handle_at(def.enum_handle);
        if handle.abilities.has_key() {
            return Err(failure(format!("enum {} cannot have the 'key' ability", m.identifier_at(handle.name))));
        }
    }
    Ok(())
}
