//! `pmi-probe`: what a launcher gives a process, one line per rank (or one JSON object
//! with `--json`). It starts the PMI client through the same core as `libpmi.so.0`
//! (`--pmi2`: as `libpmi2.so.0`), so it chooses the backend as they do, and reports
//! which backend and server it found, the time limit on each reply, the job's facts, the
//! node-local clique, the maxima, the values asked for (`--get`), timed put/barrier/get
//! rounds (`--rounds`, `--peers`) and barriers (`--barriers`), and a verdict. A failure
//! says what kind it is and what to try next (`advice`). Exit status: 0 when the
//! verdict is `ok` or `singleton`, 1 on `fail`, 2 on a bad command line.
//! `docs/pmi-probe.1` is its manual.
#![forbid(unsafe_code)]

mod advice;
mod options;
mod report;

use std::ffi::OsString;
use std::io::Write as _;
use std::time::Instant;

use pmi_core::api::Api;
use pmi_core::client::Client;
use pmi_core::error::{PmiError, PmiResult};
use pmi_core::launch::{self, Launch};
use pmi_core::{lifecycle, trace};

use advice::{classify, next_steps, Evidence, Fault};
use options::{Command, Limit, Options, USAGE};
use report::{Report, Round};

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
        Ok(Launch::Port(port)) => {
            format!("PMI_PORT {}{by}", launch::address(&port.host, port.port))
        }
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

/// The job's facts, the clique and the maxima (each failure is noted, the rest go on).
fn facts(c: &mut Client, api: Api, report: &mut Report) {
    report.maxes = Some(c.maxes());
    report.kvsname = report.attempt("kvsname", || c.kvsname().map(text));
    report.appnum = report.attempt("appnum", || c.appnum());
    report.universe = report.attempt("universe size", || c.universe_size());
    let mapping = report.attempt("PMI_process_mapping", || match api {
        Api::Pmi1 => {
            let kvs = c.kvsname()?.to_vec();
            match c.get(&kvs, b"PMI_process_mapping") {
                Ok(v) => Ok(Some(v.to_vec())),
                Err(PmiError::InvalidKey) => Ok(None),
                Err(e) => Err(e),
            }
        }
        Api::Pmi2 => c.job_attr(b"PMI_process_mapping"),
    });
    report.mapping = mapping.flatten().map(|m| text(&m));
    report.clique = report.attempt("clique", || {
        let mut ranks = vec![-1; c.clique_size()?];
        let n = c.clique_into(&mut ranks)?;
        ranks.truncate(n);
        Ok(ranks)
    });
}

/// `--get`: each key, as the server set it: under PMI-1 a key of the job's key-value
/// space, under PMI-2 a job attribute (`PMI2_Info_GetJobAttr`). A key not set, or one
/// the library refuses (too long), is reported as such: it says nothing of the server.
fn read_keys(c: &mut Client, api: Api, keys: &[String], report: &mut Report) {
    for key in keys {
        let t = Instant::now();
        let value =
            match api {
                Api::Pmi1 => c.kvsname().map(<[u8]>::to_vec).and_then(|kvs| {
                    match c.get(&kvs, key.as_bytes()) {
                        Ok(v) => Ok(Some(text(v))),
                        Err(PmiError::InvalidKey) => Ok(None),
                        Err(e) => Err(e),
                    }
                }),
                Api::Pmi2 => c.job_attr(key.as_bytes()).map(|v| v.map(|v| text(&v))),
            };
        match value {
            Ok(v) => report.keys.push((key.clone(), Ok(v))),
            // (The server's failures are PMI_FAIL, with the library's line.)
            Err(PmiError::Fail) => {
                report.failed(&format!("get {key}"), PmiError::Fail, t.elapsed())
            }
            Err(e) => report.keys.push((key.clone(), Err(format!("{e:?}")))),
        }
    }
}

/// Round `n`'s name for rank `rank`'s key and value: the rank, and from the second round
/// on its number (`3`, `3.2`).
fn tag(rank: i32, n: u32) -> String {
    if n == 1 {
        rank.to_string()
    } else {
        format!("{rank}.{n}")
    }
}

/// The value rank `rank` puts in round `n`.
fn round_value(rank: i32, n: u32, host: &str) -> String {
    format!("pmi-probe:{}@{host}", tag(rank, n))
}

/// Timed round `n`: put, commit and barrier, then the values of `peers`.
fn round(
    c: &mut Client,
    api: Api,
    rank: i32,
    n: u32,
    peers: &[i32],
    host: &str,
) -> PmiResult<Round> {
    let key = |r: i32| format!("pmi-probe-{}", tag(r, n));
    let kvs = c.kvsname()?.to_vec();
    let t = Instant::now();
    let mine = round_value(rank, n, host);
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
    let mut got = 0;
    for &peer in peers {
        let value = match api {
            Api::Pmi1 => c.get(&kvs, key(peer).as_bytes()),
            Api::Pmi2 => c.get_own(key(peer).as_bytes(), Some(peer)),
        };
        // The peer's value names the peer and the round (its host is its own to say).
        let named = format!("pmi-probe:{}@", tag(peer, n));
        if value.is_ok_and(|v| v.starts_with(named.as_bytes())) {
            got += 1;
        }
    }
    Ok(Round {
        put_us,
        barrier_us,
        get_us: micros(t),
        got,
        expected: peers.len() as i32,
    })
}

/// A barrier of the API's: PMI-1's, or PMI-2's fence.
fn barrier(c: &mut Client, api: Api) -> PmiResult<()> {
    match api {
        Api::Pmi1 => c.barrier(),
        Api::Pmi2 => c.fence(),
    }
}

/// What the process manager gives, each step noted in the report.
fn probe(opts: &Options, limit: Limit) -> Report {
    let lookup = |name: &str| std::env::var_os(name);
    let mut report = Report {
        api: opts.api.name(),
        host: host_name(),
        limit,
        verdict: "fail",
        ..Report::default()
    };
    // The launch PMI_Init takes (an outer job's PMI_FD set aside, as it does); a PMI_FD
    // that cannot be the launcher's is refused, as PMI_Init refuses it.
    let decision = launch::decide(&lookup);
    let launch = match decision.fd_fault {
        Some(why) => Err(why),
        None => decision.launch,
    };
    let call = match opts.api {
        Api::Pmi1 => "PMI_Init",
        Api::Pmi2 => "PMI2_Init",
    };
    let t = Instant::now();
    let init = lifecycle::init(opts.api, call);
    report.server = server(&launch, &lookup);
    let id = match init {
        Ok(id) => id,
        Err(e) => {
            report.failed(call, e, t.elapsed());
            return conclude(report, opts, &launch, &lookup);
        }
    };
    report.init_us = Some(micros(t));
    report.rank = Some(id.rank);
    report.size = Some(id.size);
    let host = report.host.clone();
    let api = opts.api;
    let (peers, outside) = opts.peers.of(id.rank, id.size);
    if let (Some(r), 0) = (outside, id.rank) {
        eprintln!(
            "pmi-probe: --peers names rank {r}, outside this job of {}: left out",
            id.size
        );
    }
    let ran = lifecycle::with_client(|c| {
        report.backend = Some(c.backend_name());
        report.pmi_version = c.pmi_version();
        facts(c, api, &mut report);
        read_keys(c, api, &opts.keys, &mut report);
        for n in 1..=opts.rounds {
            match report.attempt("round", || round(c, api, id.rank, n, &peers, &host)) {
                Some(r) => report.rounds.push(r),
                None => break,
            }
        }
        for _ in 0..opts.barriers {
            let t = Instant::now();
            match report.attempt("barrier", || barrier(c, api)) {
                Some(()) => report.barriers.push(micros(t)),
                None => break,
            }
        }
        // Nobody leaves while another may still read its value.
        report.attempt("last barrier", || barrier(c, api));
        Ok(())
    });
    if let Err(e) = ran {
        report.failed("client", e, std::time::Duration::ZERO);
    }
    if let Err(e) = lifecycle::finalize() {
        report.failed("finalize", e, std::time::Duration::ZERO);
    }
    conclude(report, opts, &launch, &lookup)
}

/// The verdict, and on a failure its kind and what to try next.
fn conclude(
    mut report: Report,
    opts: &Options,
    launch: &Result<Launch, String>,
    lookup: &dyn Fn(&str) -> Option<OsString>,
) -> Report {
    let rounds_ok = report.rounds_ok() && report.rounds.len() == opts.rounds as usize;
    report.verdict = match (report.errors.is_empty() && rounds_ok, report.backend) {
        (true, Some("singleton")) => "singleton",
        (true, _) => "ok",
        (false, _) => "fail",
    };
    let short = report.rounds.iter().find(|r| r.got != r.expected);
    if report.verdict == "fail" && report.errors.is_empty() {
        if let Some(r) = short {
            report.errors.push(format!(
                "round: read {} of {} peers' values",
                r.got, r.expected
            ));
        }
    }
    let answered_wrong = report.quiet_failure || short.is_some();
    report.fault = match report.verdict {
        "fail" => Some(classify(
            &Evidence {
                launch,
                limit: &report.limit,
                errors: &report.errors,
                late: report.late,
                answered_wrong,
            },
            lookup,
        )),
        // A PMIx server was named, but no client library loaded: a one-process job ran
        // on its own (the library's warning line said so on stderr). Say how to use it.
        "singleton" if matches!(launch, Ok(Launch::Pmix(_))) => Some(Fault::PmixLibrary),
        _ => None,
    };
    report.next = report
        .fault
        .map(|fault| next_steps(fault, launch, lookup, opts.api, &report.limit));
    report
}

fn main() {
    let opts = match options::parse(std::env::args_os().skip(1)) {
        Ok(Command::Run(opts)) => opts,
        Ok(Command::Help) => {
            print!("{USAGE}");
            std::process::exit(0);
        }
        Ok(Command::Version) => {
            println!("pmi-probe {}", env!("CARGO_PKG_VERSION"));
            std::process::exit(0);
        }
        Err(why) => {
            eprint!("pmi-probe: {why}\n{USAGE}");
            std::process::exit(2);
        }
    };
    // The library reads its limit and its trace switch from PMI_TIMEOUT and PMI_DEBUG
    // when it initializes: the probe gives it its own through them, set here while this
    // is the process's only thread (nothing has started another yet), so that the
    // library runs the very path a program run with those variables runs, and the core
    // needs no second way in.
    let limit = Limit::new(opts.timeout, std::env::var_os("PMI_TIMEOUT"));
    if let Some(seconds) = limit.to_set() {
        std::env::set_var("PMI_TIMEOUT", seconds);
    }
    if opts.verbose {
        std::env::set_var("PMI_DEBUG", "1");
    }
    trace::keep_fatal();
    let report = probe(&opts, limit);
    let mut out = if opts.json {
        report::json(&report)
    } else {
        report::line(&report)
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
    fn each_round_has_keys_and_values_of_its_own() {
        assert_eq!(round_value(3, 1, "vm"), "pmi-probe:3@vm");
        assert_eq!(round_value(3, 2, "vm"), "pmi-probe:3.2@vm");
        // Rank 1's second round is not rank 12's first, nor rank 1's first.
        assert_ne!(tag(1, 2), tag(12, 1));
        assert!(!round_value(1, 2, "h").starts_with("pmi-probe:1@"));
    }

    #[test]
    fn the_server_line_shows_an_ipv6_port_in_brackets() {
        let none = |_: &str| None;
        let port = Ok(Launch::Port(launch::PortEnv {
            host: "::1".into(),
            port: 1,
            id: 0,
            spawned: false,
            hydra: false,
        }));
        assert_eq!(server(&port, &none), "PMI_PORT [::1]:1");
    }
}
