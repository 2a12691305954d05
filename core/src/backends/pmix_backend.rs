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
#![forbid(unsafe_code)]

use std::borrow::Cow;
use std::collections::HashMap;
use std::ffi::{CStr, OsString};

use crate::backends::pmix_lib::{self, Answer, AppSpec, Lib, Proc, RANK_UNDEF, RANK_WILDCARD};
use crate::backends::pmix_watch;

use crate::api::Maxes;
use crate::api::{Api, Op};
use crate::backend::{Backend, Identity};
use crate::backend::{SpawnCommand, Spawned};
use crate::env::{PmixEnv, PARENT, PREPUT_KEY, PREPUT_NUM, PREPUT_VAL};
use crate::error::{PmiError, PmiResult};
use crate::mapping;
use crate::store::{Found, Store};
use crate::trace;

/// What the length queries answer: PMIx's own namespace and key limits, and a value
/// limit of our choosing (PMIx has none; Intel's Hydra announces the same).
const PMIX_MAXES: Maxes = Maxes {
    kvsname: pmix_lib::NSPACE_LEN,
    key: pmix_lib::KEY_LEN,
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
    if RESERVED_PREFIX.len() + key.len() >= pmix_lib::KEY_LEN {
        trace::line(format_args!(
            "\"{}\": under PMIx this key is stored with the prefix \"libpmi:\", which takes \
             it past PMIx's key length",
            key.escape_ascii()
        ));
        return Err(PmiError::InvalidKeyLength);
    }
    Ok(Cow::Owned([RESERVED_PREFIX, key].concat()))
}

/// Barrier F's entry: "P\n" (P the last earlier barrier whose entry has names, or "-")
/// then the names put since the barrier before F, each with its value when that is short
/// (`encode_item`).
const DIR_KEY: &str = "libpmi:dir:";

/// The longest value that travels in a directory entry beside its name (a business card
/// of MPICH or Intel MPI is 50 to 300 bytes).
const INLINE_VALUE_MAX: usize = 1024;
/// The most value bytes one entry carries: the fence moves these twice (once under their
/// own key, for PMIx readers, and once here).
const INLINE_ENTRY_MAX: usize = 16 << 10;
/// The most a process keeps of the values it read in entries (records of `Store`, key
/// and value with 8 bytes each); past it, a key is asked of its owner.
pub const KNOWN_BYTES: usize = 4 << 20;

/// Who put which key: this process's side of the key directory and what it has read of
/// the others'.
#[derive(Default)]
struct Directory {
    /// The names put since the last barrier, encoded (`encode_item`).
    pending: Vec<u8>,
    /// The value bytes `pending` carries.
    pending_inline: usize,
    /// The last barrier whose entry had names.
    last_named: Option<u64>,
    /// Barriers this process has completed.
    fences: u64,
    /// The owner of each key named without a value kept in `known`, and of this
    /// process's own keys (a key in `known` needs no owner: its value is answered).
    owners: HashMap<Vec<u8>, u32>,
    /// Per rank, how many of its entries have been read (the first `read[r]`).
    read: Vec<u64>,
    /// `fences` when the entries were last read.
    read_at: u64,
    /// Values that came in the peers' entries read, known without asking PMIx (at most
    /// `KNOWN_BYTES`).
    known: Store,
}

/// Where the directory read so far places a key.
#[derive(Debug, PartialEq)]
enum Seen {
    /// Its value, kept (`Directory::known`).
    Value(Found),
    /// Put by this rank; its value is asked of it.
    Owner(u32),
}

impl Directory {
    /// Keep `value` of `key`, unless that passes `KNOWN_BYTES`; whether it was kept.
    fn keep(&mut self, key: &[u8], value: &[u8]) -> bool {
        let fits = self.known.footprint_with(key, value) <= KNOWN_BYTES;
        if fits {
            self.known.insert(key, value);
        }
        fits
    }

    /// What the entries read so far say of `key`.
    fn seen(&self, key: &[u8]) -> Option<Seen> {
        match self.known.find(key) {
            Some(at) => Some(Seen::Value(at)),
            None => self.owners.get(key).map(|&rank| Seen::Owner(rank)),
        }
    }

    /// A name read in `rank`'s entry, with its value when the entry carried it: its
    /// value kept, else its owner recorded. A name already placed stays where it is
    /// (entries are read from the latest back, and the later put wins).
    fn add_peer(&mut self, rank: u32, key: &[u8], value: Option<&[u8]>) {
        if self.seen(key).is_some() {
            return;
        }
        if !value.is_some_and(|v| self.keep(key, v)) {
            self.owners.insert(key.to_vec(), rank);
        }
    }

    /// `key` was put by this process (rank `me`): named in its next entry unless it was
    /// before, with `value` when that is short and the entry has room (a node
    /// attribute's is `None`: it is not for other nodes). Its value is not kept here:
    /// the client answers a process's own keys from its put record, with no `PMIx_Get`
    /// (each is a round trip through PMIx's progress thread: two thread switches; 63 and
    /// 194 us in one traced run under `prterun` here).
    fn add_own(&mut self, me: u32, key: &[u8], value: Option<&[u8]>) {
        if self.owners.insert(key.to_vec(), me) == Some(me) {
            return;
        }
        let inline = value.filter(|v| {
            v.len() <= INLINE_VALUE_MAX && self.pending_inline + v.len() <= INLINE_ENTRY_MAX
        });
        if let Some(v) = inline {
            self.pending_inline += v.len();
        }
        encode_item(&mut self.pending, key, inline);
    }
}

/// A length-prefixed string: its length in decimal, ':', its bytes.
fn encode_name(out: &mut Vec<u8>, name: &[u8]) {
    out.extend_from_slice(name.len().to_string().as_bytes());
    out.push(b':');
    out.extend_from_slice(name);
}

/// An item of an entry: the name, then, when the value travels with it, '=' and the
/// value, both length-prefixed (`encode_name`).
fn encode_item(out: &mut Vec<u8>, name: &[u8], value: Option<&[u8]>) {
    encode_name(out, name);
    if let Some(value) = value {
        out.push(b'=');
        encode_name(out, value);
    }
}

/// A length-prefixed string at the start of `text`, and what follows it.
fn decode_name(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = memchr::memchr(b':', text)?;
    let digits = &text[..colon];
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let len: usize = std::str::from_utf8(digits).ok()?.parse().ok()?;
    let rest = &text[colon + 1..];
    Some((rest.get(..len)?, &rest[len..]))
}

/// One item of an entry: a name and its value when it travels with it.
type Item<'a> = (&'a [u8], Option<&'a [u8]>);

/// The items of an entry; `None` when they are not in `encode_item`'s form.
fn decode_items(mut text: &[u8]) -> Option<Vec<Item<'_>>> {
    let mut items = Vec::new();
    while !text.is_empty() {
        let (name, rest) = decode_name(text)?;
        let (value, rest) = match rest.strip_prefix(b"=") {
            Some(rest) => {
                let (value, rest) = decode_name(rest)?;
                (Some(value), rest)
            }
            None => (None, rest),
        };
        items.push((name, value));
        text = rest;
    }
    Some(items)
}

/// An entry: the last earlier barrier with names (`None`: there is none), the items.
fn split_entry(text: &[u8]) -> Option<(Option<u64>, Vec<Item<'_>>)> {
    let nl = memchr::memchr(b'\n', text)?;
    let previous = match &text[..nl] {
        b"-" => None,
        p => Some(std::str::from_utf8(p).ok()?.parse().ok()?),
    };
    Some((previous, decode_items(&text[nl + 1..])?))
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
}

/// The longest `PMI_process_mapping` a program of `api` can read: the value maximum it
/// is told, less the NUL.
fn mapping_room(api: Api) -> usize {
    api.fixed_maxes().unwrap_or(PMIX_MAXES).value - 1
}

/// A service name is a PMIx key: at most `PMIX_MAX_KEYLEN` bytes.
fn check_service(service: &[u8]) -> PmiResult<()> {
    if service.len() < pmix_lib::KEY_LEN {
        Ok(())
    } else {
        Err(PmiError::InvalidArg)
    }
}

/// Load the PMIx client library; the error lists every file tried and why.
pub fn load(found: &PmixEnv) -> Result<&'static Lib, String> {
    pmix_lib::load(&candidates(found))
}

/// Debian's multiarch directory name for this build's target (`x86_64-linux-gnu`): the
/// CPU's name, but where Debian names it otherwise.
fn multiarch() -> String {
    let arch = std::env::consts::ARCH;
    let little = cfg!(target_endian = "little");
    match arch {
        "x86" => "i386-linux-gnu".into(),
        "arm" if cfg!(target_abi = "eabihf") => "arm-linux-gnueabihf".into(),
        "arm" => "arm-linux-gnueabi".into(),
        "powerpc64" if little => "powerpc64le-linux-gnu".into(),
        "mips64" if little => "mips64el-linux-gnuabi64".into(),
        _ => format!("{arch}-linux-gnu"),
    }
}

/// Where to look for the PMIx client library, in order: `PMI_PMIX_LIBRARY` alone when
/// set; else the soname (the loader's path, or a copy an MPI already loaded), the
/// Debian/Ubuntu location, then the copies under the launcher's install prefixes.
pub fn candidates(found: &PmixEnv) -> Vec<OsString> {
    if let Some(path) = &found.library {
        return vec![path.clone()];
    }
    let mut list = vec![OsString::from("libpmix.so.2")];
    list.push(OsString::from(format!(
        "/usr/lib/{}/pmix2/lib/libpmix.so.2",
        multiarch()
    )));
    for prefix in &found.prefixes {
        for lib in ["/lib/libpmix.so.2", "/lib/openmpi/libpmix.so.2"] {
            let mut path = prefix.clone();
            path.push(lib);
            list.push(path);
        }
    }
    list
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
        pmix_lib::set_abort_wait(timeout);
        trace::line(format_args!(
            "{init}: loaded {} ({})",
            lib.path,
            lib.version()
        ));
        // PMIx_Init has no bound of its own (pmix_watch): PMI_TIMEOUT gives it one.
        let bound = timeout.filter(|&s| s > 0);
        let (started, late) = match bound {
            Some(seconds) => {
                pmix_watch::within(seconds, &found.servers, "PMIx_Init", || lib.init())
            }
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
            pmix_watch::watch_calls(seconds, &found.servers);
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
        pmix_lib::proc_of(self.me.nspace(), RANK_WILDCARD).unwrap_or(self.me)
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

    /// `PMI_process_mapping`, asked or built once (`build_mapping`); `None` when none is
    /// known (asked again the next time).
    fn mapping(&mut self) -> Option<Vec<u8>> {
        if self.layout.is_none() {
            self.layout = self.build_mapping();
        }
        self.layout.clone()
    }

    /// `PMI_process_mapping` as PMIx gives it (`PMIX_ANL_MAP`, Slurm), or built from
    /// every rank's host name or node id (PRRTE gives no ANL map, and across hosts no
    /// node id of a process on another host); `None` when none is known.
    fn build_mapping(&self) -> Option<Vec<u8>> {
        if let Ok(Answer::Text(map)) = self.fetch(&self.wildcard(), b"pmix.anlmap") {
            return Some(map);
        }
        let (nodes, from) = match self.nodes_by(b"pmix.hname") {
            Some(nodes) => (nodes, "host names"),
            None => (self.nodes_by(b"pmix.nodeid")?, "node ids"),
        };
        // Within the API's value maximum, as every value is (a reader sized its buffer
        // so): this backend's for PMI-1, PMI-2's header constant for PMI-2.
        let room = mapping_room(self.api);
        let Some(text) = mapping::cycle_of(&nodes, room) else {
            trace::line(format_args!(
                "no PMI_process_mapping: the layout of {} ranks from {from} does not fit in \
                 {room} bytes",
                nodes.len()
            ));
            return None;
        };
        trace::line(format_args!(
            "PMI_process_mapping built from {} {from}: \"{text}\"",
            nodes.len()
        ));
        Some(text.into_bytes())
    }

    /// Each rank's node, numbered by `key`'s value (a host name or a node id) in the
    /// order the nodes first appear; `None` when a rank has no such value.
    fn nodes_by(&self, key: &[u8]) -> Option<Vec<u64>> {
        let mut seen: HashMap<Answer, u64> = HashMap::new();
        let mut nodes = Vec::with_capacity(self.id.size as usize);
        for rank in 0..self.id.size as u32 {
            let who = pmix_lib::proc_of(self.me.nspace(), rank)?;
            let node = match self.lib.get(&who, key, self.timeout) {
                Ok(answer @ (Answer::Text(_) | Answer::Number(_))) => answer,
                _ => return None,
            };
            let next = seen.len() as u64;
            nodes.push(*seen.entry(node).or_insert(next));
        }
        Some(nodes)
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
        if let Some(owner) = owner.and_then(|rank| pmix_lib::proc_of(self.me.nspace(), rank)) {
            return Ok(self.fetch_with(&owner, key, false));
        }
        for &peer in &peers {
            let Some(who) = pmix_lib::proc_of(self.me.nspace(), peer as u32) else {
                continue;
            };
            match self.fetch(&who, key) {
                Err(pmix_lib::ERR_NOT_FOUND) => {}
                answer => return Ok(answer),
            }
        }
        let any = pmix_lib::proc_of(self.me.nspace(), RANK_UNDEF).unwrap_or(self.me);
        Ok(self.fetch(&any, key))
    }

    /// Put this barrier's directory entry: the names put since the previous barrier.
    fn write_directory(&mut self) -> PmiResult<()> {
        let dir = &mut self.dir;
        let mut value = match dir.last_named {
            Some(p) => format!("{p}\n").into_bytes(),
            None => b"-\n".to_vec(),
        };
        value.extend_from_slice(&dir.pending);
        let key = format!("{DIR_KEY}{}", dir.fences);
        let rc = self.lib.put(key.as_bytes(), &value);
        self.check(&format!("PMIx_Put(global, \"{key}\")"), rc)?;
        let dir = &mut self.dir;
        if !dir.pending.is_empty() {
            dir.last_named = Some(dir.fences);
            dir.pending.clear();
            dir.pending_inline = 0;
        }
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
            let Some(who) = pmix_lib::proc_of(self.me.nspace(), rank) else {
                continue;
            };
            let here = local.contains(&(rank as i32));
            let mut next = Some(latest);
            while let Some(fence) = next.filter(|&f| f >= self.dir.read[rank as usize]) {
                let key = format!("{DIR_KEY}{fence}");
                let text = match self.fetch_with(&who, key.as_bytes(), false) {
                    Ok(Answer::Text(text)) => text,
                    Err(rc) if rc != pmix_lib::ERR_NOT_FOUND => return Err(rc),
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
        if rc != 0 {
            // As the wire's lost connection: one line, whether traced or not.
            return Err(trace::fatal(format_args!(
                "{}: PMIx_Fence failed: {}",
                self.api.call(Op::Barrier),
                self.lib.error_string(rc)
            )));
        }
        self.check("PMIx_Fence(collect data)", rc)?;
        self.dir.fences += 1;
        Ok(())
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
                let owner = pmix_lib::proc_of(self.me.nspace(), rank).unwrap_or(self.me);
                self.fetch_with(&owner, key, false)
            }
            None => {
                let any = pmix_lib::proc_of(self.me.nspace(), RANK_UNDEF).unwrap_or(self.me);
                self.fetch(&any, key)
            }
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
            Err(pmix_lib::ERR_NOT_FOUND) => Err(PmiError::InvalidKey),
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
                Err(pmix_lib::ERR_NOT_FOUND) if !wait => return Ok(None),
                Err(pmix_lib::ERR_NOT_FOUND) => {
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
    fn the_debian_directory_is_this_systems() {
        // On Debian (and Ubuntu) the loader's own directory has this name.
        if std::path::Path::new("/etc/debian_version").exists() {
            let dir = format!("/usr/lib/{}", multiarch());
            assert!(std::path::Path::new(&dir).is_dir(), "no {dir}");
        }
        #[cfg(target_arch = "x86_64")]
        assert_eq!(multiarch(), "x86_64-linux-gnu");
    }

    #[test]
    fn directory_items_round_trip_whatever_bytes_they_hold() {
        let items: [Item<'_>; 6] = [
            (b"card-0", Some(b"tcp://10.0.0.1:40000")),
            (b"", None),
            (b"12:34", Some(b"")),
            (b"a\nb", None),
            (b"\xff:\x01", Some(b"=5:x=")),
            (b"last", None),
        ];
        let mut text = Vec::new();
        for (name, value) in items {
            encode_item(&mut text, name, value);
        }
        assert_eq!(decode_items(&text).unwrap(), items);
        assert_eq!(decode_items(b"").unwrap(), Vec::<Item<'_>>::new());
    }

    #[test]
    fn an_entry_carries_short_values_up_to_its_budget() {
        let mut dir = Directory::default();
        let card = vec![b'c'; 200];
        let long = vec![b'l'; INLINE_VALUE_MAX + 1];
        dir.add_own(3, b"long", Some(&long));
        dir.add_own(3, b"node-attr", None);
        for i in 0..INLINE_ENTRY_MAX / card.len() + 5 {
            dir.add_own(3, format!("card-{i}").as_bytes(), Some(&card));
        }
        // Put again: not named again.
        dir.add_own(3, b"card-0", Some(&card));
        let items = decode_items(&dir.pending).unwrap();
        assert_eq!(items[0], (&b"long"[..], None));
        assert_eq!(items[1], (&b"node-attr"[..], None));
        let cards = &items[2..];
        assert_eq!(cards.len(), INLINE_ENTRY_MAX / card.len() + 5);
        let inline = cards.iter().filter(|(_, v)| v.is_some()).count();
        assert_eq!(inline, INLINE_ENTRY_MAX / card.len());
        assert_eq!(dir.pending_inline, inline * card.len());
        assert!(cards[..inline].iter().all(|(_, v)| *v == Some(&card[..])));
        assert!(cards[inline..].iter().all(|(_, v)| v.is_none()));
        // Its own values are not kept (the client's put record answers them); their
        // owner is recorded.
        assert_eq!(dir.known.arena_len(), 0);
        assert_eq!(dir.seen(b"card-0"), Some(Seen::Owner(3)));
        assert_eq!(dir.seen(b"node-attr"), Some(Seen::Owner(3)));
    }

    #[test]
    fn a_peers_name_is_placed_once_by_its_value_or_its_owner() {
        let mut dir = Directory::default();
        dir.add_own(0, b"mine", Some(b"x"));
        dir.add_peer(1, b"card-1", Some(b"abc"));
        dir.add_peer(2, b"long-2", None);
        // Read later (an earlier entry, or another rank's): the first placing stays.
        dir.add_peer(3, b"card-1", Some(b"zzz"));
        dir.add_peer(3, b"long-2", Some(b"zzz"));
        dir.add_peer(3, b"mine", Some(b"zzz"));
        let at = match dir.seen(b"card-1") {
            Some(Seen::Value(at)) => at,
            other => panic!("card-1: {other:?}"),
        };
        assert_eq!(dir.known.value(at), b"abc");
        // A kept value needs no owner: none is recorded for it.
        assert!(!dir.owners.contains_key(&b"card-1"[..]));
        assert_eq!(dir.seen(b"long-2"), Some(Seen::Owner(2)));
        assert_eq!(dir.seen(b"mine"), Some(Seen::Owner(0)));
        assert_eq!(dir.seen(b"nobody"), None);
        // Past the budget a value is not kept, and its owner is recorded instead.
        let big = vec![b'v'; KNOWN_BYTES];
        dir.add_peer(4, b"big-4", Some(&big));
        assert_eq!(dir.seen(b"big-4"), Some(Seen::Owner(4)));
    }

    #[test]
    fn a_reader_keeps_values_up_to_its_budget() {
        let mut dir = Directory::default();
        let value = vec![b'v'; 1000];
        let mut kept = 0;
        for i in 0.. {
            let key = format!("k{i}");
            let before = dir.known.arena_len();
            let was_kept = dir.keep(key.as_bytes(), &value);
            assert_eq!(was_kept, dir.known.arena_len() != before);
            if !was_kept {
                break;
            }
            kept += 1;
        }
        // Full: the records and their table within the budget, one more past it.
        assert!(dir.known.footprint_with(b"", b"") <= KNOWN_BYTES);
        assert!(dir.known.footprint_with(b"k10000", &value) > KNOWN_BYTES);
        assert!(kept > KNOWN_BYTES / Store::record_len(b"k10000", &value) * 9 / 10);
        assert!(dir.known.get(b"k0").is_some());
    }

    #[test]
    fn a_built_mapping_fits_what_each_api_reads() {
        assert_eq!(mapping_room(Api::Pmi1), 4095);
        assert_eq!(mapping_room(Api::Pmi2), 1023);
        // 256 ranks dealt round-robin to 2 hosts: 1032 bytes written out, too long for
        // PMI-2, which gets one cycle.
        let nodes: Vec<u64> = (0..256).map(|r| r % 2).collect();
        let pmi1 = mapping::cycle_of(&nodes, mapping_room(Api::Pmi1)).unwrap();
        assert_eq!(pmi1.len(), 1032);
        let pmi2 = mapping::cycle_of(&nodes, mapping_room(Api::Pmi2));
        assert_eq!(pmi2.as_deref(), Some("(vector,(0,2,1))"));
    }

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

    #[test]
    fn directory_text_not_ours_is_refused() {
        for bad in [
            &b"3:ab"[..],
            b"x:abc",
            b"3abc",
            b"-1:a",
            b"+1:a",
            b"99999999999999999999999:a",
            b"1:a=",
            b"1:a=x:1",
            b"1:a=3:xy",
            b"1:a==1:x",
        ] {
            assert_eq!(decode_items(bad), None, "{}", bad.escape_ascii());
        }
        assert_eq!(split_entry(b"-\n"), Some((None, vec![])));
        assert_eq!(
            split_entry(b"7\n6:card-1=3:abc1:k"),
            Some((
                Some(7),
                vec![(&b"card-1"[..], Some(&b"abc"[..])), (&b"k"[..], None)]
            ))
        );
        assert_eq!(split_entry(b"-"), None);
        assert_eq!(split_entry(b"x\n"), None);
        assert_eq!(split_entry(b"-\n9:short"), None);
    }
}
