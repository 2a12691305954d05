//! The PMI-2 return codes (exported to `pmi2.h`, the numbers of MPICH's and Slurm's
//! `pmi2.h`) and the one table that turns the core's errors into them.

use libc::c_int;
use pmi_core::error::PmiError;
use pmi_core::ffi::Codes;

/// Operation completed successfully.
pub const PMI2_SUCCESS: c_int = 0;

/// Operation failed.
pub const PMI2_FAIL: c_int = -1;

/// PMI not initialized.
pub const PMI2_ERR_INIT: c_int = 1;

/// Input buffer not large enough.
pub const PMI2_ERR_NOMEM: c_int = 2;

/// Invalid argument.
pub const PMI2_ERR_INVALID_ARG: c_int = 3;

/// Invalid key argument.
pub const PMI2_ERR_INVALID_KEY: c_int = 4;

/// Invalid key length argument.
pub const PMI2_ERR_INVALID_KEY_LENGTH: c_int = 5;

/// Invalid val argument.
pub const PMI2_ERR_INVALID_VAL: c_int = 6;

/// Invalid val length argument.
pub const PMI2_ERR_INVALID_VAL_LENGTH: c_int = 7;

/// Invalid length argument.
pub const PMI2_ERR_INVALID_LENGTH: c_int = 8;

/// Invalid number of arguments.
pub const PMI2_ERR_INVALID_NUM_ARGS: c_int = 9;

/// Invalid args argument.
pub const PMI2_ERR_INVALID_ARGS: c_int = 10;

/// Invalid num_parsed length argument.
pub const PMI2_ERR_INVALID_NUM_PARSED: c_int = 11;

/// Invalid keyvalp argument.
pub const PMI2_ERR_INVALID_KEYVALP: c_int = 12;

/// Invalid size argument.
pub const PMI2_ERR_INVALID_SIZE: c_int = 13;

/// Other unspecified error.
pub const PMI2_ERR_OTHER: c_int = 14;

/// Every error's code, for `ffi::guard`. PMI-2 has no code for a foreign key-value space
/// (its calls name a job id): another job's id is an invalid argument.
pub(crate) static CODES: Codes = Codes {
    success: (PMI2_SUCCESS, "PMI2_SUCCESS"),
    errors: [
        (PmiError::Fail, PMI2_FAIL, "PMI2_FAIL"),
        (PmiError::Init, PMI2_ERR_INIT, "PMI2_ERR_INIT"),
        (PmiError::NoMem, PMI2_ERR_NOMEM, "PMI2_ERR_NOMEM"),
        (
            PmiError::InvalidArg,
            PMI2_ERR_INVALID_ARG,
            "PMI2_ERR_INVALID_ARG",
        ),
        (
            PmiError::InvalidKey,
            PMI2_ERR_INVALID_KEY,
            "PMI2_ERR_INVALID_KEY",
        ),
        (
            PmiError::InvalidKeyLength,
            PMI2_ERR_INVALID_KEY_LENGTH,
            "PMI2_ERR_INVALID_KEY_LENGTH",
        ),
        (
            PmiError::InvalidVal,
            PMI2_ERR_INVALID_VAL,
            "PMI2_ERR_INVALID_VAL",
        ),
        (
            PmiError::InvalidValLength,
            PMI2_ERR_INVALID_VAL_LENGTH,
            "PMI2_ERR_INVALID_VAL_LENGTH",
        ),
        (
            PmiError::InvalidLength,
            PMI2_ERR_INVALID_LENGTH,
            "PMI2_ERR_INVALID_LENGTH",
        ),
        (
            PmiError::InvalidNumArgs,
            PMI2_ERR_INVALID_NUM_ARGS,
            "PMI2_ERR_INVALID_NUM_ARGS",
        ),
        (
            PmiError::InvalidArgs,
            PMI2_ERR_INVALID_ARGS,
            "PMI2_ERR_INVALID_ARGS",
        ),
        (
            PmiError::InvalidNumParsed,
            PMI2_ERR_INVALID_NUM_PARSED,
            "PMI2_ERR_INVALID_NUM_PARSED",
        ),
        (
            PmiError::InvalidKeyvalp,
            PMI2_ERR_INVALID_KEYVALP,
            "PMI2_ERR_INVALID_KEYVALP",
        ),
        (
            PmiError::InvalidSize,
            PMI2_ERR_INVALID_SIZE,
            "PMI2_ERR_INVALID_SIZE",
        ),
        (
            PmiError::InvalidKvs,
            PMI2_ERR_INVALID_ARG,
            "PMI2_ERR_INVALID_ARG",
        ),
    ],
};

/// Run an export's body with PMI-2's codes (see `ffi::guard`).
pub(crate) fn guard(
    call: impl Fn(&mut std::fmt::Formatter<'_>) -> std::fmt::Result,
    body: impl FnOnce() -> pmi_core::error::PmiResult<()>,
) -> c_int {
    pmi_core::ffi::guard(&CODES, call, body)
}

#[cfg(test)]
mod tests {
    /// The numbers are Slurm's reference `pmi2.h` (libpmi2-0-dev, which `make deps`
    /// installs; `SLURM_INCLUDE` names another directory).
    #[test]
    fn codes_are_the_reference_numbers() {
        let dir = std::env::var("SLURM_INCLUDE").unwrap_or_else(|_| "/usr/include/slurm".into());
        let path = format!("{dir}/pmi2.h");
        let header = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{path}: {e} (make deps installs Slurm's headers)"));
        super::CODES.check_against(&header).unwrap();
    }
}
