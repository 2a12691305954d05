//! The PMI-1.1 wire backend: one method per protocol operation. Each writes one request,
//! reads one reply, checks `cmd=` and `rc`, and parses its fields.

use crate::api::Api;
use crate::api::{Maxes, DEFAULT_MAXES};
use crate::backend::{needs_pmi_1_2, Backend, BarrierStep, Group, Identity, SpawnCommand, Spawned};
use crate::conn::{Conn, Waker};
use crate::error::{PmiError, PmiResult};
use crate::launch::{JobEnv, PortEnv};
use crate::trace;
use crate::wire::pmi1::{self, Reply, CLAMP_KEY_MAX, CLAMP_NAME_MAX, CLAMP_VAL_MAX};
use crate::wire::{format_int, parse_int_list, IntDigits};

/// A connection to a PMI-1 process manager, after `init` and `get_maxes`.
pub struct Pmi1Wire {
    conn: Conn,
    /// Reused for every request, so steady-state calls do not allocate.
    request: Vec<u8>,
    id: Identity,
    maxes: Maxes,
    /// The longest request line, newline included, the server takes.
    request_max: usize,
    /// The PMI-1 subversion the server answered `init` with: 1, or 2 for a PMI 1.2
    /// server (MPICH 5's Hydra), whose barriers may be awaited without the lock and
    /// named by group.
    minor: i64,
    /// PMI 1.2: the barriers begun and not yet over, in the order they began, each
    /// awaited by one thread without the lock.
    waits: Vec<Wait>,
    /// The wakers of barriers that are over, for the next ones.
    spare_wakers: Vec<Waker>,
    /// The id of the next barrier begun.
    next_wait: i32,
    /// Which server this is, as far as the environment says (`MPI_LOCALNRANKS`: a
    /// Hydra; `PMI_JOBID` without it: Slurm's), for what it does not keep whole.
    hydra: bool,
    slurm: bool,
}

/// A PMI 1.2 barrier begun, as its thread awaits it without the lock.
struct Wait {
    /// Which it is, for [`Backend::barrier_ended`] (two barriers may have one tag).
    id: i32,
    /// The tag its `barrier_out` names.
    tag: i32,
    /// Its request line's digest: the barrier the server counts it in (its group and
    /// tag; `barrier_in` with no group is another barrier than `WORLD:0`).
    name: u64,
    /// Whether its end came, and said success (kept by whichever thread read it).
    end: Option<bool>,
    /// What its thread polls beside the socket: woken when another thread read its
    /// end, or left lines in the connection's buffer.
    waker: Waker,
    /// Whether the waker is signalled (so that a thread that reads its own end, as
    /// where it waits alone, costs no system call for it).
    woken: bool,
}

impl Wait {
    fn wake(&mut self) {
        if !self.woken {
            self.waker.wake();
            self.woken = true;
        }
    }
}

/// Send `request` (one whole line) and read one reply line, which must be
/// `cmd=<expected>` (after any late `spawn_result`s: [`late_spawn_result`]). Another
/// `cmd` breaks the connection and returns `PMI_FAIL`; a nonzero `rc` is left for the
/// caller to judge.
pub fn call_line<'c>(conn: &'c mut Conn, request: &[u8], expected: &[u8]) -> PmiResult<Reply<'c>> {
    let mut range = conn.exchange(request, expected, &pmi1::LINES)?;
    // (A reply that starts `cmd=<expected>`, as every server's do, is parsed once.)
    while !conn
        .message(range.clone())
        .strip_prefix(b"cmd=")
        .is_some_and(|rest| rest.starts_with(expected))
        && late_spawn_result(&Reply::new(conn.message(range.clone())), expected)
    {
        range = conn.recv(expected, &pmi1::LINES)?;
    }
    expect_reply(conn, range, expected)
}

/// The reply line in `range`, which must be `cmd=<expected>`: else a protocol error,
/// which breaks the connection.
#[inline]
fn expect_reply<'c>(
    conn: &'c Conn,
    range: std::ops::Range<usize>,
    expected: &[u8],
) -> PmiResult<Reply<'c>> {
    let line = conn.message(range);
    let reply = Reply::new(line);
    if reply.cmd() != Some(expected) {
        return Err(conn.fail(format_args!(
            "protocol error: expected cmd={}, got \"{}\"",
            expected.escape_ascii(),
            line.escape_ascii()
        )));
    }
    Ok(reply)
}

/// Whether `reply`, read where `cmd=<expected>` is awaited, is a further answer to a spawn
/// already answered, to be passed over (traced): Flux 0.88 answers each command of a
/// spawn (`cmd=spawn_result rc=-1` at each `endcmd`), where RFC 13's servers answer the
/// spawn once.
fn late_spawn_result(reply: &Reply<'_>, expected: &[u8]) -> bool {
    let late = expected != b"spawn_result" && reply.cmd() == Some(b"spawn_result");
    if late {
        trace::line(format_args!(
            "passing over a further answer to the last spawn: \"{}\"",
            reply.line().escape_ascii()
        ));
    }
    late
}

impl Pmi1Wire {
    /// `PMI_FD` mode: the inherited socket, rank and size from the environment.
    pub fn from_fd(job: &JobEnv, timeout: Option<u32>) -> PmiResult<Pmi1Wire> {
        let mut conn = Conn::from_fd(job.fd);
        conn.set_timeout(timeout);
        let id = Identity {
            rank: job.rank,
            size: job.size,
            spawned: job.spawned,
        };
        let mut wire = Pmi1Wire::init_limited(conn, id, job.request_max)?;
        (wire.hydra, wire.slurm) = (job.hydra, job.slurm);
        Ok(wire)
    }

    /// `PMI_PORT` mode: connect, `initack`; rank and size come from the server.
    pub fn from_port(port: &PortEnv, timeout: Option<u32>) -> PmiResult<Pmi1Wire> {
        let refuse = |why: String| trace::fatal(format_args!("PMI_Init: {why}"));
        let mut conn = Conn::connect(&port.host, port.port, timeout).map_err(refuse)?;
        let (rank, size) = port_handshake(&mut conn, port.id)?;
        let id = Identity {
            rank,
            size,
            spawned: port.spawned,
        };
        let mut wire = Pmi1Wire::init_limited(conn, id, pmi1::MAX_LINE)?;
        wire.hydra = port.hydra;
        Ok(wire)
    }

    /// `cmd=init pmi_version=1 pmi_subversion=1`, then `cmd=get_maxes`: two round
    /// trips. For a server that takes request lines of at most `request_max` bytes
    /// (Slurm's, 1024) the maxima stay what it announced, so that every value it holds
    /// can be read, and a put whose line would be longer is refused with
    /// `PMI_ERR_INVALID_VAL_LENGTH` before anything is sent.
    pub fn init_limited(conn: Conn, id: Identity, request_max: usize) -> PmiResult<Pmi1Wire> {
        let mut wire = Pmi1Wire {
            conn,
            request: Vec::with_capacity(256),
            id,
            maxes: DEFAULT_MAXES,
            request_max,
            minor: 1,
            waits: Vec::new(),
            spare_wakers: Vec::new(),
            next_wait: 0,
            hydra: false,
            slurm: false,
        };
        wire.handshake()?;
        wire.maxes = wire.fetch_maxes()?;
        Ok(wire)
    }

    fn handshake(&mut self) -> PmiResult<()> {
        pmi1::encode(
            &mut self.request,
            "init",
            &[("pmi_version", b"1"), ("pmi_subversion", b"1")],
        );
        let reply = self.call(b"response_to_init")?;
        let rc = reply.rc();
        let version = (reply.field(b"pmi_version"), reply.field(b"pmi_subversion"));
        let (major, minor) = (reply.int(b"pmi_version"), reply.int(b"pmi_subversion"));
        // Formatted only into a message (a String here cost every PMI_Init an allocation
        // and the formatting code's pages).
        let line = reply.line().escape_ascii();
        if rc != Some(0) {
            return Err(trace::fatal(format_args!(
                "PMI_Init refused by the server: \"{line}\""
            )));
        }
        match (version, major, minor) {
            // RFC 13 makes the version fields optional: silence agrees to 1.1.
            ((None, None), _, _) => Ok(()),
            // 1.1 was asked for, so that no 1.1 server fails it (Hydra 4.0.2 ends the job
            // on `pmi_subversion=2`); a server that can do more says so (MPICH 5's
            // Hydra: 2), and 1.2 is used from here on.
            (_, Some(1), Some(minor)) if minor >= 1 => {
                self.minor = minor;
                Ok(())
            }
            _ => Err(trace::fatal(format_args!(
                "PMI_Init: the server does not speak PMI 1.1 or a later 1.x: \"{line}\""
            ))),
        }
    }

    fn fetch_maxes(&mut self) -> PmiResult<Maxes> {
        pmi1::encode(&mut self.request, "get_maxes", &[]);
        let reply = self.call(b"maxes")?;
        let line = reply.line().escape_ascii();
        // RFC 13's grammar makes the three fields optional together: a reply without any
        // announces the defaults every client assumes before `PMI_Init` (MPICH's: 256,
        // 64, 1024); with some, each must be there.
        let names: [&[u8]; 3] = [b"kvsname_max", b"keylen_max", b"vallen_max"];
        if reply.rc() == Some(0) && names.iter().all(|name| reply.field(name).is_none()) {
            trace::line(format_args!("get_maxes: no maxima announced: the defaults"));
            return Ok(DEFAULT_MAXES);
        }
        let field = |name: &[u8], clamp: usize| match reply.int(name) {
            Some(n) if n > 1 => Some((n as u64).min(clamp as u64) as usize),
            _ => None,
        };
        match (
            reply.rc(),
            field(names[0], CLAMP_NAME_MAX),
            field(names[1], CLAMP_KEY_MAX),
            field(names[2], CLAMP_VAL_MAX),
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

    /// Whether the server speaks PMI 1.2.
    fn threaded(&self) -> bool {
        self.minor >= 2
    }

    /// Send the request built, and read its reply, which must be `cmd=<expected>` (as
    /// [`call_line`]). From a PMI 1.2 server, a `barrier_out` that comes first ends a
    /// barrier another thread waits for without the lock: its end is kept, and that
    /// thread woken ([`Pmi1Wire::keep_end`]); lines read past the reply wake every
    /// waiter, to sort them out.
    fn call(&mut self, expected: &[u8]) -> PmiResult<Reply<'_>> {
        if !self.threaded() {
            return call_line(&mut self.conn, &self.request, expected);
        }
        self.conn.send(&self.request)?;
        let range = loop {
            let range = self.conn.recv(expected, &pmi1::LINES)?;
            let reply = Reply::new(self.conn.message(range.clone()));
            if reply.cmd() == Some(b"barrier_out") && expected != b"barrier_out" {
                self.keep_end(range, None)?;
                continue;
            }
            if late_spawn_result(&reply, expected) {
                continue;
            }
            break range;
        };
        // (No waiter's poll of the socket sees what is in the buffer.)
        if self.conn.holds_message(&pmi1::LINES) {
            self.waits.iter_mut().for_each(Wait::wake);
        }
        expect_reply(&self.conn, range, expected)
    }

    /// Keep the end a `barrier_out` line (at `range`) brings, for the thread that waits
    /// for it, and wake that thread (unless it is the one reading: `reader`): the end of
    /// a barrier begun and not yet ended, by its tag (none: 0, a plain barrier's; of two
    /// with one tag, the first begun). One that ends no such barrier (no tag, or a tag
    /// that is not an integer, where no barrier of that tag waits; a second end of one
    /// barrier) is an unexpected reply: it breaks the connection, and no later barrier
    /// takes it for its own end.
    fn keep_end(&mut self, range: std::ops::Range<usize>, reader: Option<i32>) -> PmiResult<()> {
        let reply = Reply::new(self.conn.message(range));
        let waited = barrier_tag(&reply).and_then(|tag| {
            self.waits
                .iter_mut()
                .find(|w| w.tag == tag && w.end.is_none())
        });
        let Some(wait) = waited else {
            return Err(self.conn.fail(format_args!(
                "protocol error: \"{}\" ends no barrier this process began",
                reply.line().escape_ascii()
            )));
        };
        let succeeded = reply.rc() == Some(0);
        if !succeeded {
            server_error("barrier", reply);
        }
        wait.end = Some(succeeded);
        if reader != Some(wait.id) {
            wait.wake();
        }
        Ok(())
    }

    /// Read every line the socket holds now, each a barrier's end to keep
    /// ([`Pmi1Wire::keep_end`]) for its thread, `reader` the barrier of the thread that
    /// reads: nothing else may come while no reply is awaited.
    fn read_ends(&mut self, reader: i32) -> PmiResult<()> {
        while let Some(range) = self.conn.recv_now(&pmi1::LINES)? {
            let line = self.conn.message(range.clone());
            if Reply::new(line).cmd() != Some(b"barrier_out") {
                return Err(self.conn.fail(format_args!(
                    "protocol error: expected cmd=barrier_out, got \"{}\"",
                    line.escape_ascii()
                )));
            }
            self.keep_end(range, Some(reader))?;
        }
        Ok(())
    }

    /// The request just built, if its line fits what the server takes; else `err`, traced,
    /// with nothing sent (Slurm's PMI-1 server cuts a longer line and takes its tail for
    /// the next request).
    fn fits(&self, what: &str, err: PmiError) -> PmiResult<()> {
        if self.request.len() <= self.request_max {
            return Ok(());
        }
        trace::line(format_args!(
            "{what}: a line of {} bytes; the server takes at most {}",
            self.request.len(),
            self.request_max
        ));
        Err(err)
    }

    /// A reply's integer `field`; `-1` (unknown) when a successful reply leaves it out,
    /// which RFC 13 allows.
    fn fetch_int(&mut self, cmd: &str, expected: &[u8], field: &[u8]) -> PmiResult<i32> {
        pmi1::encode(&mut self.request, cmd, &[]);
        let reply = self.call(expected)?;
        match (
            reply.rc(),
            reply.field(field),
            reply.int(field).map(i32::try_from),
        ) {
            (Some(0), None, _) => Ok(-1),
            (Some(0), Some(_), Some(Ok(n))) => Ok(n),
            _ => Err(server_error(cmd, reply)),
        }
    }

    /// A request without arguments whose reply carries only `rc`.
    fn simple(&mut self, cmd: &str, expected: &[u8]) -> PmiResult<()> {
        pmi1::encode(&mut self.request, cmd, &[]);
        let reply = self.call(expected)?;
        if reply.rc() == Some(0) {
            Ok(())
        } else {
            Err(server_error(cmd, reply))
        }
    }
}

impl Backend for Pmi1Wire {
    fn name(&self) -> &'static str {
        "wire"
    }

    fn identity(&self) -> Identity {
        self.id
    }

    fn maxes(&self) -> Maxes {
        self.maxes
    }

    /// `cmd=get_my_kvsname`.
    fn kvsname(&mut self) -> PmiResult<Vec<u8>> {
        pmi1::encode(&mut self.request, "get_my_kvsname", &[]);
        let kvsname_max = self.maxes.kvsname;
        let reply = self.call(b"my_kvsname")?;
        match (reply.rc(), reply.field(b"kvsname")) {
            (Some(0), Some(name)) if Api::Pmi1.is_name(name) && name.len() < kvsname_max => {
                Ok(name.to_vec())
            }
            _ => Err(server_error("PMI_KVS_Get_my_name", reply)),
        }
    }

    /// `cmd=get_universe_size`; `-1` (unknown) is passed through.
    fn universe_size(&mut self) -> PmiResult<i32> {
        self.fetch_int("get_universe_size", b"universe_size", b"size")
    }

    /// `cmd=get_appnum`; `-1` when the server does not say (as under PMIx).
    fn appnum(&mut self) -> PmiResult<i32> {
        self.fetch_int("get_appnum", b"appnum", b"appnum")
    }

    /// `cmd=put`.
    fn put(&mut self, kvsname: &[u8], key: &[u8], value: &[u8]) -> PmiResult<()> {
        pmi1::encode(
            &mut self.request,
            "put",
            &[("kvsname", kvsname), ("key", key), ("value", value)],
        );
        self.fits("put", PmiError::InvalidValLength)?;
        let reply = self.call(b"put_result")?;
        if reply.rc() != Some(0) {
            return Err(server_error("put", reply));
        }
        Ok(())
    }

    /// Local: every put already reached the server.
    fn commit(&mut self) -> PmiResult<()> {
        Ok(())
    }

    /// `cmd=barrier_in`, answered by `cmd=barrier_out` once every rank has entered.
    fn barrier(&mut self) -> PmiResult<()> {
        self.simple("barrier_in", b"barrier_out")
    }

    /// From a PMI 1.1 server, `PMI_Barrier` waits in the call (the lock held, as every
    /// call), and there are no group barriers. From a 1.2 server the request is sent
    /// and its `barrier_out` awaited without the lock: a plain `cmd=barrier_in` (tag 0),
    /// or `cmd=barrier_in group=<group>:<tag>`.
    fn barrier_begin(&mut self, group: Option<Group<'_>>, tag: i32) -> PmiResult<BarrierStep> {
        if !self.threaded() {
            return match group {
                None => self.barrier().map(|()| BarrierStep::Done),
                Some(_) => Err(crate::backend::unsupported(
                    self.name(),
                    "PMI_Barrier_group (a PMI 1.1 server)",
                )),
            };
        }
        let group_given = group.is_some();
        let tag = match group {
            None => {
                pmi1::encode(&mut self.request, "barrier_in", &[]);
                0
            }
            Some(group) => {
                pmi1::encode_group_barrier(&mut self.request, group, tag);
                self.fits("barrier_in", PmiError::InvalidSize)?;
                tag
            }
        };
        // Another barrier with this tag (another group, or the same with its tag hashed
        // alike) would end with the same line as this one, and whichever came first would
        // end the barrier begun first.
        let name = crate::hash::digest(&self.request);
        if self.waits.iter().any(|w| w.tag == tag && w.name != name) {
            trace::line(format_args!(
                "{}: another group's barrier with tag {tag} is under way in this process; \
                 their ends could not be told apart (a barrier of another group needs \
                 another tag)",
                if group_given {
                    "PMI_Barrier_group"
                } else {
                    "PMI_Barrier"
                }
            ));
            return Err(if group_given {
                PmiError::InvalidArg
            } else {
                PmiError::Fail
            });
        }
        let waker = match self.spare_wakers.pop() {
            Some(waker) => waker,
            None => Waker::new()?,
        };
        let fds = [self.conn.raw_fd(), waker.raw_fd()];
        if let Err(e) = self.conn.send(&self.request) {
            self.spare_wakers.push(waker);
            return Err(e);
        }
        let id = self.next_wait;
        self.next_wait = id.wrapping_add(1);
        self.waits.push(Wait {
            id,
            tag,
            name,
            end: None,
            waker,
            woken: false,
        });
        Ok(BarrierStep::Pending {
            id,
            fds,
            limit: self.conn.timeout(),
        })
    }

    /// Whether the barrier `id` has ended: its end kept by another thread, or read now.
    /// Everything the socket holds is read, to its last line, and every end in it kept
    /// for its thread (woken): what stays in the buffer no waiter's poll would see.
    /// Nothing but `barrier_out`s may come while no other reply is awaited.
    fn barrier_ended(&mut self, id: i32, late: bool) -> PmiResult<bool> {
        let Some(at) = self.waits.iter().position(|w| w.id == id) else {
            return Err(PmiError::Fail);
        };
        // (A line that breaks the connection does not undo an end read before it.)
        let read = if self.waits[at].end.is_none() {
            self.read_ends(id)
        } else {
            Ok(())
        };
        // No wake-up is owed this thread now: it looks at its own end, and, unless that
        // came already, what came is sorted out (the socket read to its end).
        let wait = &mut self.waits[at];
        if wait.woken {
            wait.waker.clear();
            wait.woken = false;
        }
        // (Only this thread removes its own: `at` still points at it.)
        let end = self.waits[at].end;
        if end.is_none() && read.is_ok() && !late {
            return Ok(false);
        }
        let wait = self.waits.remove(at);
        self.spare_wakers.push(wait.waker);
        match (end, read) {
            (Some(true), _) => Ok(true),
            (Some(false), _) => Err(PmiError::Fail),
            (None, Err(e)) => Err(e),
            (None, Ok(())) => {
                let seconds = self.conn.timeout().map_or(0, |t| t.as_secs());
                Err(self.conn.fail(format_args!(
                    "no reply (cmd=barrier_out) from the process manager at {} in {seconds} \
                     s (PMI_TIMEOUT)",
                    self.conn.server()
                )))
            }
        }
    }

    fn group_barriers(&mut self) -> Result<(), String> {
        if self.threaded() {
            Ok(())
        } else {
            Err(needs_pmi_1_2(self.version()))
        }
    }

    /// What the servers identified keep otherwise than it was put (measured): every
    /// Hydra (4.0.2, MPICH 5.0.2's, Intel MPI 2021.19's) and Slurm 22.05's PMI-1 wire keep a
    /// value only up to its first space; MPICH 5.0.2's Hydra (a PMI 1.2 server) drops
    /// backslashes too.
    fn alters(&self, value: &[u8]) -> Option<&'static str> {
        if (self.hydra || self.slurm) && memchr::memchr(b' ', value).is_some() {
            return Some("keeps a value only up to its first space");
        }
        if self.hydra && self.threaded() && memchr::memchr(b'\\', value).is_some() {
            return Some("drops a value's backslashes");
        }
        None
    }

    fn version(&self) -> Option<(i64, i64)> {
        Some((1, self.minor))
    }

    /// `cmd=get`. A key the server does not have is `PMI_ERR_INVALID_KEY` and leaves the
    /// connection usable.
    fn get(&mut self, kvsname: &[u8], key: &[u8]) -> PmiResult<&[u8]> {
        pmi1::encode(
            &mut self.request,
            "get",
            &[("kvsname", kvsname), ("key", key)],
        );
        let reply = self.call(b"get_result")?;
        match (reply.rc(), reply.value()) {
            // (A value holding a NUL is refused by the client, for every backend.)
            (Some(0), Some(value)) => Ok(value),
            (Some(0), _) | (None, _) => Err(server_error("get", reply)),
            (Some(_), _) => {
                trace::line(format_args!(
                    "get: key not found: \"{}\"",
                    reply.line().escape_ascii()
                ));
                Err(PmiError::InvalidKey)
            }
        }
    }

    /// `cmd=publish_name service=<service> port=<port>`.
    fn publish_name(&mut self, service: &[u8], port: &[u8]) -> PmiResult<()> {
        pmi1::encode(
            &mut self.request,
            "publish_name",
            &[("service", service), ("port", port)],
        );
        self.fits("publish_name", PmiError::InvalidArg)?;
        let reply = self.call(b"publish_result")?;
        name_service_ok("publish_name", reply)
    }

    /// `cmd=unpublish_name service=<service>`.
    fn unpublish_name(&mut self, service: &[u8]) -> PmiResult<()> {
        pmi1::encode(&mut self.request, "unpublish_name", &[("service", service)]);
        self.fits("unpublish_name", PmiError::InvalidArg)?;
        let reply = self.call(b"unpublish_result")?;
        name_service_ok("unpublish_name", reply)
    }

    /// `cmd=lookup_name service=<service>`: the published port.
    fn lookup_name(&mut self, service: &[u8]) -> PmiResult<&[u8]> {
        pmi1::encode(&mut self.request, "lookup_name", &[("service", service)]);
        self.fits("lookup_name", PmiError::InvalidArg)?;
        let reply = self.call(b"lookup_result")?;
        name_service_ok("lookup_name", reply)?;
        reply
            .field(b"port")
            .filter(|port| !port.contains(&0))
            .ok_or_else(|| server_error("lookup_name", reply))
    }

    /// `mcmd=spawn` ... `endcmd`, one segment per command, in one write; then one
    /// `cmd=spawn_result rc=<n> [errcodes=a,b,...]`: the codes are `errcodes` when the
    /// server sends them, else none (every process 0).
    fn spawn(
        &mut self,
        commands: &[SpawnCommand<'_>],
        preput: &[(&[u8], &[u8])],
        slots: usize,
    ) -> PmiResult<Spawned> {
        pmi1::encode_spawn(&mut self.request, commands, preput)?;
        let reply = self.call(b"spawn_result")?;
        if reply.rc() != Some(0) {
            return Err(server_error("spawn", reply));
        }
        let codes = match reply.field(b"errcodes") {
            None => Vec::new(),
            Some(codes) => {
                parse_int_list(codes, slots).ok_or_else(|| server_error("spawn", reply))?
            }
        };
        Ok(Spawned { codes, jobid: None })
    }

    /// `cmd=finalize`, answered by `cmd=finalize_ack`. The connection closes when the
    /// backend is dropped.
    fn finalize(&mut self) -> PmiResult<()> {
        self.simple("finalize", b"finalize_ack")
    }

    fn abort_fd(&self) -> i32 {
        self.conn.raw_fd()
    }

    /// Take the inherited `PMI_FD` as the library's own, now that `PMI_Init` succeeded
    /// on it (a failed `PMI_Init` leaves it open, as found).
    fn adopt(&mut self) -> Result<(), String> {
        self.conn.adopt()
    }
}

/// `PMI_PORT` mode: send `cmd=initack pmiid=<id>`, then read `cmd=initack` and the
/// `cmd=set size=N`, `cmd=set rank=R`, `cmd=set debug=D` lines, in any order. Returns
/// the rank and size they give.
pub fn port_handshake(conn: &mut Conn, id: i32) -> PmiResult<(i32, i32)> {
    let mut request = Vec::new();
    let mut digits = IntDigits::default();
    let pmiid = format_int(i64::from(id), &mut digits);
    pmi1::encode(&mut request, "initack", &[("pmiid", pmiid)]);
    conn.send(&request)?;
    let (mut acked, mut size, mut rank, mut debug) = (false, None, None, None);
    while !(acked && size.is_some() && rank.is_some() && debug.is_some()) {
        let range = conn.recv(b"initack", &pmi1::LINES)?;
        let reply = Reply::new(conn.message(range));
        let int = |key: &[u8]| reply.int(key).and_then(|n| i32::try_from(n).ok());
        match reply.cmd() {
            Some(b"initack") if !acked => acked = true,
            Some(b"set") if int(b"size").is_some() => size = int(b"size"),
            Some(b"set") if int(b"rank").is_some() => rank = int(b"rank"),
            Some(b"set") if int(b"debug").is_some() => debug = int(b"debug"),
            _ => {
                let line = reply.line().escape_ascii();
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

/// The tag a `barrier_out` names (0 when it names none, as for a plain barrier); None
/// when it is not an `int`.
fn barrier_tag(reply: &Reply<'_>) -> Option<i32> {
    match reply.field(b"tag") {
        None => Some(0),
        Some(_) => reply.int(b"tag").and_then(|t| i32::try_from(t).ok()),
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
