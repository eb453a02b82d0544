//! Typed errors of decoding and bounds checking.

use movejit_status::StatusCode;

/// Why a module could not be decoded or failed its bounds check.
///
/// `status` is the Move status the real deserializer or bounds checker
/// reports; `offset` is the byte offset in the input where reading failed
/// (for bounds errors found after decoding, the offset of the table or code
/// unit that holds the bad index, when known); `context` says what was being
/// read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{status} at byte {offset} while reading {context}: {message}")]
pub struct FormatError {
    pub status: StatusCode,
    pub offset: usize,
    pub context: String,
    pub message: String,
}

impl FormatError {
    pub fn new(status: StatusCode, offset: usize, context: impl Into<String>, message: impl Into<String>) -> Self {
        FormatError { status, offset, context: context.into(), message: message.into() }
    }
}

pub type FormatResult<T> = Result<T, FormatError>;
