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
    fn pmi_debug() {
        assert!(!debug_requested(&lookup_from(&[])));
        assert!(!debug_requested(&lookup_from(&[("PMI_DEBUG", "0")])));
        assert!(!debug_requested(&lookup_from(&[("PMI_DEBUG", "")])));
        assert!(debug_requested(&lookup_from(&[("PMI_DEBUG", "1")])));
    }
}
