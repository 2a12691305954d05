//! The PMIx backend over a fake PMIx client library (`tests/fake_pmix.c`, built here into
//! a shared object and named by `PMI_PMIX_LIBRARY`): which PMIx calls each PMI operation
//! makes, what it makes of the answers, and what never reaches PMIx. No server, no other
//! process: a job of one. Its own test binary: the library's state is process-wide.

use std::path::{Path, PathBuf};
use std::process::Command;

use pmi_core::api::Api;
use pmi_core::error::PmiError;
use pmi_core::lifecycle;
use pmi_core::SpawnCommand;

/// A fresh directory with the fake built in it, for the test `name`.
fn fake_in(name: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("pmix-fake-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let so = build_fake(&dir);
    (dir, so)
}

/// Build the fake into `dir`; its path.
fn build_fake(dir: &Path) -> PathBuf {
    let so = dir.join("libfakepmix.so");
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake_pmix.c");
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args([
            "-std=gnu99",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-shared",
            "-fPIC",
            "-o",
        ])
        .arg(&so)
        .arg(src)
        .status()
        .expect("cc runs");
    assert!(status.success(), "tests/fake_pmix.c does not build");
    so
}

/// The calls logged since the last look.
fn calls(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    std::fs::remove_file(log).ok();
    text.lines().map(str::to_string).collect()
}

fn has(calls: &[String], line: &str) -> bool {
    calls.iter().any(|c| c == line)
}

#[test]
fn the_pmix_backend_over_a_fake_libpmix() {
    let (dir, so) = fake_in("backend");
    let log = dir.join("calls.log");
    for name in [
        "PMI_FD",
        "PMI_PORT",
        "PMI_SINGLETON",
        "PMI_DEBUG",
        "PMIX_MCA_gds",
    ] {
        std::env::remove_var(name);
    }
    std::env::set_var("PMI_PMIX_LIBRARY", &so);
    std::env::set_var("PMIX_NAMESPACE", "fake-ns");
    std::env::set_var("PMIX_RANK", "0");
    std::env::set_var("FAKE_PMIX_LOG", &log);
    // Rank 1's directory entry: one card with its value beside its name, one without.
    std::env::set_var("FAKE_PMIX_SIZE", "2");
    std::env::set_var("FAKE_PMIX_PEER_DIR", "-\n6:card-1=5:hello8:big-card");

    let id = lifecycle::init(Api::Pmi1, "PMI_Init").expect("init");
    assert_eq!((id.rank, id.size, id.spawned), (0, 2, false));
    // The data store is the one the server offers: the library sets nothing.
    assert_eq!(std::env::var_os("PMIX_MCA_gds"), None);
    let init = calls(&log);
    assert_eq!(init[0], "init fake-ns 0 ninfo=0");
    assert!(
        has(&init, "get 4294967294 pmix.job.size ninfo=1"),
        "{init:?}"
    );

    lifecycle::with_client(|c| {
        assert_eq!(c.kvsname(), Ok(&b"fake-ns"[..]));
        assert_eq!(c.universe_size(), Ok(4));
        assert_eq!(c.appnum(), Ok(0));
        calls(&log);
        // The library's own keys and the rules: nothing reaches PMIx.
        assert_eq!(
            c.put(b"fake-ns", b"libpmi:dir:1", b"x"),
            Err(PmiError::InvalidKey)
        );
        assert_eq!(c.put(b"fake-ns", b"k", b""), Err(PmiError::InvalidVal));
        assert_eq!(c.put(b"other-ns", b"k", b"v"), Err(PmiError::InvalidKvs));
        assert_eq!(calls(&log), Vec::<String>::new());
        assert_eq!(c.put(b"fake-ns", b"k", b"v"), Ok(()));
        assert_eq!(c.commit(b"fake-ns"), Ok(()));
        assert_eq!(c.barrier(), Ok(()));
        let exchange = calls(&log);
        assert_eq!(exchange[0], "put scope=3 k=v");
        assert!(has(&exchange, "commit"), "{exchange:?}");
        // At the barrier, the directory of the keys put since the last one, a short
        // value beside its name (the fake logs the entry's two lines as two).
        assert!(has(&exchange, "put scope=3 libpmi:dir:0=-"), "{exchange:?}");
        assert!(has(&exchange, "1:k=1:v"), "{exchange:?}");
        assert!(
            exchange.iter().any(|l| l.starts_with("fence ")),
            "{exchange:?}"
        );
        // Its own key from what it put, no PMIx_Get; a peer's whose value came in the
        // peer's entry without a get of its own: the peer's entry is read once (here
        // twice: the first read fails, as a server that timed out, and so does the get,
        // not taken for a key nobody put; the next get reads the entry again).
        assert_eq!(c.get(b"fake-ns", b"k"), Ok(&b"v"[..]));
        assert_eq!(calls(&log), Vec::<String>::new());
        std::env::set_var("FAKE_PMIX_DIR_FAILS", "1");
        assert_eq!(c.get(b"fake-ns", b"card-1"), Err(PmiError::Fail));
        assert_eq!(c.get(b"fake-ns", b"card-1"), Ok(&b"hello"[..]));
        let gets = calls(&log);
        let of_keys: Vec<&String> = gets.iter().filter(|l| !l.contains("pmix.")).collect();
        let entry = "get 1 libpmi:dir:0 ninfo=0";
        assert_eq!(of_keys, [entry, entry], "{gets:?}");
        assert_eq!(c.get(b"fake-ns", b"card-1"), Ok(&b"hello"[..]));
        assert_eq!(calls(&log), Vec::<String>::new());
        // A name without its value is asked of its owner (who has none here).
        assert_eq!(c.get(b"fake-ns", b"big-card"), Err(PmiError::InvalidKey));
        assert!(has(&calls(&log), "get 1 big-card ninfo=0"));
        assert_eq!(
            c.get(b"fake-ns", b"nobody-put-it"),
            Err(PmiError::InvalidKey)
        );
        // The clique from PMIX_LOCAL_PEERS.
        let mut ranks = [-1; 2];
        assert_eq!(c.clique_into(&mut ranks), Ok(2));
        assert_eq!(ranks, [0, 1]);
        calls(&log);
        // PMI_process_mapping, built from each rank's host name (no ANL map here) once:
        // asked again, as PMI-2's job attribute, it makes no PMIx call.
        let mapping = Some(b"(vector,(0,1,2))".to_vec());
        assert_eq!(c.job_attr(b"PMI_process_mapping"), Ok(mapping.clone()));
        let built = calls(&log);
        assert!(has(&built, "get 1 pmix.hname ninfo=1"), "{built:?}");
        assert_eq!(c.job_attr(b"PMI_process_mapping"), Ok(mapping));
        assert_eq!(calls(&log), Vec::<String>::new());
        // The name service.
        assert_eq!(c.publish_name(b"svc", b"tcp://h:1"), Ok(()));
        assert_eq!(c.lookup_name(b"svc"), Ok(&b"tcp://h:1"[..]));
        assert_eq!(c.unpublish_name(b"svc"), Ok(()));
        let names = calls(&log);
        assert!(has(&names, "publish svc=tcp://h:1"), "{names:?}");
        assert!(
            names.iter().any(|l| l.starts_with("lookup svc")),
            "{names:?}"
        );
        assert!(
            names.iter().any(|l| l.starts_with("unpublish svc")),
            "{names:?}"
        );
        // Spawn: one application (its argv with the command first), the preput pairs in
        // the children's environment, the info key wdir as the application's cwd, host
        // as PMIx's.
        let cmd = SpawnCommand {
            execname: b"/bin/true",
            args: vec![b"a1"],
            maxprocs: 2,
            info: vec![(b"wdir", b"/tmp"), (b"host", b"n1")],
        };
        let spawned = c.spawn(&[cmd], &[(b"pk", b"pv")]).expect("spawn");
        assert_eq!(spawned.codes, Vec::<i32>::new());
        assert_eq!(spawned.jobid.as_deref(), Some(&b"fake-child"[..]));
        let spawn = calls(&log);
        for line in [
            "app /bin/true maxprocs=2 cwd=/tmp ninfo=1",
            "argv /bin/true",
            "argv a1",
            "info pmix.host=n1",
            "env PMI_PMIX_PARENT=fake-ns",
            "env PMI_PMIX_PREPUT_NUM=1",
            "env PMI_PMIX_PREPUT_KEY_0=pk",
            "env PMI_PMIX_PREPUT_VAL_0=pv",
        ] {
            assert!(has(&spawn, line), "no {line:?} in {spawn:?}");
        }
        // An info key PMIx has no equivalent for: nothing started.
        let odd = SpawnCommand {
            execname: b"/bin/true",
            args: vec![],
            maxprocs: 1,
            info: vec![(b"odd", b"x")],
        };
        assert_eq!(c.spawn(&[odd], &[]).err(), Some(PmiError::InvalidKey));
        assert_eq!(calls(&log), Vec::<String>::new());
        Ok(())
    })
    .unwrap();

    // Finalize: a fence without data, then PMIx_Finalize.
    assert_eq!(lifecycle::finalize(), Ok(()));
    let end = calls(&log);
    let fence = end.iter().position(|l| l.starts_with("fence "));
    let finalize = end.iter().position(|l| l.starts_with("finalize"));
    assert!(fence.is_some() && fence < finalize, "{end:?}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The helper process of `abort_is_bounded_and_aims_right` (it ends by the abort, or
/// after a failed barrier, or by the bound on a stuck init): does nothing unless that
/// test started it with `FAKE_ABORT` set.
#[test]
fn abort_helper() {
    let Ok(mode) = std::env::var("FAKE_ABORT") else {
        return;
    };
    let started = lifecycle::init(Api::Pmi1, "PMI_Init");
    if mode == "init" {
        // The bound ends the process before init returns.
        std::process::exit(4);
    }
    started.expect("init");
    if mode == "fence" {
        assert_eq!(lifecycle::with_client(|c| c.barrier()), Err(PmiError::Fail));
        std::process::exit(3);
    }
    let whole_job = mode == "job";
    pmi_testkit::core::send_abort(Api::Pmi1, 7, b"", c"bye".as_ptr(), whole_job);
    // The server took the abort: its bound is lifted, no alarm is left to end the exit.
    // SAFETY: alarm takes no pointer.
    let left = unsafe { libc::alarm(0) };
    std::process::exit(if left == 0 { 7 } else { 8 });
}

/// `PMI_Abort` aborts the job, `PMI2_Abort(0, ...)` this process only; a server that
/// never takes the request holds the process for `PMI_TIMEOUT` seconds, then `SIGALRM`
/// ends it. A server lost in a barrier is said on stderr. A stuck `PMIx_Init` is
/// bounded too.
#[test]
fn abort_is_bounded_and_aims_right() {
    use std::os::unix::process::ExitStatusExt;
    let (dir, so) = fake_in("abort");
    let run = |mode: &str, hangs: bool| {
        let log = dir.join(format!("{mode}-{hangs}.log"));
        // (timeout: a helper that would wait for ever is killed, and the test fails.)
        let mut cmd = Command::new("timeout");
        cmd.args(["-s", "KILL", "30"])
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", "abort_helper", "--nocapture", "--test-threads=1"])
            .env("FAKE_ABORT", mode)
            .env("PMI_PMIX_LIBRARY", &so)
            .env("PMIX_NAMESPACE", "fake-ns")
            .env("PMIX_RANK", "0")
            .env("PMI_TIMEOUT", "1")
            .env("FAKE_PMIX_LOG", &log)
            .env_remove("PMI_FD")
            .env_remove("PMI_PORT")
            .env_remove("PMI_SINGLETON");
        if hangs {
            cmd.env("FAKE_PMIX_ABORT_HANGS", "1");
        }
        if mode == "fence" {
            cmd.env("FAKE_PMIX_FENCE_FAILS", "1");
        }
        if mode == "init" {
            cmd.env("FAKE_PMIX_INIT_HANGS", "1");
        }
        let start = std::time::Instant::now();
        let out = cmd.output().expect("the helper runs");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status, start.elapsed(), calls(&log), stderr)
    };
    let (status, _, log, _) = run("job", false);
    assert_eq!(status.code(), Some(7));
    assert!(has(&log, "abort 7 \"bye\" -:0 nprocs=0"), "{log:?}");
    let (status, _, log, _) = run("self", false);
    assert_eq!(status.code(), Some(7));
    assert!(has(&log, "abort 7 \"bye\" fake-ns:0 nprocs=1"), "{log:?}");
    let (status, took, log, _) = run("job", true);
    assert_eq!(status.signal(), Some(libc::SIGALRM), "{status:?}");
    assert!(took.as_secs_f64() < 15.0, "{took:?}");
    assert!(has(&log, "abort 7 \"bye\" -:0 nprocs=0"), "{log:?}");
    // A server gone during a barrier: PMI_FAIL and one line, traced or not.
    let (status, _, _, stderr) = run("fence", false);
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(
            "libpmi[0]: PMI_Barrier: PMIx_Fence with the PMIx server of namespace \"fake-ns\" \
             failed: FAKE-ERROR"
        ),
        "{stderr}"
    );
    // A PMIx_Init stuck where shutting its sockets does not reach: PMI_TIMEOUT to shut
    // them, 10 s more (the least grace), then the process ends with one line.
    let (status, took, _, stderr) = run("init", false);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!((10.9..25.0).contains(&took.as_secs_f64()), "{took:?}");
    assert!(
        stderr.contains("PMIx_Init has not returned 10 s after PMI_TIMEOUT passed"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
