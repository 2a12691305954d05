//! Where the PMI calls go: one small interface, three backends, chosen in one place.
//!
//! - [`wire::Wire`]: the PMI-1.1 wire protocol to a process manager on `PMI_FD` or
//!   `PMI_PORT` (Hydra, Slurm's pmi2 plugin, Flux), for `libpmi.so.0`;
//! - [`wire2::Wire2`]: the PMI-2 wire protocol on the same fd, for `libpmi2.so.0`;
//! - [`pmix::Pmix`]: a PMIx server (Open MPI's `prterun`, `srun --mpi=pmix`) through the
//!   PMIx client library, loaded at run time;
//! - [`local::Local`]: no process manager at all, a true singleton.
//!
//! A backend carries out an operation; the rules every backend shares (argument
//! validation, the put-once rule, what is cached, the clique) live in `client`.
#![deny(unsafe_code)]

pub mod local;
pub mod pmix;
mod pmix_sys;
pub mod wire;
pub mod wire2;

pub use pmix_sys::{abi_layout, abort as pmix_abort};

use crate::client::{Identity, Maxes};
use crate::env::Launch;
use crate::error::PmiResult;
use crate::trace;
use crate::wire::SpawnCommand;

/// One backend's operations. Arguments arrive checked by `client`: keys and values
/// follow the wire's rules and fit the maxima this backend announced, the kvsname is
/// this process group's.
pub trait Backend: Send {
    /// What this backend is, for the trace.
    fn name(&self) -> &'static str;
    /// Rank, size, and whether this process was spawned.
    fn identity(&self) -> Identity;
    /// The longest kvsname, key and value, NUL included.
    fn maxes(&self) -> Maxes;
    /// This process group's kvsname (asked once by `client`).
    fn kvsname(&mut self) -> PmiResult<Vec<u8>>;
    /// The universe size, `-1` when unknown (asked once).
    fn universe_size(&mut self) -> PmiResult<i32>;
    /// This process's application number (asked once).
    fn appnum(&mut self) -> PmiResult<i32>;
    /// Store `key` = `value`, visible to the job after the next barrier.
    fn put(&mut self, kvsname: &[u8], key: &[u8], value: &[u8]) -> PmiResult<()>;
    /// Make this process's puts ready to be exchanged.
    fn commit(&mut self) -> PmiResult<()>;
    /// Wait for every process of the group; puts committed before are visible after.
    fn barrier(&mut self) -> PmiResult<()>;
    /// The value of `key`, put by any process of the group (or by the process manager);
    /// `PMI_ERR_INVALID_KEY` when there is none.
    fn get(&mut self, kvsname: &[u8], key: &[u8]) -> PmiResult<&[u8]>;
    /// The ranks on this node, when the process manager says so directly; `None`: the
    /// clique is computed from `PMI_process_mapping`.
    fn local_ranks(&mut self) -> PmiResult<Option<Vec<i32>>> {
        Ok(None)
    }
    fn publish_name(&mut self, service: &[u8], port: &[u8]) -> PmiResult<()>;
    fn unpublish_name(&mut self, service: &[u8]) -> PmiResult<()>;
    fn lookup_name(&mut self, service: &[u8]) -> PmiResult<&[u8]>;
    /// Start the commands; `errors` has a slot per process requested. The new job's id
    /// when the server gives one (Slurm's PMI-2 plugin, PMIx), else `None`.
    fn spawn(
        &mut self,
        commands: &[SpawnCommand<'_>],
        preput: &[(&[u8], &[u8])],
        errors: &mut [i32],
    ) -> PmiResult<Option<Vec<u8>>>;
    /// Leave the job. The backend is dropped afterwards.
    fn finalize(&mut self) -> PmiResult<()>;
    /// PMI-2: the value of `key` with a hint of which rank put it (the wire passes it on).
    fn get_hinted(&mut self, kvsname: &[u8], key: &[u8], _src: Option<i32>) -> PmiResult<&[u8]> {
        self.get(kvsname, key)
    }
    /// PMI-2: a job attribute; `None` when there is none.
    fn job_attr(&mut self, name: &[u8]) -> PmiResult<Option<Vec<u8>>> {
        Ok(match name {
            b"universeSize" => Some(self.universe_size()?.to_string().into_bytes()),
            _ => None,
        })
    }
    /// PMI-2: a node attribute, waiting for it when `wait`; `None` when there is none.
    fn node_attr(&mut self, _name: &[u8], _wait: bool) -> PmiResult<Option<Vec<u8>>> {
        Err(unsupported(self.name(), "PMI2_Info_GetNodeAttr"))
    }
    /// PMI-2: set a node attribute for the processes on this node.
    fn put_node_attr(&mut self, _name: &[u8], _value: &[u8]) -> PmiResult<()> {
        Err(unsupported(self.name(), "PMI2_Info_PutNodeAttr"))
    }
    /// Slurm's ring exchange: this process's position, the ring's size, and the values
    /// of its left and right neighbours.
    fn ring(&mut self, _value: &[u8]) -> PmiResult<(i32, i32, Vec<u8>, Vec<u8>)> {
        Err(unsupported(self.name(), "PMIX_Ring"))
    }
    /// The socket `PMI_Abort` writes to, -1 if none.
    fn abort_fd(&self) -> i32 {
        -1
    }
    /// Called once `PMI_Init` has succeeded.
    fn adopt(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// What a backend cannot do: one trace line, `PMI_FAIL`.
pub fn unsupported(backend: &str, call: &str) -> crate::error::PmiError {
    trace::line(format_args!(
        "{call}: not supported by the {backend} backend"
    ));
    crate::error::PmiError::Fail
}

/// Which API a client serves: the backend for the PMI-1 wire or the PMI-2 wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Pmi1,
    Pmi2,
}

impl Api {
    /// The wire backend's name, for the trace.
    fn wire_name(self) -> &'static str {
        match self {
            Api::Pmi1 => "wire",
            Api::Pmi2 => "wire2",
        }
    }
}

/// Start the backend the environment asks for: the one place the choice is made.
/// `timeout` bounds each reply on the wire (`PMI_TIMEOUT`).
pub fn start(api: Api, launch: Launch, timeout: Option<u32>) -> PmiResult<Box<dyn Backend>> {
    let backend: Box<dyn Backend> = match launch {
        Launch::Fd(job) => {
            trace::set_rank(i64::from(job.rank));
            trace::line(format_args!(
                "PMI_Init: backend {}: PMI_FD={} (rank {} of {})",
                api.wire_name(),
                job.fd,
                job.rank,
                job.size
            ));
            match api {
                Api::Pmi1 => Box::new(wire::Wire::from_fd(&job, timeout)?),
                Api::Pmi2 => Box::new(wire2::Wire2::from_fd(&job, timeout)?),
            }
        }
        Launch::Port(port) => {
            trace::line(format_args!(
                "PMI_Init: backend {}: PMI_PORT={}:{} PMI_ID={}",
                api.wire_name(),
                port.host,
                port.port,
                port.id
            ));
            let backend: Box<dyn Backend> = match api {
                Api::Pmi1 => Box::new(wire::Wire::from_port(&port, timeout)?),
                Api::Pmi2 => Box::new(wire2::Wire2::from_port(&port, timeout)?),
            };
            trace::set_rank(i64::from(backend.identity().rank));
            backend
        }
        Launch::Pmix(found) => {
            trace::set_rank(found.rank_hint.map_or(-1, i64::from));
            trace::line(format_args!(
                "PMI_Init: backend pmix: no PMI_FD or PMI_PORT, and {}",
                found.why
            ));
            match pmix::load(&found) {
                Ok(lib) => {
                    let pmix = pmix::Pmix::start(lib, &found, timeout)?;
                    trace::set_rank(i64::from(pmix.identity().rank));
                    Box::new(pmix)
                }
                // A launcher says this is the job's one process: a singleton is no lie.
                Err(tried) if found.single_process => {
                    trace::warn(format_args!(
                        "PMI_Init: {}, but no PMIx client library could be loaded (tried \
                         {tried}); a launcher says this job has one process: singleton mode",
                        found.why
                    ));
                    Box::new(local::Local::new())
                }
                Err(tried) => {
                    return Err(trace::fatal(format_args!(
                        "PMI_Init: {}, but no PMIx client library could be loaded: tried \
                         {tried}; set PMI_PMIX_LIBRARY to the path of libpmix.so.2",
                        found.why
                    )))
                }
            }
        }
        Launch::Singleton => {
            trace::set_rank(0);
            trace::line(format_args!(
                "PMI_Init: no PMI_FD, PMI_PORT or PMIx server: singleton mode"
            ));
            Box::new(local::Local::new())
        }
    };
    Ok(backend)
}
