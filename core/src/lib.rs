//! The PMI client's core, shared by the two C fronts (`libpmi` for `libpmi.so.0`, the
//! PMI-1 API of RFC 13; `libpmi2` for `libpmi2.so.0`, the PMI-2 API). It exports nothing
//! to C: each front converts its C arguments with [`ffi`], calls [`session`] and the
//! [`client::Client`], and maps the result to its own codes.
//!
//! Where a reader starts:
//! - [`session`]: init (the environment chooses a backend, once), finalize, abort; over
//!   [`state`], the one process-wide lock;
//! - [`client`]: one method per PMI operation, with the rules every backend shares
//!   ([`rules`]: what a caller may pass, per API, chosen once at init) and the caches;
//! - [`backend`]: the interface every backend implements, and the types it owns;
//!   [`backends`]: the four of them (the PMI-1 and PMI-2 wires, PMIx, a singleton) and
//!   the one place that chooses;
//! - [`conn`]: a socket to the process manager, bytes in and out (no codec);
//!   [`wire`]: the two wire formats, pure;
//! - [`env`]: what the launcher's variables say; [`mapping`]: `PMI_process_mapping`;
//!   [`store`]: the key-value record; [`cmdline`]: PMI command-line options;
//!   [`trace`]: everything the library prints; [`error`]: the one error type.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod api;
pub mod backend;
pub mod backends;
pub mod client;
pub mod cmdline;
pub mod conn;
pub mod env;
pub mod error;
pub mod ffi;
pub mod hash;
pub mod mapping;
pub mod rules;
pub mod session;
pub mod sibling;
pub mod state;
pub mod store;
pub mod trace;
pub mod wire;
