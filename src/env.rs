//! What the process manager tells a process through its environment, read through an
//! injectable lookup so tests never touch the real environment.
#![forbid(unsafe_code)]

use std::ffi::OsString;

/// The job as the environment describes it (PMI_FD mode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobEnv {
    pub fd: i32,
    pub rank: i32,
    pub size: i32,
    pub spawned: bool,
}

/// How this process reaches its process manager.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// `PMI_FD`: a pre-connected socket (wins when `PMI_PORT` is set too).
    Fd(JobEnv),
    /// `PMI_PORT=host:port` and `PMI_ID`: connect by TCP; rank and size come from the
    /// server's handshake.
    Port(PortEnv),
    /// Neither: rank 0 of 1 with a process-local KVS.
    Singleton,
}

/// The `PMI_PORT` mode's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortEnv {
    pub host: String,
    pub port: u16,
    pub id: i32,
    pub spawned: bool,
}

/// Decide the launch mode. Singleton mode is refused when the environment says the job
/// is larger (`PMI_SIZE` other than 1 or `PMI_RANK` other than 0): falling back silently
/// would turn an N-rank job into N copies of rank 0 (flux-core#5714).
pub fn launch(lookup: &dyn Fn(&str) -> Option<OsString>) -> Result<Launch, String> {
    if lookup("PMI_FD").is_some() {
        return job_env(lookup).map(Launch::Fd);
    }
    if let Some(port) = lookup("PMI_PORT") {
        let (host, port) = host_port(&port)?;
        let id = required(lookup, "PMI_ID")?;
        return Ok(Launch::Port(PortEnv {
            host,
            port,
            id,
            spawned: spawned(lookup)?,
        }));
    }
    for (name, alone) in [("PMI_SIZE", "1"), ("PMI_RANK", "0")] {
        if let Some(value) = lookup(name).filter(|v| v != alone) {
            return Err(format!(
                "neither PMI_FD nor PMI_PORT is set, but {name}=\"{}\" says this is not a \
                 singleton: refusing to run as rank 0 of 1",
                value.to_string_lossy()
            ));
        }
    }
    Ok(Launch::Singleton)
}

/// Split `PMI_PORT` into host and port: `name:port`, `1.2.3.4:port`, `[::1]:port`.
fn host_port(value: &OsString) -> Result<(String, u16), String> {
    let bad = || format!("PMI_PORT=\"{}\" is not host:port", value.to_string_lossy());
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

/// Whether `PMI_DEBUG` asks for tracing (set, and neither empty nor `0`).
pub fn debug_requested(lookup: &dyn Fn(&str) -> Option<OsString>) -> bool {
    match lookup("PMI_DEBUG") {
        None => false,
        Some(v) => !(v.is_empty() || v == "0"),
    }
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
    let spawned = match lookup("PMI_SPAWNED") {
        None => false,
        Some(v) => number(&v).ok_or_else(|| bad("PMI_SPAWNED", &v))? != 0,
    };
    Ok(JobEnv {
        fd,
        rank,
        size,
        spawned,
    })
}

/// A non-negative decimal that fits in an `int`, from a required variable.
fn required(lookup: &dyn Fn(&str) -> Option<OsString>, name: &str) -> Result<i32, String> {
    let value = lookup(name).ok_or_else(|| format!("{name} is not set"))?;
    number(&value).ok_or_else(|| bad(name, &value))
}

fn bad(name: &str, value: &OsString) -> String {
    format!(
        "{name}=\"{}\" is not a non-negative integer",
        value.to_string_lossy()
    )
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
    fn hydra_environment_is_read() {
        let env = lookup_from(&[("PMI_FD", "5"), ("PMI_RANK", "2"), ("PMI_SIZE", "4")]);
        assert_eq!(
            job_env(&env),
            Ok(JobEnv {
                fd: 5,
                rank: 2,
                size: 4,
                spawned: false
            })
        );
        let env = lookup_from(&[
            ("PMI_FD", "9"),
            ("PMI_RANK", "0"),
            ("PMI_SIZE", "1"),
            ("PMI_SPAWNED", "1"),
        ]);
        assert!(job_env(&env).unwrap().spawned);
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

    #[test]
    fn pmi_debug() {
        assert!(!debug_requested(&lookup_from(&[])));
        assert!(!debug_requested(&lookup_from(&[("PMI_DEBUG", "0")])));
        assert!(!debug_requested(&lookup_from(&[("PMI_DEBUG", "")])));
        assert!(debug_requested(&lookup_from(&[("PMI_DEBUG", "1")])));
    }
}
