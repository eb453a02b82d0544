//! VM errors: a Move status plus what the real VM reports with it.

use movejit_format::{
    AccountAddress, Bytecode, CompiledModule, StatusCode, StructFieldInformation, StructVariantHandleIndex,
    VariantFieldHandleIndex,
};

/// Where an execution error was raised: the function definition and the
/// bytecode offset inside it, as the Move VM reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorLocation {
    /// `0x<64 hex>::name`.
    pub module: String,
    pub function_name: String,
    pub function_index: u16,
    pub code_offset: u16,
}

/// An execution error. `sub_status` carries the abort code for `ABORTED`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{status}{}", sub_status.map(|s| format!(" (sub-status {s})")).unwrap_or_default())]
pub struct VmError {
    pub status: StatusCode,
    pub sub_status: Option<u64>,
    pub message: Option<String>,
    pub location: Option<ErrorLocation>,
}

impl VmError {
    pub fn new(status: StatusCode) -> Self {
        VmError { status, sub_status: None, message: None, location: None }
    }
    pub fn with_sub_status(mut self, s: u64) -> Self {
        self.sub_status = Some(s);
        self
    }
    pub fn with_message(mut self, m: impl Into<String>) -> Self {
        self.message = Some(m.into());
        self
    }
    /// An inconsistency the verifier should have excluded.
    pub fn invariant(m: impl Into<String>) -> Self {
        VmError::new(StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR).with_message(m)
    }
    /// The message as the Aptos VM reports this error: its invariant
    /// violations carry a marker, then a host backtrace (not reproduced:
    /// the marker's line ends the message here). `m @Unknown invariant
    /// violation generated:` for a message `m`, the marker alone without.
    pub fn in_aptos_form(mut self) -> Self {
        const MARKER: &str = "Unknown invariant violation generated:";
        if self.status == StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR {
            self.message = Some(match self.message.take() {
                Some(m) => format!("{m} @{MARKER}"),
                None => MARKER.to_string(),
            });
        }
        self
    }
    pub fn arithmetic(m: impl Into<String>) -> Self {
        VmError::new(StatusCode::ARITHMETIC_ERROR).with_message(m)
    }
    pub fn abort(code: u64) -> Self {
        VmError::new(StatusCode::ABORTED).with_sub_status(code)
    }
    /// A vector operation's error: the sub-status says which (`vec_err`);
    /// the VM gives no message.
    pub fn vector(sub: u64) -> Self {
        VmError::new(StatusCode::VECTOR_OPERATION_ERROR).with_sub_status(sub)
    }
    /// A call of a native no registry provides (`module` as `ModuleId`
    /// prints it).
    pub fn missing_native(module: &impl std::fmt::Display, function: &str) -> Self {
        VmError::new(StatusCode::MISSING_DEPENDENCY).with_message(format!("native {module}::{function} not found"))
    }
    /// An entry-function argument that does not deserialize (the VM's
    /// message).
    pub fn bad_argument() -> Self {
        VmError::new(StatusCode::FAILED_TO_DESERIALIZE_ARGUMENT).with_message("[VM] failed to deserialize argument")
    }
    /// `MISSING_DATA` of `MoveFrom` (`moving`) or `BorrowGlobal` at `addr`,
    /// with the Aptos VM's message (the address as 64 hex digits).
    pub fn missing_resource(addr: &AccountAddress, moving: bool) -> Self {
        let what = if moving { "move resource" } else { "borrow global resource" };
        VmError::new(StatusCode::MISSING_DATA)
            .with_message(format!("Failed to {what} from {}", &addr.to_hex_long()[2..]))
    }
    /// `RESOURCE_ALREADY_EXISTS` of `MoveTo` at `addr` (the VM's message).
    pub fn resource_exists(addr: &AccountAddress) -> Self {
        VmError::new(StatusCode::RESOURCE_ALREADY_EXISTS)
            .with_message(format!("Failed to move resource into {}", &addr.to_hex_long()[2..]))
    }
    /// Aptos's `STRUCT_VARIANT_MISMATCH` of `instr` (an `UnpackVariant*`
    /// or `*BorrowVariantField*` of `module`) meeting variant `found`, with
    /// the Aptos VM's message: the variants the instruction takes (`A or B`
    /// for a field several variants share), then the one found, quoted by
    /// a field borrow and bare by an unpack. Every executor builds it here;
    /// an `instr` naming no enum of `module` gets the bare status.
    pub fn variant_mismatch(module: &CompiledModule, instr: &Bytecode, found: u16) -> Self {
        let e = VmError::new(StatusCode::STRUCT_VARIANT_MISMATCH);
        let unpack = |h: StructVariantHandleIndex| {
            module.struct_variant_handles.get(h.idx()).map(|vh| (vh.struct_index, vec![vh.variant], false))
        };
        let borrow = |h: VariantFieldHandleIndex| {
            module.variant_field_handles.get(h.idx()).map(|fh| (fh.struct_index, fh.variants.clone(), true))
        };
        let site = match instr {
            Bytecode::UnpackVariant(h) => unpack(*h),
            Bytecode::UnpackVariantGeneric(x) => {
                module.struct_variant_instantiations.get(x.idx()).and_then(|i| unpack(i.handle))
            }
            Bytecode::ImmBorrowVariantField(h) | Bytecode::MutBorrowVariantField(h) => borrow(*h),
            Bytecode::ImmBorrowVariantFieldGeneric(x) | Bytecode::MutBorrowVariantFieldGeneric(x) => {
                module.variant_field_instantiations.get(x.idx()).and_then(|i| borrow(i.handle))
            }
            _ => None,
        };
        let Some((def, expected, quoted)) = site else { return e };
        let Some(StructFieldInformation::DeclaredVariants(variants)) =
            module.struct_defs.get(def.idx()).map(|d| &d.field_information)
        else {
            return e;
        };
        let name = |v: u16| variants.get(v as usize).and_then(|d| module.identifiers.get(d.name.idx()));
        let Some(expected) = expected.iter().map(|&v| name(v).map(String::as_str)).collect::<Option<Vec<_>>>() else {
            return e;
        };
        let Some(found) = name(found) else { return e };
        let expected = expected.join(" or ");
        let found = if quoted { format!("`{found}`") } else { found.to_string() };
        e.with_message(format!("expected enum variant {expected}, found {found}"))
    }
    /// The error `AbortMsg` raises once the message is charged for:
    /// `ABORT_MESSAGE_LIMIT_EXCEEDED` over `max` bytes,
    /// `INVALID_ABORT_MESSAGE` when not UTF-8, else `ABORTED` with `code`
    /// and the text (the Aptos VM's messages). Every executor builds it here.
    pub fn abort_with_message(code: u64, bytes: Vec<u8>, max: usize) -> Self {
        if bytes.len() > max {
            return VmError::new(StatusCode::ABORT_MESSAGE_LIMIT_EXCEEDED)
                .with_message(format!("Expected at most {max} bytes, got {} bytes", bytes.len()));
        }
        match String::from_utf8(bytes) {
            Ok(text) => VmError::abort(code).with_message(text),
            Err(e) => VmError::new(StatusCode::INVALID_ABORT_MESSAGE)
                .with_message(format!("Invalid UTF-8 string: {}", e.utf8_error())),
        }
    }
}

pub type VmResult<T> = Result<T, VmError>;

/// An error on a hot path, boxed so `Result`s stay a word or two wide; `?`
/// converts between the two forms.
pub type Trap = Box<VmError>;
pub type TrapResult<T> = Result<T, Trap>;

impl From<Box<VmError>> for VmError {
    fn from(b: Box<VmError>) -> Self {
        *b
    }
}

/// `VECTOR_OPERATION_ERROR` sub-statuses (as the Move VM numbers them).
pub mod vec_err {
    pub const INDEX_OUT_OF_BOUNDS: u64 = 1;
    pub const POP_EMPTY_VEC: u64 = 2;
    pub const DESTROY_NON_EMPTY_VEC: u64 = 3;
    pub const VEC_UNPACK_PARITY_MISMATCH: u64 = 3;
    pub const VEC_SIZE_LIMIT_REACHED: u64 = 4;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_invariant_violations_take_the_aptos_marker() {
        let abort = VmError::abort(7).with_message("m");
        let cases = [
            (VmError::invariant("m"), Some("m @Unknown invariant violation generated:")),
            (
                VmError::new(StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR),
                Some("Unknown invariant violation generated:"),
            ),
            (abort, Some("m")),
            (VmError::new(StatusCode::ARITHMETIC_ERROR), None),
        ];
        for (e, want) in cases {
            assert_eq!(e.in_aptos_form().message.as_deref(), want);
        }
    }
}
