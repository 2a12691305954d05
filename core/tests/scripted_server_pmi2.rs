//! The safe client on the PMI-2 wire against a scripted server speaking PMI-2 frames:
//! the handshake, what goes on the wire, what each reply is turned into, the rules a
//! caller's arguments meet before anything is sent, and how the connection survives (or
//! does not) bad replies.

use std::thread::JoinHandle;

use pmi_core::api::Api;
use pmi_core::client::Client;
use pmi_core::error::{PmiError, PmiResult};
use pmi_core::{SpawnCommand, Spawned};
use pmi_testkit::core::Pmi2Wire;
use pmi_testkit::scripted::*;

const INIT2_REQUEST: &[u8] = b"cmd=init pmi_version=2 pmi_subversion=0\n";
const INIT2_REPLY: &[u8] = b"cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n";
const FULLINIT: &[u8] = b"cmd=fullinit;pmirank=1;threaded=FALSE;";
const FULLINIT_REPLY: &[u8] =
    b"cmd=fullinit-response;rc=0;size=2;rank=1;appnum=0;debugged=FALSE;pmiverbose=FALSE;";
const JOBID: &[u8] = b"kvs_3162_0";

/// The PMI-2 handshake as Hydra 4.0.2 answers it: rank 1 of 2.
fn handshake2() -> Script {
    Script::new()
        .exchange(INIT2_REQUEST, INIT2_REPLY)
        .exchange_frames(FULLINIT, FULLINIT_REPLY)
}

/// `job-getid`, answered with [`JOBID`].
fn jobid() -> Script {
    let mut reply = b"cmd=job-getid-response;rc=0;jobid=".to_vec();
    reply.extend_from_slice(JOBID);
    reply.push(b';');
    Script::new().exchange_frames("cmd=job-getid;", reply)
}

/// A PMI-2 client (rank 1 of 2) over a server running `script` after the handshake.
fn init2(rest: Script) -> (PmiResult<Client>, JoinHandle<Vec<u8>>) {
    let (stream, server) = serve(handshake2().then(rest));
    let client = Pmi2Wire::init(conn(stream), Some(1), None, false)
        .map(|wire| pmi_testkit::core::client(Box::new(wire), Api::Pmi2));
    (client, server)
}

fn client2(rest: Script) -> (Client, JoinHandle<Vec<u8>>) {
    let (client, server) = init2(rest);
    match client {
        Ok(client) => (client, server),
        Err(e) => panic!(
            "the PMI-2 handshake failed with {e}; the client sent {:?}",
            show(&finish(server))
        ),
    }
}

/// The transcript of a client that did the handshake, then sent `frames`.
fn after_handshake2(frames: &[&[u8]]) -> Vec<u8> {
    let mut all = INIT2_REQUEST.to_vec();
    all.extend_from_slice(&frame(FULLINIT));
    for f in frames {
        all.extend_from_slice(&frame(f));
    }
    all
}

#[test]
fn handshake_gives_rank_size_and_pmi2_maxima() {
    let (client, server) = client2(Script::new());
    let id = client.identity();
    assert_eq!((id.rank, id.size, id.spawned), (1, 2, false));
    // PMI-2's header constants, whatever the server.
    assert_eq!(client.maxes(), Api::Pmi2.fixed_maxes().unwrap());
    drop(client);
    assert_eq!(finish(server), after_handshake2(&[]));
}

#[test]
fn a_pmi1_only_server_is_refused() {
    let (stream, server) = serve(Script::new().exchange(
        INIT2_REQUEST,
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
    ));
    let result = Pmi2Wire::init(conn(stream), Some(1), None, false);
    assert_eq!(result.err(), Some(PmiError::Fail));
    assert_eq!(finish(server), INIT2_REQUEST);
}

#[test]
fn put_fence_get_and_the_cache() {
    let (mut client, server) = client2(
        jobid()
            .exchange_frames(
                "cmd=kvs-put;key=k;value=a b=c;",
                "cmd=kvs-put-response;rc=0;",
            )
            .exchange_frames("cmd=kvs-fence;", "cmd=kvs-fence-response;rc=0;")
            // A ';' in a value from the server is doubled on the wire.
            .exchange_frames(
                "cmd=kvs-get;jobid=kvs_3162_0;srcid=0;key=peer;",
                "cmd=kvs-get-response;rc=0;found=TRUE;value=x;;y;",
            )
            .exchange_frames(
                "cmd=kvs-get;jobid=kvs_3162_0;srcid=0;key=peer;",
                "cmd=kvs-get-response;rc=0;found=TRUE;value=x;;y;",
            ),
    );
    assert_eq!(client.put_own(b"k", b"a b=c"), Ok(()));
    // Put once: the same value again sends nothing; another value is refused.
    assert_eq!(client.put_own(b"k", b"a b=c"), Ok(()));
    assert_eq!(client.put_own(b"k", b"other"), Err(PmiError::InvalidKey));
    assert_eq!(client.fence(), Ok(()));
    assert_eq!(
        client.get_own(b"peer", Some(0)).map(<[u8]>::to_vec),
        Ok(b"x;y".to_vec())
    );
    // Read again: asked again, and kept from this second read on, so the third read
    // asks nobody (the script has no third get).
    assert_eq!(
        client.get_own(b"peer", Some(0)).map(<[u8]>::to_vec),
        Ok(b"x;y".to_vec())
    );
    assert_eq!(
        client.get_own(b"peer", None).map(<[u8]>::to_vec),
        Ok(b"x;y".to_vec())
    );
    drop(client);
    finish(server);
}

#[test]
fn what_the_rules_refuse_is_never_sent() {
    let (mut client, server) = client2(jobid());
    // An empty value (MPICH 5.0.2's mpiexec dies on `value=;`), a ';' anywhere, lengths.
    assert_eq!(client.put_own(b"k", b""), Err(PmiError::InvalidVal));
    assert_eq!(client.put_own(b"k", b"a;b"), Err(PmiError::InvalidVal));
    assert_eq!(client.put_own(b"a;b", b"v"), Err(PmiError::InvalidKey));
    assert_eq!(client.put_own(b"", b"v"), Err(PmiError::InvalidKey));
    assert_eq!(
        client.put_own(&[b'k'; 64], b"v"),
        Err(PmiError::InvalidKeyLength)
    );
    assert_eq!(
        client.put_own(b"k", &[b'v'; 1024]),
        Err(PmiError::InvalidValLength)
    );
    assert_eq!(client.put_node_attr(b"na", b""), Err(PmiError::InvalidVal));
    assert_eq!(
        client.publish_name(b"svc", b"tcp://h;1"),
        Err(PmiError::InvalidArg)
    );
    assert_eq!(
        client.publish_name(b"s;v", b"port"),
        Err(PmiError::InvalidArg)
    );
    // Spawn: a ';' in an argument, an empty argument, or more fields than the Hydras
    // take (Hydra 4.0.2 segfaults on 999 arguments, 5.0.2 aborts on 1000).
    let semi = SpawnCommand {
        execname: b"/bin/true",
        args: vec![b"a;b"],
        maxprocs: 1,
        info: vec![],
    };
    assert_eq!(client.spawn(&[semi], &[]), Err(PmiError::InvalidArgs));
    let many = SpawnCommand {
        execname: b"/bin/true",
        args: vec![&b"a"[..]; 999],
        maxprocs: 1,
        info: vec![],
    };
    assert_eq!(client.spawn(&[many], &[]), Err(PmiError::InvalidArgs));
    drop(client);
    assert_eq!(finish(server), after_handshake2(&[b"cmd=job-getid;"]));
}

#[test]
fn a_missing_key_is_invalid_key_both_ways_servers_say_it() {
    let (mut client, server) = client2(
        jobid()
            .exchange_frames(
                "cmd=kvs-get;jobid=kvs_3162_0;srcid=-1;key=none;",
                "cmd=kvs-get-response;rc=0;found=FALSE;",
            )
            // MPICH 5.0.2's Hydra: rc=1 and nothing else.
            .exchange_frames(
                "cmd=kvs-get;jobid=kvs_3162_0;srcid=-1;key=gone;",
                "cmd=kvs-get-response;rc=1;",
            ),
    );
    assert_eq!(client.get_own(b"none", None), Err(PmiError::InvalidKey));
    assert_eq!(client.get_own(b"gone", None), Err(PmiError::InvalidKey));
    drop(client);
    finish(server);
}

#[test]
fn the_specs_flag_field_is_read_as_found() {
    // The PMI-2 wire's text names the field `flag` (Hydra and Slurm send `found`).
    let (mut client, server) = client2(
        jobid()
            .exchange_frames(
                "cmd=kvs-get;jobid=kvs_3162_0;srcid=-1;key=none;",
                "cmd=kvs-get-response;flag=false;rc=0;",
            )
            .exchange_frames(
                "cmd=kvs-get;jobid=kvs_3162_0;srcid=-1;key=empty;",
                "cmd=kvs-get-response;flag=false;value=;rc=0;",
            )
            .exchange_frames(
                "cmd=kvs-get;jobid=kvs_3162_0;srcid=-1;key=k;",
                "cmd=kvs-get-response;flag=true;value=v;rc=0;",
            ),
    );
    assert_eq!(client.get_own(b"none", None), Err(PmiError::InvalidKey));
    assert_eq!(client.get_own(b"empty", None), Err(PmiError::InvalidKey));
    assert_eq!(client.get_own(b"k", None).as_deref(), Ok(&b"v"[..]));
    drop(client);
    finish(server);
}

#[test]
fn spawn_reads_the_error_codes_either_way_they_are_spelled() {
    // Hydra and Slurm send `errcodes=a,b,...`; the PMI-2 wire text `nerrs` and `errN`.
    const SPAWN: &str =
        "cmd=spawn;ncmds=1;preputcount=0;subcmd=/bin/true;maxprocs=3;argc=0;infokeycount=0;";
    let replies = [
        "cmd=spawn-response;rc=0;jobid=j1;nerrs=2;err0=0;err1=-7;",
        "cmd=spawn-response;rc=0;errcodes=0,5;",
        "cmd=spawn-response;rc=0;",
        // A code missing, one not an int, more codes than processes: refused.
        "cmd=spawn-response;rc=0;nerrs=2;err0=3;",
        "cmd=spawn-response;rc=0;nerrs=1;err0=x;",
        "cmd=spawn-response;rc=0;nerrs=4;err0=0;err1=0;err2=0;err3=0;",
    ];
    let script = replies.iter().fold(Script::new(), |script, reply| {
        script.exchange_frames(SPAWN, reply)
    });
    let (mut client, server) = client2(script);
    let mut spawn = || {
        let cmd = SpawnCommand {
            execname: b"/bin/true",
            args: vec![],
            maxprocs: 3,
            info: vec![],
        };
        client.spawn(&[cmd], &[])
    };
    let spawned = |codes: &[i32], jobid: Option<&[u8]>| {
        Ok(Spawned {
            codes: codes.to_vec(),
            jobid: jobid.map(<[u8]>::to_vec),
        })
    };
    assert_eq!(spawn(), spawned(&[0, -7], Some(b"j1")));
    assert_eq!(spawn(), spawned(&[0, 5], None));
    assert_eq!(spawn(), spawned(&[], None));
    for _ in 0..3 {
        assert_eq!(spawn(), Err(PmiError::Fail));
    }
    drop(client);
    finish(server);
}

#[test]
fn the_clique_comes_from_the_job_attribute() {
    let (mut client, server) = client2(jobid().exchange_frames(
        "cmd=info-getjobattr;key=PMI_process_mapping;",
        "cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,1,2));",
    ));
    // One node, two ranks on it.
    assert_eq!(client.clique_size(), Ok(2));
    let mut ranks = [0; 2];
    assert_eq!(client.clique_into(&mut ranks), Ok(2));
    assert_eq!(ranks, [0, 1]);
    drop(client);
    finish(server);
}

#[test]
fn a_refusal_is_pmi_fail_and_the_connection_goes_on() {
    let (mut client, server) = client2(
        jobid()
            .exchange_frames(
                "cmd=kvs-put;key=k;value=v;",
                "cmd=kvs-put-response;rc=1;errmsg=full;",
            )
            .exchange_frames("cmd=kvs-fence;", "cmd=kvs-fence-response;rc=0;"),
    );
    assert_eq!(client.put_own(b"k", b"v"), Err(PmiError::Fail));
    assert_eq!(client.fence(), Ok(()));
    drop(client);
    finish(server);
}

#[test]
fn a_bad_frame_breaks_the_connection() {
    let (mut client, server) = client2(
        Script::new()
            .expect_frame("cmd=kvs-fence;")
            .send("xx    cmd=kvs-fence-response;rc=0;"),
    );
    assert_eq!(client.fence(), Err(PmiError::Fail));
    // Broken: nothing more is sent.
    assert_eq!(client.fence(), Err(PmiError::Fail));
    drop(client);
    assert_eq!(finish(server), after_handshake2(&[b"cmd=kvs-fence;"]));
}

#[test]
fn another_reply_than_the_one_awaited_breaks_the_connection() {
    let (mut client, server) =
        client2(Script::new().exchange_frames("cmd=kvs-fence;", "cmd=kvs-put-response;rc=0;"));
    assert_eq!(client.fence(), Err(PmiError::Fail));
    assert_eq!(client.fence(), Err(PmiError::Fail));
    drop(client);
    assert_eq!(finish(server), after_handshake2(&[b"cmd=kvs-fence;"]));
}

#[test]
fn the_ring_is_asked_only_of_slurm() {
    // Without PMI_JOBID (not Slurm): MPICH's Hydra kills the job on `ring`, so nothing is
    // sent.
    let (mut client, server) = client2(Script::new());
    assert_eq!(client.ring(b"v").err(), Some(PmiError::Fail));
    drop(client);
    assert_eq!(finish(server), after_handshake2(&[]));
    // A PMI_JOBID beside Hydra's MPI_LOCALNRANKS: passed on in `fullinit` (Slurm needs
    // it, Hydra ignores it), but the server is not taken for Slurm's.
    let fullinit = b"cmd=fullinit;pmijobid=7.0;pmirank=1;threaded=FALSE;";
    let (stream, server) = serve(
        Script::new()
            .exchange(INIT2_REQUEST, INIT2_REPLY)
            .exchange_frames(fullinit, FULLINIT_REPLY),
    );
    let wire = Pmi2Wire::init(conn(stream), Some(1), Some(b"7.0"), false).expect("init");
    let mut client = pmi_testkit::core::client(Box::new(wire), Api::Pmi2);
    assert_eq!(client.ring(b"v").err(), Some(PmiError::Fail));
    drop(client);
    finish(server);
    // With Slurm's PMI_JOBID.
    let (stream, server) = serve(
        Script::new()
            .exchange(INIT2_REQUEST, INIT2_REPLY)
            .exchange_frames(fullinit, FULLINIT_REPLY)
            .exchange_frames(
                "cmd=ring;ring-count=1;ring-left=v;ring-right=v;",
                "cmd=ring-response;rc=0;ring-count=1;ring-left=l;ring-right=r;",
            ),
    );
    let wire = Pmi2Wire::init(conn(stream), Some(1), Some(b"7.0"), true).expect("init");
    let mut client = pmi_testkit::core::client(Box::new(wire), Api::Pmi2);
    assert_eq!(client.ring(b"v"), Ok((1, 2, b"l".to_vec(), b"r".to_vec())));
    drop(client);
    finish(server);
}
