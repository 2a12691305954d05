//! The launch decision, from environments as each launcher writes them.
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
            hydra: false,
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
        (
            stale.jobid.as_deref(),
            stale.slurm,
            stale.hydra,
            stale.request_max
        ),
        (Some(&b"1644.0"[..]), false, true, pmi1::MAX_LINE)
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
        (
            &[("PMI_FD", "3"), ("PMI_SIZE", "1")],
            "PMI_FD is set but PMI_RANK is not",
        ),
        (
            &[("PMI_FD", "3"), ("PMI_RANK", "0")],
            "PMI_FD is set but PMI_SIZE is not",
        ),
        // PMI_FD alone (a number typed by hand): the variable that set the mode is named.
        (&[("PMI_FD", "99")], "PMI_FD is set but PMI_SIZE is not"),
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
    assert!(matches!(from_env(&fd), Ok(Launch::Fd(_))), "PMI_FD wins");
    let port = lookup_from(&[("PMI_PORT", "node7:4242"), ("PMI_ID", "3")]);
    assert_eq!(
        from_env(&port),
        Ok(Launch::Port(PortEnv {
            host: "node7".into(),
            port: 4242,
            id: 3,
            spawned: false,
            hydra: false,
        }))
    );
    let v6 = lookup_from(&[
        ("PMI_PORT", "[::1]:99"),
        ("PMI_ID", "0"),
        ("PMI_SPAWNED", "1"),
    ]);
    assert_eq!(
        from_env(&v6),
        Ok(Launch::Port(PortEnv {
            host: "::1".into(),
            port: 99,
            id: 0,
            spawned: true,
            hydra: false,
        }))
    );
    assert_eq!(from_env(&lookup_from(&[])), Ok(Launch::Singleton));
    let alone = lookup_from(&[("PMI_SIZE", "1"), ("PMI_RANK", "0")]);
    assert_eq!(from_env(&alone), Ok(Launch::Singleton));
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
            from_env(&lookup_from(&vars)),
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
    assert_eq!(from_env(&cleared), Ok(Launch::Singleton));
    let cleared = lookup_from(&[("PMI_FD", ""), ("PMI_PORT", "")]);
    assert_eq!(from_env(&cleared), Ok(Launch::Singleton));
    let beside_pmix = lookup_from(&[("PMI_FD", ""), ("PMIX_RANK", "0")]);
    assert!(matches!(from_env(&beside_pmix), Ok(Launch::Pmix(_))));
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
        (&[("PMI_PORT", "h:80")], "PMI_PORT is set but PMI_ID is not"),
        (&[("PMI_SIZE", "4")], "PMI_SIZE=\"4\""),
        (&[("PMI_RANK", "2")], "PMI_RANK=\"2\""),
    ];
    for (vars, needle) in cases {
        let err = from_env(&lookup_from(vars)).unwrap_err();
        assert!(err.contains(needle), "{vars:?}: {err}");
    }
}

/// A number that is no TCP port is named as such, not as a malformed address.
#[test]
fn a_port_out_of_range_is_named() {
    let range = "outside the TCP ports 1 to 65535";
    for (value, want) in [
        ("127.0.0.1:99999", "names port 99999, "),
        ("h:0", "names port 0, "),
        ("[::1]:65536", "names port 65536, "),
        ("h:123456789012345678901234567890", "names port 1234567890"),
    ] {
        let err = from_env(&lookup_from(&[("PMI_PORT", value), ("PMI_ID", "0")])).unwrap_err();
        assert!(err.contains(want) && err.contains(range), "{value}: {err}");
    }
    for value in ["h:", "h:8o", "h:-1", "h: 80", ":80", "nohost"] {
        let err = from_env(&lookup_from(&[("PMI_PORT", value), ("PMI_ID", "0")])).unwrap_err();
        assert!(err.ends_with("is not host:port"), "{value}: {err}");
    }
    let ok = from_env(&lookup_from(&[("PMI_PORT", "h:65535"), ("PMI_ID", "0")]));
    assert!(matches!(ok, Ok(Launch::Port(p)) if p.port == 65535));
}

#[test]
fn an_ipv6_address_is_shown_in_brackets() {
    assert_eq!(address("::1", 1), "[::1]:1");
    assert_eq!(address("fe80::1%eth0", 7000), "[fe80::1%eth0]:7000");
    assert_eq!(address("127.0.0.1", 99), "127.0.0.1:99");
    assert_eq!(address("node7", 4242), "node7:4242");
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
        let got = from_env(&lookup_from(vars));
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
    let Ok(Launch::Pmix(found)) = from_env(&env) else {
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
    let Ok(Launch::Pmix(found)) = from_env(&short) else {
        panic!("not the PMIx backend")
    };
    assert!(found.preput.is_empty());
    assert!(found
        .preput_broken
        .is_some_and(|why| why.contains("PMI_PMIX_PREPUT_KEY_0")));
    // A value with a newline is shown escaped in the one-line messages.
    let newline = lookup_from(&[("PMIX_RANK", "0\nx")]);
    let Ok(Launch::Pmix(found)) = from_env(&newline) else {
        panic!("not the PMIx backend")
    };
    assert_eq!(found.why, "PMIX_RANK=\"0\\nx\" names a PMIx server");
    assert!(from_env(&lookup_from(&[("PMI_PORT", "a\nb")]))
        .is_err_and(|e| e.contains("PMI_PORT=\"a\\nb\"") && !e.contains('\n')));
    // PMI_FD wins over PMIx; PMI_SINGLETON=1 too.
    let fd = lookup_from(&[
        ("PMIX_RANK", "0"),
        ("PMI_FD", "3"),
        ("PMI_SIZE", "1"),
        ("PMI_RANK", "0"),
    ]);
    assert!(matches!(from_env(&fd), Ok(Launch::Fd(_))));
    let slurm = ("PMIX_NAMESPACE", "slurm.pmix.12.0");
    let one = lookup_from(&[slurm, ("PMIX_RANK", "0"), ("SLURM_STEP_NUM_TASKS", "1")]);
    assert!(matches!(from_env(&one), Ok(Launch::Pmix(f)) if f.single_process));
    let two = lookup_from(&[slurm, ("PMIX_RANK", "0"), ("SLURM_STEP_NUM_TASKS", "2")]);
    assert!(matches!(from_env(&two), Ok(Launch::Pmix(f)) if !f.single_process));
    // prterun in an `srun -n 1` shell, or under mpiexec: the outer job's size says
    // nothing of prterun's job.
    for outer in [("SLURM_STEP_NUM_TASKS", "1"), ("PMI_SIZE", "1")] {
        let prte = lookup_from(&[
            ("PMIX_NAMESPACE", "prterun-vm-13050@1"),
            ("PMIX_RANK", "0"),
            outer,
        ]);
        assert!(matches!(from_env(&prte), Ok(Launch::Pmix(f)) if !f.single_process));
    }
    let single = lookup_from(&[("PMIX_RANK", "3"), ("PMI_SINGLETON", "1")]);
    assert_eq!(from_env(&single), Ok(Launch::Singleton));
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
    // Whole seconds: a fraction, a unit or a sign is refused, naming the unit.
    for value in ["0.5", "1.0", "30s", "-1", " 5"] {
        let err = timeout(&lookup_from(&[("PMI_TIMEOUT", value)])).unwrap_err();
        assert_eq!(
            err,
            format!(
                "PMI_TIMEOUT=\"{value}\" is not a whole number of seconds (such as 30; 0: \
                 no limit)"
            )
        );
    }
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

#[test]
fn pmi_fd_is_checked_once_and_set_aside_beside_another_launch() {
    use std::cell::Cell;
    let checks = Cell::new(0);
    let refuse = |fd: i32| {
        checks.set(checks.get() + 1);
        Err(format!("PMI_FD={fd} is not a socket"))
    };
    // No other launch: the launch stands, with the fault for PMI_Init to refuse.
    let alone = lookup_from(&[("PMI_FD", "999999"), ("PMI_RANK", "0"), ("PMI_SIZE", "2")]);
    let d = decide_with(&alone, &refuse);
    assert!(matches!(d.launch, Ok(Launch::Fd(_))));
    assert_eq!(d.fd_fault.as_deref(), Some("PMI_FD=999999 is not a socket"));
    assert_eq!((d.set_aside, checks.get()), (None, 1));
    // Beside PMI_PORT: an outer job's PMI_FD, set aside (a closed fd is said so).
    let beside = lookup_from(&[
        ("PMI_FD", "999999"),
        ("PMI_RANK", "0"),
        ("PMI_SIZE", "2"),
        ("PMI_PORT", "h:1"),
        ("PMI_ID", "1"),
    ]);
    let d = decide_with(&beside, &refuse);
    assert!(matches!(d.launch, Ok(Launch::Port(_))));
    assert_eq!(d.set_aside.as_deref(), Some("PMI_FD=999999 is not open"));
    assert_eq!((d.fd_fault, checks.get()), (None, 2));
    // A good fd beside another launch is checked once, and taken.
    let good = |_: i32| {
        checks.set(checks.get() + 1);
        Ok(())
    };
    let d = decide_with(&beside, &good);
    assert!(matches!(d.launch, Ok(Launch::Fd(_))));
    assert_eq!((d.set_aside, d.fd_fault, checks.get()), (None, None, 3));
    // A variable's fault is named before the fd is looked at.
    let bad = lookup_from(&[("PMI_FD", "3"), ("PMI_RANK", "0")]);
    let d = decide_with(&bad, &good);
    assert!(d.launch.is_err());
    assert_eq!(checks.get(), 3);
}
