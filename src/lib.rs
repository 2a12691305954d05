//! A drop-in `libpmi.so.0`: the PMI-1 API of RFC 13 ("Simple Process Manager Interface
//! v1"), spoken over the PMI-1.1 wire protocol to the process manager on `PMI_FD`.
//!
//! The C caller's contract, for every export:
//! - the return value is one of the `PMI_*` codes; outputs are written only on success,
//!   and never past the length the caller gave; nothing is ever truncated silently;
//! - NULL pointers are refused with `PMI_ERR_INVALID_ARG`; calls before `PMI_Init` or
//!   after `PMI_Finalize` get `PMI_ERR_INIT` (the `*_length_max` queries excepted);
//! - arguments that would break the line protocol are refused before anything is sent;
//! - every call is safe from any thread: one process-wide lock serialises the wire;
//! - no panic unwinds into C, and nothing but `PMI_Abort` ends the process.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

#[cfg(feature = "pmi1")]
pub mod api;
pub mod backend;
pub mod client;
pub mod conn;
pub mod env;
pub mod error;
pub mod ffi;
pub mod hash;
pub mod mapping;
pub mod options;
pub mod session;
pub mod state;
pub mod store;
pub mod trace;
pub mod wire;
pub mod wire2;
