//! The safe PMI client, for both APIs: one method per PMI operation, the rules every
//! backend shares (argument validation before anything is sent, by `rules`; the put-once
//! rule; the clique), over the backend init chose. Answers that cannot change (kvsname, universe size,
//! appnum, successful gets of keys that processes put) are cached.

use crate::api::Maxes;
use crate::api::{Api, MappingSource, Op, PORT_MAX};
use crate::backend::{Backend, BarrierStep, Group, Identity, SpawnCommand, Spawned};
use crate::conn::Conn;
use crate::error::{PmiError, PmiResult};
use crate::mapping::{Mapping, MappingError};
use crate::rules;
use crate::store::{self, Recent, Store};
use crate::trace;
use crate::wire::parse_int_list;
use crate::wire::pmi1::group_tag;

/// The most the get cache holds, keys and values with 8 bytes each: 19 000 records of a
/// 12-byte key and a 200-byte business card. Past it the cache starts again empty (a get is then asked of
/// the server again, as a client without a cache always does).
pub const GET_CACHE_BYTES: usize = 4 << 20;

/// Who a PMI 1.2 group barrier (`PMI_Barrier_group`) waits for, as the caller names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarrierGroup<'a> {
    /// `PMI_GROUP_WORLD`: every process of the job.
    World,
    /// `PMI_GROUP_SELF`: this process alone (a no-op where group barriers exist: MPICH's
    /// probe for them).
    Myself,
    /// `PMI_GROUP_NODE`: the processes on this node.
    Node,
    /// These ranks of the job, in any order.
    Ranks(&'a [i32]),
}

/// An initialized PMI client: the rules every backend shares, over one backend.
pub struct Client {
    backend: Box<dyn Backend>,
    /// Which API's rules apply (`rules`), chosen once at init.
    api: Api,
    id: Identity,
    maxes: Maxes,
    kvsname: Option<Vec<u8>>,
    universe_size: Option<i32>,
    appnum: Option<i32>,
    /// Successful gets of keys read again soon (`recent`): RFC 13 keys are put once, so a
    /// value never changes (the process manager's own `PMI_` keys are not kept). At most
    /// [`GET_CACHE_BYTES`] of records and their table: when the next would pass it, the
    /// cache starts again empty, so a process that reads millions of keys again keeps a few
    /// MiB.
    gets: Store,
    /// The last keys read: a value is kept when its key is read again among them.
    recent: Recent,
    /// This process's puts, to refuse a second put of a key with another value: each
    /// value's digest ([`store::digest`]), or, where the server keeps values whole and
    /// this process's own keys may be answered without asking it (PMIx:
    /// `Backend::keeps_values_whole`), the value itself.
    puts: Store,
    /// Whether `puts` holds whole values, and a get of this process's own key is
    /// answered from it.
    own_values: bool,
    /// The parsed `PMI_process_mapping`, once asked for (`Some(None)`: unknown).
    layout: Option<Option<Mapping>>,
    /// The ranks on this node as the backend gives them, once asked for.
    local_ranks: Option<Option<Vec<i32>>>,
}

impl Client {
    /// A client over a started backend.
    pub(crate) fn new(backend: Box<dyn Backend>, api: Api) -> Client {
        let own_values = backend.keeps_values_whole();
        Client {
            id: backend.identity(),
            maxes: api.fixed_maxes().unwrap_or_else(|| backend.maxes()),
            backend,
            api,
            kvsname: None,
            universe_size: None,
            appnum: None,
            gets: Store::default(),
            recent: Recent::default(),
            puts: Store::default(),
            own_values,
            layout: None,
            local_ranks: None,
        }
    }

    /// Take the inherited connection as the library's own, now that `PMI_Init`
    /// succeeded on it.
    pub(crate) fn adopt_connection(&mut self) -> Result<(), String> {
        self.backend.adopt()
    }

    /// Which backend serves this client (`wire`, `wire2`, `pmix`, `singleton`).
    pub fn backend_name(&self) -> &'static str {
        self.backend.name()
    }

    pub fn identity(&self) -> Identity {
        self.id
    }

    pub fn maxes(&self) -> Maxes {
        self.maxes
    }

    /// The socket `PMI_Abort` writes to; -1 when the backend has none.
    pub(crate) fn raw_fd(&self) -> i32 {
        self.backend.abort_fd()
    }

    /// This process group's kvsname (asked once).
    #[inline]
    pub fn kvsname(&mut self) -> PmiResult<&[u8]> {
        if self.kvsname.is_none() {
            self.kvsname = Some(self.backend.kvsname()?);
        }
        Ok(self.kvsname.as_deref().unwrap_or_default())
    }

    /// The universe size, asked once; `-1` (unknown) is passed through.
    pub fn universe_size(&mut self) -> PmiResult<i32> {
        if let Some(size) = self.universe_size {
            return Ok(size);
        }
        let size = self.backend.universe_size()?;
        self.universe_size = Some(size);
        Ok(size)
    }

    /// This process's application number, asked once.
    pub fn appnum(&mut self) -> PmiResult<i32> {
        if let Some(appnum) = self.appnum {
            return Ok(appnum);
        }
        let appnum = self.backend.appnum()?;
        self.appnum = Some(appnum);
        Ok(appnum)
    }

    /// `PMI_ERR_INVALID_KVS` unless `kvsname` names this process group's space.
    #[inline]
    pub fn check_kvsname(&mut self, kvsname: &[u8]) -> PmiResult<()> {
        if self.kvsname()? == kvsname {
            Ok(())
        } else {
            Err(PmiError::InvalidKvs)
        }
    }

    /// Put, after every validity rule. A key may be put once (RFC 13); putting it again
    /// with the same value succeeds without asking the backend, with another value
    /// fails.
    pub fn put(&mut self, kvsname: &[u8], key: &[u8], value: &[u8]) -> PmiResult<()> {
        self.check_kvsname(kvsname)?;
        self.put_own(key, value)
    }

    /// Put in this process group's own space (PMI-2 names no space).
    pub fn put_own(&mut self, key: &[u8], value: &[u8]) -> PmiResult<()> {
        self.kvsname()?;
        self.check_key(key)?;
        self.check_value(value)?;
        if let Some(why) = self.backend.alters(value) {
            trace::line(format_args!(
                "{}: \"{}\" refused: the server {why}",
                self.api.call(Op::Put),
                value[..value.len().min(64)].escape_ascii()
            ));
            return Err(PmiError::InvalidVal);
        }
        let digest;
        let record = if self.own_values {
            value
        } else {
            digest = store::digest(value);
            &digest[..]
        };
        if let Some(previous) = self.puts.get(key) {
            return if previous == record {
                Ok(())
            } else {
                Err(PmiError::InvalidKey)
            };
        }
        let name = self.kvsname.as_deref().unwrap_or_default();
        self.backend.put(name, key, value)?;
        self.puts.insert(key, record);
        Ok(())
    }

    /// `PMI_KVS_Commit`.
    pub fn commit(&mut self, kvsname: &[u8]) -> PmiResult<()> {
        self.check_kvsname(kvsname)?;
        self.backend.commit()
    }

    /// Get. A key nobody put is `PMI_ERR_INVALID_KEY`; a key read again soon is answered
    /// from what the server answered before (`get_own`).
    #[inline]
    pub fn get(&mut self, kvsname: &[u8], key: &[u8]) -> PmiResult<&[u8]> {
        self.get_hinted(kvsname, key, None)
    }

    /// Get, with PMI-2's hint of which rank put the key.
    #[inline]
    pub fn get_hinted(&mut self, kvsname: &[u8], key: &[u8], src: Option<i32>) -> PmiResult<&[u8]> {
        self.check_kvsname(kvsname)?;
        self.get_own(key, src)
    }

    /// Get from this process group's own space, with PMI-2's hint of who put the key.
    pub fn get_own(&mut self, key: &[u8], src: Option<i32>) -> PmiResult<&[u8]> {
        self.kvsname()?;
        self.check_key(key)?;
        let h = store::hash(key);
        // On the wires a key this process put is asked of the server as every other is: a
        // server may keep it otherwise than it was put (Hydra 4 keeps a value up to its
        // first space), and every rank must read what its peers read. Where the server
        // keeps values whole (PMIx), it is answered from the put record.
        if self.own_values {
            if let Some(at) = self.puts.find_hashed(h, key) {
                return Ok(self.puts.value(at));
            }
        }
        if let Some(at) = self.gets.find_hashed(h, key) {
            return Ok(self.gets.value(at));
        }
        // Kept only when read again soon (see `Recent`): a job's ranks read each business
        // card once, and keeping them all cost every rank page faults (and CPU) that a
        // client without a cache does not pay. The mapping is spelled out, so kept. The
        // process manager's other `PMI_` keys are never kept: nobody put them, and one
        // changes (Hydra answers `PMI_dead_processes` from the ranks that have died so
        // far; MPICH polls it for its failed processes).
        let keep = key == MAPPING_KEY || (!key.starts_with(b"PMI_") && !self.recent.first_time(h));
        let name = self.kvsname.as_deref().unwrap_or_default();
        let value = self.backend.get_hinted(name, key, src)?;
        no_nul("get", key, value)?;
        if !keep {
            return Ok(value);
        }
        let spelled;
        let value = if key == MAPPING_KEY {
            spelled = spell_out_mapping(value.to_vec(), self.id.size, self.maxes.value);
            &spelled[..]
        } else {
            value
        };
        // (A value is bounded by the API's maximum, far below the budget, which counts
        // the records and the table that finds them.)
        if self.gets.footprint_with(key, value) > GET_CACHE_BYTES {
            self.gets.clear();
        }
        // Straight from the backend into the record: no allocation of its own.
        Ok(self.gets.insert_hashed(h, key, value))
    }

    /// The job layout from the `PMI_process_mapping` key, or when a PMI-1 server left
    /// it out, Flux's task map (fetched and parsed once); `None` when it is unknown
    /// (missing, empty, or malformed, with one warning on stderr): then the clique is
    /// this process alone.
    fn layout(&mut self) -> PmiResult<Option<&Mapping>> {
        if self.layout.is_none() {
            let name = self.kvsname()?.to_vec();
            // PMI-1 servers publish it as a KVS key, PMI-2 servers as a job attribute.
            let text = match self.api.mapping_source() {
                MappingSource::KvsKey => self.get(&name, MAPPING_KEY).map(<[u8]>::to_vec),
                MappingSource::JobAttr => self.job_attr(MAPPING_KEY)?.ok_or(PmiError::InvalidKey),
            };
            let parsed = match text.as_deref() {
                Ok([]) => None,
                Ok(text) => match Mapping::parse(text) {
                    Ok(mapping) => Some(mapping),
                    Err(e) => {
                        warn_mapping(MAPPING_KEY, text, &e);
                        None
                    }
                },
                // Missing: Flux's task map, if there is one; a key the server's limits
                // cannot even hold: unknown.
                Err(PmiError::InvalidKey) => self.flux_taskmap(&name)?,
                Err(PmiError::InvalidKeyLength) => None,
                Err(e) => return Err(*e),
            };
            self.layout = Some(parsed);
        }
        Ok(self.layout.as_ref().and_then(Option::as_ref))
    }

    /// The job layout from Flux's task map (`flux.taskmap`, RFC 34), which Flux's job
    /// shell publishes alone when `PMI_process_mapping` would pass 1024 bytes
    /// (flux-core#4778); `None` for a PMI-2 server, or when the key is missing, or
    /// malformed or not this job's (with one warning).
    fn flux_taskmap(&mut self, kvsname: &[u8]) -> PmiResult<Option<Mapping>> {
        if self.api.mapping_source() != MappingSource::KvsKey {
            return Ok(None);
        }
        let text = match self.get(kvsname, TASKMAP_KEY) {
            Ok(text) => text.to_vec(),
            Err(PmiError::InvalidKey | PmiError::InvalidKeyLength) => return Ok(None),
            Err(e) => return Err(e),
        };
        Ok(match Mapping::parse_taskmap(&text, self.id.size as u32) {
            Ok(mapping) => Some(mapping),
            Err(e) => {
                warn_mapping(TASKMAP_KEY, &text, &e);
                None
            }
        })
    }

    /// The ranks on this node when the backend knows them directly (PMIx's local
    /// peers), asked once.
    fn local_ranks(&mut self) -> PmiResult<Option<&[i32]>> {
        if self.local_ranks.is_none() {
            self.local_ranks = Some(self.backend.local_ranks()?);
        }
        Ok(self.local_ranks.as_ref().and_then(Option::as_deref))
    }

    /// How many ranks of this process group share this node: from the backend's own
    /// answer, or arithmetic on the mapping, nothing allocated, however large the job.
    pub fn clique_size(&mut self) -> PmiResult<usize> {
        if let Some(ranks) = self.local_ranks()? {
            return Ok(ranks.len());
        }
        let (rank, size) = (self.id.rank as u32, self.id.size as u32);
        Ok(match self.layout()? {
            Some(mapping) => mapping.clique_size(rank, size).unwrap_or(1),
            None => 1,
        })
    }

    /// Write the ranks on this node, ascending, into `out`; `PMI_ERR_INVALID_LENGTH`
    /// with nothing written when they do not fit. What is allocated is bounded by `out`,
    /// and an allocation failure is `PMI_ERR_NOMEM`.
    pub fn clique_into(&mut self, out: &mut [i32]) -> PmiResult<usize> {
        let n = self.clique_size()?;
        let slots = out.get_mut(..n).ok_or(PmiError::InvalidLength)?;
        if let Some(ranks) = self.local_ranks()? {
            slots.copy_from_slice(ranks);
            return Ok(n);
        }
        let (rank, size) = (self.id.rank, self.id.size);
        match self.layout()? {
            Some(mapping) => {
                let ranks = mapping
                    .clique(rank as u32, size as u32)
                    .ok_or(PmiError::NoMem)?;
                for (slot, r) in slots.iter_mut().zip(ranks) {
                    *slot = r as i32;
                }
            }
            None => slots[0] = rank,
        }
        Ok(n)
    }

    /// Wait for every process of the group, holding the caller's lock all along (see
    /// `lifecycle::barrier` for the wait without it).
    pub fn barrier(&mut self) -> PmiResult<()> {
        let BarrierStep::Pending { id, fds, limit } = self.barrier_begin(None, None)? else {
            return Ok(());
        };
        let start = std::time::Instant::now();
        loop {
            Conn::wait_readable(fds, limit.map(|l| l.saturating_sub(start.elapsed())));
            let late = limit.is_some_and(|l| start.elapsed() >= l);
            if self.barrier_ended(id, late)? {
                return Ok(());
            }
        }
    }

    /// Begin `PMI_Barrier` (`group` None) or PMI 1.2's `PMI_Barrier_group` of `group`
    /// named by `tag`, after its rules: the ranks of a group are checked (`rules`);
    /// `PMI_FAIL` where the server has no group barriers (a PMI 1.1 server: the probe
    /// `PMI_GROUP_SELF` fails there, as with MPICH's client); this process alone is a
    /// no-op, as every group of a singleton.
    pub(crate) fn barrier_begin(
        &mut self,
        group: Option<BarrierGroup<'_>>,
        tag: Option<&[u8]>,
    ) -> PmiResult<BarrierStep> {
        let Some(group) = group else {
            return self.backend.barrier_begin(None, 0);
        };
        let ranks = match group {
            BarrierGroup::Ranks(ranks) => rules::group_ranks(ranks, self.id.rank, self.id.size)?,
            _ => Vec::new(),
        };
        if let Err(why) = self.backend.group_barriers() {
            trace::line(format_args!("PMI_Barrier_group: {why}"));
            return Err(PmiError::Fail);
        }
        let tag = group_tag(tag);
        let wire_group = match group {
            BarrierGroup::Myself => return Ok(BarrierStep::Done),
            BarrierGroup::Ranks(_) if ranks.len() == 1 => return Ok(BarrierStep::Done),
            _ if self.id.size == 1 => return Ok(BarrierStep::Done),
            BarrierGroup::World => Group::World,
            BarrierGroup::Node => Group::Node,
            BarrierGroup::Ranks(_) => Group::Ranks(&ranks),
        };
        self.backend.barrier_begin(Some(wire_group), tag)
    }

    /// Whether the barrier `id` begun ([`Client::barrier_begin`]) has ended; with `late`,
    /// one that has not fails.
    pub(crate) fn barrier_ended(&mut self, id: i32, late: bool) -> PmiResult<bool> {
        self.backend.barrier_ended(id, late)
    }

    /// The PMI version the server speaks (major, minor), where a wire says one.
    pub fn pmi_version(&self) -> Option<(i64, i64)> {
        self.backend.version()
    }

    /// Leave the job. The caller drops the client afterwards.
    pub fn finalize(&mut self) -> PmiResult<()> {
        self.backend.finalize()
    }

    /// Publish `port` under `service`.
    pub fn publish_name(&mut self, service: &[u8], port: &[u8]) -> PmiResult<()> {
        self.api.check_names(&[service], self.maxes.value)?;
        self.api.check_names(&[port], PORT_MAX)?;
        self.backend.publish_name(service, port)
    }

    pub fn unpublish_name(&mut self, service: &[u8]) -> PmiResult<()> {
        self.api.check_names(&[service], self.maxes.value)?;
        self.backend.unpublish_name(service)
    }

    /// The port published under `service`.
    pub fn lookup_name(&mut self, service: &[u8]) -> PmiResult<&[u8]> {
        self.api.check_names(&[service], self.maxes.value)?;
        let port = self.backend.lookup_name(service)?;
        if port.contains(&0) {
            trace::line(format_args!("lookup_name: the port holds a NUL"));
            return Err(PmiError::Fail);
        }
        Ok(port)
    }

    /// Start the commands, after every validity rule: the process manager's codes for
    /// the processes requested (as many as it sent, the rest 0), and the new job's id
    /// when the server gives one.
    pub fn spawn(
        &mut self,
        commands: &[SpawnCommand<'_>],
        preput: &[(&[u8], &[u8])],
    ) -> PmiResult<Spawned> {
        self.api.check_spawn(commands, preput, self.maxes)?;
        let slots = commands
            .iter()
            .fold(0usize, |n, c| n.saturating_add(c.maxprocs as usize));
        self.backend.spawn(commands, preput, slots)
    }
}

impl Client {
    /// A key as this API allows it (`rules`), shorter than the key maximum.
    fn check_key(&self, key: &[u8]) -> PmiResult<()> {
        self.api.check_key(key, self.maxes.key)
    }

    /// A value as this API allows it (`rules`), shorter than the value maximum.
    fn check_value(&self, value: &[u8]) -> PmiResult<()> {
        self.api.check_value(value, self.maxes.value)
    }

    /// PMI-2's fence: commit this process's puts, then wait for every process; their
    /// puts are visible afterwards.
    pub fn fence(&mut self) -> PmiResult<()> {
        self.backend.commit()?;
        self.backend.barrier()
    }

    /// A job attribute (`PMI_process_mapping` written out in full when it must repeat,
    /// as for the KVS key); `None` when the server has none.
    pub fn job_attr(&mut self, name: &[u8]) -> PmiResult<Option<Vec<u8>>> {
        self.check_key(name)?;
        let value = self.backend.job_attr(name)?;
        if let Some(v) = &value {
            no_nul("job attribute", name, v)?;
        }
        Ok(match value {
            Some(v) if name == MAPPING_KEY => {
                Some(spell_out_mapping(v, self.id.size, self.maxes.value))
            }
            other => other,
        })
    }

    /// A node attribute as PMI-2 reads it; `None` when there is none (and `wait` is
    /// false). `localRanksCount` and `localRanks` (the ranks on this node,
    /// comma-separated) are answered from the job's layout; any other name by the
    /// backend, waiting for it when `wait`.
    pub fn node_attr(&mut self, name: &[u8], wait: bool) -> PmiResult<Option<Vec<u8>>> {
        match name {
            b"localRanksCount" => return Ok(Some(self.clique_size()?.to_string().into_bytes())),
            b"localRanks" => return self.local_ranks_text().map(Some),
            _ => {}
        }
        self.check_key(name)?;
        let value = self.backend.node_attr(name, wait)?;
        if let Some(v) = &value {
            no_nul("node attribute", name, v)?;
        }
        Ok(value)
    }

    /// The ranks on this node, comma-separated.
    fn local_ranks_text(&mut self) -> PmiResult<Vec<u8>> {
        // The size is the server's: a failed allocation is PMI_ERR_NOMEM, not an abort.
        let size = self.clique_size()?;
        let mut ranks = Vec::new();
        ranks.try_reserve_exact(size).map_err(|_| PmiError::NoMem)?;
        ranks.resize(size, 0);
        self.clique_into(&mut ranks)?;
        let mut text = Vec::new();
        for (i, rank) in ranks.iter().enumerate() {
            if i > 0 {
                text.push(b',');
            }
            text.extend_from_slice(rank.to_string().as_bytes());
        }
        Ok(text)
    }

    pub fn put_node_attr(&mut self, name: &[u8], value: &[u8]) -> PmiResult<()> {
        self.check_key(name)?;
        self.check_value(value)?;
        self.backend.put_node_attr(name, value)
    }

    /// Slurm's ring exchange; a job of one process gets its own value back.
    pub fn ring(&mut self, value: &[u8]) -> PmiResult<(i32, i32, Vec<u8>, Vec<u8>)> {
        self.check_value(value)?;
        if self.id.size == 1 {
            return Ok((0, 1, value.to_vec(), value.to_vec()));
        }
        let ring = self.backend.ring(value)?;
        no_nul("ring", b"ring-left", &ring.2)?;
        no_nul("ring", b"ring-right", &ring.3)?;
        Ok(ring)
    }
}

/// The KVS key under which the process manager publishes the job layout (RFC 13).
const MAPPING_KEY: &[u8] = b"PMI_process_mapping";

/// The KVS key under which Flux's job shell publishes its task map (RFC 34).
const TASKMAP_KEY: &[u8] = b"flux.taskmap";

/// A mapping that places fewer ranks than the job has, and so must be read again from
/// its start (Hydra 4.0.2 writes `(vector,(0,1,1))` for `-n 4` on one host), is answered
/// written out in full: the same node for every rank, for readers that do not repeat it
/// (Intel MPI 2021 aborts at random on the short form). Unchanged when it is not a
/// mapping, needs no repeating, or would not fit in a value with its NUL.
fn spell_out_mapping(value: Vec<u8>, size: i32, vallen_max: usize) -> Vec<u8> {
    let Ok(size) = u32::try_from(size) else {
        return value;
    };
    let full = match Mapping::parse(&value) {
        Ok(mapping) if mapping.repeats_within(size) => {
            mapping.spelled_out(size, vallen_max.saturating_sub(1))
        }
        _ => None,
    };
    match full {
        Some(full) => {
            trace::line(format_args!(
                "PMI_process_mapping \"{}\" written out for {size} ranks: \"{full}\"",
                value.escape_ascii()
            ));
            full.into_bytes()
        }
        None => value,
    }
}

/// A value from the server for the caller's C string: one holding a NUL would be cut
/// there, so it is refused (`PMI_FAIL`, traced) rather than handed over shortened.
fn no_nul(what: &str, key: &[u8], value: &[u8]) -> PmiResult<()> {
    // (memchr: the code that finds reply lines, already in the cache.)
    if memchr::memchr(0, value).is_none() {
        return Ok(());
    }
    trace::line(format_args!(
        "{what}: the value of \"{}\" holds a NUL",
        key.escape_ascii()
    ));
    Err(PmiError::Fail)
}

fn warn_mapping(key: &[u8], text: &[u8], e: &MappingError) {
    trace::warn(format_args!(
        "ignoring malformed {} \"{}\" ({e}); the clique is this process alone",
        key.escape_ascii(),
        text.escape_ascii()
    ));
}

/// An attribute's value read as PMI-2's `...IntArray` calls read it: comma-separated
/// `int`s; `PMI_FAIL`, traced, for anything else.
pub fn int_list(text: &[u8]) -> PmiResult<Vec<i32>> {
    parse_int_list(text, usize::MAX).ok_or_else(|| {
        trace::line(format_args!(
            "not a list of integers: \"{}\"",
            text.escape_ascii()
        ));
        PmiError::Fail
    })
}
