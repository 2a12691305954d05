//! The door the tests come in by: what the integration tests, the fuzz targets and the
//! benchmarks of the pure parts reach inside the core. Built only with the `test-kit`
//! feature, which the `pmi-testkit` crate turns on; not part of the fronts' surface
//! (`make lint` checks that no front names it).

use crate::api::Api;
use crate::backend::Identity;
use crate::client::Client;
use crate::conn::Conn;
use crate::error::PmiResult;
use libc::c_char;

pub use crate::backend::{Backend, BarrierStep};
pub use crate::backends::pmi1::Pmi1Wire;
pub use crate::backends::pmi2::Pmi2Wire;
pub use crate::backends::pmix::abi::abi_layout as pmix_abi_layout;
pub use crate::client::GET_CACHE_BYTES;
pub use crate::conn::Conn as Connection;
pub use crate::mapping::Mapping;
pub use crate::store::RECENT;

/// The two wire formats (`wire`).
pub mod wire {
    pub use crate::wire::*;
}

/// A client of `api` over any backend (a fake one, in tests of the client's rules).
pub fn client(backend: Box<dyn Backend>, api: Api) -> Client {
    Client::new(backend, api)
}

/// A client on the PMI-1 wire over `conn` (`init`, then `get_maxes`: two round trips),
/// for a server that takes request lines of at most `request_max` bytes.
pub fn pmi1_client(conn: Conn, id: Identity, request_max: usize) -> PmiResult<Client> {
    let wire = Pmi1Wire::init_limited(conn, id, request_max)?;
    Ok(Client::new(Box::new(wire), Api::Pmi1))
}

/// The abort request of [`crate::lifecycle::abort`] without the exit: what it sends, to
/// whom, and that it returns.
pub fn send_abort(api: Api, status: i32, message: &[u8], raw: *const c_char, whole_job: bool) {
    crate::lifecycle::send_abort(api, status, message, raw, whole_job)
}
