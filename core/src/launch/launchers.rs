//! What each launcher sets for the processes it starts, in one table ([`LAUNCHERS`]),
//! and what the library concludes from it: whether another launch than `PMI_FD` is
//! named, and whether a process without a PMI server may run as a singleton.

use std::ffi::OsString;

use super::shown;

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

/// The first PMIx server variable set, and its value. An empty one says nothing, as a
/// launcher's (a wrapper clearing them).
pub(super) fn pmix_marker(
    lookup: &dyn Fn(&str) -> Option<OsString>,
) -> Option<(&'static str, OsString)> {
    PMIX_MARKERS.iter().find_map(|&name| {
        lookup(name)
            .filter(|value| !value.is_empty())
            .map(|value| (name, value))
    })
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

/// A launcher, and what its variables say. Each row serves three readers: the library
/// (which refuses to run as a singleton when a launcher says it started more than one
/// process: [`singleton_allowed`]), `pmi-probe` (which names the launcher and says what
/// to try: [`named`]), and the checks that every variable the library reads is
/// documented and cleared by the test harness (`make check-docs`).
pub struct Launcher {
    /// Who it is, for messages.
    pub name: &'static str,
    /// Any of these set means this launcher started the process without a PMI-1
    /// connection of its own: its size and rank then decide whether a singleton is
    /// allowed.
    pub markers: &'static [&'static str],
    /// Any of these set names this launcher to a user (`pmi-probe`'s report).
    pub named_by: &'static [&'static str],
    /// The number of processes it started, when it says.
    pub size: Option<&'static str>,
    /// This process's rank among them.
    pub rank: Option<&'static str>,
    /// What the user should do when it started this process without a server the
    /// library can use.
    pub fix: &'static str,
    /// Whether the server it gives is PMIx (then the PMIx backend's own advice is
    /// enough).
    pub serves_pmix: bool,
}

/// The launchers recognised. Those that run inside others' jobs come first (`prterun`
/// or a Flux instance started in a Slurm step sees the step's variables too), so the
/// first row that matches is the innermost. A process started by hand inside an
/// allocation (`salloc`, an `sbatch` script) carries only the allocation's variables,
/// not a step's, and stays a legitimate singleton.
pub const LAUNCHERS: &[Launcher] = &[
    Launcher {
        name: "Hydra",
        markers: &[],
        named_by: &["MPI_LOCALNRANKS"],
        size: None,
        rank: None,
        fix: "its PMI_FD or PMI_PORT did not reach this process: unset stale PMI_* \
              variables, or let mpiexec set all of them",
        serves_pmix: false,
    },
    Launcher {
        name: "PRRTE",
        markers: &[],
        named_by: &["PRTE_LAUNCHED"],
        size: None,
        rank: None,
        fix: "it serves PMIx: check that its PMIX_* variables reach this process",
        serves_pmix: true,
    },
    Launcher {
        name: "a PMI-1 process manager",
        markers: &["PMI_SIZE", "PMI_RANK"],
        named_by: &[],
        size: Some("PMI_SIZE"),
        rank: Some("PMI_RANK"),
        fix: "its PMI_FD or PMI_PORT did not reach this process: unset stale PMI_* \
              variables, or let the launcher set all of them",
        serves_pmix: false,
    },
    Launcher {
        name: "Open MPI's mpirun",
        markers: &["OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"],
        named_by: &["OMPI_COMM_WORLD_SIZE"],
        size: Some("OMPI_COMM_WORLD_SIZE"),
        rank: Some("OMPI_COMM_WORLD_RANK"),
        fix: "it serves PMIx, not the PMI-1 wire: launch with mpiexec.hydra",
        serves_pmix: true,
    },
    Launcher {
        name: "Flux",
        markers: &["FLUX_JOB_SIZE", "FLUX_TASK_RANK"],
        named_by: &["FLUX_JOB_ID"],
        size: Some("FLUX_JOB_SIZE"),
        rank: Some("FLUX_TASK_RANK"),
        fix: "enable its PMI-1 server: flux run -o pmi=simple",
        serves_pmix: false,
    },
    Launcher {
        name: "Slurm's srun",
        markers: &["SLURM_STEP_NUM_TASKS"],
        named_by: &["SLURM_STEP_ID", "SLURM_STEP_NUM_TASKS"],
        size: Some("SLURM_STEP_NUM_TASKS"),
        rank: Some("SLURM_PROCID"),
        fix: "give it a PMI-1 server: srun --mpi=pmi2",
        serves_pmix: false,
    },
    Launcher {
        name: "HPE PALS",
        markers: &["PALS_APID", "PALS_RANKID"],
        named_by: &["PALS_APID"],
        size: None,
        rank: Some("PALS_RANKID"),
        fix: "it serves Cray PMI and PMIx, not the PMI-1 wire: launch with \
              mpiexec.hydra",
        serves_pmix: false,
    },
    Launcher {
        name: "IBM's jsrun",
        markers: &["JSM_NAMESPACE_SIZE", "JSM_NAMESPACE_RANK"],
        named_by: &["JSM_NAMESPACE_SIZE"],
        size: Some("JSM_NAMESPACE_SIZE"),
        rank: Some("JSM_NAMESPACE_RANK"),
        fix: "it serves PMIx, not the PMI-1 wire: launch with mpiexec.hydra",
        serves_pmix: true,
    },
    Launcher {
        name: "MVAPICH2's mpirun_rsh",
        markers: &["MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_RANK"],
        named_by: &["MV2_COMM_WORLD_SIZE"],
        size: Some("MV2_COMM_WORLD_SIZE"),
        rank: Some("MV2_COMM_WORLD_RANK"),
        fix: "its PMI_PORT did not reach this process: launch with mpiexec.hydra",
        serves_pmix: false,
    },
];

/// The launcher whose variables this process carries, the innermost first (for a
/// report).
pub fn named(lookup: &dyn Fn(&str) -> Option<OsString>) -> Option<&'static Launcher> {
    LAUNCHERS
        .iter()
        .find(|who| who.named_by.iter().any(|var| lookup(var).is_some()))
}

/// Whether a launcher's variable says the job of the PMIx server named has exactly one
/// process, and none says more. Not `PMI_SIZE` (a PMI-1 launcher's, an outer job's
/// here), and Slurm's step size only when the PMIx namespace is Slurm's
/// (`slurm.pmix.JOB.STEP`): `prterun` run in an `srun -n 1` shell names its own.
pub(super) fn says_single_process(lookup: &dyn Fn(&str) -> Option<OsString>) -> bool {
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

/// Whether this process, with no PMI-1 connection, may run as rank 0 of 1: no launcher
/// in [`LAUNCHERS`] says it started more than one process or that this one is not rank
/// 0, and a launcher that never says how many it started (PMIx, PALS) is refused unless
/// another one says "one".
#[inline(never)]
pub(super) fn singleton_allowed(lookup: &dyn Fn(&str) -> Option<OsString>) -> Result<(), String> {
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
