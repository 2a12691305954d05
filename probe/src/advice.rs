//! What kind of failure the probe met, from what it knows for certain, and what to try
//! next for each kind.
//!
//! The evidence, in this order: the launch decision's result (`launch::decide` refuses
//! an environment no launcher gives: a malformed variable, a `PMI_FD` that is not a
//! launcher's socket) and whether the library refused `PMI_TIMEOUT`; then the library's
//! own failure lines, the first that names a kind ([`SAID`]); then whether a failing
//! call lasted the whole time limit; then whether the server answered with an error code
//! or wrong values. Only the last kind, a server that answered but not as this API
//! expects, is told to try the other API.

use std::ffi::OsString;

use pmi_core::api::Api;
use pmi_core::launch::{self, Launch};

use crate::options::Limit;

/// The kinds of failure, each with its own advice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// A launcher started this process without a PMI server the library can use
    /// (neither `PMI_FD` nor `PMI_PORT`, and its variables say it started several).
    Unserved,
    /// The environment is not one a launcher gives: a variable malformed, `PMI_FD` not
    /// a launcher's socket, `PMI_TIMEOUT` refused.
    Environment,
    /// Nothing answers at `PMI_PORT` (refused, unresolvable, unreachable) or at the
    /// PMIx server named.
    NoServer,
    /// The server closed the connection.
    Closed,
    /// No answer within the time limit.
    Timeout,
    /// The server answered, but not as this API expects.
    Protocol,
    /// A PMIx server is named, and no PMIx client library could be loaded.
    PmixLibrary,
    /// None of these for certain.
    Other,
}

impl Fault {
    /// Its name in `--json`'s `fault`.
    pub fn name(self) -> &'static str {
        match self {
            Fault::Unserved => "unserved",
            Fault::Environment => "environment",
            Fault::NoServer => "no-server",
            Fault::Closed => "closed",
            Fault::Timeout => "timeout",
            Fault::Protocol => "protocol",
            Fault::PmixLibrary => "pmix-library",
            Fault::Other => "other",
        }
    }

    /// Whether no server could be used at all (then the launcher's own fix, the stale
    /// variables and `PMI_SINGLETON=1` are worth saying).
    fn unserved(self) -> bool {
        matches!(
            self,
            Fault::Unserved | Fault::Environment | Fault::NoServer | Fault::PmixLibrary
        )
    }
}

/// What the library's failure lines say, by the words each kind's lines hold (all of a
/// row's): `conn.rs`, the wire backends and the PMIx backend write them.
const SAID: &[(&[&str], Fault)] = &[
    (&["cannot connect to PMI_PORT"], Fault::NoServer),
    (&["PMIx_Init (", "failed: UNREACHABLE"], Fault::NoServer),
    (
        &["no PMIx client library could be loaded"],
        Fault::PmixLibrary,
    ),
    (&["(PMI_TIMEOUT)"], Fault::Timeout),
    (
        &["the process manager at ", " closed the connection"],
        Fault::Closed,
    ),
    (&["the process manager at ", ": Broken pipe"], Fault::Closed),
    (
        &["the process manager at ", ": Connection reset by peer"],
        Fault::Closed,
    ),
    (&["protocol error: "], Fault::Protocol),
    (&["refused by the server: "], Fault::Protocol),
    (&["the server does not speak "], Fault::Protocol),
    (&["unusable get_maxes reply"], Fault::Protocol),
    (&["in the PMI_PORT handshake"], Fault::Protocol),
    (&["PMI_PORT handshake gave "], Fault::Protocol),
    (&["PMIx gave no usable "], Fault::Protocol),
];

/// What the probe saw go wrong.
pub struct Evidence<'a> {
    pub launch: &'a Result<Launch, String>,
    pub limit: &'a Limit,
    /// Every error line of the report, the library's own among them, in order.
    pub errors: &'a [String],
    /// A failing call lasted at least the time limit.
    pub late: bool,
    /// A call failed without a line of the library's (the server answered with an
    /// error code), or a round read values that were missing or wrong.
    pub answered_wrong: bool,
}

/// The kind of failure `e` shows.
pub fn classify(e: &Evidence, lookup: &dyn Fn(&str) -> Option<OsString>) -> Fault {
    if e.limit.refused {
        return Fault::Environment;
    }
    if e.launch.is_err() {
        let given = |name: &str| lookup(name).is_some_and(|v| !v.is_empty());
        return if given("PMI_FD") || given("PMI_PORT") {
            Fault::Environment
        } else {
            Fault::Unserved
        };
    }
    let said = e.errors.iter().find_map(|line| {
        SAID.iter()
            .find(|(words, _)| words.iter().all(|w| line.contains(w)))
            .map(|&(_, fault)| fault)
    });
    match said {
        Some(fault) => fault,
        None if e.late => Fault::Timeout,
        None if e.answered_wrong => Fault::Protocol,
        None => Fault::Other,
    }
}

/// What to try next for `fault`, from what the environment says.
pub fn next_steps(
    fault: Fault,
    launch: &Result<Launch, String>,
    lookup: &dyn Fn(&str) -> Option<OsString>,
    api: Api,
    limit: &Limit,
) -> String {
    let mut steps: Vec<String> = Vec::new();
    let other_api = match api {
        Api::Pmi1 => "pmi-probe --pmi2",
        Api::Pmi2 => "pmi-probe without --pmi2",
    };
    let verbose = "run with --verbose (PMI_DEBUG=1) to see every line";
    match fault {
        // The launcher's own fix says it best (below).
        Fault::Unserved => {}
        Fault::Environment => steps.push(
            "the environment is not one a launcher gives: correct or unset the variable \
             the error names"
                .into(),
        ),
        Fault::NoServer => steps.push(match launch {
            Ok(Launch::Port(port)) => format!(
                "nothing answers at PMI_PORT {}: the launcher that set it has ended, or \
                 the address is an outer job's or mistyped; start the program under the \
                 launcher (mpiexec -pmi-port)",
                launch::address(&port.host, port.port)
            ),
            _ => "nothing answers at the PMIx server the PMIX_* variables name: its \
                  launcher has ended, or they are an outer job's (then unset them)"
                .into(),
        }),
        Fault::Closed => steps.push(
            "the process manager closed the connection: it ended the job or gave up on \
             this process; read the launcher's own output (Hydra ends the whole job when \
             a rank exits or closes its connection without PMI_Finalize)"
                .into(),
        ),
        Fault::Timeout => steps.push(format!(
            "no answer within the limit of {}: the process manager is stopped or \
             overloaded, or waits in a barrier for ranks that never came (read the \
             launcher's own output for ranks that did not start); a job slow to start \
             needs a longer limit: --timeout SECONDS (0: none)",
            limit.shown()
        )),
        Fault::Protocol => steps.push(format!(
            "the process manager answered, but not as the {} API expects: try \
             {other_api}, and {verbose}",
            api.name()
        )),
        Fault::PmixLibrary => steps.push(
            "a PMIx server is named, but no PMIx client library could be loaded: point \
             PMI_PMIX_LIBRARY at the server's own libpmix.so.2 (Open MPI: \
             <prefix>/lib/libpmix.so.2 or <prefix>/lib/openmpi/libpmix.so.2; Debian: \
             /usr/lib/<arch>-linux-gnu/pmix2/lib/libpmix.so.2), and unset PMIX_* \
             variables left from an outer job"
                .into(),
        ),
        Fault::Other => steps.push(format!("read the launcher's own output, and {verbose}")),
    }
    if !fault.unserved() {
        return steps.join("; ");
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
    if steps.is_empty() {
        steps.push(
            "a launcher started this process without a PMI server this library can use: \
             the error says what it needs"
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Limit;
    use pmi_core::launch::PortEnv;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    fn port(host: &str, port: u16) -> Result<Launch, String> {
        Ok(Launch::Port(PortEnv {
            host: host.into(),
            port,
            id: 0,
            spawned: false,
            hydra: false,
        }))
    }

    const DEFAULT: Limit = Limit {
        seconds: Some(60),
        from: "default",
        refused: false,
    };

    /// The kind, from the library's own lines as it writes them.
    fn kind(launch: &Result<Launch, String>, errors: &[&str], late: bool, wrong: bool) -> Fault {
        let errors: Vec<String> = errors.iter().map(|s| s.to_string()).collect();
        let e = Evidence {
            launch,
            limit: &DEFAULT,
            errors: &errors,
            late,
            answered_wrong: wrong,
        };
        classify(&e, &env(&[("PMI_PORT", "h:1")]))
    }

    #[test]
    fn each_kind_is_told_by_what_is_certain() {
        let refused: Result<Launch, String> =
            Err("PMI_FD=99 is not an open file descriptor".into());
        let wire = port("127.0.0.1", 1);
        let pmix_unreachable = "PMI_Init: PMIX_RANK=\"1\" names a PMIx server, but PMIx_Init \
                                (libpmix.so.2) failed: UNREACHABLE";
        for (launch, errors, late, wrong, want) in [
            (&refused, &[][..], false, false, Fault::Environment),
            (&wire, &["PMI_Init: cannot connect to PMI_PORT 127.0.0.1:1: Connection refused (os error 111)"][..], false, false, Fault::NoServer),
            (&wire, &["PMI_Init: cannot connect to PMI_PORT x.invalid:1: failed to lookup address information: Name or service not known"], false, false, Fault::NoServer),
            // A connect that the limit ended: nothing answered there, said first.
            (&wire, &["PMI_Init: cannot connect to PMI_PORT 10.0.0.1:7: no answer in 2 s (PMI_TIMEOUT)"], true, false, Fault::NoServer),
            (&wire, &[pmix_unreachable], false, false, Fault::NoServer),
            (&wire, &["the process manager at PMI_FD 5 (pid 4242, hydra_pmi_proxy) closed the connection"], false, false, Fault::Closed),
            (&wire, &["the process manager at PMI_PORT 10.0.0.1:7 closed the connection"], false, false, Fault::Closed),
            (&wire, &["cannot write to the process manager at PMI_FD 5 (pid 4242, no longer running): Broken pipe (os error 32)"], false, false, Fault::Closed),
            (&wire, &["cannot read from the process manager at PMI_FD 5: Connection reset by peer (os error 104)"], false, false, Fault::Closed),
            (&wire, &["no reply (cmd=initack) from the process manager at PMI_PORT 10.0.0.1:7 in 2 s (PMI_TIMEOUT)"], true, false, Fault::Timeout),
            (&wire, &["PMIx_Fence: no answer from the PMIx server at PMIX_SERVER_URI41=\"prterun-vc1-4242@0.0;tcp4://10.0.0.1:7\" in 2 s (PMI_TIMEOUT): its connection is shut"], true, false, Fault::Timeout),
            // The lines' first kind wins: a timeout, then the calls it broke.
            (&wire, &["no reply (cmd=barrier_out) from the process manager at PMI_FD 5 (pid 4242, slurmstepd) in 2 s (PMI_TIMEOUT)", "last barrier failed (Fail)"], false, false, Fault::Timeout),
            // A failing call that lasted the limit, without a line to say so.
            (&wire, &["round failed (Fail)"], true, false, Fault::Timeout),
            (&wire, &["protocol error: expected cmd=initack, got \"cmd=response_to_init\""], false, false, Fault::Protocol),
            (&wire, &["PMI2_Init: the server does not speak PMI-2: \"cmd=response_to_init pmi_version=1 rc=0\""], false, false, Fault::Protocol),
            (&wire, &["PMI_Init refused by the server: \"cmd=response_to_init rc=-1\""], false, false, Fault::Protocol),
            (&wire, &["PMI_Init: unusable get_maxes reply \"cmd=maxes rc=0\""], false, false, Fault::Protocol),
            (&wire, &["PMI_Init: unexpected line in the PMI_PORT handshake: \"x\""], false, false, Fault::Protocol),
            (&wire, &["kvsname failed (InvalidArg)"], false, true, Fault::Protocol),
            (&wire, &["round: read 1 of 3 peers' values"], false, true, Fault::Protocol),
            (&wire, &["PMI_Init: PMIX_RANK=\"1\" names a PMIx server, but no PMIx client library could be loaded: tried x"], false, false, Fault::PmixLibrary),
            (&wire, &["finalize failed (Fail)"], false, false, Fault::Other),
        ] {
            assert_eq!(kind(launch, errors, late, wrong), want, "{errors:?}");
        }
    }

    #[test]
    fn a_refused_environment_is_unserved_without_pmi_fd_or_pmi_port() {
        let refused: Result<Launch, String> = Err("refusing to run as rank 0 of 1".into());
        let e = Evidence {
            launch: &refused,
            limit: &DEFAULT,
            errors: &[],
            late: false,
            answered_wrong: false,
        };
        let slurm = env(&[("SLURM_STEP_NUM_TASKS", "2"), ("PMI_FD", "")]);
        assert_eq!(classify(&e, &slurm), Fault::Unserved);
        assert_eq!(classify(&e, &env(&[("PMI_FD", "99")])), Fault::Environment);
        // PMI_TIMEOUT refused: the library stops there, whatever else is set.
        let refused_limit = Limit {
            seconds: None,
            from: "PMI_TIMEOUT",
            refused: true,
        };
        let e = Evidence {
            limit: &refused_limit,
            launch: &Ok(Launch::Singleton),
            ..e
        };
        assert_eq!(classify(&e, &slurm), Fault::Environment);
    }

    #[test]
    fn only_a_server_that_answered_wrong_is_told_to_try_the_other_api() {
        let wire = port("127.0.0.1", 1);
        let none = env(&[]);
        for fault in [
            Fault::Unserved,
            Fault::Environment,
            Fault::NoServer,
            Fault::Closed,
            Fault::Timeout,
            Fault::PmixLibrary,
            Fault::Other,
        ] {
            let next = next_steps(fault, &wire, &none, Api::Pmi1, &DEFAULT);
            assert!(!next.contains("--pmi2"), "{fault:?}: {next}");
        }
        let next = next_steps(Fault::Protocol, &wire, &none, Api::Pmi1, &DEFAULT);
        assert!(
            next.starts_with(
                "the process manager answered, but not as the PMI-1 API expects: try \
                 pmi-probe --pmi2"
            ),
            "{next}"
        );
        let next = next_steps(Fault::Protocol, &wire, &none, Api::Pmi2, &DEFAULT);
        assert!(
            next.contains("PMI-2 API expects: try pmi-probe without --pmi2"),
            "{next}"
        );
    }

    #[test]
    fn each_kind_says_what_it_is() {
        let none = env(&[]);
        let refused: Result<Launch, String> = Err("x".into());
        let next = |fault, launch: &Result<Launch, String>| {
            next_steps(fault, launch, &none, Api::Pmi1, &DEFAULT)
        };
        let v6 = port("::1", 1);
        assert!(next(Fault::Environment, &refused)
            .starts_with("the environment is not one a launcher gives"));
        assert!(next(Fault::NoServer, &v6).starts_with("nothing answers at PMI_PORT [::1]:1: "));
        assert!(next(Fault::NoServer, &Ok(Launch::Singleton))
            .starts_with("nothing answers at the PMIx server"));
        assert!(next(Fault::Closed, &v6).starts_with("the process manager closed the connection"));
        assert!(
            next(Fault::Timeout, &v6).starts_with("no answer within the limit of 60 s (default): ")
        );
        assert!(next(Fault::PmixLibrary, &v6)
            .starts_with("a PMIx server is named, but no PMIx client library"));
        assert!(next(Fault::Other, &v6).starts_with("read the launcher's own output"));
        // A server was reached: running each process on its own is no fix.
        for fault in [Fault::Closed, Fault::Timeout, Fault::Protocol, Fault::Other] {
            assert!(!next(fault, &v6).contains("PMI_SINGLETON"), "{fault:?}");
        }
        for fault in [
            Fault::Unserved,
            Fault::Environment,
            Fault::NoServer,
            Fault::PmixLibrary,
        ] {
            assert!(
                next(fault, &refused).ends_with("set PMI_SINGLETON=1"),
                "{fault:?}"
            );
        }
    }

    /// The line `scripts/refusals.sh` shows for `srun --mpi=none -n 2` (docs/COMPAT.md
    /// holds it): unchanged.
    #[test]
    fn srun_without_a_pmi_server_gets_slurms_fix_first() {
        let srun = env(&[
            ("SLURM_STEP_ID", "0"),
            ("SLURM_STEP_NUM_TASKS", "2"),
            ("SLURM_PROCID", "1"),
        ]);
        let refused: Result<Launch, String> = Err("refusing to run as rank 0 of 1".into());
        assert_eq!(
            next_steps(Fault::Unserved, &refused, &srun, Api::Pmi1, &DEFAULT),
            "under Slurm, give the job a PMI server: srun --mpi=pmi2 (the PMI-1 and PMI-2 \
             wire) or srun --mpi=pmix (PMIx); srun --mpi=list shows what this Slurm has; to \
             run each process on its own on purpose, set PMI_SINGLETON=1"
        );
        let stale = env(&[("PMI_SIZE", "4"), ("PMI_RANK", "2")]);
        let next = next_steps(Fault::Unserved, &refused, &stale, Api::Pmi2, &DEFAULT);
        assert!(
            next.starts_with(
                "a launcher started this process without a PMI server this library can \
                 use: the error says what it needs; if the launcher did not set them, unset \
                 the PMI_*"
            ),
            "{next}"
        );
    }
}
