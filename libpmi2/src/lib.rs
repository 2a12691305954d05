//! `libpmi2.so.0`: the PMI-2 API (MPICH's `pmi2.h`, as Slurm's `libpmi2.so.0` exports it:
//! 21 `PMI2_*` functions and Slurm's `PMIX_Ring`), over the same core as `libpmi.so.0`:
//! the PMI-2 wire protocol on `PMI_FD`/`PMI_PORT`, the PMIx backend under a PMIx server,
//! or a singleton.
//!
//! The C caller's contract, for every export:
//! - the return value is a `PMI2_*` code (`PMI2_Initialized` answers 0 or 1);
//!   outputs are written only on success, never past the length the caller gave, and
//!   nothing is truncated silently: a value that does not fit is
//!   `PMI2_ERR_INVALID_LENGTH` with nothing written (`PMI2_KVS_Get` also reports the
//!   value's length without its NUL, negated, in `*vallen`);
//! - NULL pointers are `PMI2_ERR_INVALID_ARG`; calls before `PMI2_Init` or after
//!   `PMI2_Finalize` get `PMI2_ERR_INIT`;
//! - keys are 1 to 63 bytes, values 1 to 1023 (`PMI2_MAX_KEYLEN`, `PMI2_MAX_VALLEN`,
//!   NUL included), none holding a `;` (the servers cut at it), checked before anything
//!   is sent, by the rules `libpmi.so.0` shares (`pmi_core::rules`);
//! - every call is safe from any thread; no panic unwinds into C; `SIGPIPE` is never
//!   raised.
//!
//! Each export converts its C arguments with `pmi_core::ffi`, inside `codes::guard`,
//! and calls the core's `session` or `Client`; `api/` is split as `libpmi`'s is.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]
// C names as the reference header spells them.
#![allow(non_camel_case_types, non_snake_case, clippy::missing_safety_doc)]

pub mod api;
pub mod codes;
