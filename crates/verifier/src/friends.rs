//! Friends: a module may not befriend itself, and friends live at the same
//! address.

use crate::error::{VerifyError, VerifyResult};
use movejit_format::{CompiledModule, StatusCode};

pub(crate) fn verify_module(m: &CompiledModule) -> VerifyResult {
    let me = &m.module_handles[m.self_module_handle_idx.idx()];
    let my_addr = m.address_identifiers[me.address.idx()];
    let my_name = &m.identifiers[me.name.idx()];
    for f in &m.friend_decls {
        let addr = m.address_identifiers[f.address.idx()];
        if addr == my_addr && &m.identifiers[f.name.idx()] == my_name {
            return Err(VerifyError::module(StatusCode::INVALID_FRIEND_DECL_WITH_SELF));
        }
        if addr != my_addr {
            return Err(VerifyError::module(StatusCode::INVALID_FRIEND_DECL_WITH_MODULES_OUTSIDE_ACCOUNT_ADDRESS));
        }
    }
    Ok(())
}
