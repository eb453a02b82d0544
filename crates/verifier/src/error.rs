//! Verification errors: a Move status and where it was found.

use movejit_format::StatusCode;

/// Where a verification error was found, the way Move reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    Module,
    Struct { index: u16 },
    Function { index: u16, code_offset: Option<u16> },
    Script { code_offset: Option<u16> },
}

impl Location {
    /// The `kind` word of the CLI's JSON output.
    pub fn kind(&self) -> &'static str {
        match self {
            Location::Module => "module",
            Location::Struct { .. } => "struct",
            Location::Function { .. } => "function",
            Location::Script { .. } => "script",
        }
    }
    pub fn index(&self) -> Option<u16> {
        match self {
            Location::Struct { index } | Location::Function { index, .. } => Some(*index),
            _ => None,
        }
    }
    pub fn code_offset(&self) -> Option<u16> {
        match self {
            Location::Function { code_offset, .. } | Location::Script { code_offset } => *code_offset,
            _ => None,
        }
    }
}

/// A verification failure: the Move status and where it was found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{status} at {location:?}: {message}")]
pub struct VerifyError {
    pub status: StatusCode,
    pub location: Location,
    pub message: String,
}

pub type VerifyResult<T = ()> = Result<T, VerifyError>;

impl VerifyError {
    pub fn new(status: StatusCode, location: Location) -> Self {
        VerifyError { status, location, message: String::new() }
    }
    pub fn module(status: StatusCode) -> Self {
        Self::new(status, Location::Module)
    }
    pub fn at_struct(status: StatusCode, index: u16) -> Self {
        Self::new(status, Location::Struct { index })
    }
    pub fn at_function(status: StatusCode, index: u16) -> Self {
        Self::new(status, Location::Function { index, code_offset: None })
    }
    pub fn at_code(status: StatusCode, index: u16, offset: u16) -> Self {
        Self::new(status, Location::Function { index, code_offset: Some(offset) })
    }
    pub fn with_message(mut self, m: impl Into<String>) -> Self {
        self.message = m.into();
        self
    }
    /// Re-expresses a location inside the synthetic module of a script.
    pub(crate) fn into_script_error(mut self) -> Self {
        self.location = match self.location {
            Location::Function { code_offset, .. } => Location::Script { code_offset },
            other => other,
        };
        self
    }
}
