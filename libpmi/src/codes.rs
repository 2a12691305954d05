//! The PMI-1 return codes (exported to `pmi.h`, the numbers of RFC 13's and Slurm's
//! `pmi.h`) and the one table that turns the core's errors into them.

use libc::c_int;
use pmi_core::error::PmiError;
use pmi_core::ffi::Codes;

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

/// Every error's code, for `ffi::guard`.
pub(crate) static CODES: Codes = Codes {
    success: (PMI_SUCCESS, "PMI_SUCCESS"),
    errors: [
        (PmiError::Fail, PMI_FAIL, "PMI_FAIL"),
        (PmiError::Init, PMI_ERR_INIT, "PMI_ERR_INIT"),
        (PmiError::NoMem, PMI_ERR_NOMEM, "PMI_ERR_NOMEM"),
        (
            PmiError::InvalidArg,
            PMI_ERR_INVALID_ARG,
            "PMI_ERR_INVALID_ARG",
        ),
        (
            PmiError::InvalidKey,
            PMI_ERR_INVALID_KEY,
            "PMI_ERR_INVALID_KEY",
        ),
        (
            PmiError::InvalidKeyLength,
            PMI_ERR_INVALID_KEY_LENGTH,
            "PMI_ERR_INVALID_KEY_LENGTH",
        ),
        (
            PmiError::InvalidVal,
            PMI_ERR_INVALID_VAL,
            "PMI_ERR_INVALID_VAL",
        ),
        (
            PmiError::InvalidValLength,
            PMI_ERR_INVALID_VAL_LENGTH,
            "PMI_ERR_INVALID_VAL_LENGTH",
        ),
        (
            PmiError::InvalidLength,
            PMI_ERR_INVALID_LENGTH,
            "PMI_ERR_INVALID_LENGTH",
        ),
        (
            PmiError::InvalidNumArgs,
            PMI_ERR_INVALID_NUM_ARGS,
            "PMI_ERR_INVALID_NUM_ARGS",
        ),
        (
            PmiError::InvalidArgs,
            PMI_ERR_INVALID_ARGS,
            "PMI_ERR_INVALID_ARGS",
        ),
        (
            PmiError::InvalidNumParsed,
            PMI_ERR_INVALID_NUM_PARSED,
            "PMI_ERR_INVALID_NUM_PARSED",
        ),
        (
            PmiError::InvalidKeyvalp,
            PMI_ERR_INVALID_KEYVALP,
            "PMI_ERR_INVALID_KEYVALP",
        ),
        (
            PmiError::InvalidSize,
            PMI_ERR_INVALID_SIZE,
            "PMI_ERR_INVALID_SIZE",
        ),
        (
            PmiError::InvalidKvs,
            PMI_ERR_INVALID_KVS,
            "PMI_ERR_INVALID_KVS",
        ),
    ],
};

/// Run an export's body with PMI-1's codes (see `ffi::guard`).
pub(crate) fn guard(
    call: impl Fn(&mut std::fmt::Formatter<'_>) -> std::fmt::Result,
    body: impl FnOnce() -> pmi_core::error::PmiResult<()>,
) -> c_int {
    pmi_core::ffi::guard(&CODES, call, body)
}

#[cfg(test)]
mod tests {
    /// The numbers are Slurm's reference `pmi.h` (libpmi0-dev, which `make deps`
    /// installs; `SLURM_INCLUDE` names another directory).
    #[test]
    fn codes_are_the_reference_numbers() {
        let dir = std::env::var("SLURM_INCLUDE").unwrap_or_else(|_| "/usr/include/slurm".into());
        let path = format!("{dir}/pmi.h");
        let header = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{path}: {e} (make deps installs Slurm's headers)"));
        super::CODES.check_against(&header).unwrap();
    }
}
