//! The interface every backend implements (the PMI-1 and PMI-2 wires, PMIx, a
//! singleton: `backends`), and the types it speaks in: what a backend says about the job
//! ([`Identity`], its [`Maxes`]), what a spawn asks for ([`SpawnCommand`], as the wires
//! carry it) and what it gave ([`Spawned`]). The client's
//! rules sit above it (`client`, `rules`); it knows no concrete backend.

use std::os::fd::RawFd;
use std::time::Duration;

pub use crate::api::Maxes;
use crate::error::{PmiError, PmiResult};
use crate::trace;
pub use crate::wire::pmi1::Group;
pub use crate::wire::SpawnCommand;

/// Why a server that does not speak PMI 1.2 (`version`, where it says one) has no group
/// barriers.
pub fn needs_pmi_1_2(version: Option<(i64, i64)>) -> String {
    let spoken = match version {
        Some((major, minor)) => format!("speaks PMI {major}.{minor}"),
        None => "has none".to_string(),
    };
    format!("the server {spoken}: group barriers need PMI 1.2 (MPICH 5's Hydra)")
}

/// The job facts the process manager gave through the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub rank: i32,
    pub size: i32,
    pub spawned: bool,
}

/// What a spawn gave: the codes the process manager sent, one per process from the
/// first (no more than the processes requested; those past the last code are 0), and
/// the new job's id when the server gives one (Slurm's PMI-2 plugin, PMIx).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spawned {
    pub codes: Vec<i32>,
    pub jobid: Option<Vec<u8>>,
}

/// A barrier begun ([`Backend::barrier_begin`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarrierStep {
    /// It is over: the backend waited in the call.
    Done,
    /// Its end is to be awaited, without the library's lock (PMI 1.2: other threads may
    /// use the connection meanwhile): one of `fds` becomes readable when something came,
    /// and [`Backend::barrier_ended`] says whether it was this barrier's end (`id`: which
    /// of the barriers begun it is). A wait longer than `limit` (`PMI_TIMEOUT`) fails it.
    Pending {
        id: i32,
        fds: [RawFd; 2],
        limit: Option<Duration>,
    },
}

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
    /// Begin a barrier: `PMI_Barrier`'s (`group` None) or PMI 1.2's group barrier (its
    /// members checked by `client`: at least two, this process among them, named with
    /// `tag`). The default waits in the call for `PMI_Barrier`, and has no group barriers.
    fn barrier_begin(&mut self, group: Option<Group<'_>>, _tag: i32) -> PmiResult<BarrierStep> {
        match group {
            None => self.barrier().map(|()| BarrierStep::Done),
            Some(_) => Err(unsupported(self.name(), "PMI_Barrier_group")),
        }
    }
    /// Whether the barrier `id` that [`Backend::barrier_begin`] left pending has ended,
    /// from what the server sent meanwhile (read without waiting). With `late` (its wait
    /// passed its limit) a barrier that has not ended fails, and the connection with it.
    fn barrier_ended(&mut self, _id: i32, _late: bool) -> PmiResult<bool> {
        Ok(true)
    }
    /// Why the server would keep `value` otherwise than it was put, when it is known to:
    /// the value is then refused (`PMI_ERR_INVALID_VAL`) with nothing sent, so that no
    /// process reads a value other than the one put.
    fn alters(&self, _value: &[u8]) -> Option<&'static str> {
        None
    }
    /// Whether the server keeps every value whole, as it was put, so that a get of this
    /// process's own key may be answered from what it put (PMIx); on the wires a server
    /// may keep a value otherwise (Hydra 4 up to its first space), and a get asks it.
    fn keeps_values_whole(&self) -> bool {
        false
    }
    /// Whether the server can do PMI 1.2's group barriers; if not, why (the line
    /// `PMI_Barrier_group` traces as it fails).
    fn group_barriers(&mut self) -> Result<(), String> {
        Err(needs_pmi_1_2(self.version()))
    }
    /// The PMI version the server speaks (major, minor), where a wire says one.
    fn version(&self) -> Option<(i64, i64)> {
        None
    }
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
    /// Start the commands, `slots` processes in all: a reply with more codes than that
    /// is refused.
    fn spawn(
        &mut self,
        commands: &[SpawnCommand<'_>],
        preput: &[(&[u8], &[u8])],
        slots: usize,
    ) -> PmiResult<Spawned>;
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
pub fn unsupported(backend: &str, call: &str) -> PmiError {
    trace::line(format_args!(
        "{call}: not supported by the {backend} backend"
    ));
    PmiError::Fail
}
