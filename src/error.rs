//! The PMI return codes (exported to `pmi.h`) and the crate's one error type.

use std::fmt;

use libc::c_int;

/// Operation completed successfully.
pub const PMI_SUCCESS: c_int = 0;
/// Operation failed.
pub const PMI_FAIL: c_int = -1;
/// PMI is not initialized.
pub const PMI_ERR_INIT: c_int = 1;
/// Input buffer not large enough.
pub const PMI_ERR_NOMEM: c_int = 2;
/// Invalid argument.
pub const PMI_ERR_INVALID_ARG: c_int = 3;
/// Invalid key argument.
pub const PMI_ERR_INVALID_KEY: c_int = 4;
/// Invalid key length argument.
pub const PMI_ERR_INVALID_KEY_LENGTH: c_int = 5;
/// Invalid val argument.
pub const PMI_ERR_INVALID_VAL: c_int = 6;
/// Invalid val length argument.
pub const PMI_ERR_INVALID_VAL_LENGTH: c_int = 7;
/// Invalid length argument.
pub const PMI_ERR_INVALID_LENGTH: c_int = 8;
/// Invalid number of arguments.
pub const PMI_ERR_INVALID_NUM_ARGS: c_int = 9;
/// Invalid args argument.
pub const PMI_ERR_INVALID_ARGS: c_int = 10;
/// Invalid num_parsed length argument.
pub const PMI_ERR_INVALID_NUM_PARSED: c_int = 11;
/// Invalid keyvalp argument.
pub const PMI_ERR_INVALID_KEYVALP: c_int = 12;
/// Invalid size argument.
pub const PMI_ERR_INVALID_SIZE: c_int = 13;
/// Invalid kvsname argument (not this process group's keyval space).
pub const PMI_ERR_INVALID_KVS: c_int = 14;

/// PMI boolean false.
pub const PMI_FALSE: c_int = 0;
/// PMI boolean true.
pub const PMI_TRUE: c_int = 1;

/// Why a PMI call did not succeed. Each variant maps onto one `PMI_*` code.
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
    /// The C return code for this error.
    pub fn code(self) -> c_int {
        match self {
            PmiError::Fail => PMI_FAIL,
            PmiError::Init => PMI_ERR_INIT,
            PmiError::NoMem => PMI_ERR_NOMEM,
            PmiError::InvalidArg => PMI_ERR_INVALID_ARG,
            PmiError::InvalidKey => PMI_ERR_INVALID_KEY,
            PmiError::InvalidKeyLength => PMI_ERR_INVALID_KEY_LENGTH,
            PmiError::InvalidVal => PMI_ERR_INVALID_VAL,
            PmiError::InvalidValLength => PMI_ERR_INVALID_VAL_LENGTH,
            PmiError::InvalidLength => PMI_ERR_INVALID_LENGTH,
            PmiError::InvalidNumArgs => PMI_ERR_INVALID_NUM_ARGS,
            PmiError::InvalidArgs => PMI_ERR_INVALID_ARGS,
            PmiError::InvalidNumParsed => PMI_ERR_INVALID_NUM_PARSED,
            PmiError::InvalidKeyvalp => PMI_ERR_INVALID_KEYVALP,
            PmiError::InvalidSize => PMI_ERR_INVALID_SIZE,
            PmiError::InvalidKvs => PMI_ERR_INVALID_KVS,
        }
    }
}

impl fmt::Display for PmiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            PmiError::Fail => "PMI_FAIL",
            PmiError::Init => "PMI_ERR_INIT",
            PmiError::NoMem => "PMI_ERR_NOMEM",
            PmiError::InvalidArg => "PMI_ERR_INVALID_ARG",
            PmiError::InvalidKey => "PMI_ERR_INVALID_KEY",
            PmiError::InvalidKeyLength => "PMI_ERR_INVALID_KEY_LENGTH",
            PmiError::InvalidVal => "PMI_ERR_INVALID_VAL",
            PmiError::InvalidValLength => "PMI_ERR_INVALID_VAL_LENGTH",
            PmiError::InvalidLength => "PMI_ERR_INVALID_LENGTH",
            PmiError::InvalidNumArgs => "PMI_ERR_INVALID_NUM_ARGS",
            PmiError::InvalidArgs => "PMI_ERR_INVALID_ARGS",
            PmiError::InvalidNumParsed => "PMI_ERR_INVALID_NUM_PARSED",
            PmiError::InvalidKeyvalp => "PMI_ERR_INVALID_KEYVALP",
            PmiError::InvalidSize => "PMI_ERR_INVALID_SIZE",
            PmiError::InvalidKvs => "PMI_ERR_INVALID_KVS",
        };
        f.write_str(name)
    }
}

/// Result of a PMI operation.
pub type PmiResult<T> = Result<T, PmiError>;
