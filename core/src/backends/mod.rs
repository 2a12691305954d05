//! The four backends, and [`start`], which starts the one `launch::decide` named:
//!
//! - [`pmi1::Pmi1Wire`]: the PMI-1.1 wire protocol to a process manager on
//!   `PMI_FD` or `PMI_PORT` (Hydra, Slurm's pmi2 plugin, Flux), for `libpmi.so.0`;
//! - [`pmi2::Pmi2Wire`]: the PMI-2 wire protocol on the same fd, for
//!   `libpmi2.so.0`;
//! - [`pmix::Pmix`]: a PMIx server (Open MPI's `prterun`, `srun --mpi=pmix`)
//!   through the PMIx client library, loaded at run time ([`pmix::calls`]);
//! - [`singleton::Singleton`]: no process manager at all, a true singleton.
//!
//! Each implements `backend::Backend`; the rules every backend shares (argument
//! validation, the put-once rule, what is cached, the clique) live in `client`.

pub mod pmi1;
pub mod pmi2;
pub mod pmix;
pub mod singleton;

use crate::api::{Api, Op};
use crate::backend::Backend;
use crate::error::PmiResult;
use crate::launch::Launch;
use crate::loader;
use crate::trace;

/// Why a statically linked program cannot have the PMIx backend.
const STATIC_PROGRAM: &str = "this program is statically linked (no dynamic loader), and \
    loading a shared library into it would bring in a second C library; link it with \
    libpmi.so.0, or with libpmi.a into a dynamically linked program";

/// The wire backend's name, for the trace.
fn wire_name(api: Api) -> &'static str {
    match api {
        Api::Pmi1 => "wire",
        Api::Pmi2 => "wire2",
    }
}

/// Start the backend for `launch` (`launch::decide` chose it). `timeout` bounds each
/// reply on the wire (`PMI_TIMEOUT`).
pub fn start(api: Api, launch: Launch, timeout: Option<u32>) -> PmiResult<Box<dyn Backend>> {
    let init = api.call(Op::Init);
    let backend: Box<dyn Backend> = match launch {
        Launch::Fd(job) => {
            trace::set_rank(i64::from(job.rank));
            trace::line(format_args!(
                "{init}: backend {}: PMI_FD={} (rank {} of {})",
                wire_name(api),
                job.fd,
                job.rank,
                job.size
            ));
            match api {
                Api::Pmi1 => Box::new(pmi1::Pmi1Wire::from_fd(&job, timeout)?),
                Api::Pmi2 => Box::new(pmi2::Pmi2Wire::from_fd(&job, timeout)?),
            }
        }
        Launch::Port(port) => {
            trace::line(format_args!(
                "{init}: backend {}: PMI_PORT={} PMI_ID={}",
                wire_name(api),
                crate::launch::address(&port.host, port.port),
                port.id
            ));
            let backend: Box<dyn Backend> = match api {
                Api::Pmi1 => Box::new(pmi1::Pmi1Wire::from_port(&port, timeout)?),
                Api::Pmi2 => Box::new(pmi2::Pmi2Wire::from_port(&port, timeout)?),
            };
            trace::set_rank(i64::from(backend.identity().rank));
            backend
        }
        Launch::Pmix(found) => {
            trace::set_rank(found.rank_hint.map_or(-1, i64::from));
            trace::line(format_args!(
                "{init}: backend pmix: no PMI_FD or PMI_PORT, and {}",
                found.why
            ));
            // (A program linked with -static cannot load one.)
            let loaded = if loader::statically_linked() {
                Err(STATIC_PROGRAM.to_string())
            } else {
                pmix::load(&found).map_err(|tried| {
                    format!("tried {tried}; set PMI_PMIX_LIBRARY to the path of libpmix.so.2")
                })
            };
            match loaded {
                Ok(lib) => {
                    let pmix = pmix::Pmix::start(lib, &found, timeout, api)?;
                    trace::set_rank(i64::from(pmix.identity().rank));
                    Box::new(pmix)
                }
                // A launcher says this is the job's one process, and PMIx does not name
                // another rank: a singleton is no lie.
                Err(why) if found.single_process && found.rank_hint.unwrap_or(0) == 0 => {
                    trace::warn(format_args!(
                        "{init}: {}, but no PMIx client library could be loaded ({why}); a \
                         launcher says this job has one process: singleton mode",
                        found.why
                    ));
                    Box::new(singleton::Singleton::new(api))
                }
                Err(why) => {
                    return Err(trace::fatal(format_args!(
                        "{init}: {}, but no PMIx client library could be loaded: {why}",
                        found.why
                    )))
                }
            }
        }
        Launch::Singleton => {
            trace::set_rank(0);
            trace::line(format_args!(
                "{init}: no PMI_FD, PMI_PORT or PMIx server: singleton mode"
            ));
            Box::new(singleton::Singleton::new(api))
        }
    };
    Ok(backend)
}
