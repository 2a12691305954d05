//! The core's one error type. Each C front turns it into its own API's return code
//! through one table (`libpmi`'s and `libpmi2`'s `codes.rs`, for `ffi::guard`).

use std::fmt;

/// Why a PMI call did not succeed. Each variant maps onto one code of each API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PmiError {
    Fail,
    Init,
    NoMem,
    InvalidArg,
    InvalidKey,
    InvalidKeyLength,
    InvalidVal,
    InvalidValLength,
    InvalidLength,
    InvalidNumArgs,
    InvalidArgs,
    InvalidNumParsed,
    InvalidKeyvalp,
    InvalidSize,
    InvalidKvs,
}

impl PmiError {
    /// Every error, for the fronts' tables and their tests.
    pub const ALL: [PmiError; 15] = [
        PmiError::Fail,
        PmiError::Init,
        PmiError::NoMem,
        PmiError::InvalidArg,
        PmiError::InvalidKey,
        PmiError::InvalidKeyLength,
        PmiError::InvalidVal,
        PmiError::InvalidValLength,
        PmiError::InvalidLength,
        PmiError::InvalidNumArgs,
        PmiError::InvalidArgs,
        PmiError::InvalidNumParsed,
        PmiError::InvalidKeyvalp,
        PmiError::InvalidSize,
        PmiError::InvalidKvs,
    ];
}

impl fmt::Display for PmiError {
    /// The variant's name; each front traces its own code name (its `codes` table).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Result of a PMI operation.
pub type PmiResult<T> = Result<T, PmiError>;
