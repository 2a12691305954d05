//! The safe PMI-1 client: one method per protocol operation. Each writes one request,
//! reads one reply, checks `cmd=` and `rc`, and parses its fields. Answers that cannot
//! change (maxes, kvsname, universe size, appnum, successful gets) are cached.
#![forbid(unsafe_code)]

use crate::conn::Conn;
use crate::error::{PmiError, PmiResult};
use crate::mapping::{Mapping, MappingError};
use crate::store::Store;
use crate::trace;
use crate::wire::{self, Reply, SpawnCommand, CLAMP_KEY_MAX, CLAMP_NAME_MAX, CLAMP_VAL_MAX};

/// Maximum lengths, each including the terminating NUL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Maxes {
    pub kvsname: usize,
    pub key: usize,
    pub value: usize,
}

/// What the length queries answer before `PMI_Init` (MPICH's ch3 asks for the value
/// length first) and what Hydra announces.
pub const DEFAULT_MAXES: Maxes = Maxes {
    kvsname: 256,
    key: 64,
    value: 1024,
};

/// The job facts the process manager gave through the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub rank: i32,
    pub size: i32,
    pub spawned: bool,
}

/// An initialized connection to the process manager.
pub struct Client {
    /// `None` in singleton mode: no process manager, a process-local KVS.
    conn: Option<Conn>,
    /// Reused for every request, so steady-state calls do not allocate.
    request: Vec<u8>,
    id: Identity,
    maxes: Maxes,
    kvsname: Option<Vec<u8>>,
    universe_size: Option<i32>,
    appnum: Option<i32>,
    /// Successful gets: RFC 13 keys are put once, so a value never changes.
    gets: Store,
    /// This process's puts, to refuse a second put of a key with another value.
    puts: Store,
    /// The ranks on this node, computed once from `PMI_process_mapping`.
    /// The parsed `PMI_process_mapping`, once asked for (`Some(None)`: unknown).
    layout: Option<Option<Mapping>>,
    /// The longest request line, newline included, the server takes.
    request_max: usize,
}

impl Client {
    /// `cmd=init pmi_version=1 pmi_subversion=1`, then `cmd=get_maxes`: two round trips.
    pub fn init(conn: Conn, id: Identity) -> PmiResult<Client> {
        Client::init_limited(conn, id, wire::MAX_LINE)
    }

    /// As [`Client::init`], for a server that takes request lines of at most
    /// `request_max` bytes (Slurm's, 1024): the maxima stay what it announced, so that
    /// every value it holds can be read, and a put whose line would be longer is refused
    /// with `PMI_ERR_INVALID_VAL_LENGTH` before anything is sent.
    pub fn init_limited(conn: Conn, id: Identity, request_max: usize) -> PmiResult<Client> {
        let mut client = Client::new(Some(conn), id);
        client.request_max = request_max;
        client.handshake()?;
        client.maxes = client.fetch_maxes()?;
        Ok(client)
    }

    /// Singleton mode: rank 0 of 1, universe 1, appnum 0, clique `{0}`, a generated
    /// kvsname, and a process-local KVS with the same rules as the wire's.
    pub fn singleton(spawned: bool) -> Client {
        let mut client = Client::new(
            None,
            Identity {
                rank: 0,
                size: 1,
                spawned,
            },
        );
        client.kvsname = Some(format!("singleton_kvs_{}", std::process::id()).into_bytes());
        client.universe_size = Some(1);
        client.appnum = Some(0);
        client.layout = Some(None);
        client
    }

    fn new(conn: Option<Conn>, id: Identity) -> Client {
        Client {
            conn,
            request: Vec::with_capacity(256),
            id,
            maxes: DEFAULT_MAXES,
            kvsname: None,
            universe_size: None,
            appnum: None,
            gets: Store::default(),
            puts: Store::default(),
            layout: None,
            request_max: wire::MAX_LINE,
        }
    }

    fn handshake(&mut self) -> PmiResult<()> {
        wire::encode(
            &mut self.request,
            "init",
            &[("pmi_version", b"1"), ("pmi_subversion", b"1")],
        );
        let reply = wire(&mut self.conn, "PMI_Init")?.call(&self.request, b"response_to_init")?;
        let rc = reply.rc();
        let version = (reply.field(b"pmi_version"), reply.field(b"pmi_subversion"));
        let (major, minor) = (reply.int(b"pmi_version"), reply.int(b"pmi_subversion"));
        let line = reply.line().escape_ascii().to_string();
        if rc != Some(0) {
            return Err(trace::fatal(format_args!(
                "PMI_Init refused by the server: \"{line}\""
            )));
        }
        match (version, major, minor) {
            // RFC 13 makes the version fields optional: silence agrees to 1.1.
            ((None, None), _, _) => Ok(()),
            (_, Some(1), Some(minor)) if minor >= 1 => Ok(()),
            _ => Err(trace::fatal(format_args!(
                "PMI_Init: the server does not speak PMI 1.1 or a later 1.x: \"{line}\""
            ))),
        }
    }

    fn fetch_maxes(&mut self) -> PmiResult<Maxes> {
        wire::encode(&mut self.request, "get_maxes", &[]);
        let reply = wire(&mut self.conn, "PMI_Init")?.call(&self.request, b"maxes")?;
        let line = reply.line().escape_ascii().to_string();
        let field = |name: &[u8], clamp: usize| match reply.int(name) {
            Some(n) if n > 1 => Some((n as u64).min(clamp as u64) as usize),
            _ => None,
        };
        match (
            reply.rc(),
            field(b"kvsname_max", CLAMP_NAME_MAX),
            field(b"keylen_max", CLAMP_KEY_MAX),
            field(b"vallen_max", CLAMP_VAL_MAX),
        ) {
            (Some(0), Some(kvsname), Some(key), Some(value)) => Ok(Maxes {
                kvsname,
                key,
                value,
            }),
            _ => Err(trace::fatal(format_args!(
                "PMI_Init: unusable get_maxes reply \"{line}\""
            ))),
        }
    }

    /// Take the inherited `PMI_FD` as the library's own, now that `PMI_Init` succeeded
    /// on it (a failed `PMI_Init` leaves it open, as found).
    pub fn adopt_connection(&mut self) -> Result<(), String> {
        self.conn.as_mut().map_or(Ok(()), Conn::adopt)
    }

    pub fn identity(&self) -> Identity {
        self.id
    }

    pub fn maxes(&self) -> Maxes {
        self.maxes
    }

    /// The raw fd, for `PMI_Abort`; -1 in singleton mode.
    pub fn raw_fd(&self) -> i32 {
        self.conn.as_ref().map_or(-1, Conn::raw_fd)
    }

    /// This process group's kvsname (`cmd=get_my_kvsname`, fetched once).
    pub fn kvsname(&mut self) -> PmiResult<&[u8]> {
        if self.kvsname.is_none() {
            wire::encode(&mut self.request, "get_my_kvsname", &[]);
            let reply =
                wire(&mut self.conn, "PMI_KVS_Get_my_name")?.call(&self.request, b"my_kvsname")?;
            let name = match (reply.rc(), reply.field(b"kvsname")) {
                (Some(0), Some(name)) if wire::is_word(name) && name.len() < self.maxes.kvsname => {
                    name.to_vec()
                }
                _ => return Err(server_error("PMI_KVS_Get_my_name", reply)),
            };
            self.kvsname = Some(name);
        }
        Ok(self.kvsname.as_deref().unwrap_or_default())
    }

    /// `cmd=get_universe_size`, fetched once; `-1` (unknown) is passed through.
    pub fn universe_size(&mut self) -> PmiResult<i32> {
        if let Some(size) = self.universe_size {
            return Ok(size);
        }
        let size = self.fetch_int("get_universe_size", b"universe_size", b"size")?;
        self.universe_size = Some(size);
        Ok(size)
    }

    /// `cmd=get_appnum`, fetched once.
    pub fn appnum(&mut self) -> PmiResult<i32> {
        if let Some(appnum) = self.appnum {
            return Ok(appnum);
        }
        let appnum = self.fetch_int("get_appnum", b"appnum", b"appnum")?;
        self.appnum = Some(appnum);
        Ok(appnum)
    }

    fn fetch_int(&mut self, cmd: &str, expected: &[u8], field: &[u8]) -> PmiResult<i32> {
        wire::encode(&mut self.request, cmd, &[]);
        let reply = wire(&mut self.conn, cmd)?.call(&self.request, expected)?;
        match (reply.rc(), reply.int(field).map(i32::try_from)) {
            (Some(0), Some(Ok(n))) => Ok(n),
            _ => Err(server_error(cmd, reply)),
        }
    }

    /// `PMI_ERR_INVALID_KVS` unless `kvsname` names this process group's space.
    pub fn check_kvsname(&mut self, kvsname: &[u8]) -> PmiResult<()> {
        if self.kvsname()? == kvsname {
            Ok(())
        } else {
            Err(PmiError::InvalidKvs)
        }
    }

    /// `cmd=put`, after every validity rule. A key may be put once (RFC 13); putting it
    /// again with the same value succeeds without a round trip, with another value fails.
    pub fn put(&mut self, kvsname: &[u8], key: &[u8], value: &[u8]) -> PmiResult<()> {
        self.check_kvsname(kvsname)?;
        wire::check_key(key, self.maxes.key)?;
        wire::check_value(value, self.maxes.value)?;
        if let Some(previous) = self.puts.get(key) {
            return if previous == value {
                Ok(())
            } else {
                Err(PmiError::InvalidKey)
            };
        }
        let Some(conn) = self.conn.as_mut() else {
            self.puts.insert(key, value);
            return Ok(());
        };
        let name = self.kvsname.as_deref().unwrap_or_default();
        wire::encode(
            &mut self.request,
            "put",
            &[("kvsname", name), ("key", key), ("value", value)],
        );
        if self.request.len() > self.request_max {
            trace::line(format_args!(
                "put: a line of {} bytes; the server takes at most {} (Slurm's PMI-1 server \
                 cuts longer ones)",
                self.request.len(),
                self.request_max
            ));
            return Err(PmiError::InvalidValLength);
        }
        let reply = conn.call(&self.request, b"put_result")?;
        if reply.rc() != Some(0) {
            return Err(server_error("put", reply));
        }
        self.puts.insert(key, value);
        Ok(())
    }

    /// `PMI_KVS_Commit` is local: every put already reached the server.
    pub fn commit(&mut self, kvsname: &[u8]) -> PmiResult<()> {
        self.check_kvsname(kvsname)
    }

    /// `cmd=get`. A key the server does not have is `PMI_ERR_INVALID_KEY` and leaves the
    /// connection usable; a key read once is answered from the cache afterwards.
    pub fn get(&mut self, kvsname: &[u8], key: &[u8]) -> PmiResult<&[u8]> {
        self.check_kvsname(kvsname)?;
        wire::check_key(key, self.maxes.key)?;
        if let Some(at) = self.gets.find(key) {
            return Ok(self.gets.value(at));
        }
        let Some(conn) = self.conn.as_mut() else {
            // Singleton: every key there is was put by this process.
            return self.puts.get(key).ok_or(PmiError::InvalidKey);
        };
        let name = self.kvsname.as_deref().unwrap_or_default();
        wire::encode(&mut self.request, "get", &[("kvsname", name), ("key", key)]);
        let reply = conn.call(&self.request, b"get_result")?;
        let value = match (reply.rc(), reply.value()) {
            // A NUL inside would cut the C string the caller gets: refused, not cached.
            (Some(0), Some(value)) if !value.contains(&0) => value,
            (Some(0), _) | (None, _) => return Err(server_error("get", reply)),
            (Some(_), _) => {
                trace::line(format_args!(
                    "get: key not found: \"{}\"",
                    reply.line().escape_ascii()
                ));
                return Err(PmiError::InvalidKey);
            }
        };
        // Straight from the reply into the record: no allocation of its own.
        if key == MAPPING_KEY {
            let full = spell_out_mapping(value.to_vec(), self.id.size, self.maxes.value);
            return Ok(self.gets.insert(key, &full));
        }
        Ok(self.gets.insert(key, value))
    }

    /// The job layout from the `PMI_process_mapping` key (fetched and parsed once);
    /// `None` when it is unknown (missing, empty, or malformed, with one warning on
    /// stderr): then the clique is this process alone.
    fn layout(&mut self) -> PmiResult<Option<&Mapping>> {
        if self.layout.is_none() {
            let name = self.kvsname()?.to_vec();
            let parsed = match self.get(&name, MAPPING_KEY) {
                Ok([]) => None,
                Ok(text) => match Mapping::parse(text) {
                    Ok(mapping) => Some(mapping),
                    Err(e) => {
                        warn_mapping(text, &e);
                        None
                    }
                },
                // Missing, or a key the server's limits cannot even hold: unknown.
                Err(PmiError::InvalidKey | PmiError::InvalidKeyLength) => None,
                Err(e) => return Err(e),
            };
            self.layout = Some(parsed);
        }
        Ok(self.layout.as_ref().and_then(Option::as_ref))
    }

    /// How many ranks of this process group share this node: arithmetic on the mapping,
    /// nothing allocated, however large the job.
    pub fn clique_size(&mut self) -> PmiResult<usize> {
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

    /// `cmd=barrier_in`, answered by `cmd=barrier_out` once every rank has entered.
    pub fn barrier(&mut self) -> PmiResult<()> {
        self.simple("barrier_in", b"barrier_out")
    }

    /// `cmd=finalize`, answered by `cmd=finalize_ack`. The caller closes the connection
    /// by dropping the client afterwards.
    pub fn finalize(&mut self) -> PmiResult<()> {
        self.simple("finalize", b"finalize_ack")
    }

    /// `cmd=publish_name service=<service> port=<port>`.
    pub fn publish_name(&mut self, service: &[u8], port: &[u8]) -> PmiResult<()> {
        check_words(&[service], self.maxes.value)?;
        check_words(&[port], PORT_MAX)?;
        wire::encode(
            &mut self.request,
            "publish_name",
            &[("service", service), ("port", port)],
        );
        let reply =
            wire(&mut self.conn, "PMI_Publish_name")?.call(&self.request, b"publish_result")?;
        name_service_ok("publish_name", reply)
    }

    /// `cmd=unpublish_name service=<service>`.
    pub fn unpublish_name(&mut self, service: &[u8]) -> PmiResult<()> {
        check_words(&[service], self.maxes.value)?;
        wire::encode(&mut self.request, "unpublish_name", &[("service", service)]);
        let reply =
            wire(&mut self.conn, "PMI_Unpublish_name")?.call(&self.request, b"unpublish_result")?;
        name_service_ok("unpublish_name", reply)
    }

    /// `cmd=lookup_name service=<service>`: the published port.
    pub fn lookup_name(&mut self, service: &[u8]) -> PmiResult<&[u8]> {
        check_words(&[service], self.maxes.value)?;
        wire::encode(&mut self.request, "lookup_name", &[("service", service)]);
        let reply =
            wire(&mut self.conn, "PMI_Lookup_name")?.call(&self.request, b"lookup_result")?;
        name_service_ok("lookup_name", reply)?;
        reply
            .field(b"port")
            .filter(|port| !port.contains(&0))
            .ok_or_else(|| server_error("lookup_name", reply))
    }

    /// `mcmd=spawn` ... `endcmd`, one segment per command, in one write; then one
    /// `cmd=spawn_result rc=<n> [errcodes=a,b,...]`. `errors` has a slot per process
    /// requested: filled from `errcodes` when the server sends them, else with 0.
    pub fn spawn(
        &mut self,
        commands: &[SpawnCommand<'_>],
        preput: &[(&[u8], &[u8])],
        errors: &mut [i32],
    ) -> PmiResult<()> {
        let (key_max, value_max) = (self.maxes.key, self.maxes.value);
        wire::encode_spawn(&mut self.request, commands, preput, key_max, value_max)?;
        let reply =
            wire(&mut self.conn, "PMI_Spawn_multiple")?.call(&self.request, b"spawn_result")?;
        if reply.rc() != Some(0) {
            return Err(server_error("spawn", reply));
        }
        errors.fill(0);
        match reply.field(b"errcodes") {
            None => Ok(()),
            Some(codes) => {
                wire::parse_errcodes(codes, errors).ok_or_else(|| server_error("spawn", reply))
            }
        }
    }

    /// A request without arguments whose reply carries only `rc`.
    /// In singleton mode there is nobody to wait for: it succeeds at once.
    fn simple(&mut self, cmd: &str, expected: &[u8]) -> PmiResult<()> {
        let Some(conn) = self.conn.as_mut() else {
            return Ok(());
        };
        wire::encode(&mut self.request, cmd, &[]);
        let reply = conn.call(&self.request, expected)?;
        if reply.rc() == Some(0) {
            Ok(())
        } else {
            Err(server_error(cmd, reply))
        }
    }
}

/// The connection, or `PMI_FAIL` with one line on stderr in singleton mode.
fn wire<'a>(conn: &'a mut Option<Conn>, call: &str) -> PmiResult<&'a mut Conn> {
    conn.as_mut()
        .ok_or_else(|| trace::fatal(format_args!("{call}: no process manager (singleton mode)")))
}

/// `PMI_PORT` mode: send `cmd=initack pmiid=<id>`, then read `cmd=initack` and the
/// `cmd=set size=N`, `cmd=set rank=R`, `cmd=set debug=D` lines, in any order. Returns
/// the rank and size they give.
pub fn port_handshake(conn: &mut Conn, id: i32) -> PmiResult<(i32, i32)> {
    let mut request = Vec::new();
    wire::encode(
        &mut request,
        "initack",
        &[("pmiid", id.to_string().as_bytes())],
    );
    conn.send(&request)?;
    let (mut acked, mut size, mut rank, mut debug) = (false, None, None, None);
    while !(acked && size.is_some() && rank.is_some() && debug.is_some()) {
        let reply = conn.recv()?;
        let int = |key: &[u8]| reply.int(key).and_then(|n| i32::try_from(n).ok());
        match reply.cmd() {
            Some(b"initack") if !acked => acked = true,
            Some(b"set") if int(b"size").is_some() => size = int(b"size"),
            Some(b"set") if int(b"rank").is_some() => rank = int(b"rank"),
            Some(b"set") if int(b"debug").is_some() => debug = int(b"debug"),
            _ => {
                let line = reply.line().escape_ascii().to_string();
                return Err(conn.fail(format_args!(
                    "PMI_Init: unexpected line in the PMI_PORT handshake: \"{line}\""
                )));
            }
        }
    }
    match (rank, size) {
        (Some(rank), Some(size)) if size >= 1 && (0..size).contains(&rank) => Ok((rank, size)),
        _ => Err(conn.fail(format_args!(
            "PMI_Init: PMI_PORT handshake gave rank {rank:?} of size {size:?}"
        ))),
    }
}

/// The line `cmd=abort exitcode=<code>`, which is all Hydra reads (it crashes without
/// `exitcode`), written into `buf` (no allocation: `PMI_Abort` may run in a signal
/// handler).
pub fn abort_line(buf: &mut [u8; 64], code: i32) -> &[u8] {
    use std::io::Write;
    let room = buf.len();
    let mut rest = &mut buf[..];
    let _ = writeln!(rest, "cmd=abort exitcode={code}");
    let used = room - rest.len();
    &buf[..used]
}

/// The KVS key under which the process manager publishes the job layout (RFC 13).
const MAPPING_KEY: &[u8] = b"PMI_process_mapping";

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

fn warn_mapping(text: &[u8], e: &MappingError) {
    trace::warn(format_args!(
        "ignoring malformed PMI_process_mapping \"{}\" ({e}); the clique is this process alone",
        text.escape_ascii()
    ));
}

/// The longest port name, NUL included, that `PMI_Publish_name` accepts and
/// `PMI_Lookup_name` writes: MPICH passes lookups a `char port[MPI_MAX_PORT_NAME]` of
/// 256 bytes, so a longer answer would be written past the caller's buffer.
pub const PORT_MAX: usize = 256;

/// Service names and ports are RFC 13 `word`s (Hydra would cut them at a space), and
/// each shorter than `max` (the value maximum, or [`PORT_MAX`] for ports), so every
/// request stays one short line.
fn check_words(words: &[&[u8]], vallen_max: usize) -> PmiResult<()> {
    if words
        .iter()
        .all(|w| wire::is_word(w) && w.len() < vallen_max)
    {
        Ok(())
    } else {
        Err(PmiError::InvalidArg)
    }
}

/// Name service replies differ: Hydra sends `rc=0|1` with `info=ok`, Slurm sends
/// `info=ok|fail` without `rc`. Either saying no is a failure.
fn name_service_ok(what: &str, reply: Reply<'_>) -> PmiResult<()> {
    let info_ok = reply.field(b"info").is_none_or(|info| info == b"ok");
    if reply.rc() == Some(0) && info_ok {
        Ok(())
    } else {
        Err(server_error(what, reply))
    }
}

/// A reply that says the operation failed, or that lacks what it should carry: traced
/// with the server's own words, `PMI_FAIL` for the caller.
fn server_error(what: &str, reply: Reply<'_>) -> PmiError {
    trace::line(format_args!(
        "{what} failed: server said \"{}\"",
        reply.line().escape_ascii()
    ));
    PmiError::Fail
}
