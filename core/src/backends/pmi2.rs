//! The PMI-2 wire backend (for `libpmi2.so.0`): after one PMI-1 style line
//! (`cmd=init pmi_version=2 pmi_subversion=0`), every request is one framed command and
//! every reply one framed `-response` (`crate::wire::pmi2`). One method per operation; each
//! checks the reply's `cmd=` and `rc`.

use crate::api::Maxes;
use crate::api::PMI2_MAXES;
use crate::backend::{Backend, Identity, SpawnCommand, Spawned};
use crate::backends::pmi1::call_line;
use crate::conn::Conn;
use crate::error::{PmiError, PmiResult};
use crate::launch::{JobEnv, PortEnv};
use crate::trace;
use crate::wire::pmi2::{self, Command};
use crate::wire::{format_int, parse_int, parse_int_list, IntDigits};

pub struct Pmi2Wire {
    conn: Conn,
    request: Vec<u8>,
    id: Identity,
    appnum: i32,
    /// Whether the server has Slurm's `ring` command: only Slurm's plugin does (the
    /// environment says whether it is Slurm's: `JobEnv::slurm`); MPICH's Hydra kills the
    /// whole job on a command it does not know (measured with 4.0.2), so `ring` is never
    /// sent to another server.
    has_ring: bool,
    /// The last value read, handed out by reference.
    value: Vec<u8>,
    /// The last reply (its buffers are reused from call to call).
    reply: Command,
}

/// Send one framed command and read one framed reply into `reply`, which must be
/// `cmd=<cmd>-response`; anything else breaks the connection (`PMI_FAIL`).
fn call_framed(conn: &mut Conn, reply: &mut Command, request: &[u8], cmd: &[u8]) -> PmiResult<()> {
    let range = conn.exchange(request, cmd, &pmi2::FRAMES)?;
    if reply.parse_from(conn.message(range.clone()))
        && reply.cmd().strip_suffix(b"-response") == Some(cmd)
    {
        return Ok(());
    }
    let got = conn.message(range).escape_ascii().to_string();
    Err(conn.fail(format_args!(
        "protocol error: expected cmd={}-response, got \"{got}\"",
        cmd.escape_ascii()
    )))
}

impl Pmi2Wire {
    /// `PMI_FD` mode.
    pub fn from_fd(job: &JobEnv, timeout: Option<u32>) -> PmiResult<Pmi2Wire> {
        let mut conn = Conn::from_fd(job.fd);
        conn.set_timeout(timeout);
        Pmi2Wire::init(conn, Some(job.rank), job.jobid.as_deref(), job.slurm)
    }

    /// `PMI_PORT` mode: the server learns who this is from `PMI_ID`.
    pub fn from_port(port: &PortEnv, timeout: Option<u32>) -> PmiResult<Pmi2Wire> {
        let refuse = |why: String| trace::fatal(format_args!("PMI2_Init: {why}"));
        let conn = Conn::connect(&port.host, port.port, timeout).map_err(refuse)?;
        Pmi2Wire::init(conn, Some(port.id), None, false)
    }

    /// The PMI-1 style version line, then `fullinit`: two round trips. `jobid`: Slurm's
    /// `PMI_JOBID`, passed on (Slurm requires it, the Hydras ignore it); `slurm`: the
    /// server is Slurm's, which has the ring.
    pub fn init(
        mut conn: Conn,
        rank: Option<i32>,
        jobid: Option<&[u8]>,
        slurm: bool,
    ) -> PmiResult<Pmi2Wire> {
        let reply = call_line(
            &mut conn,
            b"cmd=init pmi_version=2 pmi_subversion=0\n",
            b"response_to_init",
        )?;
        if reply.rc() != Some(0) || reply.int(b"pmi_version") != Some(2) {
            return Err(trace::fatal(format_args!(
                "PMI2_Init: the server does not speak PMI-2: \"{}\"",
                reply.line().escape_ascii()
            )));
        }
        let mut request = Vec::with_capacity(256);
        let mut digits = IntDigits::default();
        let rank_text = rank.map(|r| format_int(i64::from(r), &mut digits));
        let mut fields: Vec<(&str, &[u8])> = Vec::new();
        if let Some(jobid) = jobid {
            fields.push(("pmijobid", jobid));
        }
        if let Some(rank) = rank_text {
            fields.push(("pmirank", rank));
        }
        fields.push(("threaded", b"FALSE"));
        pmi2::encode(&mut request, "fullinit", &fields)?;
        let mut reply = Command::default();
        call_framed(&mut conn, &mut reply, &request, b"fullinit")?;
        let reply = &reply;
        let int = |key: &[u8]| reply.int(key).and_then(|n| i32::try_from(n).ok());
        let (size, rank) = match (reply.rc(), int(b"size"), int(b"rank")) {
            (Some(0), Some(size), Some(rank)) if size >= 1 && (0..size).contains(&rank) => {
                (size, rank)
            }
            _ => return Err(refused("PMI2_Init", reply)),
        };
        // A spawned process is told its spawner's job id.
        let spawned = reply.get(b"spawner-jobid").is_some_and(|j| !j.is_empty());
        let appnum = int(b"appnum").unwrap_or(-1);
        let wire = Pmi2Wire {
            conn,
            request,
            id: Identity {
                rank,
                size,
                spawned,
            },
            appnum,
            has_ring: slurm,
            value: Vec::new(),
            reply: Command::default(),
        };
        Ok(wire)
    }

    /// Encode one request, send it, and read its reply into `self.reply`.
    fn exchange(&mut self, cmd: &str, fields: &[(&str, &[u8])]) -> PmiResult<&Command> {
        pmi2::encode(&mut self.request, cmd, fields)?;
        call_framed(
            &mut self.conn,
            &mut self.reply,
            &self.request,
            cmd.as_bytes(),
        )?;
        Ok(&self.reply)
    }

    /// One request, one reply with `rc=0`.
    fn call(&mut self, call: &str, cmd: &str, fields: &[(&str, &[u8])]) -> PmiResult<&Command> {
        let reply = self.exchange(cmd, fields)?;
        if reply.rc() == Some(0) {
            Ok(reply)
        } else {
            Err(refused(call, reply))
        }
    }

    /// A request whose reply says `found` (a key, an attribute, a name): true with the
    /// value in `self.value`, or false when the server has none. The servers here send
    /// `found`; the PMI-2 wire's text names the field `flag`, which is read too.
    fn lookup(&mut self, call: &str, cmd: &str, fields: &[(&str, &[u8])]) -> PmiResult<bool> {
        self.exchange(cmd, fields)?;
        let reply = &self.reply;
        let value = reply.get(b"value").or_else(|| reply.get(b"port"));
        let found = reply.flag(b"found").or_else(|| reply.flag(b"flag"));
        match (found, reply.rc(), value) {
            (Some(false), _, _) => Ok(false),
            (_, Some(0), Some(value)) => {
                self.value.clear();
                self.value.extend_from_slice(value);
                Ok(true)
            }
            // MPICH 5.0.2's Hydra answers a missing key or attribute with `rc=1` alone
            // (measured), as PMI-1 servers answer a missing key with a nonzero `rc`.
            (None, Some(rc), None) if rc != 0 => {
                trace::line(format_args!("{call}: not found (the server said rc={rc})"));
                Ok(false)
            }
            _ => Err(refused(call, reply)),
        }
    }
}

/// A reply that says no, or lacks what it should carry: traced with the server's own
/// words (`errmsg`), `PMI_FAIL`.
fn refused(call: &str, reply: &Command) -> PmiError {
    trace::line(format_args!(
        "{call} failed: server said rc={} errmsg=\"{}\"",
        reply.get(b"rc").unwrap_or_default().escape_ascii(),
        reply.get(b"errmsg").unwrap_or_default().escape_ascii()
    ));
    PmiError::Fail
}

impl Backend for Pmi2Wire {
    fn name(&self) -> &'static str {
        "wire2"
    }

    fn identity(&self) -> Identity {
        self.id
    }

    fn maxes(&self) -> Maxes {
        PMI2_MAXES
    }

    /// `cmd=job-getid`.
    fn kvsname(&mut self) -> PmiResult<Vec<u8>> {
        let reply = self.call("PMI2_Job_GetId", "job-getid", &[])?;
        match reply.get(b"jobid") {
            Some(id) if !id.is_empty() && id.len() < PMI2_MAXES.kvsname && !id.contains(&0) => {
                Ok(id.to_vec())
            }
            _ => Err(refused("PMI2_Job_GetId", reply)),
        }
    }

    /// The job attribute `universeSize`; `-1` when the server has none.
    fn universe_size(&mut self) -> PmiResult<i32> {
        Ok(self
            .job_attr(b"universeSize")?
            .and_then(|v| parse_int(&v))
            .and_then(|n| i32::try_from(n).ok())
            .unwrap_or(-1))
    }

    /// From `fullinit-response`.
    fn appnum(&mut self) -> PmiResult<i32> {
        Ok(self.appnum)
    }

    /// `cmd=kvs-put`.
    fn put(&mut self, _kvsname: &[u8], key: &[u8], value: &[u8]) -> PmiResult<()> {
        self.call("PMI2_KVS_Put", "kvs-put", &[("key", key), ("value", value)])
            .map(drop)
    }

    /// Nothing to do: every put already reached the server.
    fn commit(&mut self) -> PmiResult<()> {
        Ok(())
    }

    /// `cmd=kvs-fence`.
    fn barrier(&mut self) -> PmiResult<()> {
        self.call("PMI2_KVS_Fence", "kvs-fence", &[]).map(drop)
    }

    fn get(&mut self, kvsname: &[u8], key: &[u8]) -> PmiResult<&[u8]> {
        self.get_hinted(kvsname, key, None)
    }

    /// `cmd=kvs-get;jobid=..;srcid=..;key=..;`; `found=FALSE` is `PMI_ERR_INVALID_KEY`.
    fn get_hinted(&mut self, kvsname: &[u8], key: &[u8], src: Option<i32>) -> PmiResult<&[u8]> {
        // The rank as text without allocating.
        let mut digits = IntDigits::default();
        let srcid = format_int(i64::from(src.unwrap_or(-1)), &mut digits);
        let fields: [(&str, &[u8]); 3] = [("jobid", kvsname), ("srcid", srcid), ("key", key)];
        if self.lookup("PMI2_KVS_Get", "kvs-get", &fields)? {
            Ok(&self.value)
        } else {
            Err(PmiError::InvalidKey)
        }
    }

    /// `cmd=info-getjobattr`.
    fn job_attr(&mut self, name: &[u8]) -> PmiResult<Option<Vec<u8>>> {
        let found = self.lookup("PMI2_Info_GetJobAttr", "info-getjobattr", &[("key", name)])?;
        Ok(found.then(|| self.value.clone()))
    }

    /// `cmd=info-getnodeattr;key=..;wait=TRUE|FALSE;`.
    fn node_attr(&mut self, name: &[u8], wait: bool) -> PmiResult<Option<Vec<u8>>> {
        let wait: &[u8] = if wait { b"TRUE" } else { b"FALSE" };
        let found = self.lookup(
            "PMI2_Info_GetNodeAttr",
            "info-getnodeattr",
            &[("key", name), ("wait", wait)],
        )?;
        Ok(found.then(|| self.value.clone()))
    }

    /// `cmd=info-putnodeattr`.
    fn put_node_attr(&mut self, name: &[u8], value: &[u8]) -> PmiResult<()> {
        self.call(
            "PMI2_Info_PutNodeAttr",
            "info-putnodeattr",
            &[("key", name), ("value", value)],
        )
        .map(drop)
    }

    /// Slurm's `cmd=ring;ring-count=1;ring-left=V;ring-right=V;`: this process's position
    /// in the ring (`ring-count`), and its neighbours' values.
    fn ring(&mut self, value: &[u8]) -> PmiResult<(i32, i32, Vec<u8>, Vec<u8>)> {
        if !self.has_ring {
            return Err(crate::backend::unsupported(
                "PMI-2 wire (not Slurm)",
                "PMIX_Ring",
            ));
        }
        let size = self.id.size;
        let reply = self.call(
            "PMIX_Ring",
            "ring",
            &[
                ("ring-count", b"1"),
                ("ring-left", value),
                ("ring-right", value),
            ],
        )?;
        let position = reply.int(b"ring-count").and_then(|n| i32::try_from(n).ok());
        match (position, reply.get(b"ring-left"), reply.get(b"ring-right")) {
            (Some(rank), Some(left), Some(right)) if (0..size).contains(&rank) => {
                Ok((rank, size, left.to_vec(), right.to_vec()))
            }
            _ => Err(refused("PMIX_Ring", reply)),
        }
    }

    /// `cmd=name-publish;name=..;port=..;infokeycount=0;`.
    fn publish_name(&mut self, service: &[u8], port: &[u8]) -> PmiResult<()> {
        self.call(
            "PMI2_Nameserv_publish",
            "name-publish",
            &[("name", service), ("port", port), ("infokeycount", b"0")],
        )
        .map(drop)
    }

    /// `cmd=name-unpublish;name=..;infokeycount=0;`.
    fn unpublish_name(&mut self, service: &[u8]) -> PmiResult<()> {
        self.call(
            "PMI2_Nameserv_unpublish",
            "name-unpublish",
            &[("name", service), ("infokeycount", b"0")],
        )
        .map(drop)
    }

    /// `cmd=name-lookup;name=..;infokeycount=0;`: the port in `value` (the wiki) or
    /// `port` (Hydra 4.0.2); nothing published under the name is `PMI_FAIL`.
    fn lookup_name(&mut self, service: &[u8]) -> PmiResult<&[u8]> {
        let fields: [(&str, &[u8]); 2] = [("name", service), ("infokeycount", b"0")];
        if self.lookup("PMI2_Nameserv_lookup", "name-lookup", &fields)? {
            return Ok(&self.value);
        }
        trace::line(format_args!(
            "PMI2_Nameserv_lookup: nothing published as \"{}\"",
            service.escape_ascii()
        ));
        Err(PmiError::Fail)
    }

    /// One `cmd=spawn` with every command as a `subcmd` group, as MPICH's and Slurm's
    /// servers read it; `spawn-response` gives `rc`, per process `errcodes` (or the wire
    /// text's `nerrs` and `err0`...), and (Slurm) the new job's `jobid`.
    fn spawn(
        &mut self,
        commands: &[SpawnCommand<'_>],
        preput: &[(&[u8], &[u8])],
        slots: usize,
    ) -> PmiResult<Spawned> {
        let texts: Vec<String> = std::iter::once(commands.len().to_string())
            .chain(std::iter::once(preput.len().to_string()))
            .collect();
        let mut names: Vec<String> = Vec::new();
        for (i, _) in preput.iter().enumerate() {
            names.push(format!("ppkey{i}"));
            names.push(format!("ppval{i}"));
        }
        let mut numbers: Vec<String> = Vec::new();
        for cmd in commands {
            numbers.push(cmd.maxprocs.to_string());
            numbers.push(cmd.args.len().to_string());
            numbers.push(cmd.info.len().to_string());
            for (j, _) in cmd.args.iter().enumerate() {
                names.push(format!("argv{j}"));
            }
            for (j, _) in cmd.info.iter().enumerate() {
                names.push(format!("infokey{j}"));
                names.push(format!("infoval{j}"));
            }
        }
        let mut fields: Vec<(&str, &[u8])> = vec![
            ("ncmds", texts[0].as_bytes()),
            ("preputcount", texts[1].as_bytes()),
        ];
        let mut name = names.iter();
        for (key, value) in preput {
            fields.push((name.next().map_or("", String::as_str), key));
            fields.push((name.next().map_or("", String::as_str), value));
        }
        let mut number = numbers.iter();
        for cmd in commands {
            fields.push(("subcmd", cmd.execname));
            fields.push(("maxprocs", number.next().map_or(&b""[..], |n| n.as_bytes())));
            fields.push(("argc", number.next().map_or(&b""[..], |n| n.as_bytes())));
            for arg in &cmd.args {
                fields.push((name.next().map_or("", String::as_str), arg));
            }
            fields.push((
                "infokeycount",
                number.next().map_or(&b""[..], |n| n.as_bytes()),
            ));
            for (key, value) in &cmd.info {
                fields.push((name.next().map_or("", String::as_str), key));
                fields.push((name.next().map_or("", String::as_str), value));
            }
        }
        let reply = self.call("PMI2_Job_Spawn", "spawn", &fields)?;
        let codes = match reply.get(b"errcodes") {
            Some(codes) => parse_int_list(codes, slots),
            None => reply.spec_errcodes(slots),
        };
        let codes = codes.ok_or_else(|| refused("PMI2_Job_Spawn", reply))?;
        // As `job-getid`'s: not empty, no NUL (a C string would end there).
        let jobid = reply
            .get(b"jobid")
            .filter(|id| !id.is_empty() && !id.contains(&0))
            .map(<[u8]>::to_vec);
        Ok(Spawned { codes, jobid })
    }

    /// `cmd=finalize`, answered by `finalize-response`.
    fn finalize(&mut self) -> PmiResult<()> {
        self.call("PMI2_Finalize", "finalize", &[]).map(drop)
    }

    fn abort_fd(&self) -> i32 {
        self.conn.raw_fd()
    }

    fn adopt(&mut self) -> Result<(), String> {
        self.conn.adopt()
    }
}
