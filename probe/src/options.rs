//! The command line, and the time limit it and the environment give each reply.

use std::ffi::OsString;

use pmi_core::api::Api;
use pmi_core::launch;

/// The limit on each reply when neither `--timeout` nor `PMI_TIMEOUT` gives one: the
/// library's own default is none (a barrier waits for the slowest rank), and a probe run
/// because `MPI_Init` hangs must not hang too. A minute is an answer to someone waiting,
/// and leaves a job whose ranks start slowly (a barrier waits for the last one) room to
/// pass; `docs/pmi-probe.1` says so.
pub const DEFAULT_TIMEOUT: u32 = 60;

pub const USAGE: &str = "\
usage: pmi-probe [--pmi2] [--json] [--timeout SECONDS] [--verbose] [--rounds N]
                 [--barriers N] [--peers RANKS] [--get KEY]...
  Run under a launcher (mpiexec -n 4 pmi-probe, srun -n 4 pmi-probe, prterun -n 4
  pmi-probe): each process prints what the launcher gave it and a verdict.
  --pmi2             use the PMI-2 API (as libpmi2.so.0) instead of PMI-1 (libpmi.so.0)
  --json             one JSON object per process instead of one line
  --timeout SECONDS  the limit on each reply, in whole seconds (0: none); default
                     PMI_TIMEOUT, else 60
  --verbose, -v      trace every call and wire line on stderr (as PMI_DEBUG=1)
  --rounds N         N timed put/barrier/get rounds (default 1)
  --barriers N       then N timed barriers (default 0)
  --peers RANKS      the ranks whose values each round reads: a list such as 0,2-5, or
                     all (default: the 64 ranks after this one)
  --get KEY          read KEY, a value the process manager set (such as
                     PMI_process_mapping); may be repeated
";

/// What the command line asks for.
pub enum Command {
    Run(Options),
    Help,
    Version,
}

pub struct Options {
    pub api: Api,
    pub json: bool,
    /// `--timeout`: whole seconds, 0 for none.
    pub timeout: Option<u32>,
    pub verbose: bool,
    pub rounds: u32,
    pub barriers: u32,
    pub peers: Peers,
    pub keys: Vec<String>,
}

/// Whose values each round reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peers {
    /// The ranks after this one, up to this many.
    Next(i32),
    All,
    /// Inclusive ranges of ranks, as given.
    Ranges(Vec<(i32, i32)>),
}

/// How many peers each rank reads by default: the next ones after it, so that a large
/// job costs each rank a bounded number of gets.
pub const PEERS_READ: i32 = 64;

impl Peers {
    /// The ranks to read in a job of `size` as rank `rank`, and the first rank named
    /// that is not in the job (`--peers` that names one).
    pub fn of(&self, rank: i32, size: i32) -> (Vec<i32>, Option<i32>) {
        match self {
            Peers::Next(n) => (
                (1..=(size - 1).min(*n))
                    .map(|i| (rank + i) % size)
                    .collect(),
                None,
            ),
            Peers::All => ((0..size).collect(), None),
            Peers::Ranges(ranges) => {
                let mut ranks: Vec<i32> = ranges
                    .iter()
                    .flat_map(|&(lo, hi)| lo.min(size)..=hi.min(size - 1))
                    .collect();
                ranks.sort_unstable();
                ranks.dedup();
                let outside = ranges.iter().map(|&(_, hi)| hi).find(|&hi| hi >= size);
                (ranks, outside)
            }
        }
    }
}

/// The options that take no value.
const SWITCHES: &[&str] = &[
    "--pmi2",
    "--json",
    "--verbose",
    "-v",
    "--help",
    "-h",
    "--version",
];

/// Parse the arguments after the program's name.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, String> {
    let mut opts = Options {
        api: Api::Pmi1,
        json: false,
        timeout: None,
        verbose: false,
        rounds: 1,
        barriers: 0,
        peers: Peers::Next(PEERS_READ),
        keys: Vec::new(),
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg
            .into_string()
            .map_err(|a| format!("unknown argument {:?}", a.to_string_lossy()))?;
        // `--name=value` or `--name value`.
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name.to_string(), Some(value)),
            _ => (arg.clone(), None),
        };
        let mut value = |what: &str| -> Result<String, String> {
            match inline {
                Some(v) => Ok(v.to_string()),
                None => args
                    .next()
                    .and_then(|v| v.into_string().ok())
                    .ok_or_else(|| format!("{name} takes {what}")),
            }
        };
        // (A switch takes no value: `--pmi2=1` is no argument of ours.)
        if inline.is_some() && SWITCHES.contains(&name.as_str()) {
            return Err(format!("unknown argument {arg:?}"));
        }
        match name.as_str() {
            "--pmi2" => opts.api = Api::Pmi2,
            "--json" => opts.json = true,
            "--verbose" | "-v" => opts.verbose = true,
            "--timeout" => {
                let v = value("whole seconds")?;
                opts.timeout =
                    Some(count(&v).filter(|&s| s <= i32::MAX as u32).ok_or_else(|| {
                        format!(
                            "--timeout takes whole seconds (such as 30; 0: no limit), not \
                             {v:?}"
                        )
                    })?);
            }
            "--rounds" => {
                let v = value("a number")?;
                opts.rounds = count(&v)
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| format!("--rounds takes a number of at least 1, not {v:?}"))?;
            }
            "--barriers" => {
                let v = value("a number")?;
                opts.barriers =
                    count(&v).ok_or_else(|| format!("--barriers takes a number, not {v:?}"))?;
            }
            "--peers" => opts.peers = ranks(&value("ranks")?)?,
            "--get" => {
                let key = value("a key")?;
                if key.is_empty() {
                    return Err("--get takes a key, not an empty one".into());
                }
                opts.keys.push(key);
            }
            "--help" | "-h" => return Ok(Command::Help),
            "--version" => return Ok(Command::Version),
            _ => return Err(format!("unknown argument {arg:?}")),
        }
    }
    Ok(Command::Run(opts))
}

/// A whole decimal number, digits only.
fn count(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// `all`, or ranks and ranges separated by commas (`0,2-5`; in brackets too, as Flux
/// writes an idset: `[0,2-5]`).
fn ranks(text: &str) -> Result<Peers, String> {
    let bad = || format!("--peers takes ranks such as 0,2-5, or all, not {text:?}");
    if text == "all" {
        return Ok(Peers::All);
    }
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(text);
    let rank = |t: &str| count(t).filter(|&n| n <= i32::MAX as u32).map(|n| n as i32);
    inner
        .split(',')
        .map(|item| match item.split_once('-') {
            Some((lo, hi)) => match (rank(lo), rank(hi)) {
                (Some(lo), Some(hi)) if lo <= hi => Some((lo, hi)),
                _ => None,
            },
            None => rank(item).map(|r| (r, r)),
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(bad)
        .map(Peers::Ranges)
}

/// The limit on each reply, and where it comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limit {
    /// Whole seconds; `None`: no limit.
    pub seconds: Option<u32>,
    /// `--timeout`, `PMI_TIMEOUT` or `default`.
    pub from: &'static str,
    /// `PMI_TIMEOUT` was set to something the library refuses (then `seconds` is
    /// `None`, and the library's refusal says why).
    pub refused: bool,
}

impl Limit {
    /// From `--timeout`, else `PMI_TIMEOUT` (`env`), else [`DEFAULT_TIMEOUT`]. An empty
    /// `PMI_TIMEOUT` counts as unset.
    pub fn new(option: Option<u32>, env: Option<OsString>) -> Limit {
        if let Some(seconds) = option {
            return Limit {
                seconds: (seconds > 0).then_some(seconds),
                from: "--timeout",
                refused: false,
            };
        }
        match env.filter(|v| !v.is_empty()) {
            Some(value) => {
                let read =
                    launch::timeout(&|name: &str| (name == "PMI_TIMEOUT").then(|| value.clone()));
                Limit {
                    seconds: read.clone().ok().flatten(),
                    from: "PMI_TIMEOUT",
                    refused: read.is_err(),
                }
            }
            None => Limit {
                seconds: Some(DEFAULT_TIMEOUT),
                from: "default",
                refused: false,
            },
        }
    }

    /// What `PMI_TIMEOUT` must be set to before the library initializes, for this limit
    /// to be the library's (`None`: it is already).
    pub fn to_set(&self) -> Option<String> {
        (self.from != "PMI_TIMEOUT").then(|| self.seconds.unwrap_or(0).to_string())
    }

    /// `60 s (default)`, `none (--timeout)`, `refused (PMI_TIMEOUT)`.
    pub fn shown(&self) -> String {
        match (self.refused, self.seconds) {
            (true, _) => format!("refused ({})", self.from),
            (false, Some(s)) => format!("{s} s ({})", self.from),
            (false, None) => format!("none ({})", self.from),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Options, String> {
        match parse(args.iter().map(OsString::from))? {
            Command::Run(opts) => Ok(opts),
            _ => Err("not a run".into()),
        }
    }

    #[test]
    fn options_are_read_in_both_forms() {
        let o = run(&[
            "--pmi2",
            "--timeout",
            "5",
            "--rounds=3",
            "--barriers",
            "10",
            "--peers=0,2-3",
            "--get",
            "PMI_process_mapping",
            "--get=flux.taskmap",
            "-v",
            "--json",
        ])
        .unwrap();
        assert_eq!(o.api, Api::Pmi2);
        assert_eq!(o.timeout, Some(5));
        assert_eq!((o.rounds, o.barriers), (3, 10));
        assert_eq!(o.peers, Peers::Ranges(vec![(0, 0), (2, 3)]));
        assert_eq!(o.keys, ["PMI_process_mapping", "flux.taskmap"]);
        assert!(o.verbose && o.json);
        let o = run(&[]).unwrap();
        assert_eq!(
            (o.api, o.timeout, o.rounds, o.barriers),
            (Api::Pmi1, None, 1, 0)
        );
        assert_eq!(o.peers, Peers::Next(PEERS_READ));
        assert_eq!(run(&["--peers", "all"]).unwrap().peers, Peers::All);
        assert_eq!(
            run(&["--peers", "[1-2,7]"]).unwrap().peers,
            Peers::Ranges(vec![(1, 2), (7, 7)])
        );
        assert!(matches!(parse([OsString::from("-h")]), Ok(Command::Help)));
    }

    #[test]
    fn a_bad_value_is_named() {
        for (args, said) in [
            (
                &["--timeout", "0.5"][..],
                "--timeout takes whole seconds (such as 30; 0: no limit), not \"0.5\"",
            ),
            (&["--timeout=30s"], "not \"30s\""),
            (&["--timeout", "-1"], "not \"-1\""),
            (&["--timeout", "99999999999"], "not \"99999999999\""),
            (&["--timeout"], "--timeout takes whole seconds"),
            (
                &["--rounds", "0"],
                "--rounds takes a number of at least 1, not \"0\"",
            ),
            (&["--barriers", "x"], "--barriers takes a number, not \"x\""),
            (
                &["--peers", "3-1"],
                "--peers takes ranks such as 0,2-5, or all, not \"3-1\"",
            ),
            (&["--peers", "1,,2"], "not \"1,,2\""),
            (&["--get="], "--get takes a key, not an empty one"),
            (&["--bogus"], "unknown argument \"--bogus\""),
            (&["--pmi2=1"], "unknown argument \"--pmi2=1\""),
        ] {
            let err = run(args).err().unwrap_or_default();
            assert!(err.contains(said), "{args:?}: {err}");
        }
    }

    #[test]
    fn peers_are_the_ranks_asked_for_within_the_job() {
        assert_eq!(Peers::Next(64).of(2, 4), (vec![3, 0, 1], None));
        assert_eq!(Peers::Next(2).of(3, 8), (vec![4, 5], None));
        assert_eq!(Peers::Next(64).of(0, 1), (vec![], None));
        assert_eq!(Peers::All.of(1, 3), (vec![0, 1, 2], None));
        let asked = Peers::Ranges(vec![(3, 3), (0, 1), (1, 9)]);
        assert_eq!(asked.of(0, 4), (vec![0, 1, 2, 3], Some(9)));
        assert_eq!(Peers::Ranges(vec![(7, 7)]).of(0, 4), (vec![], Some(7)));
    }

    #[test]
    fn the_limit_comes_from_the_option_then_the_environment_then_the_default() {
        let env = |v: &str| Some(OsString::from(v));
        let l = Limit::new(None, None);
        assert_eq!(
            (l.seconds, l.from, l.to_set()),
            (Some(60), "default", Some("60".into()))
        );
        assert_eq!(l.shown(), "60 s (default)");
        // An empty PMI_TIMEOUT counts as unset (a wrapper that cleared it).
        assert_eq!(Limit::new(None, env("")).from, "default");
        let l = Limit::new(None, env("7"));
        assert_eq!(
            (l.seconds, l.from, l.to_set()),
            (Some(7), "PMI_TIMEOUT", None)
        );
        let l = Limit::new(None, env("0"));
        assert_eq!(l.shown(), "none (PMI_TIMEOUT)");
        let l = Limit::new(None, env("0.5"));
        assert!(l.refused && l.to_set().is_none(), "{l:?}");
        assert_eq!(l.shown(), "refused (PMI_TIMEOUT)");
        let l = Limit::new(Some(2), env("600"));
        assert_eq!(
            (l.seconds, l.from, l.to_set()),
            (Some(2), "--timeout", Some("2".into()))
        );
        let l = Limit::new(Some(0), None);
        assert_eq!(
            (l.shown(), l.to_set()),
            ("none (--timeout)".into(), Some("0".into()))
        );
    }
}
