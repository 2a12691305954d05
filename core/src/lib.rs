//! The PMI client's core, shared by the two C fronts (`libpmi` for `libpmi.so.0`, the
//! PMI-1 API of RFC 13; `libpmi2` for `libpmi2.so.0`, the PMI-2 API) and `pmi-probe`. It
//! exports nothing to C.
//!
//! **What the fronts use** (the public modules below, and nothing else): each export
//! converts its C arguments with [`ffi`] inside its one panic boundary, starts and ends
//! the library with [`lifecycle`], calls the initialized [`client::Client`] through
//! [`lifecycle::with_client`], and maps the core's [`error::PmiError`] to its own API's
//! codes ([`ffi::Codes`]). [`api`] names the two APIs and their limits; [`launch`] is how
//! a process reaches its process manager (which `pmi-probe` reports); [`cmdline`] reads
//! PMI's command-line options; [`trace`] is everything the library prints.
//!
//! **Inside**, from the ground up: [`wire`] holds the two wire formats (pure); `conn`
//! moves their bytes; `backend` is the interface of the four backends in `backends` (the
//! PMI-1 and PMI-2 wires, PMIx, a singleton); `rules` says what a caller may pass;
//! `client` applies the rules and keeps the caches (`store`); `mapping` reads and writes
//! `PMI_process_mapping`; `sibling` and `loader` look at the other PMI library and the
//! dynamic loader.
//!
//! **`unsafe`** is denied everywhere but in the modules whose declaration below (or in
//! their parent, for `backends::pmix`) allows it: the FFI toolbox, the system calls
//! (`conn`, `lifecycle`'s fork watch, `trace`'s writes to stderr), and run-time loading
//! (`loader`, `sibling`, the PMIx client's calls and its watcher). Each `unsafe` block
//! has a `// SAFETY:` line.
//!
//! Tests reach the inside through the `test-kit` feature's [`testkit`] module, which the
//! `pmi-testkit` crate re-exports; the fronts never name it (`make lint` checks).
#![deny(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod api;
pub mod client;
pub mod cmdline;
pub mod error;
#[allow(unsafe_code)]
pub mod ffi;
pub mod launch;
#[allow(unsafe_code)]
pub mod lifecycle;
#[allow(unsafe_code)]
pub mod trace;

mod backend;
mod backends;
#[allow(unsafe_code)]
mod conn;
mod hash;
#[allow(unsafe_code)]
mod loader;
mod mapping;
mod rules;
#[allow(unsafe_code)]
mod sibling;
mod store;
mod wire;

pub use backend::{Identity, SpawnCommand, Spawned};

#[cfg(feature = "test-kit")]
pub mod testkit;
