//! Native functions: every native a module defines must be one the VM
//! provides. Both VMs check this when a module is published or loaded
//! (MISSING_DEPENDENCY); the table is the runtime's, so the check runs only
//! when [`crate::VerifierConfig::known_natives`] is set. Sui's loader
//! (`check_natives`) also refuses native struct definitions, with the same
//! status.

use crate::{
    config::NativeTable,
    error::{VerifyError, VerifyResult},
};
use movejit_format::{CompiledModule, StatusCode, StructFieldInformation};

pub(crate) fn verify_module(m: &CompiledModule, table: &NativeTable, sui: bool) -> VerifyResult {
    let (addr, module) = (*m.address(), m.name().to_string());
    for f in m.function_defs.iter().filter(|f| f.code.is_none()) {
        let name = m.identifier_at(m.function_handle_at(f.function).name);
        if !table.contains(&(addr, module.clone(), name.to_string())) {
            return Err(VerifyError::module(StatusCode::MISSING_DEPENDENCY).with_message(format!(
                "native function {}::{module}::{name} is not in the VM's native table",
                addr.to_hex_long()
            )));
        }
    }
    if sui {
        if let Some(i) = m.struct_defs.iter().position(|d| d.field_information == StructFieldInformation::Native) {
            return Err(VerifyError::at_struct(StatusCode::MISSING_DEPENDENCY, i as u16)
                .with_message("Sui has no native structs"));
        }
    }
    Ok(())
}
