//! A function named the way hosts and tools name it: `0xADDR::module::name`.

use movejit_runtime::{AccountAddress, ModuleId};

/// A function a transaction calls: `address::module::name`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionRef {
    pub module: ModuleId,
    pub name: String,
}

impl FunctionRef {
    /// Parses `0xADDR::module::function`.
    pub fn parse(s: &str) -> Option<FunctionRef> {
        let mut parts = s.rsplitn(3, "::");
        let (name, module, address) = (parts.next()?, parts.next()?, parts.next()?);
        let address = AccountAddress::parse(address)?;
        Some(FunctionRef { module: ModuleId::new(address, module), name: name.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_address_module_and_name() {
        let f = FunctionRef::parse("0x2::table::add").expect("parses");
        assert_eq!((f.module, f.name.as_str()), (ModuleId::new(AccountAddress::from_u64(2), "table"), "add"));
        for bad in ["table::add", "add", "0xZZ::table::add", ""] {
            assert_eq!(FunctionRef::parse(bad), None, "{bad}");
        }
    }
}
