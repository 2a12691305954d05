//! `pmi-probe`: what a launcher gives a process, one line per rank (or one JSON object
//! with `--json`). It starts the PMI client through the same core as `libpmi.so.0`
//! (`--pmi2`: as `libpmi2.so.0`), so it chooses the backend as they do, and reports
//! which backend and server it found, the job's facts, the node-local clique, the
//! maxima, a timed put/barrier/get round, and a verdict. A failure says what to try
//! next. Exit status: 0 when the verdict is `ok` or `singleton`, 1 on `fail`, 2 on a
//! bad command line. `docs/pmi-probe.1` is its manual.
#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::Write as _;
use std::time::Instant;

use pmi_core::api::Api;
use pmi_core::api::Maxes;
use pmi_core::client::Client;
use pmi_core::error::{PmiError, PmiResult};
use pmi_core::launch::{self, Launch};
use pmi_core::{lifecycle, trace};

/// How many peers each rank reads in the timed round: the next ones after it, so that a
/// large job costs each rank a bounded number of gets.
const PEERS_READ: i32 = 64;

const USAGE: &str = "usage: pmi-probe [--pmi2] [--json]\n\
  Run under a launcher (mpiexec -n 4 pmi-probe, srun -n 4 pmi-probe, prterun -n 4\n\
  pmi-probe): each process prints what the launcher gave it and a verdict.\n\
  --pmi2   use the PMI-2 API (as libpmi2.so.0) instead of PMI-1 (libpmi.so.0)\n\
  --json   one JSON object per process instead of one line\n";

struct Options {
    api: Api,
    json: bool,
}

fn options() -> Result<Options, String> {
    let mut opts = Options {
        api: Api::Pmi1,
        json: false,
    };
    for arg in std::env::args_os().skip(1) {
        match arg.to_str() {
            Some("--pmi2") => opts.api = Api::Pmi2,
            Some("--json") => opts.json = true,
            Some("--help" | "-h") => {
                print!("{USAGE}");
                std::process::exit(0);
            }
            Some("--version") => {
                println!("pmi-probe {}", env!("CARGO_PKG_VERSION"));
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument {:?}", arg.to_string_lossy())),
        }
    }
    Ok(opts)
}

/// The timed round: one key put, committed, a barrier, the peers' keys read.
struct Round {
    put_us: f64,
    barrier_us: f64,
    get_us: f64,
    got: i32,
    expected: i32,
}

/// Everything one process says.
#[derive(Default)]
struct Report {
    api: &'static str,
    rank: Option<i32>,
    size: Option<i32>,
    host: String,
    backend: Option<&'static str>,
    server: String,
    init_us: Option<f64>,
    kvsname: Option<String>,
    appnum: Option<i32>,
    universe: Option<i32>,
    mapping: Option<String>,
    clique: Option<Vec<i32>>,
    maxes: Option<Maxes>,
    round: Option<Round>,
    /// `ok`, `singleton` or `fail`.
    verdict: &'static str,
    /// What failed, in the library's words where it said them.
    errors: Vec<String>,
    /// What to try next, on a failure (or a PMIx server named and not used).
    next: Option<String>,
}

fn micros(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e6
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// This host's name (of its UTS namespace), for the values the round exchanges.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// The server this process was given, in words.
fn server(launch: &Result<Launch, String>, lookup: &dyn Fn(&str) -> Option<OsString>) -> String {
    let by = launch::launchers::named(lookup)
        .map(|l| format!(", launcher {}", l.name))
        .unwrap_or_default();
    match launch {
        Ok(Launch::Fd(job)) => format!("PMI_FD {}{by}", job.fd),
        Ok(Launch::Port(port)) => format!("PMI_PORT {}:{}{by}", port.host, port.port),
        Ok(Launch::Pmix(found)) => {
            let lib = lifecycle::pmix_library()
                .map(|(path, version)| format!(", client library {path} ({version})"))
                .unwrap_or_default();
            format!("PMIx server ({}){lib}{by}", found.why)
        }
        Ok(Launch::Singleton) => format!("none{by}"),
        Err(_) => format!("unusable environment{by}"),
    }
}

/// What to try next when the probe failed, from what the environment says.
fn next_steps(
    launch: &Result<Launch, String>,
    lookup: &dyn Fn(&str) -> Option<OsString>,
    api: Api,
) -> String {
    let mut steps: Vec<String> = Vec::new();
    let other_api = match api {
        Api::Pmi1 => "pmi-probe --pmi2",
        Api::Pmi2 => "pmi-probe without --pmi2",
    };
    match launch {
        Ok(Launch::Fd(_) | Launch::Port(_)) => steps.push(format!(
            "the process manager did not answer as this API expects: try {other_api}, \
             read the launcher's own output, and run with PMI_DEBUG=1 to see every line"
        )),
        Ok(Launch::Pmix(_)) => steps.push(
            "a PMIx server is named: point PMI_PMIX_LIBRARY at the server's own \
             libpmix.so.2 (Open MPI: <prefix>/lib/libpmix.so.2 or \
             <prefix>/lib/openmpi/libpmix.so.2; Debian: \
             /usr/lib/<arch>-linux-gnu/pmix2/lib/libpmix.so.2), and unset PMIX_* \
             variables left from an outer job"
                .into(),
        ),
        Ok(Launch::Singleton) | Err(_) => {}
    }
    if lookup("SLURM_STEP_ID").is_some() || lookup("SLURM_STEP_NUM_TASKS").is_some() {
        steps.push(
            "under Slurm, give the job a PMI server: srun --mpi=pmi2 (the PMI-1 and PMI-2 \
             wire) or srun --mpi=pmix (PMIx); srun --mpi=list shows what this Slurm has"
                .into(),
        );
    }
    if lookup("FLUX_JOB_ID").is_some() {
        steps.push("under Flux: flux run -o pmi=simple".into());
    }
    if lookup("OMPI_COMM_WORLD_SIZE").is_some() && !matches!(launch, Ok(Launch::Pmix(_))) {
        steps.push(
            "Open MPI's mpirun serves PMIx: check that its PMIX_* variables reach this process"
                .into(),
        );
    }
    let stale = ["PMI_FD", "PMI_PORT", "PMI_ID", "PMI_RANK", "PMI_SIZE"];
    if launch.is_err() && stale.iter().any(|v| lookup(v).is_some()) {
        steps.push(
            "if the launcher did not set them, unset the PMI_* variables left from an \
             outer job"
                .into(),
        );
    }
    steps.push("to run each process on its own on purpose, set PMI_SINGLETON=1".into());
    steps.join("; ")
}

/// A library call that failed: the lines the library would have printed (they name the
/// call), else the call and its code.
fn failed(report: &mut Report, what: &str, e: PmiError) {
    let said = trace::take_fatal();
    if said.is_empty() {
        report.errors.push(format!("{what} failed ({e:?})"));
    } else {
        report.errors.extend(said);
    }
}

/// The job's facts, the clique and the maxima (each failure is noted, the rest go on).
fn facts(c: &mut Client, api: Api, report: &mut Report) {
    report.maxes = Some(c.maxes());
    match c.kvsname() {
        Ok(name) => report.kvsname = Some(text(name)),
        Err(e) => failed(report, "kvsname", e),
    }
    match c.appnum() {
        Ok(n) => report.appnum = Some(n),
        Err(e) => failed(report, "appnum", e),
    }
    match c.universe_size() {
        Ok(n) => report.universe = Some(n),
        Err(e) => failed(report, "universe size", e),
    }
    let mapping: PmiResult<Option<Vec<u8>>> = match api {
        Api::Pmi1 => {
            let name = report.kvsname.clone().unwrap_or_default();
            match c.get(name.as_bytes(), b"PMI_process_mapping") {
                Ok(v) => Ok(Some(v.to_vec())),
                Err(PmiError::InvalidKey) => Ok(None),
                Err(e) => Err(e),
            }
        }
        Api::Pmi2 => c.job_attr(b"PMI_process_mapping"),
    };
    match mapping {
        Ok(m) => report.mapping = m.map(|m| text(&m)),
        Err(e) => failed(report, "PMI_process_mapping", e),
    }
    let clique = c.clique_size().and_then(|n| {
        let mut ranks = vec![-1; n];
        c.clique_into(&mut ranks).map(|m| {
            ranks.truncate(m);
            ranks
        })
    });
    match clique {
        Ok(ranks) => report.clique = Some(ranks),
        Err(e) => failed(report, "clique", e),
    }
}

/// The value rank `rank` puts in the round.
fn round_value(rank: i32, host: &str) -> String {
    format!("pmi-probe:{rank}@{host}")
}

/// The timed round: put, commit and barrier, then up to `PEERS_READ` peers' values.
fn round(c: &mut Client, api: Api, rank: i32, size: i32, host: &str) -> PmiResult<Round> {
    let key = |r: i32| format!("pmi-probe-{r}");
    let kvs = c.kvsname()?.to_vec();
    let t = Instant::now();
    let mine = round_value(rank, host);
    match api {
        Api::Pmi1 => c.put(&kvs, key(rank).as_bytes(), mine.as_bytes())?,
        Api::Pmi2 => c.put_own(key(rank).as_bytes(), mine.as_bytes())?,
    }
    let put_us = micros(t);
    let t = Instant::now();
    match api {
        Api::Pmi1 => {
            c.commit(&kvs)?;
            c.barrier()?;
        }
        Api::Pmi2 => c.fence()?,
    }
    let barrier_us = micros(t);
    let t = Instant::now();
    let expected = (size - 1).min(PEERS_READ);
    let mut got = 0;
    for i in 1..=expected {
        let peer = (rank + i) % size;
        let value = match api {
            Api::Pmi1 => c.get(&kvs, key(peer).as_bytes()),
            Api::Pmi2 => c.get_own(key(peer).as_bytes(), Some(peer)),
        };
        // The peer's value names the peer (its host is its own to say).
        if value.is_ok_and(|v| v.starts_with(format!("pmi-probe:{peer}@").as_bytes())) {
            got += 1;
        }
    }
    let get_us = micros(t);
    Ok(Round {
        put_us,
        barrier_us,
        get_us,
        got,
        expected,
    })
}

fn probe(opts: &Options) -> Report {
    let lookup = |name: &str| std::env::var_os(name);
    let mut report = Report {
        api: match opts.api {
            Api::Pmi1 => "PMI-1",
            Api::Pmi2 => "PMI-2",
        },
        host: host_name(),
        verdict: "fail",
        ..Report::default()
    };
    // The launch PMI_Init takes (an outer job's PMI_FD set aside, as it does).
    let launch = launch::decide(&lookup).launch;
    let call = match opts.api {
        Api::Pmi1 => "PMI_Init",
        Api::Pmi2 => "PMI2_Init",
    };
    let t = Instant::now();
    let id = match lifecycle::init(opts.api, call) {
        Ok(id) => id,
        Err(e) => {
            report.server = server(&launch, &lookup);
            failed(&mut report, call, e);
            report.next = Some(next_steps(&launch, &lookup, opts.api));
            return report;
        }
    };
    report.init_us = Some(micros(t));
    report.server = server(&launch, &lookup);
    report.rank = Some(id.rank);
    report.size = Some(id.size);
    let host = report.host.clone();
    let api = opts.api;
    let ran = lifecycle::with_client(|c| {
        report.backend = Some(c.backend_name());
        facts(c, api, &mut report);
        match round(c, api, id.rank, id.size, &host) {
            Ok(r) => report.round = Some(r),
            Err(e) => failed(&mut report, "round", e),
        }
        // Nobody leaves while another may still read its value.
        let last = match api {
            Api::Pmi1 => c.barrier(),
            Api::Pmi2 => c.fence(),
        };
        if let Err(e) = last {
            failed(&mut report, "last barrier", e);
        }
        Ok(())
    });
    if let Err(e) = ran {
        failed(&mut report, "client", e);
    }
    if let Err(e) = lifecycle::finalize() {
        failed(&mut report, "finalize", e);
    }
    let round_ok = report.round.as_ref().is_some_and(|r| r.got == r.expected);
    report.verdict = match (report.errors.is_empty() && round_ok, report.backend) {
        (true, Some("singleton")) => "singleton",
        (true, _) => "ok",
        (false, _) => "fail",
    };
    if report.verdict == "fail" {
        if !round_ok && report.errors.is_empty() {
            if let Some(r) = &report.round {
                report.errors.push(format!(
                    "round: read {} of {} peers' values",
                    r.got, r.expected
                ));
            }
        }
        report.next = Some(next_steps(&launch, &lookup, opts.api));
    } else if report.verdict == "singleton" && matches!(launch, Ok(Launch::Pmix(_))) {
        // A PMIx server was named, but no client library loaded: a one-process job ran
        // on its own (the library's warning line said so on stderr). Say how to use it.
        report.next = Some(next_steps(&launch, &lookup, opts.api));
    }
    report
}

/// A JSON string.
fn js(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn js_opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "null".into(), |v| v.to_string())
}

fn js_str(v: Option<&str>) -> String {
    v.map_or_else(|| "null".into(), js)
}

fn ranks(list: &[i32]) -> String {
    list.iter()
        .map(i32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn json(r: &Report) -> String {
    let maxes = r.maxes.map_or_else(
        || "null".into(),
        |m| {
            format!(
                "{{\"kvsname\":{},\"key\":{},\"value\":{}}}",
                m.kvsname, m.key, m.value
            )
        },
    );
    let round = r.round.as_ref().map_or_else(
        || "null".into(),
        |x| {
            format!(
                "{{\"put_us\":{:.1},\"barrier_us\":{:.1},\"get_us\":{:.1},\"got\":{},\"expected\":{}}}",
                x.put_us, x.barrier_us, x.get_us, x.got, x.expected
            )
        },
    );
    let errors: Vec<String> = r.errors.iter().map(|e| js(e)).collect();
    format!(
        "{{\"rank\":{},\"size\":{},\"api\":{},\"backend\":{},\"server\":{},\"host\":{},\
         \"init_us\":{},\"kvsname\":{},\"appnum\":{},\"universe\":{},\"mapping\":{},\
         \"clique\":{},\"maxes\":{maxes},\"round\":{round},\"verdict\":{},\"errors\":[{}],\
         \"next\":{}}}",
        js_opt(r.rank),
        js_opt(r.size),
        js(r.api),
        js_str(r.backend),
        js(&r.server),
        js(&r.host),
        r.init_us
            .map_or_else(|| "null".into(), |t| format!("{t:.1}")),
        js_str(r.kvsname.as_deref()),
        js_opt(r.appnum),
        js_opt(r.universe),
        js_str(r.mapping.as_deref()),
        r.clique
            .as_ref()
            .map_or_else(|| "null".into(), |c| format!("[{}]", ranks(c))),
        js(r.verdict),
        errors.join(","),
        js_str(r.next.as_deref()),
    )
}

/// `pmi-probe[R]: ...`: the rank when known, else what the launcher's variables say.
fn label(r: &Report) -> String {
    let hint = || {
        [
            "PMI_RANK",
            "PMIX_RANK",
            "SLURM_PROCID",
            "OMPI_COMM_WORLD_RANK",
            "FLUX_TASK_RANK",
        ]
        .iter()
        .find_map(|v| std::env::var(v).ok())
    };
    match r.rank {
        Some(rank) => format!("pmi-probe[{rank}]"),
        None => match hint() {
            Some(rank) => format!("pmi-probe[{}?]", rank.escape_debug()),
            None => "pmi-probe[?]".into(),
        },
    }
}

fn line(r: &Report) -> String {
    let mut out = format!("{}: {}", label(r), r.verdict);
    if let (Some(rank), Some(size)) = (r.rank, r.size) {
        let _ = write!(out, ": rank {rank} of {size} on {}", r.host);
    } else {
        let _ = write!(out, " on {}", r.host);
    }
    let _ = write!(
        out,
        "; {} via {} ({})",
        r.api,
        r.backend.unwrap_or("no backend"),
        r.server
    );
    if let Some(t) = r.init_us {
        let _ = write!(out, "; init {:.1} ms", t / 1e3);
    }
    if r.rank.is_some() {
        let _ = write!(
            out,
            "; kvsname {}, appnum {}, universe {}",
            r.kvsname.as_deref().unwrap_or("?"),
            js_opt(r.appnum),
            js_opt(r.universe)
        );
        let _ = write!(
            out,
            "; mapping {}, clique {}",
            r.mapping.as_deref().unwrap_or("none"),
            r.clique.as_deref().map_or_else(|| "?".into(), ranks)
        );
    }
    if let Some(m) = r.maxes {
        let _ = write!(
            out,
            "; maxes kvsname {} key {} value {}",
            m.kvsname, m.key, m.value
        );
    }
    if let Some(x) = &r.round {
        let _ = write!(
            out,
            "; round: put {:.0} us, barrier {:.1} ms, get {}/{} in {:.1} ms",
            x.put_us,
            x.barrier_us / 1e3,
            x.got,
            x.expected,
            x.get_us / 1e3
        );
    }
    for e in &r.errors {
        let _ = write!(out, "\n{}: error: {e}", label(r));
    }
    if let Some(next) = &r.next {
        let _ = write!(out, "\n{}: next: {next}", label(r));
    }
    out
}

fn main() {
    let opts = match options() {
        Ok(opts) => opts,
        Err(why) => {
            eprint!("pmi-probe: {why}\n{USAGE}");
            std::process::exit(2);
        }
    };
    trace::keep_fatal();
    let report = probe(&opts);
    let mut out = if opts.json {
        json(&report)
    } else {
        line(&report)
    };
    out.push('\n');
    // One write, so that the ranks' lines do not interleave at the launcher; a report
    // that could not be written is a failure.
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush());
    if let Err(e) = &written {
        eprintln!("pmi-probe: cannot write the report: {e}");
    }
    std::process::exit(if report.verdict == "fail" || written.is_err() {
        1
    } else {
        0
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(js("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
        assert_eq!(js_str(None), "null");
        assert_eq!(js_opt(Some(3)), "3");
    }

    #[test]
    fn advice_follows_the_environment() {
        let slurm = |name: &str| (name == "SLURM_STEP_NUM_TASKS").then(|| OsString::from("4"));
        let refused: Result<Launch, String> = Err("refused".into());
        let next = next_steps(&refused, &slurm, Api::Pmi1);
        assert!(next.contains("srun --mpi=pmi2"), "{next}");
        assert!(next.contains("PMI_SINGLETON=1"), "{next}");
        let none = |_: &str| None;
        let next = next_steps(&Ok(Launch::Singleton), &none, Api::Pmi2);
        assert!(!next.contains("srun"), "{next}");
    }

    #[test]
    fn a_report_is_one_json_object_with_the_fields_asked_for() {
        let r = Report {
            api: "PMI-1",
            rank: Some(1),
            size: Some(4),
            backend: Some("wire"),
            clique: Some(vec![0, 1]),
            verdict: "ok",
            ..Report::default()
        };
        let j = json(&r);
        for part in [
            "\"rank\":1",
            "\"size\":4",
            "\"backend\":\"wire\"",
            "\"clique\":[0,1]",
            "\"verdict\":\"ok\"",
            "\"errors\":[]",
        ] {
            assert!(j.contains(part), "{part} not in {j}");
        }
        assert!(!j.contains('\n'));
    }
}
