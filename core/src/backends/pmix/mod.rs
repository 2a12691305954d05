//! The PMIx backend: the PMI-1 operations as PMIx calls, for processes started by a PMIx
//! server (Open MPI's `prterun`, `srun --mpi=pmix`).
//!
//! | PMI-1 | PMIx |
//! |---|---|
//! | rank, size, kvsname | `PMIx_Init`'s process id, `PMIX_JOB_SIZE`, the namespace |
//! | universe size, appnum | `PMIX_UNIV_SIZE`, `PMIX_APPNUM` |
//! | put / commit / barrier | `PMIx_Put` (global) / `PMIx_Commit` / `PMIx_Fence` collecting data |
//! | get | `PMIx_Get` from the key's owner, found in the key directory (below) |
//! | `PMI_process_mapping` | `PMIX_ANL_MAP`, else built from each rank's `PMIX_HOSTNAME` (or `PMIX_NODEID`) |
//! | clique | `PMIX_LOCAL_PEERS` |
//! | publish / lookup / unpublish | `PMIx_Publish` / `PMIx_Lookup` / `PMIx_Unpublish` |
//! | spawn | `PMIx_Spawn`; the preput pairs in the children's environment |
//! | abort / finalize | `PMIx_Abort` / `PMIx_Finalize` |
//!
//! **The key directory.** A PMI-1 key has no owner, but PMIx finds a key only in the
//! data of a named process: a get with `PMIX_RANK_UNDEF` searches just this host's
//! processes (PMIx 4.2.2 under PRRTE across two hosts), and a search of every process
//! costs a pass over all of them per get. So at each barrier every process also puts
//! the names of the keys it put since its previous barrier, under a key of that
//! barrier's own (`libpmi:dir:F`, F counting this process's barriers). After a barrier,
//! the first get of a key this process does not know reads each peer's new names once,
//! and every get then asks the key's owner, as a native PMIx client does. A short value
//! travels in the entry beside its name (`INLINE_VALUE_MAX`, up to `INLINE_ENTRY_MAX` an
//! entry), so the reader that reads a peer's entry has its business cards too, without a
//! `PMIx_Get` each: every `PMIx_Get` waits for PMIx's progress thread, and on a crowded
//! node each such wait is a pair of context switches (a 256-rank job under
//! `srun --mpi=pmix` on 2 cores spent about 0.5 s more in all for each further get per
//! peer, measured). A reader keeps such values up to `KNOWN_BYTES`, and records the
//! owner of a key only when it did not keep its value (a process's own keys are
//! answered from the client's put record). Two facts of
//! PMIx shape it (measured with PMIx 4.2.2 under PRRTE across two hosts): a get from
//! another host of a key that is not there waits for it until its timeout, so a reader
//! asks only for directory keys that exist; and a key put again is served from the
//! reader's copy of the first value, so no directory key is put twice. Keys starting
//! with `libpmi:` are reserved.

use std::borrow::Cow;
use std::ffi::CStr;

pub mod abi;
#[allow(unsafe_code)]
pub mod calls;
mod directory;
mod layout;
mod search;
#[allow(unsafe_code)]
pub mod watch;

use abi::{Proc, KEY_LEN, NSPACE_LEN, RANK_UNDEF, RANK_WILDCARD};
use calls::{Answer, AppSpec, Lib};
use directory::{split_entry, Directory, Seen, DIR_KEY, GROUP_DIR_KEY};
pub use search::load;

use crate::api::Maxes;
use crate::api::{Api, Op};
use crate::backend::{Backend, BarrierStep, Group, Identity};
use crate::backend::{SpawnCommand, Spawned};
use crate::error::{PmiError, PmiResult};
use crate::launch::{PmixEnv, PARENT, PREPUT_KEY, PREPUT_NUM, PREPUT_VAL};
use crate::store::Store;
use crate::trace;

/// What the length queries answer: PMIx's own namespace and key limits, and a value
/// limit of our choosing (PMIx has none; Intel's Hydra announces the same).
const PMIX_MAXES: Maxes = Maxes {
    kvsname: NSPACE_LEN,
    key: KEY_LEN,
    value: 4096,
};

/// Where PMI-2's node attributes live among the PMIx keys (apart from the KVS's).
const NODE_ATTR_PREFIX: &[u8] = b"pmi2.nodeattr.";

/// The KVS key MPICH reads for the node layout.
const MAPPING_KEY: &[u8] = b"PMI_process_mapping";

/// The keys of the directory (module doc); a program's key may not start so.
const RESERVED_PREFIX: &[u8] = b"libpmi:";
/// A program's key as the PMIx store holds it: under [`RESERVED_PREFIX`] when it starts
/// as keys PMIx reserves do (`pmix`: PMIx 4.2's `PMIx_Put` returns success and stores
/// nothing, measured under prterun) or as this backend's node attributes do (a peer's
/// would be taken for one); as it is otherwise. `PMI_ERR_INVALID_KEY_LENGTH` when the
/// prefix takes it past PMIx's key length.
fn store_key(key: &[u8]) -> PmiResult<Cow<'_, [u8]>> {
    if !key.starts_with(b"pmix") && !key.starts_with(NODE_ATTR_PREFIX) {
        return Ok(Cow::Borrowed(key));
    }
    if RESERVED_PREFIX.len() + key.len() >= KEY_LEN {
        trace::line(format_args!(
            "\"{}\": under PMIx this key is stored with the prefix \"libpmi:\", which takes \
             it past PMIx's key length",
            key.escape_ascii()
        ));
        return Err(PmiError::InvalidKeyLength);
    }
    Ok(Cow::Owned([RESERVED_PREFIX, key].concat()))
}

pub struct Pmix {
    lib: &'static Lib,
    me: Proc,
    id: Identity,
    /// The last value read, handed to `client` by reference.
    value: Vec<u8>,
    /// The preput pairs of the parent that spawned this process.
    preput: Store,
    timeout: Option<u32>,
    /// Who put which key (module doc).
    dir: Directory,
    /// Whose calls these are, for messages.
    api: Api,
    /// `PMI_process_mapping` once known (built, it costs a `PMIx_Get` per rank; a job's
    /// layout does not change).
    layout: Option<Vec<u8>>,
    /// The ranks this process met in PMI 1.2 group barriers since its last barrier of the
    /// whole job, ascending: their puts before the group barrier are not in the key
    /// directory until that next barrier, so a get the directory cannot place asks them.
    group_peers: Vec<u32>,
    /// Whether group barriers can be done here, once asked (`group_barriers`: the job's
    /// layout does not change).
    groups: Option<Result<(), String>>,
    /// The server as the lines that say it was lost name it ([`server_named`]).
    server: String,
}

/// The PMIx server as lines name it, after "the PMIx server": `at` the
/// `PMIX_SERVER_URI*` variable that names it, else (a server that sets none) `of` the
/// namespace it serves.
fn server_named(found: &PmixEnv, me: &Proc) -> String {
    match &found.server {
        Some(uri) => format!("at {uri}"),
        None => format!("of namespace \"{}\"", me.nspace().escape_ascii()),
    }
}

/// A service name is a PMIx key: at most `PMIX_MAX_KEYLEN` bytes.
fn check_service(service: &[u8]) -> PmiResult<()> {
    if service.len() < KEY_LEN {
        Ok(())
    } else {
        Err(PmiError::InvalidArg)
    }
}

impl Pmix {
    /// `PMIx_Init` with the loaded library, then read the job's size and whether this
    /// process was spawned. Every failure is one line on stderr and `PMI_FAIL`; one after
    /// `PMIx_Init` finalizes it again.
    pub fn start(
        lib: &'static Lib,
        found: &PmixEnv,
        timeout: Option<u32>,
        api: Api,
    ) -> PmiResult<Pmix> {
        let init = api.call(Op::Init);
        calls::set_abort_wait(timeout);
        trace::line(format_args!(
            "{init}: loaded {} ({})",
            lib.path,
            lib.version()
        ));
        // PMIx_Init has no bound of its own (pmix_watch): PMI_TIMEOUT gives it one.
        let bound = timeout.filter(|&s| s > 0);
        let (started, late) = match bound {
            Some(seconds) => watch::within(seconds, &found.servers, "PMIx_Init", || lib.init()),
            None => (lib.init(), false),
        };
        if late {
            if started.is_ok() {
                lib.finalize();
            }
            return Err(trace::fatal(format_args!(
                "{init}: {}, but PMIx_Init ({}) did not finish in {} s (PMI_TIMEOUT); its \
                 connection to the server was shut",
                found.why,
                lib.path,
                bound.unwrap_or(0)
            )));
        }
        let me = started.map_err(|rc| {
            trace::fatal(format_args!(
                "{init}: {}, but PMIx_Init ({}) failed: {}",
                found.why,
                lib.path,
                lib.error_string(rc)
            ))
        })?;
        // Every later call that waits for the server is bounded the same way.
        if let Some(seconds) = bound {
            watch::watch_calls(seconds, &found.servers, &server_named(found, &me));
        }
        trace::line(format_args!(
            "PMIx_Init: namespace \"{}\" rank {}",
            me.nspace().escape_ascii(),
            me.rank()
        ));
        let mut pmix = Pmix {
            lib,
            me,
            id: Identity {
                rank: 0,
                size: 0,
                spawned: false,
            },
            value: Vec::new(),
            preput: Store::default(),
            timeout,
            dir: Directory::default(),
            api,
            layout: None,
            group_peers: Vec::new(),
            groups: None,
            server: server_named(found, &me),
        };
        match pmix.identify(found) {
            Ok(id) => {
                pmix.id = id;
                Ok(pmix)
            }
            Err(e) => {
                lib.finalize();
                Err(e)
            }
        }
    }

    /// Size and rank from PMIx; spawned when PMIx says so; the preput pairs from the
    /// environment only when PMIx names as this process's parent the namespace that wrote
    /// them (a grandchild started by a new launcher inherits them, and must not be fooled).
    fn identify(&mut self, found: &PmixEnv) -> PmiResult<Identity> {
        let init = self.api.call(Op::Init);
        let size = match self.job_number(b"pmix.job.size") {
            Some(n) if n >= 1 && n <= i64::from(i32::MAX) => n as i32,
            other => {
                return Err(trace::fatal(format_args!(
                    "{init}: PMIx gave no usable job size (PMIX_JOB_SIZE: {other:?})"
                )))
            }
        };
        let rank = i32::try_from(self.me.rank())
            .ok()
            .filter(|&r| r < size)
            .ok_or_else(|| {
                trace::fatal(format_args!(
                    "{init}: PMIx rank {} is not below the job size {size}",
                    self.me.rank()
                ))
            })?;
        let parent = match self.fetch(&self.me, b"pmix.parent") {
            Ok(Answer::Proc(nspace, _)) => Some(nspace),
            _ => None,
        };
        let said_spawned = matches!(
            self.fetch(&self.wildcard(), b"pmix.spawned"),
            Ok(Answer::Number(n)) if n != 0
        );
        if parent.is_some() && parent == found.parent {
            if let Some(why) = &found.preput_broken {
                trace::warn(format_args!(
                    "{init}: ignoring the preput pairs in the environment: {why}"
                ));
            }
            for (key, value) in &found.preput {
                self.preput.insert(key, value);
            }
        } else if found.parent.is_some() {
            trace::line(format_args!(
                "{init}: ignoring the preput pairs of parent \"{}\" in the environment: \
                 PMIx names {:?} as this process's parent",
                found.parent.as_deref().unwrap_or_default().escape_ascii(),
                parent.as_deref().map(|p| p.escape_ascii().to_string())
            ));
        }
        Ok(Identity {
            rank,
            size,
            spawned: said_spawned || parent.is_some(),
        })
    }

    fn wildcard(&self) -> Proc {
        calls::proc_of(self.me.nspace(), RANK_WILDCARD).unwrap_or(self.me)
    }

    /// `PMIx_Get` of what this client holds (`PMIX_IMMEDIATE`), traced; `Err` with
    /// PMIx's status.
    fn fetch(&self, who: &Proc, key: &[u8]) -> Result<Answer, i32> {
        self.fetch_with(who, key, true)
    }

    /// `PMIx_Get`, traced; without `immediate` the client asks its server for data it
    /// does not hold (a key `who` is known to have put).
    fn fetch_with(&self, who: &Proc, key: &[u8], immediate: bool) -> Result<Answer, i32> {
        let answer = if immediate {
            self.lib.get(who, key, self.timeout)
        } else {
            self.lib.get_from(who, key, self.timeout)
        };
        if trace::enabled() {
            let rank = match who.rank() {
                RANK_WILDCARD => "wildcard".to_string(),
                RANK_UNDEF => "undef".to_string(),
                r => r.to_string(),
            };
            let said = match &answer {
                Ok(Answer::Text(t)) => format!("\"{}\"", t.escape_ascii()),
                Ok(other) => format!("{other:?}"),
                Err(rc) => self.lib.error_string(*rc),
            };
            trace::line(format_args!(
                "PMIx_Get(rank {rank}, \"{}\"): {said}",
                key.escape_ascii()
            ));
        }
        answer
    }

    /// A number the job publishes for all its processes.
    fn job_number(&self, key: &[u8]) -> Option<i64> {
        match self.fetch(&self.wildcard(), key) {
            Ok(Answer::Number(n)) => Some(n),
            _ => None,
        }
    }

    /// A failed PMIx call: traced with PMIx's words, `PMI_FAIL`.
    fn failed(&self, call: &str, rc: i32) -> PmiError {
        trace::line(format_args!("{call} failed: {}", self.lib.error_string(rc)));
        PmiError::Fail
    }

    fn check(&self, call: &str, rc: i32) -> PmiResult<()> {
        trace::line(format_args!("{call}: {}", self.lib.error_string(rc)));
        if rc == 0 {
            Ok(())
        } else {
            Err(PmiError::Fail)
        }
    }

    /// A node attribute's key: asked of the process on this node that put it (after a
    /// fence, from the directory), else of each process on this node for what its
    /// server holds (across hosts a get by an undefined rank does not find it: PRRTE),
    /// else of any.
    fn find_node_attr(&mut self, key: &[u8]) -> PmiResult<Result<Answer, i32>> {
        let peers = self.local_ranks()?.unwrap_or_default();
        let owner = match self.seek(key)? {
            Some(Seen::Owner(rank)) if peers.contains(&(rank as i32)) => Some(rank),
            _ => None,
        };
        if let Some(owner) = owner.and_then(|rank| calls::proc_of(self.me.nspace(), rank)) {
            return Ok(self.fetch_with(&owner, key, false));
        }
        for &peer in &peers {
            let Some(who) = calls::proc_of(self.me.nspace(), peer as u32) else {
                continue;
            };
            match self.fetch(&who, key) {
                Err(abi::ERR_NOT_FOUND) => {}
                answer => return Ok(answer),
            }
        }
        let any = calls::proc_of(self.me.nspace(), RANK_UNDEF).unwrap_or(self.me);
        Ok(self.fetch(&any, key))
    }

    /// Put this barrier's directory entry: the names put since the previous barrier.
    fn write_directory(&mut self) -> PmiResult<()> {
        let (key, value) = self.dir.entry();
        let rc = self.lib.put(key.as_bytes(), &value);
        self.check(&format!("PMIx_Put(global, \"{key}\")"), rc)?;
        self.dir.entry_written();
        Ok(())
    }

    /// Read every peer's directory entries written since this process last read them: the
    /// latest barrier's, then back along the entries that have names. A peer without
    /// entries (a program of the job that uses PMIx itself) is skipped when PMIx says so at
    /// once, as on this host; on another host PMIx waits for a key that is not there until
    /// its timeout (`PMI_TIMEOUT`; none by default). A `PMIx_Get` that fails (a timeout, a
    /// lost server) ends the reading with its status, and what is not read yet is read
    /// again at the next get (its owners would otherwise look unknown until the next
    /// barrier).
    fn read_directories(&mut self) -> Result<(), i32> {
        let size = self.id.size as usize;
        self.dir.read.resize(size, 0);
        let Some(latest) = self.dir.fences.checked_sub(1) else {
            self.dir.read_at = self.dir.fences;
            return Ok(());
        };
        // A node attribute is read from a process on this node: another node's process
        // may have put one of the same name.
        let local = self.local_ranks().ok().flatten().unwrap_or_default();
        for rank in 0..size as u32 {
            if rank == self.me.rank() {
                continue;
            }
            let Some(who) = calls::proc_of(self.me.nspace(), rank) else {
                continue;
            };
            let here = local.contains(&(rank as i32));
            let mut next = Some(latest);
            while let Some(fence) = next.filter(|&f| f >= self.dir.read[rank as usize]) {
                let key = format!("{DIR_KEY}{fence}");
                let text = match self.fetch_with(&who, key.as_bytes(), false) {
                    Ok(Answer::Text(text)) => text,
                    Err(rc) if rc != abi::ERR_NOT_FOUND => return Err(rc),
                    other => {
                        trace::warn(format_args!(
                            "rank {rank} has no key directory entry \"{key}\": {other:?}"
                        ));
                        break;
                    }
                };
                let Some((previous, items)) = split_entry(&text) else {
                    trace::warn(format_args!("rank {rank}'s \"{key}\" is not one of ours"));
                    break;
                };
                for (name, value) in items {
                    if here || !name.starts_with(NODE_ATTR_PREFIX) {
                        self.dir.add_peer(rank, name, value);
                    }
                }
                next = previous;
            }
            self.dir.read[rank as usize] = self.dir.fences;
        }
        self.dir.read_at = self.dir.fences;
        Ok(())
    }

    /// `key` from the first peer of a group barrier since the last barrier of the whole
    /// job that has it; `None` when none has. Asked without waiting first (the group's
    /// fence collected their data); then by the group entry each peer put before that
    /// fence (`GROUP_DIR_KEY`), which names the keys it put: an owner's key is asked of
    /// it and waited for, as PMIx fetches it from the owner's host. (Under prterun across
    /// hosts a fence over part of the job left the members' data on their own hosts.)
    fn ask_group_peers(&self, key: &[u8]) -> Option<Answer> {
        let peers = || {
            self.group_peers
                .iter()
                .filter(|&&rank| rank != self.me.rank())
                .filter_map(|&rank| calls::proc_of(self.me.nspace(), rank))
        };
        if let Some(answer) = peers().find_map(|who| self.fetch_with(&who, key, true).ok()) {
            return Some(answer);
        }
        let entry = format!("{GROUP_DIR_KEY}{}", self.dir.fences);
        peers().find_map(|who| {
            let Ok(Answer::Text(text)) = self.fetch_with(&who, entry.as_bytes(), false) else {
                return None;
            };
            let (_, items) = split_entry(&text)?;
            match items.into_iter().find(|(name, _)| *name == key)? {
                (_, Some(value)) => Some(Answer::Text(value.to_vec())),
                (_, None) => self.fetch_with(&who, key, false).ok(),
            }
        })
    }

    /// `key` was put by this process (`Directory::add_own`).
    fn owns(&mut self, key: &[u8], value: Option<&[u8]>) {
        self.dir.add_own(self.me.rank(), key, value);
    }

    /// Where the directory places `key`, read again when a fence has passed since it
    /// was last read; `PMI_FAIL` when it could not be read.
    fn seek(&mut self, key: &[u8]) -> PmiResult<Option<Seen>> {
        if let Some(seen) = self.dir.seen(key) {
            return Ok(Some(seen));
        }
        if self.dir.fences == self.dir.read_at {
            return Ok(None);
        }
        if let Err(rc) = self.read_directories() {
            return Err(self.failed("PMIx_Get(a key directory entry)", rc));
        }
        Ok(self.dir.seen(key))
    }

    /// Whether PMIx fences over part of the job end here: not under Slurm's pmix plugin
    /// (22.05, measured) in a job that spans nodes, which never ends one, so that a group
    /// barrier would wait for ever (or PMI_TIMEOUT); there, why not.
    fn groups_here(&mut self) -> Result<(), String> {
        if !self.me.nspace().starts_with(b"slurm.pmix.") {
            return Ok(());
        }
        let local = self
            .local_ranks()
            .ok()
            .flatten()
            .map_or(0, |ranks| ranks.len());
        if local as i64 == i64::from(self.id.size) {
            return Ok(());
        }
        Err(format!(
            "the PMIx server is Slurm's (namespace \"{}\"), and this job spans nodes ({local} \
             of its {} processes on this one): its pmix plugin never ends a fence over part \
             of such a job",
            self.me.nspace().escape_ascii(),
            self.id.size
        ))
    }
}

impl Backend for Pmix {
    fn name(&self) -> &'static str {
        "pmix"
    }

    fn identity(&self) -> Identity {
        self.id
    }

    fn maxes(&self) -> Maxes {
        PMIX_MAXES
    }

    /// The namespace.
    fn kvsname(&mut self) -> PmiResult<Vec<u8>> {
        Ok(self.me.nspace().to_vec())
    }

    /// `PMIX_UNIV_SIZE`; `-1` when the server does not say.
    fn universe_size(&mut self) -> PmiResult<i32> {
        Ok(self
            .job_number(b"pmix.univ.size")
            .and_then(|n| i32::try_from(n).ok())
            .unwrap_or(-1))
    }

    /// `PMIX_APPNUM` of this process; `-1` when the server does not say.
    fn appnum(&mut self) -> PmiResult<i32> {
        Ok(match self.fetch(&self.me, b"pmix.appnum") {
            Ok(Answer::Number(n)) => i32::try_from(n).unwrap_or(-1),
            _ => -1,
        })
    }

    /// `PMIx_Put`; the key is added to this process's directory.
    fn put(&mut self, _kvsname: &[u8], key: &[u8], value: &[u8]) -> PmiResult<()> {
        if key.starts_with(RESERVED_PREFIX) {
            trace::line(format_args!(
                "{}: keys starting with \"libpmi:\" are the library's own",
                self.api.call(Op::Put)
            ));
            return Err(PmiError::InvalidKey);
        }
        let key = &store_key(key)?[..];
        let rc = self.lib.put(key, value);
        self.check(&format!("PMIx_Put(global, \"{}\")", key.escape_ascii()), rc)?;
        self.owns(key, Some(value));
        Ok(())
    }

    fn commit(&mut self) -> PmiResult<()> {
        let rc = self.lib.commit();
        self.check("PMIx_Commit", rc)
    }

    /// `PMIx_Fence` collecting data, after putting this barrier's directory entry and
    /// committing it with any puts the program did not commit.
    fn barrier(&mut self) -> PmiResult<()> {
        self.write_directory()?;
        self.commit()?;
        let rc = self.lib.fence(true, self.timeout);
        if rc == abi::ERR_TIMEOUT && watch::said_timeout() {
            // (PMI_TIMEOUT's watch said it, naming the server: one line is enough.)
            return Err(PmiError::Fail);
        }
        if rc != 0 {
            // As the wire's lost connection: one line, whether traced or not.
            return Err(trace::fatal(format_args!(
                "{}: PMIx_Fence with the PMIx server {} failed: {}",
                self.api.call(Op::Barrier),
                self.server,
                self.lib.error_string(rc)
            )));
        }
        self.check("PMIx_Fence(collect data)", rc)?;
        self.dir.fences += 1;
        self.group_peers.clear();
        Ok(())
    }

    /// PMI 1.2's group barriers: the whole job's is `barrier`; a node's or a list's is
    /// `PMIx_Fence` over those processes, collecting their data, and its members are
    /// remembered for the gets the key directory cannot place until the next barrier of
    /// the whole job. The tag names nothing here: PMIx tells concurrent fences apart by
    /// their processes.
    fn barrier_begin(&mut self, group: Option<Group<'_>>, _tag: i32) -> PmiResult<BarrierStep> {
        let ranks: Vec<i32> = match group {
            None | Some(Group::World) => return self.barrier().map(|()| BarrierStep::Done),
            Some(Group::Node) => self.local_ranks()?.unwrap_or_else(|| vec![self.id.rank]),
            Some(Group::Ranks(ranks)) => ranks.to_vec(),
        };
        let procs: Vec<Proc> = ranks
            .iter()
            .filter_map(|&r| calls::proc_of(self.me.nspace(), r as u32))
            .collect();
        if procs.len() != ranks.len() {
            return Err(self.failed("PMIx_Fence(group)", abi::ERR_BAD_PARAM));
        }
        // The names put since the last barrier of the whole job, for the group's members
        // (`ask_group_peers`), committed with them.
        let (key, value) = self.dir.group_entry();
        let rc = self.lib.put(key.as_bytes(), &value);
        self.check(&format!("PMIx_Put(global, \"{key}\")"), rc)?;
        self.commit()?;
        let rc = self.lib.fence_of(&procs, true, self.timeout);
        if rc == abi::ERR_TIMEOUT && watch::said_timeout() {
            return Err(PmiError::Fail);
        }
        if rc != 0 {
            return Err(trace::fatal(format_args!(
                "PMI_Barrier_group: PMIx_Fence over {} processes with the PMIx server {} \
                 failed: {}",
                procs.len(),
                self.server,
                self.lib.error_string(rc)
            )));
        }
        for rank in ranks {
            if let Err(at) = self.group_peers.binary_search(&(rank as u32)) {
                self.group_peers.insert(at, rank as u32);
            }
        }
        Ok(BarrierStep::Done)
    }

    /// PMIx fences over the group's processes, where they end (`groups_here`, asked once).
    fn group_barriers(&mut self) -> Result<(), String> {
        if let Some(known) = &self.groups {
            return known.clone();
        }
        let known = self.groups_here();
        self.groups = Some(known.clone());
        known
    }

    /// PMIx keeps values as they were put (measured under prterun and `srun --mpi=pmix`).
    fn keeps_values_whole(&self) -> bool {
        true
    }

    fn get(&mut self, _kvsname: &[u8], key: &[u8]) -> PmiResult<&[u8]> {
        if let Some(at) = self.preput.find(key) {
            return Ok(self.preput.value(at));
        }
        if key == MAPPING_KEY {
            self.value = self.mapping().ok_or(PmiError::InvalidKey)?;
            return Ok(&self.value);
        }
        let key = &store_key(key)?[..];
        // A value a peer's entry carried (known only once its entry is read, so no
        // earlier than PMIx would give it); else its owner, from the directory; else any
        // process of this host (a key put by a PMIx client other than this library:
        // PMIx's hash store finds it so, Slurm's ds21 does not).
        let answer = match self.seek(key)? {
            Some(Seen::Value(at)) => {
                trace::line(format_args!(
                    "get \"{}\": known from the key directory",
                    key.escape_ascii()
                ));
                return Ok(self.dir.known.value(at));
            }
            Some(Seen::Owner(rank)) => {
                let owner = calls::proc_of(self.me.nspace(), rank).unwrap_or(self.me);
                self.fetch_with(&owner, key, false)
            }
            None => match self.ask_group_peers(key) {
                Some(answer) => Ok(answer),
                None => {
                    let any = calls::proc_of(self.me.nspace(), RANK_UNDEF).unwrap_or(self.me);
                    self.fetch(&any, key)
                }
            },
        };
        match answer {
            Ok(Answer::Text(value)) => {
                self.value = value;
                Ok(&self.value)
            }
            Ok(other) => {
                trace::line(format_args!(
                    "get: \"{}\" is not a string: {other:?}",
                    key.escape_ascii()
                ));
                Err(PmiError::Fail)
            }
            Err(abi::ERR_NOT_FOUND) => Err(PmiError::InvalidKey),
            Err(rc) => Err(self.failed("PMIx_Get", rc)),
        }
    }

    /// PMI-2's job attributes: `PMI_process_mapping` as for the KVS key, `universeSize`.
    fn job_attr(&mut self, name: &[u8]) -> PmiResult<Option<Vec<u8>>> {
        Ok(match name {
            MAPPING_KEY => self.mapping(),
            b"universeSize" => Some(self.universe_size()?.to_string().into_bytes()),
            _ => None,
        })
    }

    /// PMI-2's node attributes, as PMIx data of this node's scope (`PMIX_LOCAL`) under a
    /// key of their own, committed when put (`find_node_attr` says where it is read).
    /// Waiting for one asks again every 10 ms (under `PMI_TIMEOUT`, until it runs out).
    fn node_attr(&mut self, name: &[u8], wait: bool) -> PmiResult<Option<Vec<u8>>> {
        let key = [NODE_ATTR_PREFIX, name].concat();
        let start = std::time::Instant::now();
        loop {
            let answer = self.find_node_attr(&key)?;
            match answer {
                Ok(Answer::Text(value)) => return Ok(Some(value)),
                Ok(other) => {
                    trace::line(format_args!("node attribute not a string: {other:?}"));
                    return Err(PmiError::Fail);
                }
                Err(abi::ERR_NOT_FOUND) if !wait => return Ok(None),
                Err(abi::ERR_NOT_FOUND) => {
                    if self
                        .timeout
                        .is_some_and(|s| start.elapsed().as_secs() >= u64::from(s))
                    {
                        return Err(trace::fatal(format_args!(
                            "PMI2_Info_GetNodeAttr: \"{}\" not put in {} s (PMI_TIMEOUT)",
                            name.escape_ascii(),
                            self.timeout.unwrap_or(0)
                        )));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(rc) => return Err(self.failed("PMIx_Get", rc)),
            }
        }
    }

    /// Committed at once: the node's processes may be waiting for it before any fence.
    fn put_node_attr(&mut self, name: &[u8], value: &[u8]) -> PmiResult<()> {
        let key = [NODE_ATTR_PREFIX, name].concat();
        let rc = self.lib.put_local(&key, value);
        self.check(&format!("PMIx_Put(local, \"{}\")", key.escape_ascii()), rc)?;
        self.owns(&key, None);
        self.commit()
    }

    /// `PMIX_LOCAL_PEERS`: the ranks on this node, comma-separated.
    fn local_ranks(&mut self) -> PmiResult<Option<Vec<i32>>> {
        let Ok(Answer::Text(peers)) = self.fetch(&self.wildcard(), b"pmix.lpeers") else {
            return Ok(None);
        };
        let ranks: Option<Vec<i32>> = peers
            .split(|&b| b == b',')
            .map(|r| {
                std::str::from_utf8(r)
                    .ok()?
                    .trim()
                    .parse::<i32>()
                    .ok()
                    .filter(|&r| (0..self.id.size).contains(&r))
            })
            .collect();
        Ok(match ranks {
            Some(mut ranks) if ranks.contains(&self.id.rank) => {
                ranks.sort_unstable();
                ranks.dedup();
                Some(ranks)
            }
            _ => {
                trace::warn(format_args!(
                    "ignoring PMIX_LOCAL_PEERS \"{}\": not a list of ranks with this one",
                    peers.escape_ascii()
                ));
                None
            }
        })
    }

    fn publish_name(&mut self, service: &[u8], port: &[u8]) -> PmiResult<()> {
        check_service(service)?;
        let rc = self.lib.publish(service, port);
        self.check(&format!("PMIx_Publish(\"{}\")", service.escape_ascii()), rc)
    }

    fn unpublish_name(&mut self, service: &[u8]) -> PmiResult<()> {
        check_service(service)?;
        let rc = self.lib.unpublish(service);
        self.check(
            &format!("PMIx_Unpublish(\"{}\")", service.escape_ascii()),
            rc,
        )
    }

    fn lookup_name(&mut self, service: &[u8]) -> PmiResult<&[u8]> {
        check_service(service)?;
        match self.lib.lookup(service) {
            Ok(Answer::Text(port)) => {
                trace::line(format_args!(
                    "PMIx_Lookup(\"{}\"): \"{}\"",
                    service.escape_ascii(),
                    port.escape_ascii()
                ));
                self.value = port;
                Ok(&self.value)
            }
            Ok(other) => {
                trace::line(format_args!("PMIx_Lookup: not a string: {other:?}"));
                Err(PmiError::Fail)
            }
            Err(rc) => Err(self.failed("PMIx_Lookup", rc)),
        }
    }

    /// `PMIx_Spawn`, one application per command. The info keys PMIx can express are
    /// `wdir` (the working directory), `host` and `hostfile`; any other is
    /// `PMI_ERR_INVALID_KEY`, nothing started. The preput pairs go into the children's
    /// environment with this namespace as their parent's, where this library finds them
    /// (and takes them only when PMIx names the same parent).
    fn spawn(
        &mut self,
        commands: &[SpawnCommand<'_>],
        preput: &[(&[u8], &[u8])],
        _slots: usize,
    ) -> PmiResult<Spawned> {
        // Written whole even without pairs: the children must not read a grandparent's.
        let mut env = vec![
            [format!("{PARENT}=").as_bytes(), self.me.nspace()].concat(),
            format!("{PREPUT_NUM}={}", preput.len()).into_bytes(),
        ];
        for (i, (key, value)) in preput.iter().enumerate() {
            env.push([format!("{PREPUT_KEY}{i}=").as_bytes(), key].concat());
            env.push([format!("{PREPUT_VAL}{i}=").as_bytes(), value].concat());
        }
        let mut apps = Vec::with_capacity(commands.len());
        for cmd in commands {
            let mut cwd = None;
            let mut info: Vec<(&'static CStr, &[u8])> = Vec::new();
            for &(key, value) in &cmd.info {
                match key {
                    b"wdir" => cwd = Some(value),
                    b"host" => info.push((c"pmix.host", value)),
                    b"hostfile" => info.push((c"pmix.hostfile", value)),
                    _ => {
                        trace::line(format_args!(
                            "{}: info key \"{}\" has no PMIx equivalent \
                             (known: wdir, host, hostfile)",
                            self.api.call(Op::Spawn),
                            key.escape_ascii()
                        ));
                        return Err(PmiError::InvalidKey);
                    }
                }
            }
            apps.push(AppSpec {
                cmd: cmd.execname,
                argv: std::iter::once(cmd.execname)
                    .chain(cmd.args.iter().copied())
                    .map(<[u8]>::to_vec)
                    .collect(),
                env: env.clone(),
                cwd,
                maxprocs: cmd.maxprocs,
                info,
            });
        }
        match self.lib.spawn(&apps) {
            Ok(nspace) => {
                trace::line(format_args!(
                    "PMIx_Spawn: {} application(s) started as namespace \"{}\"",
                    apps.len(),
                    nspace.escape_ascii()
                ));
                Ok(Spawned {
                    codes: Vec::new(),
                    jobid: Some(nspace),
                })
            }
            Err(rc) => Err(self.failed("PMIx_Spawn", rc)),
        }
    }

    /// `PMIx_Finalize` after a fence (no data): no process leaves while another may
    /// still read its keys (across hosts, a get from a process that has exited waits for
    /// ever: PRRTE of Open MPI 5.0.11, a program that reads after its last barrier).
    fn finalize(&mut self) -> PmiResult<()> {
        let fenced = self.lib.fence(false, self.timeout);
        let fenced = self.check("PMIx_Fence(before finalize)", fenced);
        let rc = self.lib.finalize();
        self.check("PMIx_Finalize", rc).and(fenced)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_pmix_keeps_or_node_attributes_use_are_stored_under_ours() {
        assert_eq!(&store_key(b"card-0").unwrap()[..], b"card-0");
        assert_eq!(&store_key(b"pmi_card").unwrap()[..], b"pmi_card");
        assert_eq!(&store_key(b"pmix_card").unwrap()[..], b"libpmi:pmix_card");
        assert_eq!(
            &store_key(b"pmi2.nodeattr.x").unwrap()[..],
            b"libpmi:pmi2.nodeattr.x"
        );
        // PMIx's keys hold 511 bytes: 504 of a program's and the prefix.
        let longest = [b"pmix".as_slice(), &[b'k'; 500]].concat();
        assert_eq!(store_key(&longest).unwrap().len(), 511);
        let over = [longest.as_slice(), b"k"].concat();
        assert_eq!(store_key(&over), Err(PmiError::InvalidKeyLength));
    }
}
