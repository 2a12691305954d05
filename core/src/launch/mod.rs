//! How this process reaches its process manager: the one place that reads the
//! launcher's variables and decides ([`decide`]), checking `PMI_FD` once on the way.
//! Everything is read through an injectable lookup, so tests never touch the real
//! environment. What each launcher sets, and what to tell a user it started without a
//! server, is one table ([`launchers`]), which `pmi-probe` reads too.

#[allow(unsafe_code)]
mod fd;
pub mod launchers;

use std::ffi::OsString;
use std::net::SocketAddr;

use crate::wire::pmi1;
pub(crate) use fd::peer_pid;
pub use launchers::names_another_launch;
use launchers::{pmix_marker, says_single_process, singleton_allowed};
pub use launchers::{Launcher, LAUNCHERS, PMIX_MARKERS};

/// The job as the environment describes it (PMI_FD mode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobEnv {
    pub fd: i32,
    pub rank: i32,
    pub size: i32,
    pub spawned: bool,
    /// The longest request line, newline included, the server takes.
    pub request_max: usize,
    /// `PMI_JOBID` (Slurm): PMI-2's `fullinit` passes it on.
    pub jobid: Option<Vec<u8>>,
    /// Whether the server is Slurm's: `PMI_JOBID` without Hydra's `MPI_LOCALNRANKS`.
    pub slurm: bool,
    /// Whether the server is a Hydra's (MPICH's or Intel's): `MPI_LOCALNRANKS`, which
    /// every Hydra sets, in either mode.
    pub hydra: bool,
}

/// Slurm's PMI-1 server (`srun --mpi=pmi2`, which alone sets `PMI_JOBID`) reads each
/// request with one `read()` of at most 1024 bytes: a longer line is cut, its tail taken
/// for the next request, and the job hangs (measured with Slurm 22.05).
const SLURM_REQUEST_MAX: usize = 1024;

/// How this process reaches its process manager.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// `PMI_FD`: a pre-connected socket (wins when `PMI_PORT` is set too).
    Fd(JobEnv),
    /// `PMI_PORT=host:port` and `PMI_ID`: connect by TCP; rank and size come from the
    /// server's handshake.
    Port(PortEnv),
    /// Neither, but a PMIx server named in the environment: through the PMIx client
    /// library, loaded at run time.
    Pmix(PmixEnv),
    /// None of these: rank 0 of 1 with a process-local KVS.
    Singleton,
}

/// What the PMIx backend needs from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PmixEnv {
    /// The variable that names the server, for the trace: `PMIX_RANK="3"`.
    pub why: String,
    /// `PMIX_RANK`, to label trace lines before `PMIx_Init` says the rank.
    pub rank_hint: Option<i32>,
    /// `PMI_PMIX_LIBRARY`: the PMIx client library to load, instead of searching.
    pub library: Option<OsString>,
    /// Install prefixes the launcher gave (`PMIX_PREFIX`, `OPAL_PREFIX`), where an
    /// Open MPI keeps its own copy.
    pub prefixes: Vec<OsString>,
    /// `PMI_PMIX_PARENT`: the namespace of the parent whose `PMI_Spawn_multiple` wrote
    /// `preput` into the environment (trusted only when PMIx names that parent).
    pub parent: Option<Vec<u8>>,
    /// The preput pairs a parent passed to `PMI_Spawn_multiple`.
    pub preput: Pairs,
    /// Why the preput variables could not be read (then `preput` is empty).
    pub preput_broken: Option<String>,
    /// A launcher's variable says this job has one process (`srun -n 1`): without a
    /// PMIx client library it may still run as a singleton.
    pub single_process: bool,
    /// The server's TCP addresses from the `PMIX_SERVER_URI*` variables, for bounding
    /// `PMIx_Init` (empty when none can be read).
    pub servers: Vec<SocketAddr>,
    /// The first `PMIX_SERVER_URI*` variable as `NAME="VALUE"` (the server's own PMIx
    /// name, `<nspace>.<rank>`, and its address), for the lines that say it was lost.
    pub server: Option<String>,
}

/// How a parent on the PMIx backend hands its preput pairs to the children it spawns
/// (PMIx has no such thing): `PMI_PMIX_PARENT=<its namespace>`, `PMI_PMIX_PREPUT_NUM=n`
/// and `PMI_PMIX_PREPUT_KEY_<i>`, `PMI_PMIX_PREPUT_VAL_<i>` for i < n, in the children's
/// environment.
pub const PARENT: &str = "PMI_PMIX_PARENT";
pub const PREPUT_NUM: &str = "PMI_PMIX_PREPUT_NUM";
pub const PREPUT_KEY: &str = "PMI_PMIX_PREPUT_KEY_";
pub const PREPUT_VAL: &str = "PMI_PMIX_PREPUT_VAL_";

/// The `PMI_PORT` mode's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortEnv {
    pub host: String,
    pub port: u16,
    pub id: i32,
    pub spawned: bool,
    /// Whether the server is a Hydra's (`MPI_LOCALNRANKS`, as in `JobEnv`).
    pub hydra: bool,
}

/// What [`decide`] found: the launch to take (its `PMI_FD`, if any, checked), and why an
/// outer job's `PMI_FD` was set aside, when one was.
#[derive(Debug)]
pub struct Decision {
    pub launch: Result<Launch, String>,
    pub set_aside: Option<String>,
    /// Why the `PMI_FD` of a `Launch::Fd` cannot be the launcher's connection, when it
    /// cannot. `PMI_Init` refuses it after asking whether the other PMI library of this
    /// process owns the connection (whose fd it then is: the truer answer).
    pub fd_fault: Option<String>,
}

/// Decide how this process reaches its process manager, from the environment `lookup`
/// reads. `PMI_FD` is checked here, once (`fd::check_pmi_fd`): a `PMI_FD` that is not a
/// launcher's connection beside another launch's variables (`PMI_PORT`, a PMIx server's:
/// [`launchers::names_another_launch`] says when) is an outer job's (`prterun` or
/// `mpiexec -pmi-port` run inside a Slurm step that set `PMI_FD`, whose fd the launcher
/// closed, or whose number another file has taken since), and the other launch is taken;
/// without another launch, such a `PMI_FD` is refused ([`Decision::fd_fault`] says why).
/// (Not under `PMI_SINGLETON=1`, which wins over both.) `PMI_Init` and `pmi-probe` both
/// ask here.
pub fn decide(lookup: &dyn Fn(&str) -> Option<OsString>) -> Decision {
    decide_with(lookup, &fd::check_pmi_fd)
}

/// [`decide`], with the check of `PMI_FD` given (tests give their own).
pub fn decide_with(
    lookup: &dyn Fn(&str) -> Option<OsString>,
    check: &dyn Fn(i32) -> Result<(), String>,
) -> Decision {
    // Only beside another launch is the fd looked at before its job's variables are
    // read: under a launcher that names only PMI_FD, a variable's fault is named first.
    let mut checked = None;
    let beside_another = |_: &i32| names_another_launch(lookup) && !singleton_requested(lookup);
    if let Some(fd) = pmi_fd(lookup).filter(beside_another) {
        match check(fd) {
            Ok(()) => checked = Some(fd),
            Err(why) => {
                let why = if fd::is_open(fd) {
                    why
                } else {
                    format!("PMI_FD={fd} is not open")
                };
                let without_fd = |name: &str| (name != "PMI_FD").then(|| lookup(name)).flatten();
                return Decision {
                    launch: from_env(&without_fd),
                    set_aside: Some(why),
                    fd_fault: None,
                };
            }
        }
    }
    let launch = from_env(lookup);
    let fd_fault = match &launch {
        Ok(Launch::Fd(job)) if checked != Some(job.fd) => check(job.fd).err(),
        _ => None,
    };
    Decision {
        launch,
        set_aside: None,
        fd_fault,
    }
}

/// The launch the variables ask for, without looking at `PMI_FD`'s fd. Singleton mode
/// is refused when a launcher started this process without a PMI-1 connection (see
/// [`LAUNCHERS`]): falling back silently would turn an N-rank job into N copies of rank
/// 0 (flux-core#5714).
fn from_env(lookup: &dyn Fn(&str) -> Option<OsString>) -> Result<Launch, String> {
    if singleton_requested(lookup) {
        return Ok(Launch::Singleton);
    }
    // (An empty one says nothing, as an empty PMIx or launcher variable: a wrapper that
    // cleared it.)
    if lookup("PMI_FD").is_some_and(|v| !v.is_empty()) {
        return job_env(lookup).map(Launch::Fd);
    }
    if let Some(port) = lookup("PMI_PORT").filter(|v| !v.is_empty()) {
        let (host, port) = host_port(&port)?;
        let id = required(lookup, "PMI_ID", Some("PMI_PORT"))?;
        return Ok(Launch::Port(PortEnv {
            host,
            port,
            id,
            spawned: spawned(lookup)?,
            hydra: lookup("MPI_LOCALNRANKS").is_some(),
        }));
    }
    if let Some((name, value)) = pmix_marker(lookup) {
        return pmix_env(lookup, name, &value).map(Launch::Pmix);
    }
    singleton_allowed(lookup)?;
    Ok(Launch::Singleton)
}

/// `PMI_SINGLETON=1`: asked for in so many words (independent singletons on purpose,
/// e.g. a task farm under srun --mpi=none or --mpi=pmix, or a program a rank runs with
/// system(), which inherits the rank's PMI_FD, PMI_PORT and PMI_ID). It wins over every
/// other variable.
pub fn singleton_requested(lookup: &dyn Fn(&str) -> Option<OsString>) -> bool {
    lookup("PMI_SINGLETON").is_some_and(|v| v == "1")
}

/// `PMI_FD`'s number, when it is one.
fn pmi_fd(lookup: &dyn Fn(&str) -> Option<OsString>) -> Option<i32> {
    lookup("PMI_FD").and_then(|v| number(&v))
}

// Out of line, as `singleton_allowed`: `launch` runs in every process's PMI_Init and
// lies in the code that runs once (hot-text.ld's .text.warm); these are other launches'.
#[inline(never)]
fn pmix_env(
    lookup: &dyn Fn(&str) -> Option<OsString>,
    name: &str,
    value: &OsString,
) -> Result<PmixEnv, String> {
    // Pairs that do not add up are not a reason to fail: they matter only to a child
    // whose parent PMIx names, which is told (Pmix::start).
    let (preput, preput_broken) = match preput_pairs(lookup) {
        Ok(pairs) => (pairs, None),
        Err(why) => (Vec::new(), Some(why)),
    };
    Ok(PmixEnv {
        why: format!("{name}=\"{}\" names a PMIx server", shown(value)),
        rank_hint: lookup("PMIX_RANK").and_then(|v| number(&v)),
        library: lookup("PMI_PMIX_LIBRARY").filter(|v| !v.is_empty()),
        prefixes: ["PMIX_PREFIX", "OPAL_PREFIX"]
            .iter()
            .filter_map(|&name| lookup(name).filter(|v| !v.is_empty()))
            .collect(),
        parent: lookup(PARENT).map(|v| v.into_encoded_bytes()),
        preput,
        preput_broken,
        single_process: says_single_process(lookup),
        servers: server_addresses(lookup),
        server: PMIX_MARKERS
            .iter()
            .filter(|n| n.starts_with("PMIX_SERVER_URI"))
            .find_map(|&name| Some(format!("{name}=\"{}\"", shown(&lookup(name)?)))),
    })
}

/// The TCP addresses in the `PMIX_SERVER_URI*` variables: `<nspace>.<rank>;tcp4://IP:PORT`
/// (or `tcp6://[IP]:PORT`), as PRRTE and Slurm's pmix plugin write them.
fn server_addresses(lookup: &dyn Fn(&str) -> Option<OsString>) -> Vec<SocketAddr> {
    let mut found = Vec::new();
    for name in PMIX_MARKERS
        .iter()
        .filter(|n| n.starts_with("PMIX_SERVER_URI"))
    {
        let Some(uri) = lookup(name) else { continue };
        let uri = uri.to_string_lossy();
        let addr = ["tcp4://", "tcp6://"]
            .iter()
            .find_map(|scheme| uri.split_once(scheme))
            .and_then(|(_, rest)| rest.parse::<SocketAddr>().ok());
        if let Some(addr) = addr.filter(|a| !found.contains(a)) {
            found.push(addr);
        }
    }
    found
}

/// Key-value pairs, as bytes.
pub type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

/// The preput pairs a parent under PMIx passed in the environment.
fn preput_pairs(lookup: &dyn Fn(&str) -> Option<OsString>) -> Result<Pairs, String> {
    let Some(n) = lookup(PREPUT_NUM) else {
        return Ok(Vec::new());
    };
    let n = number(&n).ok_or_else(|| bad(PREPUT_NUM, &n))?;
    (0..n)
        .map(|i| {
            let part = |prefix: &str| {
                let name = format!("{prefix}{i}");
                lookup(&name)
                    .map(|v| v.into_encoded_bytes())
                    .ok_or_else(|| format!("{PREPUT_NUM} is {n} but {name} is not set"))
            };
            Ok((part(PREPUT_KEY)?, part(PREPUT_VAL)?))
        })
        .collect()
}

/// Split `PMI_PORT` into host and port: `name:port`, `1.2.3.4:port`, `[::1]:port`.
fn host_port(value: &OsString) -> Result<(String, u16), String> {
    let bad = || format!("PMI_PORT=\"{}\" is not host:port", shown(value));
    let text = value.to_str().ok_or_else(bad)?;
    let (host, port) = text.rsplit_once(':').ok_or_else(bad)?;
    let host = match host.strip_prefix('[') {
        Some(inner) => inner.strip_suffix(']').ok_or_else(bad)?,
        None => host,
    };
    if host.is_empty() || port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    // A number, but not a TCP port: say so rather than "not host:port".
    let port = port.parse().ok().filter(|&p| p != 0).ok_or_else(|| {
        format!(
            "PMI_PORT=\"{}\" names port {port}, outside the TCP ports 1 to 65535",
            shown(value)
        )
    })?;
    Ok((host.to_string(), port))
}

/// `host:port` as a user writes it, an IPv6 host in brackets (`[::1]:7000`): for every
/// message that shows a `PMI_PORT` address.
pub fn address(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

fn spawned(lookup: &dyn Fn(&str) -> Option<OsString>) -> Result<bool, String> {
    match lookup("PMI_SPAWNED") {
        None => Ok(false),
        Some(v) => Ok(number(&v).ok_or_else(|| bad("PMI_SPAWNED", &v))? != 0),
    }
}

/// `PMI_TIMEOUT`: the whole seconds a reply may take before the call fails (unset, empty
/// or 0: no limit, the default: a barrier legitimately waits for the slowest rank). A
/// fraction is refused, naming the unit, rather than read as C's `atoi` would (`0.5` as
/// 0, no limit at all): the PMIx backend's bound is whole seconds too.
pub fn timeout(lookup: &dyn Fn(&str) -> Option<OsString>) -> Result<Option<u32>, String> {
    match lookup("PMI_TIMEOUT") {
        None => Ok(None),
        Some(v) if v.is_empty() => Ok(None),
        Some(v) => {
            let seconds = number(&v).ok_or_else(|| {
                format!(
                    "PMI_TIMEOUT=\"{}\" is not a whole number of seconds (such as 30; 0: \
                     no limit)",
                    shown(&v)
                )
            })?;
            Ok((seconds > 0).then_some(seconds as u32))
        }
    }
}

/// Whether `PMI_DEBUG` asks for tracing, read as MPICH's and Slurm's clients read it
/// (C's `atoi`): a number other than 0 (`1`, ` 2`, `-1`, `3x`) does; `0`, an empty
/// value and words (`off`, `no`, `yes`) do not.
pub fn debug_requested(lookup: &dyn Fn(&str) -> Option<OsString>) -> bool {
    lookup("PMI_DEBUG").is_some_and(|v| {
        let text = v.as_encoded_bytes().trim_ascii_start();
        let digits = text.strip_prefix(b"-").or_else(|| text.strip_prefix(b"+"));
        let digits = digits.unwrap_or(text);
        digits
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .any(|&b| b != b'0')
    })
}

/// Read `PMI_FD`, `PMI_RANK`, `PMI_SIZE` and `PMI_SPAWNED`. The error says, in one
/// line, which variable is missing or wrong (a missing one beside `PMI_FD`, which a
/// launcher sets with the other two: "PMI_FD is set but PMI_SIZE is not").
pub fn job_env(lookup: &dyn Fn(&str) -> Option<OsString>) -> Result<JobEnv, String> {
    let fd = required(lookup, "PMI_FD", None)?;
    let size = required(lookup, "PMI_SIZE", Some("PMI_FD"))?;
    let rank = required(lookup, "PMI_RANK", Some("PMI_FD"))?;
    if size < 1 {
        return Err(format!(
            "PMI_SIZE={size} is not a job size (must be at least 1)"
        ));
    }
    if rank >= size {
        return Err(format!("PMI_RANK={rank} is not below PMI_SIZE={size}"));
    }
    // Slurm's pmi2 plugin sets PMI_JOBID and never MPI_LOCALNRANKS; every Hydra (MPICH
    // 4.0.2 and 5.0.2, Intel's) sets MPI_LOCALNRANKS, and an mpiexec run inside a Slurm
    // step passes the step's PMI_JOBID on to its processes (all measured): then the
    // server is not Slurm's, and Slurm's `ring` would kill a Hydra job. The other way
    // round, a step that srun starts from a Hydra rank's shell inherits MPI_LOCALNRANKS;
    // Slurm refuses a `fullinit` without `pmijobid`, which every Hydra ignores
    // (measured), so PMI_JOBID is passed on whenever it is set.
    let jobid = lookup("PMI_JOBID").map(|v| v.into_encoded_bytes());
    let hydra = lookup("MPI_LOCALNRANKS").is_some();
    let slurm = jobid.is_some() && !hydra;
    let request_max = if slurm {
        SLURM_REQUEST_MAX
    } else {
        pmi1::MAX_LINE
    };
    Ok(JobEnv {
        fd,
        rank,
        size,
        spawned: spawned(lookup)?,
        request_max,
        jobid,
        slurm,
        hydra,
    })
}

/// A non-negative decimal that fits in an `int`, from a variable required `beside` the
/// one that set this launch mode (named in the message when it is missing).
fn required(
    lookup: &dyn Fn(&str) -> Option<OsString>,
    name: &str,
    beside: Option<&str>,
) -> Result<i32, String> {
    let value = lookup(name).ok_or_else(|| match beside {
        Some(set) => format!("{set} is set but {name} is not"),
        None => format!("{name} is not set"),
    })?;
    number(&value).ok_or_else(|| bad(name, &value))
}

fn bad(name: &str, value: &OsString) -> String {
    format!("{name}=\"{}\" is not a non-negative integer", shown(value))
}

/// A variable's value as a one-line message shows it: bytes outside printable ASCII
/// escaped (a newline in a value must not split the line), at most 256 of them.
pub fn shown(value: &OsString) -> String {
    let bytes = value.as_encoded_bytes();
    let cut = &bytes[..bytes.len().min(256)];
    let more = if bytes.len() > cut.len() { "..." } else { "" };
    format!("{}{more}", cut.escape_ascii())
}

fn number(value: &OsString) -> Option<i32> {
    let text = value.to_str()?;
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests;
