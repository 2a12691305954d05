//! `libpmi.so.0`: the PMI-1 API of RFC 13 ("Simple Process Manager Interface v1"), a thin
//! C front over `pmi-core` (the PMI-1.1 wire on `PMI_FD`/`PMI_PORT`, a PMIx server, or a
//! singleton). Its exports are the 34 functions in `api/`, and nothing else.
//!
//! The C caller's contract, for every export:
//! - the return value is one of the `PMI_*` codes (`codes`, one table); outputs are
//!   written only on success, and never past the length the caller gave; nothing is
//!   ever truncated silently;
//! - NULL pointers are refused with `PMI_ERR_INVALID_ARG`; calls before `PMI_Init` or
//!   after `PMI_Finalize` get `PMI_ERR_INIT` (the `*_length_max` queries excepted);
//! - arguments that would break the line protocol are refused before anything is sent;
//! - every call is safe from any thread: one process-wide lock serialises the wire;
//! - no panic unwinds into C, and nothing but `PMI_Abort` ends the process.
//!
//! Each export converts its C arguments with `pmi_core::ffi`, inside `codes::guard`,
//! and calls the core's `session` or `Client`.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod api;
pub mod codes;
