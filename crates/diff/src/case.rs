//! A case: modules to publish, one function to call, its type arguments and
//! BCS arguments. The same case runs on every executor.

#![forbid(unsafe_code)]

use movejit_format::{serialize_module, AccountAddress, CompiledModule, StatusFlavour};
use movejit_runtime::Type;

/// One call over a set of modules.
#[derive(Clone, Debug)]
pub struct Case {
    /// A short name for reports (`gen:17`, `cases.jsonl:int_ops_3`).
    pub name: String,
    pub flavour: StatusFlavour,
    /// Every module the call needs, dependencies first.
    pub modules: Vec<CompiledModule>,
    pub address: AccountAddress,
    pub module: String,
    pub function: String,
    pub type_args: Vec<Type>,
    /// BCS of each argument (`&T` parameters as the BCS of `T`).
    pub args: Vec<Vec<u8>>,
}

impl Case {
    /// The serialized modules, as the interpreter's store holds them.
    pub fn module_bytes(&self) -> Vec<Vec<u8>> {
        self.modules.iter().map(serialize_module).collect()
    }

    /// `0xADDR::module::function<tys>(args)` for reports.
    pub fn describe(&self) -> String {
        let tys = if self.type_args.is_empty() {
            String::new()
        } else {
            format!("<{}>", self.type_args.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", "))
        };
        let args: Vec<String> = self.args.iter().map(|a| format!("0x{}", hex::encode(a))).collect();
        format!("{}::{}::{}{}({})", self.address.to_hex_short(), self.module, self.function, tys, args.join(", "))
    }
}
