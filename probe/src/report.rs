//! What one process says: the report, as one line (folded into error and next lines on
//! a failure) or as one JSON object.

use std::fmt::Write as _;
use std::time::Duration;

use pmi_core::api::Maxes;
use pmi_core::error::{PmiError, PmiResult};
use pmi_core::trace;

use crate::advice::Fault;
use crate::options::Limit;

/// One timed round: one key put, committed, a barrier, the peers' keys read.
pub struct Round {
    pub put_us: f64,
    pub barrier_us: f64,
    pub get_us: f64,
    pub got: i32,
    pub expected: i32,
}

/// Everything one process says.
#[derive(Default)]
pub struct Report {
    pub api: &'static str,
    pub rank: Option<i32>,
    pub size: Option<i32>,
    pub host: String,
    pub backend: Option<&'static str>,
    /// The PMI version the server answered `init` with, where a wire says one (PMI-1: 1.1,
    /// or 1.2 where group barriers work; PMI-2: 2.0).
    pub pmi_version: Option<(i64, i64)>,
    pub server: String,
    pub limit: Limit,
    pub init_us: Option<f64>,
    pub kvsname: Option<String>,
    pub appnum: Option<i32>,
    pub universe: Option<i32>,
    pub mapping: Option<String>,
    pub clique: Option<Vec<i32>>,
    pub maxes: Option<Maxes>,
    /// The rounds done, in order (the first is `round` in the output).
    pub rounds: Vec<Round>,
    /// Each `--barriers` barrier's time, in microseconds.
    pub barriers: Vec<f64>,
    /// `--get`: each key and its value (`None`: not set), or why the library refused
    /// the key (its code: a key too long).
    pub keys: Vec<(String, Result<Option<String>, String>)>,
    /// `ok`, `singleton` or `fail`.
    pub verdict: &'static str,
    /// What failed, in the library's words where it said them.
    pub errors: Vec<String>,
    /// The kind of failure (or of a PMIx server named and not used).
    pub fault: Option<Fault>,
    /// What to try next, for `fault`.
    pub next: Option<String>,
    /// A failing call lasted at least the time limit.
    pub late: bool,
    /// A call failed without a line of the library's: the server answered it with an
    /// error code.
    pub quiet_failure: bool,
}

impl Report {
    /// Run one call that talks to the server, timed: its value, or `None` with the
    /// failure noted ([`Report::failed`]).
    pub fn attempt<T>(&mut self, what: &str, call: impl FnOnce() -> PmiResult<T>) -> Option<T> {
        let t = std::time::Instant::now();
        match call() {
            Ok(v) => Some(v),
            Err(e) => {
                self.failed(what, e, t.elapsed());
                None
            }
        }
    }

    /// A call that failed after `took`: the lines the library would have printed (they
    /// name the call), else the call and its code.
    pub fn failed(&mut self, what: &str, e: PmiError, took: Duration) {
        let said = trace::take_fatal();
        if said.is_empty() {
            self.errors.push(format!("{what} failed ({e:?})"));
            self.quiet_failure = true;
        } else {
            self.errors.extend(said);
        }
        let limit = self
            .limit
            .seconds
            .map(|s| Duration::from_secs(u64::from(s)));
        self.late |= limit.is_some_and(|limit| took >= limit);
    }

    /// Whether every round read every value it looked for.
    pub fn rounds_ok(&self) -> bool {
        !self.rounds.is_empty() && self.rounds.iter().all(|r| r.got == r.expected)
    }
}

/// The least, the middle and the greatest of some times.
struct Stats {
    min: f64,
    median: f64,
    max: f64,
}

impl Stats {
    fn of(times: impl Iterator<Item = f64>) -> Option<Stats> {
        let mut t: Vec<f64> = times.collect();
        if t.is_empty() {
            return None;
        }
        t.sort_by(f64::total_cmp);
        let n = t.len();
        let median = if n % 2 == 1 {
            t[n / 2]
        } else {
            (t[n / 2 - 1] + t[n / 2]) / 2.0
        };
        Some(Stats {
            min: t[0],
            median,
            max: t[n - 1],
        })
    }

    fn json(&self) -> String {
        format!(
            "{{\"min\":{:.1},\"median\":{:.1},\"max\":{:.1}}}",
            self.min, self.median, self.max
        )
    }

    /// In milliseconds, the median first: `0.31 ms (0.20 to 0.92)`.
    fn ms(&self) -> String {
        format!(
            "{:.2} ms ({:.2} to {:.2})",
            self.median / 1e3,
            self.min / 1e3,
            self.max / 1e3
        )
    }
}

/// A JSON string.
pub fn js(s: &str) -> String {
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

pub fn json(r: &Report) -> String {
    let maxes = r.maxes.map_or_else(
        || "null".into(),
        |m| {
            format!(
                "{{\"kvsname\":{},\"key\":{},\"value\":{}}}",
                m.kvsname, m.key, m.value
            )
        },
    );
    let round = r.rounds.first().map_or_else(
        || "null".into(),
        |x| {
            format!(
                "{{\"put_us\":{:.1},\"barrier_us\":{:.1},\"get_us\":{:.1},\"got\":{},\"expected\":{}}}",
                x.put_us, x.barrier_us, x.get_us, x.got, x.expected
            )
        },
    );
    let rounds = match (
        Stats::of(r.rounds.iter().map(|x| x.put_us)),
        Stats::of(r.rounds.iter().map(|x| x.barrier_us)),
        Stats::of(r.rounds.iter().map(|x| x.get_us)),
    ) {
        (Some(put), Some(barrier), Some(get)) => format!(
            "{{\"count\":{},\"got\":{},\"expected\":{},\"put_us\":{},\"barrier_us\":{},\
             \"get_us\":{}}}",
            r.rounds.len(),
            r.rounds.iter().map(|x| x.got).sum::<i32>(),
            r.rounds.iter().map(|x| x.expected).sum::<i32>(),
            put.json(),
            barrier.json(),
            get.json()
        ),
        _ => "null".into(),
    };
    let barriers = Stats::of(r.barriers.iter().copied()).map_or_else(
        || "null".into(),
        |s| format!("{{\"count\":{},\"us\":{}}}", r.barriers.len(), s.json()),
    );
    let keys: Vec<String> = r
        .keys
        .iter()
        .map(|(k, v)| {
            let value = v.as_ref().ok().and_then(Option::as_deref);
            format!("{}:{}", js(k), js_str(value))
        })
        .collect();
    let errors: Vec<String> = r.errors.iter().map(|e| js(e)).collect();
    format!(
        "{{\"rank\":{},\"size\":{},\"api\":{},\"backend\":{},\"server\":{},\"host\":{},\
         \"init_us\":{},\"kvsname\":{},\"appnum\":{},\"universe\":{},\"mapping\":{},\
         \"clique\":{},\"maxes\":{maxes},\"round\":{round},\"verdict\":{},\"errors\":[{}],\
         \"next\":{},\"timeout_s\":{},\"timeout_from\":{},\"fault\":{},\"rounds\":{rounds},\
         \"barriers\":{barriers},\"keys\":{{{}}},\"pmi_version\":{}}}",
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
        js_opt(r.limit.seconds),
        js(r.limit.from),
        js_str(r.fault.map(Fault::name)),
        keys.join(","),
        js_str(r.pmi_version.map(|(a, b)| format!("{a}.{b}")).as_deref()),
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

pub fn line(r: &Report) -> String {
    let mut out = format!("{}: {}", label(r), r.verdict);
    if let (Some(rank), Some(size)) = (r.rank, r.size) {
        let _ = write!(out, ": rank {rank} of {size} on {}", r.host);
    } else {
        let _ = write!(out, " on {}", r.host);
    }
    let _ = write!(
        out,
        "; {} via {} ({}",
        r.api,
        r.backend.unwrap_or("no backend"),
        r.server
    );
    if let Some((major, minor)) = r.pmi_version {
        let _ = write!(out, ", speaks PMI {major}.{minor}");
    }
    let _ = write!(out, "); limit {}", r.limit.shown());
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
    for (key, value) in &r.keys {
        let _ = match value {
            Ok(Some(v)) => write!(out, "; get {key}={v}"),
            Ok(None) => write!(out, "; get {key}: not set"),
            Err(code) => write!(out, "; get {key}: refused by the library ({code})"),
        };
    }
    if let Some(x) = r.rounds.first() {
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
    if let (true, Some(barrier)) = (
        r.rounds.len() > 1,
        Stats::of(r.rounds.iter().map(|x| x.barrier_us)),
    ) {
        let _ = write!(
            out,
            "; {} rounds: barrier {}, got {}/{}",
            r.rounds.len(),
            barrier.ms(),
            r.rounds.iter().map(|x| x.got).sum::<i32>(),
            r.rounds.iter().map(|x| x.expected).sum::<i32>()
        );
    }
    if let Some(s) = Stats::of(r.barriers.iter().copied()) {
        let _ = write!(out, "; {} barriers: {}", r.barriers.len(), s.ms());
    }
    for e in &r.errors {
        let _ = write!(out, "\n{}: error: {e}", label(r));
    }
    if let Some(next) = &r.next {
        let _ = write!(out, "\n{}: next: {next}", label(r));
    }
    out
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

    fn round(barrier_us: f64, got: i32) -> Round {
        Round {
            put_us: 10.0,
            barrier_us,
            get_us: 100.0,
            got,
            expected: 3,
        }
    }

    fn ok_report() -> Report {
        Report {
            api: "PMI-1",
            rank: Some(1),
            size: Some(4),
            backend: Some("wire"),
            clique: Some(vec![0, 1]),
            verdict: "ok",
            limit: Limit {
                seconds: Some(60),
                from: "default",
                refused: false,
            },
            ..Report::default()
        }
    }

    #[test]
    fn a_report_is_one_json_object_with_the_fields_asked_for() {
        let r = ok_report();
        let j = json(&r);
        for part in [
            "\"rank\":1",
            "\"size\":4",
            "\"backend\":\"wire\"",
            "\"clique\":[0,1]",
            "\"verdict\":\"ok\"",
            "\"errors\":[]",
            "\"round\":null",
            "\"timeout_s\":60",
            "\"timeout_from\":\"default\"",
            "\"fault\":null",
            "\"rounds\":null",
            "\"barriers\":null",
            "\"keys\":{}",
        ] {
            assert!(j.contains(part), "{part} not in {j}");
        }
        assert!(!j.contains('\n'));
        assert!(line(&r).contains("; PMI-1 via wire (); limit 60 s (default)"));
    }

    #[test]
    fn rounds_barriers_and_keys_are_summed_up() {
        let mut r = ok_report();
        r.rounds = vec![
            round(300.0, 3),
            round(100.0, 3),
            round(900.0, 2),
            round(200.0, 3),
        ];
        r.barriers = vec![50.0, 150.0, 100.0];
        r.keys = vec![
            (
                "PMI_process_mapping".into(),
                Ok(Some("(vector,(0,1,4))".into())),
            ),
            ("flux.taskmap".into(), Ok(None)),
            ("k".repeat(70), Err("InvalidKeyLength".into())),
        ];
        r.fault = Some(Fault::Protocol);
        let j = json(&r);
        for part in [
            // The first round, as before.
            "\"round\":{\"put_us\":10.0,\"barrier_us\":300.0,\"get_us\":100.0,\"got\":3,\"expected\":3}",
            "\"rounds\":{\"count\":4,\"got\":11,\"expected\":12,\"put_us\":{\"min\":10.0,\
             \"median\":10.0,\"max\":10.0},\"barrier_us\":{\"min\":100.0,\"median\":250.0,\
             \"max\":900.0},",
            "\"barriers\":{\"count\":3,\"us\":{\"min\":50.0,\"median\":100.0,\"max\":150.0}}",
            "\"keys\":{\"PMI_process_mapping\":\"(vector,(0,1,4))\",\"flux.taskmap\":null,\"kkk",
            "\"fault\":\"protocol\"",
        ] {
            assert!(j.contains(part), "{part} not in {j}");
        }
        let l = line(&r);
        for part in [
            "; get PMI_process_mapping=(vector,(0,1,4)); get flux.taskmap: not set; get \
             kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk: refused \
             by the library (InvalidKeyLength); round: put 10 us, barrier 0.3 ms, get 3/3 in \
             0.1 ms",
            "; 4 rounds: barrier 0.25 ms (0.10 to 0.90), got 11/12",
            "; 3 barriers: 0.10 ms (0.05 to 0.15)",
        ] {
            assert!(l.contains(part), "{part} not in {l}");
        }
        assert!(!r.rounds_ok());
        r.rounds.truncate(2);
        assert!(r.rounds_ok());
        assert!(!line(&r).contains("rounds:") || line(&r).contains("2 rounds:"));
        r.rounds.truncate(1);
        assert!(!line(&r).contains(" rounds:"), "{}", line(&r));
    }

    #[test]
    fn a_failing_call_that_lasted_the_limit_is_late() {
        let mut r = ok_report();
        r.limit.seconds = Some(2);
        r.failed("round", PmiError::Fail, Duration::from_millis(1999));
        assert!(!r.late && r.quiet_failure);
        r.failed("round", PmiError::Fail, Duration::from_secs(2));
        assert!(r.late);
        assert_eq!(r.errors, ["round failed (Fail)", "round failed (Fail)"]);
        let mut r = ok_report();
        r.limit.seconds = None;
        r.failed("round", PmiError::Fail, Duration::from_secs(3600));
        assert!(!r.late);
    }
}
