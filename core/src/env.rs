//! What the process manager tells a process through its environment, read through an
//! injectable lookup so tests never touch the real environment.
#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::net::SocketAddr;

use crate::wire::pmi1;

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
}

/// The variables a PMIx server sets for the processes it starts (OpenPMIx's client
/// reads these to connect; PRRTE and Slurm's pmix plugin set all of them).
pub const PMIX_MARKERS: &[&str] = &[
    "PMIX_NAMESPACE",
    "PMIX_RANK",
    "PMIX_SERVER_URI41",
    "PMIX_SERVER_URI4",
    "PMIX_SERVER_URI3",
    "PMIX_SERVER_URI21",
    "PMIX_SERVER_URI2",
];

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
}

/// Decide the launch mode. Singleton mode is refused when a launcher started this
/// process without a PMI-1 connection (see [`LAUNCHERS`]): falling back silently would
/// turn an N-rank job into N copies of rank 0 (flux-core#5714).
pub fn launch(lookup: &dyn Fn(&str) -> Option<OsString>) -> Result<Launch, String> {
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
        let id = required(lookup, "PMI_ID")?;
        return Ok(Launch::Port(PortEnv {
            host,
            port,
            id,
            spawned: spawned(lookup)?,
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

/// The first PMIx server variable set, and its value. An empty one says nothing, as a
/// launcher's (a wrapper clearing them).
fn pmix_marker(lookup: &dyn Fn(&str) -> Option<OsString>) -> Option<(&'static str, OsString)> {
    PMIX_MARKERS.iter().find_map(|&name| {
        lookup(name)
            .filter(|value| !value.is_empty())
            .map(|value| (name, value))
    })
}

/// `PMI_FD`'s number, when it is one.
pub fn pmi_fd(lookup: &dyn Fn(&str) -> Option<OsString>) -> Option<i32> {
    lookup("PMI_FD").and_then(|v| number(&v))
}

/// Whether the environment names a launch other than `PMI_FD`: `PMI_PORT`, or a PMIx
/// server (a non-empty `PMIX_*` marker) but not beside Hydra's `MPI_LOCALNRANKS`: there
/// a `PMI_FD` that is not open is a Hydra rank's, inherited by a program the rank
/// started (`system()`), and the PMIx variables an outer job's (`mpiexec` run in an
/// `srun --mpi=pmix` step), whose rank that program must not take. Unless PRRTE says it
/// launched this process (`PRTE_LAUNCHED`): `prterun` run by a Hydra rank.
pub fn names_another_launch(lookup: &dyn Fn(&str) -> Option<OsString>) -> bool {
    if lookup("PMI_PORT").is_some_and(|v| !v.is_empty()) {
        return true;
    }
    // (In this order, every Hydra rank's PMI_Init asks for three variables, not ten:
    // each is a scan of the whole environment.)
    let hydra_own = lookup("MPI_LOCALNRANKS").is_some() && lookup("PRTE_LAUNCHED").is_none();
    !hydra_own && pmix_marker(lookup).is_some()
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

/// Whether a launcher's variable says the job of the PMIx server named has exactly one
/// process, and none says more. Not `PMI_SIZE` (a PMI-1 launcher's, an outer job's
/// here), and Slurm's step size only when the PMIx namespace is Slurm's
/// (`slurm.pmix.JOB.STEP`): `prterun` run in an `srun -n 1` shell names its own.
fn says_single_process(lookup: &dyn Fn(&str) -> Option<OsString>) -> bool {
    let slurm_serves = lookup("PMIX_NAMESPACE")
        .is_some_and(|ns| ns.as_encoded_bytes().starts_with(b"slurm.pmix."));
    let sizes: Vec<OsString> = LAUNCHERS
        .iter()
        .filter_map(|who| match who.size {
            Some("PMI_SIZE") => None,
            Some("SLURM_STEP_NUM_TASKS") if !slurm_serves => None,
            size => size.and_then(lookup),
        })
        .filter(|size| !size.is_empty())
        .collect();
    !sizes.is_empty() && sizes.iter().all(|size| size == "1")
}

/// A launcher that can start this process without giving it a PMI-1 connection, and the
/// variables it documents for its tasks.
pub struct Launcher {
    /// Who it is, for the message.
    pub name: &'static str,
    /// Any of these set means this launcher started the process.
    pub markers: &'static [&'static str],
    /// The number of processes it started, when it says.
    pub size: Option<&'static str>,
    /// This process's rank among them.
    pub rank: Option<&'static str>,
    /// What the user should do instead.
    pub fix: &'static str,
}

/// The launchers recognised, most specific first. A process started by hand inside an
/// allocation (`salloc`, an `sbatch` script) carries only the allocation's variables,
/// not a step's, and stays a legitimate singleton.
pub const LAUNCHERS: &[Launcher] = &[
    Launcher {
        name: "a PMI-1 process manager",
        markers: &["PMI_SIZE", "PMI_RANK"],
        size: Some("PMI_SIZE"),
        rank: Some("PMI_RANK"),
        fix: "its PMI_FD or PMI_PORT did not reach this process: unset stale PMI_* \
              variables, or let the launcher set all of them",
    },
    Launcher {
        name: "Slurm's srun",
        markers: &["SLURM_STEP_NUM_TASKS"],
        size: Some("SLURM_STEP_NUM_TASKS"),
        rank: Some("SLURM_PROCID"),
        fix: "give it a PMI-1 server: srun --mpi=pmi2",
    },
    Launcher {
        name: "Open MPI's mpirun",
        markers: &["OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"],
        size: Some("OMPI_COMM_WORLD_SIZE"),
        rank: Some("OMPI_COMM_WORLD_RANK"),
        fix: "it serves PMIx, not the PMI-1 wire: launch with mpiexec.hydra",
    },
    Launcher {
        name: "Flux",
        markers: &["FLUX_JOB_SIZE", "FLUX_TASK_RANK"],
        size: Some("FLUX_JOB_SIZE"),
        rank: Some("FLUX_TASK_RANK"),
        fix: "enable its PMI-1 server: flux run -o pmi=simple",
    },
    Launcher {
        name: "HPE PALS",
        markers: &["PALS_APID", "PALS_RANKID"],
        size: None,
        rank: Some("PALS_RANKID"),
        fix: "it serves Cray PMI and PMIx, not the PMI-1 wire: launch with \
              mpiexec.hydra",
    },
    Launcher {
        name: "IBM's jsrun",
        markers: &["JSM_NAMESPACE_SIZE", "JSM_NAMESPACE_RANK"],
        size: Some("JSM_NAMESPACE_SIZE"),
        rank: Some("JSM_NAMESPACE_RANK"),
        fix: "it serves PMIx, not the PMI-1 wire: launch with mpiexec.hydra",
    },
    Launcher {
        name: "MVAPICH2's mpirun_rsh",
        markers: &["MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_RANK"],
        size: Some("MV2_COMM_WORLD_SIZE"),
        rank: Some("MV2_COMM_WORLD_RANK"),
        fix: "its PMI_PORT did not reach this process: launch with mpiexec.hydra",
    },
];

/// Whether this process, with no PMI-1 connection, may run as rank 0 of 1: no launcher
/// in [`LAUNCHERS`] says it started more than one process or that this one is not rank
/// 0, and a launcher that never says how many it started (PMIx, PALS) is refused unless
/// another one says "one".
#[inline(never)]
fn singleton_allowed(lookup: &dyn Fn(&str) -> Option<OsString>) -> Result<(), String> {
    let refuse = |who: &Launcher, name: &str, value: &OsString, what: &str| {
        Err(format!(
            "neither PMI_FD nor PMI_PORT is set, but {name}=\"{}\" says {} started {what}: \
             refusing to run as rank 0 of 1; {} (or set PMI_SINGLETON=1 to run each \
             process as a singleton on purpose)",
            shown(value),
            who.name,
            who.fix
        ))
    };
    // An empty variable says nothing.
    let said = |name: &'static str| lookup(name).filter(|v| !v.is_empty()).map(|v| (name, v));
    let mut one_process = false;
    let mut untold = None;
    for who in LAUNCHERS {
        let Some((marker, value)) = who.markers.iter().find_map(|&name| said(name)) else {
            continue;
        };
        if let Some((name, size)) = who.size.and_then(said) {
            if size != "1" {
                return refuse(who, name, &size, "a job of that size");
            }
            one_process = true;
        }
        if who.size.is_none() && untold.is_none() {
            untold = Some((who, marker, value));
        }
    }
    // A rank other than 0 is never a singleton, whatever else is set (SLURM_PROCID=1
    // with only the allocation's SLURM_NTASKS would otherwise make N copies of rank 0).
    for who in LAUNCHERS {
        if let Some((name, rank)) = who.rank.and_then(said) {
            if rank != "0" {
                return refuse(who, name, &rank, "this process with that rank");
            }
        }
    }
    match untold {
        Some((who, marker, value)) if !one_process => refuse(
            who,
            marker,
            &value,
            "this process, and does not say how many others",
        ),
        _ => Ok(()),
    }
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
    let port: u16 = port
        .parse()
        .ok()
        .filter(|&p| p != 0 && port.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(bad)?;
    if host.is_empty() {
        return Err(bad());
    }
    Ok((host.to_string(), port))
}

fn spawned(lookup: &dyn Fn(&str) -> Option<OsString>) -> Result<bool, String> {
    match lookup("PMI_SPAWNED") {
        None => Ok(false),
        Some(v) => Ok(number(&v).ok_or_else(|| bad("PMI_SPAWNED", &v))? != 0),
    }
}

/// `PMI_TIMEOUT`: the seconds a reply may take before the call fails (unset, empty or 0:
/// no limit, the default: a barrier legitimately waits for the slowest rank).
pub fn timeout(lookup: &dyn Fn(&str) -> Option<OsString>) -> Result<Option<u32>, String> {
    match lookup("PMI_TIMEOUT") {
        None => Ok(None),
        Some(v) if v.is_empty() => Ok(None),
        Some(v) => {
            let seconds = number(&v).ok_or_else(|| bad("PMI_TIMEOUT", &v))?;
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
/// line, which variable is missing or wrong.
pub fn job_env(lookup: &dyn Fn(&str) -> Option<OsString>) -> Result<JobEnv, String> {
    let fd = required(lookup, "PMI_FD")?;
    let size = required(lookup, "PMI_SIZE")?;
    let rank = required(lookup, "PMI_RANK")?;
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
    let slurm = jobid.is_some() && lookup("MPI_LOCALNRANKS").is_none();
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
    })
}

/// A non-negative decimal that fits in an `int`, from a required variable.
fn required(lookup: &dyn Fn(&str) -> Option<OsString>, name: &str) -> Result<i32, String> {
    let value = lookup(name).ok_or_else(|| format!("{name} is not set"))?;
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
mod tests {
    use super::*;

    fn lookup_from(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let vars: Vec<(String, OsString)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn pmix_server_addresses_are_read_from_each_uri_form() {
        let env = lookup_from(&[
            ("PMIX_NAMESPACE", "prterun-vm-1@1"),
            (
                "PMIX_SERVER_URI41",
                "prterun-vm-1@0.0;tcp4://127.0.0.1:39455",
            ),
            (
                "PMIX_SERVER_URI2",
                "prterun-vm-1@0.0;tcp4://127.0.0.1:39455",
            ),
            ("PMIX_SERVER_URI21", "slurm.pmix.3.0:0;tcp6://[::1]:7000"),
            ("PMIX_SERVER_URI3", "garbage"),
        ]);
        assert_eq!(
            server_addresses(&env),
            vec![
                "127.0.0.1:39455".parse::<SocketAddr>().unwrap(),
                "[::1]:7000".parse().unwrap()
            ]
        );
        assert!(server_addresses(&lookup_from(&[("PMIX_RANK", "0")])).is_empty());
    }

    #[test]
    fn hydra_environment_is_read() {
        let env = lookup_from(&[("PMI_FD", "5"), ("PMI_RANK", "2"), ("PMI_SIZE", "4")]);
        assert_eq!(
            job_env(&env),
            Ok(JobEnv {
                fd: 5,
                rank: 2,
                size: 4,
                spawned: false,
                request_max: pmi1::MAX_LINE,
                jobid: None,
                slurm: false,
            })
        );
        let env = lookup_from(&[
            ("PMI_FD", "9"),
            ("PMI_RANK", "0"),
            ("PMI_SIZE", "1"),
            ("PMI_SPAWNED", "1"),
        ]);
        assert!(job_env(&env).unwrap().spawned);
        let slurm = lookup_from(&[
            ("PMI_FD", "11"),
            ("PMI_RANK", "0"),
            ("PMI_SIZE", "2"),
            ("PMI_JOBID", "2.0"),
        ]);
        let slurm = job_env(&slurm).unwrap();
        assert_eq!(
            (slurm.jobid.as_deref(), slurm.slurm, slurm.request_max),
            (Some(&b"2.0"[..]), true, SLURM_REQUEST_MAX)
        );
        // mpiexec.hydra run inside a Slurm step (the step's PMI_JOBID is inherited), or
        // an srun step started from a Hydra rank (MPI_LOCALNRANKS is inherited): the
        // job id is passed on, the server not taken for Slurm's.
        let stale = lookup_from(&[
            ("PMI_FD", "6"),
            ("PMI_RANK", "1"),
            ("PMI_SIZE", "2"),
            ("PMI_JOBID", "1644.0"),
            ("MPI_LOCALNRANKS", "2"),
        ]);
        let stale = job_env(&stale).unwrap();
        assert_eq!(
            (stale.jobid.as_deref(), stale.slurm, stale.request_max),
            (Some(&b"1644.0"[..]), false, pmi1::MAX_LINE)
        );
    }

    #[test]
    fn nonsense_is_refused_with_the_variable_named() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[("PMI_RANK", "0"), ("PMI_SIZE", "1")], "PMI_FD is not set"),
            (
                &[("PMI_FD", "x"), ("PMI_RANK", "0"), ("PMI_SIZE", "1")],
                "PMI_FD=\"x\"",
            ),
            (&[("PMI_FD", "3"), ("PMI_SIZE", "1")], "PMI_RANK is not set"),
            (&[("PMI_FD", "3"), ("PMI_RANK", "0")], "PMI_SIZE is not set"),
            (
                &[("PMI_FD", "3"), ("PMI_RANK", "-1"), ("PMI_SIZE", "2")],
                "PMI_RANK=\"-1\"",
            ),
            (
                &[("PMI_FD", "3"), ("PMI_RANK", "2"), ("PMI_SIZE", "2")],
                "not below",
            ),
            (
                &[("PMI_FD", "3"), ("PMI_RANK", "0"), ("PMI_SIZE", "0")],
                "PMI_SIZE=0",
            ),
            (
                &[
                    ("PMI_FD", "3"),
                    ("PMI_RANK", "0"),
                    ("PMI_SIZE", "99999999999"),
                ],
                "PMI_SIZE=",
            ),
            (
                &[("PMI_FD", "3"), ("PMI_RANK", " 1"), ("PMI_SIZE", "2")],
                "PMI_RANK=",
            ),
            (
                &[
                    ("PMI_FD", "3"),
                    ("PMI_RANK", "0"),
                    ("PMI_SIZE", "2"),
                    ("PMI_SPAWNED", "yes"),
                ],
                "PMI_SPAWNED=",
            ),
        ];
        for (vars, needle) in cases {
            let err = job_env(&lookup_from(vars)).unwrap_err();
            assert!(err.contains(needle), "{vars:?}: {err}");
        }
    }

    #[test]
    fn launch_modes() {
        let fd = lookup_from(&[
            ("PMI_FD", "3"),
            ("PMI_RANK", "0"),
            ("PMI_SIZE", "1"),
            ("PMI_PORT", "h:1"),
        ]);
        assert!(matches!(launch(&fd), Ok(Launch::Fd(_))), "PMI_FD wins");
        let port = lookup_from(&[("PMI_PORT", "node7:4242"), ("PMI_ID", "3")]);
        assert_eq!(
            launch(&port),
            Ok(Launch::Port(PortEnv {
                host: "node7".into(),
                port: 4242,
                id: 3,
                spawned: false
            }))
        );
        let v6 = lookup_from(&[
            ("PMI_PORT", "[::1]:99"),
            ("PMI_ID", "0"),
            ("PMI_SPAWNED", "1"),
        ]);
        assert_eq!(
            launch(&v6),
            Ok(Launch::Port(PortEnv {
                host: "::1".into(),
                port: 99,
                id: 0,
                spawned: true
            }))
        );
        assert_eq!(launch(&lookup_from(&[])), Ok(Launch::Singleton));
        let alone = lookup_from(&[("PMI_SIZE", "1"), ("PMI_RANK", "0")]);
        assert_eq!(launch(&alone), Ok(Launch::Singleton));
        // PMI_SINGLETON=1 over every other variable (a program a rank runs with system()
        // inherits its PMI_FD, closed, or its PMI_PORT and PMI_ID).
        for inherited in [
            &[("PMI_FD", "3"), ("PMI_RANK", "2"), ("PMI_SIZE", "4")][..],
            &[("PMI_PORT", "h:1"), ("PMI_ID", "2")],
            &[("PMIX_NAMESPACE", "job"), ("PMIX_RANK", "2")],
        ] {
            let mut vars = inherited.to_vec();
            vars.push(("PMI_SINGLETON", "1"));
            assert_eq!(
                launch(&lookup_from(&vars)),
                Ok(Launch::Singleton),
                "{vars:?}"
            );
        }
        // What a stale PMI_FD is judged beside (session::init): another launch named.
        assert_eq!(pmi_fd(&lookup_from(&[("PMI_FD", "97")])), Some(97));
        assert_eq!(pmi_fd(&lookup_from(&[("PMI_FD", "x")])), None);
        assert!(names_another_launch(&lookup_from(&[
            ("PMI_FD", "3"),
            ("PMI_PORT", "h:1")
        ])));
        assert!(names_another_launch(&lookup_from(&[("PMIX_RANK", "0")])));
        assert!(!names_another_launch(&lookup_from(&[("PMIX_RANK", "")])));
        assert!(!names_another_launch(&lookup_from(&[
            ("PMI_FD", "3"),
            ("PMI_SIZE", "2")
        ])));
        // Hydra's processes: its PMI_FD beside an outer Slurm step's PMIx variables is
        // its own; beside PMI_PORT (-pmi-port inside a Slurm step), an outer job's.
        assert!(!names_another_launch(&lookup_from(&[
            ("PMI_FD", "3"),
            ("MPI_LOCALNRANKS", "2"),
            ("PMIX_NAMESPACE", "slurm.pmix.12.0"),
            ("PMIX_RANK", "0")
        ])));
        assert!(names_another_launch(&lookup_from(&[
            ("PMI_FD", "3"),
            ("MPI_LOCALNRANKS", "2"),
            ("PMI_PORT", "h:1")
        ])));
        // ...and beside PRRTE's own mark: prterun run by a Hydra rank.
        assert!(names_another_launch(&lookup_from(&[
            ("PMI_FD", "3"),
            ("MPI_LOCALNRANKS", "2"),
            ("PMIX_NAMESPACE", "prterun-vm-13050@1"),
            ("PMIX_RANK", "0"),
            ("PRTE_LAUNCHED", "1")
        ])));
        // An empty PMIx variable says nothing (a wrapper that cleared it); nor an empty
        // PMI_FD or PMI_PORT.
        let cleared = lookup_from(&[("PMIX_NAMESPACE", ""), ("PMIX_RANK", "")]);
        assert_eq!(launch(&cleared), Ok(Launch::Singleton));
        let cleared = lookup_from(&[("PMI_FD", ""), ("PMI_PORT", "")]);
        assert_eq!(launch(&cleared), Ok(Launch::Singleton));
        let beside_pmix = lookup_from(&[("PMI_FD", ""), ("PMIX_RANK", "0")]);
        assert!(matches!(launch(&beside_pmix), Ok(Launch::Pmix(_))));
        assert!(!names_another_launch(&lookup_from(&[("PMI_PORT", "")])));
    }

    #[test]
    fn bad_port_environments_and_larger_jobs_are_refused() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (
                &[("PMI_PORT", "nohost"), ("PMI_ID", "0")],
                "PMI_PORT=\"nohost\"",
            ),
            (&[("PMI_PORT", ":80"), ("PMI_ID", "0")], "PMI_PORT="),
            (&[("PMI_PORT", "h:0"), ("PMI_ID", "0")], "PMI_PORT="),
            (&[("PMI_PORT", "h:99999"), ("PMI_ID", "0")], "PMI_PORT="),
            (&[("PMI_PORT", "[::1:80"), ("PMI_ID", "0")], "PMI_PORT="),
            (&[("PMI_PORT", "h:80")], "PMI_ID is not set"),
            (&[("PMI_SIZE", "4")], "PMI_SIZE=\"4\""),
            (&[("PMI_RANK", "2")], "PMI_RANK=\"2\""),
        ];
        for (vars, needle) in cases {
            let err = launch(&lookup_from(vars)).unwrap_err();
            assert!(err.contains(needle), "{vars:?}: {err}");
        }
    }

    /// Each row: where the environment comes from, the variables, and `None` for a
    /// legitimate singleton or `Some(text)` for a refusal whose message holds `text`.
    #[test]
    fn launchers_without_a_pmi1_server_are_refused() {
        type Row<'a> = (&'a str, &'a [(&'a str, &'a str)], Option<&'a str>);
        // The PMIx backend, not a refusal.
        const PMIX: &str = "(pmix backend)";
        let rows: &[Row] = &[
            ("no launcher at all", &[("HOME", "/root")], None),
            (
                "PMI_SIZE=1 and PMI_RANK=0 only",
                &[("PMI_SIZE", "1"), ("PMI_RANK", "0")],
                None,
            ),
            (
                "srun --mpi=none -n 2, rank 0 (Slurm 22.05, measured here)",
                &[
                    ("SLURM_JOB_ID", "7"),
                    ("SLURM_STEP_ID", "0"),
                    ("SLURM_STEP_NUM_TASKS", "2"),
                    ("SLURM_NTASKS", "2"),
                    ("SLURM_PROCID", "0"),
                ],
                Some("SLURM_STEP_NUM_TASKS=\"2\" says Slurm's srun started a job of that size"),
            ),
            (
                "srun --mpi=none -n 2, rank 1",
                &[("SLURM_STEP_NUM_TASKS", "2"), ("SLURM_PROCID", "1")],
                Some("srun --mpi=pmi2"),
            ),
            (
                "srun -n 1 (one task: a true singleton)",
                &[
                    ("SLURM_JOB_ID", "7"),
                    ("SLURM_STEP_NUM_TASKS", "1"),
                    ("SLURM_PROCID", "0"),
                ],
                None,
            ),
            (
                "SLURM_PROCID=2 with only the allocation's SLURM_NTASKS (no step size)",
                &[("SLURM_NTASKS", "4"), ("SLURM_PROCID", "2")],
                Some("SLURM_PROCID=\"2\" says Slurm's srun started this process with that rank"),
            ),
            (
                "an empty SLURM_STEP_NUM_TASKS says nothing",
                &[("SLURM_STEP_NUM_TASKS", ""), ("SLURM_PROCID", "0")],
                None,
            ),
            (
                "salloc -n 4 ./app (the allocation's variables, no step's)",
                &[
                    ("SLURM_JOB_ID", "8"),
                    ("SLURM_NTASKS", "4"),
                    ("SLURM_NPROCS", "4"),
                ],
                None,
            ),
            (
                "srun --mpi=pmix -n 2, rank 0",
                &[
                    ("SLURM_STEP_NUM_TASKS", "2"),
                    ("SLURM_PROCID", "0"),
                    ("PMIX_NAMESPACE", "slurm.pmix.9.0"),
                    ("PMIX_RANK", "0"),
                ],
                Some(PMIX),
            ),
            (
                "srun --mpi=pmix -n 1 (Slurm says one task)",
                &[
                    ("SLURM_STEP_NUM_TASKS", "1"),
                    ("SLURM_PROCID", "0"),
                    ("PMIX_NAMESPACE", "slurm.pmix.9.0"),
                    ("PMIX_RANK", "0"),
                ],
                Some(PMIX),
            ),
            (
                "prterun -n 2, rank 1",
                &[("PMIX_NAMESPACE", "prterun-host-1@1"), ("PMIX_RANK", "1")],
                Some(PMIX),
            ),
            (
                "prterun -n 2, rank 0: the size is not in the environment",
                &[("PMIX_NAMESPACE", "prterun-host-1@1"), ("PMIX_RANK", "0")],
                Some(PMIX),
            ),
            (
                "Open MPI's mpirun -n 2",
                &[
                    ("OMPI_COMM_WORLD_SIZE", "2"),
                    ("OMPI_COMM_WORLD_RANK", "0"),
                    ("PMIX_RANK", "0"),
                ],
                Some(PMIX),
            ),
            (
                "Open MPI's mpirun -n 2, the PMIx variables removed",
                &[("OMPI_COMM_WORLD_SIZE", "2"), ("OMPI_COMM_WORLD_RANK", "0")],
                Some("OMPI_COMM_WORLD_SIZE=\"2\""),
            ),
            (
                "flux run -o pmi=off -n 2",
                &[
                    ("FLUX_JOB_SIZE", "2"),
                    ("FLUX_TASK_RANK", "0"),
                    ("FLUX_JOB_ID", "f1"),
                ],
                Some("flux run -o pmi=simple"),
            ),
            (
                "HPE PALS, rank 0",
                &[("PALS_APID", "d4e5"), ("PALS_RANKID", "0")],
                Some("PALS_APID=\"d4e5\" says HPE PALS"),
            ),
            (
                "IBM jsrun -n 4",
                &[("JSM_NAMESPACE_SIZE", "4"), ("JSM_NAMESPACE_RANK", "3")],
                Some("JSM_NAMESPACE_SIZE=\"4\""),
            ),
            (
                "MVAPICH2 mpirun_rsh -np 2",
                &[("MV2_COMM_WORLD_SIZE", "2"), ("MV2_COMM_WORLD_RANK", "1")],
                Some("MV2_COMM_WORLD_SIZE=\"2\""),
            ),
            (
                "srun --mpi=none -n 64 with PMI_SINGLETON=1: a task farm on purpose",
                &[
                    ("SLURM_STEP_NUM_TASKS", "64"),
                    ("SLURM_PROCID", "5"),
                    ("PMI_SINGLETON", "1"),
                ],
                None,
            ),
            (
                "a stale PMI_SIZE from an outer job",
                &[("PMI_SIZE", "4")],
                Some("PMI_SIZE=\"4\" says a PMI-1 process manager started a job of that size"),
            ),
        ];
        for (source, vars, want) in rows {
            let got = launch(&lookup_from(vars));
            match want {
                None => assert_eq!(got, Ok(Launch::Singleton), "{source}"),
                Some(PMIX) => assert!(matches!(got, Ok(Launch::Pmix(_))), "{source}: {got:?}"),
                Some(text) => {
                    let err = got.expect_err(source);
                    assert!(err.contains(text), "{source}: {err}");
                    assert!(
                        err.contains("refusing to run as rank 0 of 1"),
                        "{source}: {err}"
                    );
                }
            }
        }
    }

    #[test]
    fn pmix_environment_is_read() {
        let env = lookup_from(&[
            ("PMIX_RANK", "1"),
            ("PMIX_PREFIX", "/opt/ompi"),
            ("PMI_PMIX_LIBRARY", "/x/libpmix.so.2"),
            ("PMI_PMIX_PARENT", "prterun-x@1"),
            ("PMI_PMIX_PREPUT_NUM", "2"),
            ("PMI_PMIX_PREPUT_KEY_0", "k0"),
            ("PMI_PMIX_PREPUT_VAL_0", "v=0"),
            ("PMI_PMIX_PREPUT_KEY_1", "k1"),
            ("PMI_PMIX_PREPUT_VAL_1", "v 1"),
        ]);
        let Ok(Launch::Pmix(found)) = launch(&env) else {
            panic!("not the PMIx backend")
        };
        assert_eq!(found.why, "PMIX_RANK=\"1\" names a PMIx server");
        assert_eq!(found.library, Some(OsString::from("/x/libpmix.so.2")));
        assert_eq!(found.prefixes, vec![OsString::from("/opt/ompi")]);
        assert_eq!(found.parent, Some(b"prterun-x@1".to_vec()));
        assert!(!found.single_process);
        assert_eq!(
            found.preput,
            vec![
                (b"k0".to_vec(), b"v=0".to_vec()),
                (b"k1".to_vec(), b"v 1".to_vec())
            ]
        );
        // Preput variables that do not add up fail no init: they are set aside, and said.
        let short = lookup_from(&[("PMIX_RANK", "0"), ("PMI_PMIX_PREPUT_NUM", "3")]);
        let Ok(Launch::Pmix(found)) = launch(&short) else {
            panic!("not the PMIx backend")
        };
        assert!(found.preput.is_empty());
        assert!(found
            .preput_broken
            .is_some_and(|why| why.contains("PMI_PMIX_PREPUT_KEY_0")));
        // A value with a newline is shown escaped in the one-line messages.
        let newline = lookup_from(&[("PMIX_RANK", "0\nx")]);
        let Ok(Launch::Pmix(found)) = launch(&newline) else {
            panic!("not the PMIx backend")
        };
        assert_eq!(found.why, "PMIX_RANK=\"0\\nx\" names a PMIx server");
        assert!(launch(&lookup_from(&[("PMI_PORT", "a\nb")]))
            .is_err_and(|e| e.contains("PMI_PORT=\"a\\nb\"") && !e.contains('\n')));
        // PMI_FD wins over PMIx; PMI_SINGLETON=1 too.
        let fd = lookup_from(&[
            ("PMIX_RANK", "0"),
            ("PMI_FD", "3"),
            ("PMI_SIZE", "1"),
            ("PMI_RANK", "0"),
        ]);
        assert!(matches!(launch(&fd), Ok(Launch::Fd(_))));
        let slurm = ("PMIX_NAMESPACE", "slurm.pmix.12.0");
        let one = lookup_from(&[slurm, ("PMIX_RANK", "0"), ("SLURM_STEP_NUM_TASKS", "1")]);
        assert!(matches!(launch(&one), Ok(Launch::Pmix(f)) if f.single_process));
        let two = lookup_from(&[slurm, ("PMIX_RANK", "0"), ("SLURM_STEP_NUM_TASKS", "2")]);
        assert!(matches!(launch(&two), Ok(Launch::Pmix(f)) if !f.single_process));
        // prterun in an `srun -n 1` shell, or under mpiexec: the outer job's size says
        // nothing of prterun's job.
        for outer in [("SLURM_STEP_NUM_TASKS", "1"), ("PMI_SIZE", "1")] {
            let prte = lookup_from(&[
                ("PMIX_NAMESPACE", "prterun-vm-13050@1"),
                ("PMIX_RANK", "0"),
                outer,
            ]);
            assert!(matches!(launch(&prte), Ok(Launch::Pmix(f)) if !f.single_process));
        }
        let single = lookup_from(&[("PMIX_RANK", "3"), ("PMI_SINGLETON", "1")]);
        assert_eq!(launch(&single), Ok(Launch::Singleton));
    }

    #[test]
    fn pmi_timeout() {
        assert_eq!(timeout(&lookup_from(&[])), Ok(None));
        assert_eq!(timeout(&lookup_from(&[("PMI_TIMEOUT", "0")])), Ok(None));
        assert_eq!(
            timeout(&lookup_from(&[("PMI_TIMEOUT", "30")])),
            Ok(Some(30))
        );
        assert!(timeout(&lookup_from(&[("PMI_TIMEOUT", "x")])).is_err());
    }

    #[test]
    fn pmi_debug() {
        assert!(!debug_requested(&lookup_from(&[])));
        assert!(!debug_requested(&lookup_from(&[("PMI_DEBUG", "0")])));
        assert!(!debug_requested(&lookup_from(&[("PMI_DEBUG", "")])));
        assert!(debug_requested(&lookup_from(&[("PMI_DEBUG", "1")])));
        // As atoi reads it: a number other than 0 traces, a word does not.
        for on in ["2", " 1", "-1", "+3", "1x", "007"] {
            assert!(
                debug_requested(&lookup_from(&[("PMI_DEBUG", on)])),
                "{on:?}"
            );
        }
        for off in ["00", "-0", "off", "no", "false", "yes", " ", "x1"] {
            assert!(
                !debug_requested(&lookup_from(&[("PMI_DEBUG", off)])),
                "{off:?}"
            );
        }
    }
}
