//! The safe client against a scripted PMI-1 server: what goes on the wire, what each
//! reply is turned into, and how the connection survives (or does not) bad replies.

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use pmi_core::api::{Maxes, DEFAULT_MAXES};
use pmi_core::client::Client;
use pmi_core::error::PmiError;
use pmi_core::{Identity, SpawnCommand};
use pmi_testkit::core::pmi1_client;
use pmi_testkit::core::wire::pmi1::{CLAMP_VAL_MAX, MAX_LINE};
use pmi_testkit::scripted::*;

/// The transcript of a client that did the standard handshake, then sent `rest`.
fn after_handshake(rest: &[&[u8]]) -> Vec<u8> {
    let mut all = handshake_requests();
    for line in rest {
        all.extend_from_slice(line);
    }
    all
}

/// The transcript of a client that did the handshake and the kvsname query, then sent
/// `rest`.
fn after_kvsname(rest: &[&[u8]]) -> Vec<u8> {
    let mut all = after_handshake(&[KVSNAME_REQUEST]);
    for line in rest {
        all.extend_from_slice(line);
    }
    all
}

fn assert_wire(transcript: &[u8], expected: &[u8]) {
    assert_eq!(show(transcript), show(expected), "bytes the client sent");
}

/// Run the handshake with `init_reply` as the answer to `cmd=init`, and, when the
/// client goes on, Hydra's answer to `get_maxes`.
fn init_with_reply(init_reply: &str) -> (Result<Maxes, PmiError>, Vec<u8>) {
    let script = Script::new()
        .exchange(INIT_REQUEST, format!("{init_reply}\n"))
        .exchange(MAXES_REQUEST, MAXES_REPLY);
    let (client, server) = init(script);
    let maxes = client.map(|c| c.maxes());
    (maxes, finish(server))
}

/// Run the handshake with `maxes_reply` as the answer to `get_maxes`.
fn init_with_maxes(maxes_reply: &str) -> (Result<Maxes, PmiError>, Vec<u8>) {
    let script = Script::new()
        .exchange(INIT_REQUEST, INIT_REPLY)
        .exchange(MAXES_REQUEST, format!("{maxes_reply}\n"));
    let (client, server) = init(script);
    let maxes = client.map(|c| c.maxes());
    (maxes, finish(server))
}

const HYDRA_MAXES: Maxes = Maxes {
    kvsname: 256,
    key: 64,
    value: 1024,
};

// ---------------------------------------------------------------------------------
// 1. init

#[test]
fn init_accepts_hydra_reply_and_sends_exactly_two_lines() {
    let (maxes, wire) = init_with_reply("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0");
    assert_eq!(maxes, Ok(HYDRA_MAXES));
    assert_wire(
        &wire,
        b"cmd=init pmi_version=1 pmi_subversion=1\ncmd=get_maxes\n",
    );
}

#[test]
fn init_accepts_mpich5_subversion_2() {
    let (maxes, wire) = init_with_reply("cmd=response_to_init pmi_version=1 pmi_subversion=2 rc=0");
    assert_eq!(maxes, Ok(HYDRA_MAXES));
    assert_wire(&wire, &handshake_requests());
}

#[test]
fn init_accepts_reordered_fields_extra_keys_and_runs_of_spaces() {
    let (maxes, wire) = init_with_reply(
        "  rc=0   pmi_subversion=1 extra=yes\tcmd=response_to_init  msg=success pmi_version=1  ",
    );
    assert_eq!(maxes, Ok(HYDRA_MAXES));
    assert_wire(&wire, &handshake_requests());
}

#[test]
fn init_accepts_reply_without_version_fields() {
    for reply in ["cmd=response_to_init rc=0", "cmd=response_to_init"] {
        let (maxes, wire) = init_with_reply(reply);
        assert_eq!(maxes, Ok(HYDRA_MAXES), "{reply}");
        assert_wire(&wire, &handshake_requests());
    }
}

#[test]
fn init_refuses_other_versions_errors_and_wrong_cmd_after_one_line() {
    for reply in [
        "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0",
        "cmd=response_to_init pmi_version=1 pmi_subversion=0 rc=0",
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1",
        "cmd=response_to_init rc=-1",
        "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024",
        "cmd=init_response pmi_version=1 pmi_subversion=1 rc=0",
    ] {
        let (client, server) = init(Script::new().exchange(INIT_REQUEST, format!("{reply}\n")));
        assert_eq!(client.err(), Some(PmiError::Fail), "{reply}");
        assert_wire(&finish(server), INIT_REQUEST);
    }
}

// ---------------------------------------------------------------------------------
// 2. get_maxes

/// What the `kvsname_max=100 keylen_max=32 vallen_max=500` replies announce.
const SMALL_MAXES: Maxes = Maxes {
    kvsname: 100,
    key: 32,
    value: 500,
};

#[test]
fn get_maxes_after_many_unknown_fields_is_parsed() {
    // More fields than the parser keeps, before the ones init needs: found all the same.
    let unknown: Vec<String> = (0..12).map(|i| format!("extra{i}=x")).collect();
    let reply = format!(
        "cmd=maxes rc=0 {} kvsname_max=100 keylen_max=32 vallen_max=500",
        unknown.join(" ")
    );
    let (maxes, _) = init_with_maxes(&reply);
    assert_eq!(maxes, Ok(SMALL_MAXES));
}

#[test]
fn get_maxes_values_are_parsed() {
    let (maxes, _) = init_with_maxes("cmd=maxes vallen_max=500 kvsname_max=100 keylen_max=32");
    assert_eq!(maxes, Ok(SMALL_MAXES));
}

#[test]
fn get_maxes_missing_non_numeric_or_zero_field_fails_init() {
    for reply in [
        "cmd=maxes keylen_max=64 vallen_max=1024",
        "cmd=maxes kvsname_max=256 vallen_max=1024",
        "cmd=maxes kvsname_max=256 keylen_max=64",
        "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=abc",
        "cmd=maxes kvsname_max=256 keylen_max=6x4 vallen_max=1024",
        "cmd=maxes kvsname_max= keylen_max=64 vallen_max=1024",
        "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=0",
        "cmd=maxes kvsname_max=0 keylen_max=64 vallen_max=1024",
        "cmd=maxes kvsname_max=256 keylen_max=0 vallen_max=1024",
        "cmd=maxes kvsname_max=256 keylen_max=-64 vallen_max=1024",
        "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024 rc=-1",
    ] {
        let (maxes, wire) = init_with_maxes(reply);
        assert_eq!(maxes, Err(PmiError::Fail), "{reply}");
        assert_wire(&wire, &handshake_requests());
    }
}

#[test]
fn get_maxes_without_any_maximum_announces_the_defaults() {
    // RFC 13's grammar: the three fields are optional together.
    for reply in ["cmd=maxes", "cmd=maxes rc=0"] {
        let (maxes, _) = init_with_maxes(reply);
        assert_eq!(maxes, Ok(DEFAULT_MAXES), "{reply}");
    }
}

#[test]
fn get_maxes_huge_vallen_max_is_clamped() {
    let (maxes, _) =
        init_with_maxes("cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1000000000");
    assert_eq!(
        maxes,
        Ok(Maxes {
            kvsname: 256,
            key: 64,
            value: CLAMP_VAL_MAX
        })
    );
}

// ---------------------------------------------------------------------------------
// 3. kvsname

#[test]
fn kvsname_is_fetched_once() {
    let (mut client, server) = client(kvsname());
    assert_eq!(client.kvsname(), Ok(KVS));
    assert_eq!(client.kvsname(), Ok(KVS));
    drop(client);
    assert_wire(&finish(server), &after_handshake(&[KVSNAME_REQUEST]));
}

// ---------------------------------------------------------------------------------
// 4. universe size and appnum

#[test]
fn universe_size_minus_one_is_passed_through_and_cached() {
    let (mut client, server) =
        client(Script::new().exchange("cmd=get_universe_size\n", "cmd=universe_size size=-1\n"));
    assert_eq!(client.universe_size(), Ok(-1));
    assert_eq!(client.universe_size(), Ok(-1));
    drop(client);
    assert_wire(
        &finish(server),
        &after_handshake(&[b"cmd=get_universe_size\n"]),
    );
}

#[test]
fn appnum_is_fetched_once() {
    let (mut client, server) =
        client(Script::new().exchange("cmd=get_appnum\n", "cmd=appnum appnum=3\n"));
    assert_eq!(client.appnum(), Ok(3));
    assert_eq!(client.appnum(), Ok(3));
    drop(client);
    assert_wire(&finish(server), &after_handshake(&[b"cmd=get_appnum\n"]));
}

#[test]
fn universe_size_and_appnum_left_out_are_unknown() {
    // RFC 13 makes `size=` and `appnum=` optional: -1, as an unknown size and as PMIx's
    // backend says of an appnum the server does not give.
    let (mut client, server) = client(
        Script::new()
            .exchange("cmd=get_universe_size\n", "cmd=universe_size rc=0\n")
            .exchange("cmd=get_appnum\n", "cmd=appnum\n"),
    );
    assert_eq!(client.universe_size(), Ok(-1));
    assert_eq!(client.appnum(), Ok(-1));
    drop(client);
    finish(server);
}

// ---------------------------------------------------------------------------------
// 5. put

/// A put's kvsname, key and value, and the error it must get.
type PutCase<'a> = (&'a [u8], &'a [u8], &'a [u8], PmiError);

#[test]
fn put_validation_failures_send_nothing() {
    let (mut client, server) = client_with_kvsname(Script::new());
    let long_key = vec![b'k'; 64];
    let long_value = vec![b'v'; 1024];
    let cases: [PutCase; 10] = [
        (b"kvs_other", b"k", b"v", PmiError::InvalidKvs),
        (b"", b"k", b"v", PmiError::InvalidKvs),
        (KVS, b"", b"v", PmiError::InvalidKey),
        (KVS, b"a b", b"v", PmiError::InvalidKey),
        (KVS, b"a=b", b"v", PmiError::InvalidKey),
        (KVS, b"a\nb", b"v", PmiError::InvalidKey),
        (KVS, &long_key, b"v", PmiError::InvalidKeyLength),
        (KVS, b"k", b"a\nb", PmiError::InvalidVal),
        (KVS, b"k", b"a\rb", PmiError::InvalidVal),
        (KVS, b"k", &long_value, PmiError::InvalidValLength),
    ];
    for (kvs, key, value, expected) in cases {
        assert_eq!(
            client.put(kvs, key, value),
            Err(expected),
            "put({:?}, {:?}, {:?})",
            show(kvs),
            show(key),
            show(value)
        );
    }
    drop(client);
    assert_wire(&finish(server), &after_kvsname(&[]));
}

#[test]
fn put_sends_one_line_with_spaces_verbatim() {
    let request = put_request("k", "v w");
    assert_eq!(
        show(&request),
        format!("cmd=put kvsname={} key=k value=v w\n", show(KVS))
    );
    let (mut client, server) =
        client_with_kvsname(Script::new().exchange(&request, "cmd=put_result rc=0 msg=success\n"));
    assert_eq!(client.put(KVS, b"k", b"v w"), Ok(()));
    drop(client);
    assert_wire(&finish(server), &after_kvsname(&[&request]));
}

#[test]
fn put_accepts_longest_key_and_value() {
    let key = "k".repeat(63);
    let value = "v".repeat(1023);
    let request = put_request(&key, &value);
    let (mut client, server) =
        client_with_kvsname(Script::new().exchange(&request, "cmd=put_result rc=0\n"));
    assert_eq!(client.put(KVS, key.as_bytes(), value.as_bytes()), Ok(()));
    drop(client);
    assert_wire(&finish(server), &after_kvsname(&[&request]));
}

#[test]
fn put_again_same_value_is_ok_other_value_is_invalid_key_and_neither_is_sent() {
    let request = put_request("k", "v");
    let (mut client, server) =
        client_with_kvsname(Script::new().exchange(&request, "cmd=put_result rc=0 msg=success\n"));
    assert_eq!(client.put(KVS, b"k", b"v"), Ok(()));
    assert_eq!(client.put(KVS, b"k", b"v"), Ok(()));
    assert_eq!(client.put(KVS, b"k", b"w"), Err(PmiError::InvalidKey));
    assert_eq!(client.put(KVS, b"k", b"v"), Ok(()));
    drop(client);
    assert_wire(&finish(server), &after_kvsname(&[&request]));
}

#[test]
fn put_refused_by_server_is_fail_and_connection_stays_usable() {
    let first = put_request("k", "v");
    let (mut client, server) = client_with_kvsname(
        Script::new()
            .exchange(&first, "cmd=put_result rc=-1 msg=failed\n")
            .exchange(&first, "cmd=put_result rc=0 msg=success\n"),
    );
    assert_eq!(client.put(KVS, b"k", b"v"), Err(PmiError::Fail));
    assert_eq!(client.put(KVS, b"k", b"v"), Ok(()));
    drop(client);
    assert_wire(&finish(server), &after_kvsname(&[&first, &first]));
}

#[test]
fn first_put_fetches_the_kvsname() {
    let request = put_request("k", "v");
    let (mut client, server) =
        client(kvsname().exchange(&request, "cmd=put_result rc=0 msg=success\n"));
    assert_eq!(client.put(KVS, b"k", b"v"), Ok(()));
    drop(client);
    assert_wire(&finish(server), &after_kvsname(&[&request]));
}

// ---------------------------------------------------------------------------------
// 6. get

#[test]
fn get_hydra_missing_key_is_invalid_key_and_next_get_works() {
    let (mut client, server) = client_with_kvsname(
        Script::new()
            .exchange(
                get_request("nokey"),
                "cmd=get_result rc=-1 msg=key_nokey_not_found value=unknown\n",
            )
            .exchange(
                get_request("k0"),
                "cmd=get_result rc=0 msg=success value=v0\n",
            ),
    );
    assert_eq!(client.get(KVS, b"nokey"), Err(PmiError::InvalidKey));
    assert_eq!(client.get(KVS, b"k0"), Ok(&b"v0"[..]));
    drop(client);
    assert_wire(
        &finish(server),
        &after_kvsname(&[&get_request("nokey"), &get_request("k0")]),
    );
}

#[test]
fn get_slurm_missing_key_rc_1_is_invalid_key_and_next_get_works() {
    let (mut client, server) = client_with_kvsname(
        Script::new()
            .exchange(get_request("nokey"), "cmd=get_result rc=1\n")
            .exchange(get_request("k0"), "cmd=get_result rc=0 value=v0\n"),
    );
    assert_eq!(client.get(KVS, b"nokey"), Err(PmiError::InvalidKey));
    assert_eq!(client.get(KVS, b"k0"), Ok(&b"v0"[..]));
    drop(client);
    assert_wire(
        &finish(server),
        &after_kvsname(&[&get_request("nokey"), &get_request("k0")]),
    );
}

#[test]
fn get_missing_key_is_not_cached() {
    let miss = "cmd=get_result rc=-1 msg=key_k_not_found value=unknown\n";
    let (mut client, server) = client_with_kvsname(
        Script::new()
            .exchange(get_request("k"), miss)
            .exchange(get_request("k"), "cmd=get_result rc=0 value=late\n"),
    );
    assert_eq!(client.get(KVS, b"k"), Err(PmiError::InvalidKey));
    assert_eq!(client.get(KVS, b"k"), Ok(&b"late"[..]));
    drop(client);
    assert_wire(
        &finish(server),
        &after_kvsname(&[&get_request("k"), &get_request("k")]),
    );
}

#[test]
fn get_strips_found_true() {
    let (mut client, server) = client_with_kvsname(Script::new().exchange(
        get_request("k"),
        "cmd=get_result rc=0 msg=success value=abc found=TRUE\n",
    ));
    assert_eq!(client.get(KVS, b"k"), Ok(&b"abc"[..]));
    drop(client);
    finish(server);
}

#[test]
fn get_value_with_spaces_and_equals_is_returned_intact() {
    let (mut client, server) = client_with_kvsname(Script::new().exchange(
        get_request("k"),
        "cmd=get_result rc=0 msg=success value= a b=c  d=\tx rc=5 \n",
    ));
    assert_eq!(client.get(KVS, b"k"), Ok(&b" a b=c  d=\tx rc=5 "[..]));
    drop(client);
    finish(server);
}

#[test]
fn get_is_answered_from_cache_from_the_third_time_on() {
    // Kept from the second read on: a key read once (a peer's business card) is not.
    let (mut client, server) = client_with_kvsname(
        Script::new()
            .exchange(get_request("k"), "cmd=get_result rc=0 value=v\n")
            .exchange(get_request("k"), "cmd=get_result rc=0 value=v\n"),
    );
    for _ in 0..4 {
        assert_eq!(client.get(KVS, b"k"), Ok(&b"v"[..]));
    }
    drop(client);
    assert_wire(
        &finish(server),
        &after_kvsname(&[&get_request("k"), &get_request("k")]),
    );
}

#[test]
fn the_process_managers_own_keys_are_asked_every_time() {
    // Hydra answers PMI_dead_processes from the ranks dead so far: the third poll must
    // reach the server and see rank 3. The mapping (read once at most) stays kept.
    let dead = |v: &str| format!("cmd=get_result rc=0 msg=success value={v}\n");
    let (mut client, server) = client_with_kvsname(
        Script::new()
            .exchange(get_request("PMI_dead_processes"), dead(""))
            .exchange(get_request("PMI_dead_processes"), dead(""))
            .exchange(get_request("PMI_dead_processes"), dead("3"))
            .exchange(get_request("PMI_process_mapping"), dead("(vector,(0,1,1))")),
    );
    assert_eq!(client.get(KVS, b"PMI_dead_processes"), Ok(&b""[..]));
    assert_eq!(client.get(KVS, b"PMI_dead_processes"), Ok(&b""[..]));
    assert_eq!(client.get(KVS, b"PMI_dead_processes"), Ok(&b"3"[..]));
    for _ in 0..2 {
        assert_eq!(
            client.get(KVS, b"PMI_process_mapping"),
            Ok(&b"(vector,(0,1,1))"[..])
        );
    }
    drop(client);
    let dead = get_request("PMI_dead_processes");
    assert_wire(
        &finish(server),
        &after_kvsname(&[&dead, &dead, &dead, &get_request("PMI_process_mapping")]),
    );
}

#[test]
fn get_rc_0_without_value_is_fail() {
    let (mut client, server) = client_with_kvsname(
        Script::new()
            .exchange(get_request("k"), "cmd=get_result rc=0 msg=success\n")
            .exchange(get_request("k"), "cmd=get_result rc=0 value=v\n"),
    );
    assert_eq!(client.get(KVS, b"k"), Err(PmiError::Fail));
    // Not a framing failure: the connection is still in step.
    assert_eq!(client.get(KVS, b"k"), Ok(&b"v"[..]));
    drop(client);
    assert_wire(
        &finish(server),
        &after_kvsname(&[&get_request("k"), &get_request("k")]),
    );
}

#[test]
fn get_invalid_arguments_send_nothing() {
    let (mut client, server) = client_with_kvsname(Script::new());
    assert_eq!(client.get(b"kvs_other", b"k"), Err(PmiError::InvalidKvs));
    assert_eq!(client.get(KVS, b""), Err(PmiError::InvalidKey));
    assert_eq!(client.get(KVS, b"a b"), Err(PmiError::InvalidKey));
    assert_eq!(client.get(KVS, b"a=b"), Err(PmiError::InvalidKey));
    assert_eq!(
        client.get(KVS, &[b'k'; 64]),
        Err(PmiError::InvalidKeyLength)
    );
    assert_eq!(client.commit(b"kvs_other"), Err(PmiError::InvalidKvs));
    assert_eq!(client.commit(KVS), Ok(()));
    drop(client);
    assert_wire(&finish(server), &after_kvsname(&[]));
}

// ---------------------------------------------------------------------------------
// 7. framing failures

#[test]
fn wrong_cmd_breaks_the_connection_and_later_calls_send_nothing() {
    let (mut client, server) =
        client(Script::new().exchange("cmd=barrier_in\n", "cmd=put_result rc=0\n"));
    assert_eq!(client.barrier(), Err(PmiError::Fail));
    assert_eq!(client.barrier(), Err(PmiError::Fail));
    assert_eq!(client.kvsname(), Err(PmiError::Fail));
    assert_eq!(client.universe_size(), Err(PmiError::Fail));
    assert_eq!(client.put(KVS, b"k", b"v"), Err(PmiError::Fail));
    drop(client);
    assert_wire(&finish(server), &after_handshake(&[b"cmd=barrier_in\n"]));
}

#[test]
fn garbage_reply_breaks_the_connection() {
    for garbage in [&b"\n"[..], b"hello world\n", b"\x00\xff\x01\n", b"rc=0\n"] {
        let (mut client, server) = client(Script::new().expect("cmd=barrier_in\n").send(garbage));
        assert_eq!(client.barrier(), Err(PmiError::Fail), "{:?}", show(garbage));
        assert_eq!(client.barrier(), Err(PmiError::Fail));
        drop(client);
        assert_wire(&finish(server), &after_handshake(&[b"cmd=barrier_in\n"]));
    }
}

#[test]
fn server_closing_at_init_is_fail() {
    let (client, server) = init(Script::new().expect(INIT_REQUEST).close());
    assert_eq!(client.err(), Some(PmiError::Fail));
    assert_wire(&finish(server), INIT_REQUEST);

    // Closed before the client even wrote.
    let (client, server) = init(Script::new().close());
    assert_eq!(client.err(), Some(PmiError::Fail));
    finish(server);
}

#[test]
fn server_closing_at_barrier_is_fail_and_later_calls_fail_fast() {
    let (mut client, server) = client(Script::new().expect("cmd=barrier_in\n").close());
    assert_eq!(client.barrier(), Err(PmiError::Fail));
    assert_wire(&finish(server), &after_handshake(&[b"cmd=barrier_in\n"]));
    let started = Instant::now();
    assert_eq!(client.barrier(), Err(PmiError::Fail));
    assert_eq!(client.appnum(), Err(PmiError::Fail));
    assert_eq!(client.kvsname(), Err(PmiError::Fail));
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[test]
fn after_the_server_closed_a_get_of_this_process_own_key_fails_too() {
    // A put acknowledged, then the server closes at the barrier: the key this process
    // put is asked of the server as any other, so its get fails at once as well.
    let (mut client, server) = client(
        Script::new()
            .expect(KVSNAME_REQUEST)
            .send(format!("cmd=my_kvsname kvsname={}\n", show(KVS)))
            .expect(format!("cmd=put kvsname={} key=mine value=v\n", show(KVS)))
            .send("cmd=put_result rc=0\n")
            .expect("cmd=barrier_in\n")
            .close(),
    );
    assert_eq!(client.put(KVS, b"mine", b"v"), Ok(()));
    assert_eq!(client.barrier(), Err(PmiError::Fail));
    finish(server);
    let started = Instant::now();
    assert_eq!(client.get(KVS, b"mine"), Err(PmiError::Fail));
    assert!(started.elapsed() < Duration::from_secs(1));
    // Putting it again with the same value needs no server: it still succeeds.
    assert_eq!(client.put(KVS, b"mine", b"v"), Ok(()));
}

#[test]
fn server_closing_in_the_middle_of_a_reply_line_is_fail() {
    let (mut client, server) = client(
        Script::new()
            .expect("cmd=barrier_in\n")
            .send("cmd=barrier_o")
            .sleep(Duration::from_millis(20))
            .close(),
    );
    assert_eq!(client.barrier(), Err(PmiError::Fail));
    assert_wire(&finish(server), &after_handshake(&[b"cmd=barrier_in\n"]));
    assert_eq!(client.barrier(), Err(PmiError::Fail));
    assert_eq!(client.get(KVS, b"k"), Err(PmiError::Fail));
}

// ---------------------------------------------------------------------------------
// 8. partial reads and early replies

#[test]
fn reply_dribbled_one_byte_at_a_time_is_read() {
    let script = Script::new()
        .expect(INIT_REQUEST)
        .dribble(INIT_REPLY)
        .expect(MAXES_REQUEST)
        .dribble("cmd=maxes kvsname_max=300 keylen_max=40 vallen_max=2000\n")
        .expect(KVSNAME_REQUEST)
        .dribble(format!("cmd=my_kvsname kvsname={}\n", show(KVS)))
        .expect(get_request("k"))
        .dribble("cmd=get_result rc=0 msg=success value=a b c\n");
    let (client, server) = init(script);
    let mut client = client.expect("init over a dribbling server");
    assert_eq!(
        client.maxes(),
        Maxes {
            kvsname: 300,
            key: 40,
            value: 2000
        }
    );
    assert_eq!(client.get(KVS, b"k"), Ok(&b"a b c"[..]));
    drop(client);
    assert_wire(&finish(server), &after_kvsname(&[&get_request("k")]));
}

#[test]
fn two_replies_in_one_chunk_are_read_in_order() {
    let both = [INIT_REPLY, MAXES_REPLY].concat();
    let script = Script::new()
        .expect(INIT_REQUEST)
        .send(both)
        .expect(MAXES_REQUEST)
        .then(kvsname());
    let (client, server) = init(script);
    let mut client = client.expect("init with both replies in one chunk");
    assert_eq!(client.maxes(), HYDRA_MAXES);
    assert_eq!(client.kvsname(), Ok(KVS));
    drop(client);
    assert_wire(&finish(server), &after_kvsname(&[]));
}

#[test]
fn early_reply_split_across_chunks_is_read_in_order() {
    let script = Script::new()
        .expect(INIT_REQUEST)
        .send([INIT_REPLY, b"cmd=maxes kvsname_max=2"].concat())
        .expect(MAXES_REQUEST)
        .sleep(Duration::from_millis(10))
        .send(b"56 keylen_max=64 vallen_max=1024\ncmd=barrier_out\n")
        .expect("cmd=barrier_in\n");
    let (client, server) = init(script);
    let mut client = client.expect("init with a reply split across chunks");
    assert_eq!(client.maxes(), HYDRA_MAXES);
    assert_eq!(client.barrier(), Ok(()));
    drop(client);
    assert_wire(&finish(server), &after_handshake(&[b"cmd=barrier_in\n"]));
}

// ---------------------------------------------------------------------------------
// 9. endless line

#[test]
fn endless_line_is_fail_without_reading_forever() {
    let started = Instant::now();
    let (mut client, server) = client(
        Script::new()
            .expect("cmd=barrier_in\n")
            .send(vec![b'x'; 1024 * 1024]),
    );
    assert_eq!(client.barrier(), Err(PmiError::Fail));
    assert_eq!(client.barrier(), Err(PmiError::Fail));
    assert_eq!(client.universe_size(), Err(PmiError::Fail));
    // Dropping the client ends the server's blocked write of the rest.
    drop(client);
    assert_wire(&finish(server), &after_handshake(&[b"cmd=barrier_in\n"]));
    assert!(started.elapsed() < Duration::from_secs(5));
}

// ---------------------------------------------------------------------------------
// 10. the longest reply line

/// A get reply whose line, newline included, is `total` bytes; and its value.
fn get_reply_of_length(total: usize) -> (Vec<u8>, Vec<u8>) {
    let head = b"cmd=get_result rc=0 msg=success value=";
    let value = vec![b'v'; total - head.len() - 1];
    let line = [&head[..], &value, b"\n"].concat();
    assert_eq!(line.len(), total);
    (line, value)
}

#[test]
fn get_reply_line_of_max_line_bytes_is_accepted() {
    let (line, value) = get_reply_of_length(MAX_LINE);
    let (mut client, server) = client_with_kvsname(
        Script::new()
            .exchange(get_request("k"), line)
            .exchange("cmd=barrier_in\n", "cmd=barrier_out\n"),
    );
    assert_eq!(client.get(KVS, b"k"), Ok(&value[..]));
    assert_eq!(client.barrier(), Ok(()));
    drop(client);
    assert_wire(
        &finish(server),
        &after_kvsname(&[&get_request("k"), b"cmd=barrier_in\n"]),
    );
}

#[test]
fn get_reply_line_of_max_line_bytes_after_buffered_bytes_is_accepted() {
    // The long line arrives right behind another reply, so it does not start at the
    // front of the client's buffer.
    let (line, value) = get_reply_of_length(MAX_LINE);
    let (mut client, server) = client_with_kvsname(
        Script::new()
            .expect("cmd=barrier_in\n")
            .send([&b"cmd=barrier_out\n"[..], &line].concat())
            .expect(get_request("k")),
    );
    assert_eq!(client.barrier(), Ok(()));
    assert_eq!(client.get(KVS, b"k"), Ok(&value[..]));
    drop(client);
    assert_wire(
        &finish(server),
        &after_kvsname(&[b"cmd=barrier_in\n", &get_request("k")]),
    );
}

#[test]
fn get_reply_line_past_max_line_is_fail() {
    for total in [MAX_LINE + 1, MAX_LINE + 2, 2 * MAX_LINE] {
        let (line, _) = get_reply_of_length(total);
        let (mut client, server) =
            client_with_kvsname(Script::new().exchange(get_request("k"), line));
        assert_eq!(client.get(KVS, b"k"), Err(PmiError::Fail), "{total} bytes");
        assert_eq!(client.barrier(), Err(PmiError::Fail));
        drop(client);
        assert_wire(&finish(server), &after_kvsname(&[&get_request("k")]));
    }
}

// ---------------------------------------------------------------------------------
// 11. barrier and finalize

#[test]
fn barrier_sends_barrier_in_and_accepts_barrier_out() {
    let (mut client, server) =
        client(Script::new().exchange("cmd=barrier_in\n", "cmd=barrier_out\n"));
    assert_eq!(client.barrier(), Ok(()));
    drop(client);
    assert_wire(&finish(server), &after_handshake(&[b"cmd=barrier_in\n"]));
}

#[test]
fn barrier_nonzero_rc_is_fail_and_connection_stays_usable() {
    let (mut client, server) = client(
        Script::new()
            .exchange("cmd=barrier_in\n", "cmd=barrier_out rc=1\n")
            .exchange("cmd=barrier_in\n", "cmd=barrier_out rc=0\n"),
    );
    assert_eq!(client.barrier(), Err(PmiError::Fail));
    assert_eq!(client.barrier(), Ok(()));
    drop(client);
    assert_wire(
        &finish(server),
        &after_handshake(&[b"cmd=barrier_in\n", b"cmd=barrier_in\n"]),
    );
}

#[test]
fn finalize_sends_finalize_and_accepts_finalize_ack() {
    let (mut client, server) =
        client(Script::new().exchange("cmd=finalize\n", "cmd=finalize_ack\n"));
    assert_eq!(client.finalize(), Ok(()));
    drop(client);
    assert_wire(&finish(server), &after_handshake(&[b"cmd=finalize\n"]));
}

#[test]
fn finalize_with_wrong_reply_is_fail() {
    let (mut client, server) =
        client(Script::new().exchange("cmd=finalize\n", "cmd=barrier_out\n"));
    assert_eq!(client.finalize(), Err(PmiError::Fail));
    drop(client);
    assert_wire(&finish(server), &after_handshake(&[b"cmd=finalize\n"]));
}

// ---------------------------------------------------------------------------------
// 12. name service

const PUBLISH: &str = "cmd=publish_name service=svc port=p1\n";
const UNPUBLISH: &str = "cmd=unpublish_name service=svc\n";
const LOOKUP: &str = "cmd=lookup_name service=svc\n";

#[test]
fn publish_name_hydra_replies() {
    let (mut client, server) = client(
        Script::new()
            .exchange(PUBLISH, "cmd=publish_result info=ok rc=0 msg=success\n")
            .exchange(
                PUBLISH,
                "cmd=publish_result info=ok rc=1 msg=key_already_present\n",
            )
            .exchange(PUBLISH, "cmd=publish_result rc=1 msg=key_already_present\n"),
    );
    assert_eq!(client.publish_name(b"svc", b"p1"), Ok(()));
    assert_eq!(client.publish_name(b"svc", b"p1"), Err(PmiError::Fail));
    assert_eq!(client.publish_name(b"svc", b"p1"), Err(PmiError::Fail));
    drop(client);
    assert_wire(&finish(server), &after_handshake(&[PUBLISH.as_bytes(); 3]));
}

#[test]
fn publish_name_slurm_replies_without_rc() {
    let (mut client, server) = client(
        Script::new()
            .exchange(PUBLISH, "cmd=publish_result info=ok\n")
            .exchange(PUBLISH, "cmd=publish_result info=fail\n"),
    );
    assert_eq!(client.publish_name(b"svc", b"p1"), Ok(()));
    assert_eq!(client.publish_name(b"svc", b"p1"), Err(PmiError::Fail));
    drop(client);
    assert_wire(&finish(server), &after_handshake(&[PUBLISH.as_bytes(); 2]));
}

#[test]
fn unpublish_name_hydra_and_slurm_replies() {
    let (mut client, server) = client(
        Script::new()
            .exchange(UNPUBLISH, "cmd=unpublish_result info=ok rc=0 msg=success\n")
            .exchange(
                UNPUBLISH,
                "cmd=unpublish_result rc=1 msg=service_not_found\n",
            )
            .exchange(UNPUBLISH, "cmd=unpublish_result info=ok\n")
            .exchange(UNPUBLISH, "cmd=unpublish_result info=fail\n"),
    );
    assert_eq!(client.unpublish_name(b"svc"), Ok(()));
    assert_eq!(client.unpublish_name(b"svc"), Err(PmiError::Fail));
    assert_eq!(client.unpublish_name(b"svc"), Ok(()));
    assert_eq!(client.unpublish_name(b"svc"), Err(PmiError::Fail));
    drop(client);
    assert_wire(
        &finish(server),
        &after_handshake(&[UNPUBLISH.as_bytes(); 4]),
    );
}

#[test]
fn lookup_name_returns_the_port() {
    let (mut client, server) = client(
        Script::new()
            .exchange(
                LOOKUP,
                "cmd=lookup_result port=p1 info=ok rc=0 msg=success\n",
            )
            .exchange(LOOKUP, "cmd=lookup_result info=ok port=p2\n")
            .exchange(LOOKUP, "cmd=lookup_result rc=1 msg=service_not_found\n")
            .exchange(LOOKUP, "cmd=lookup_result info=fail\n")
            .exchange(LOOKUP, "cmd=lookup_result info=ok rc=0\n"),
    );
    assert_eq!(client.lookup_name(b"svc"), Ok(&b"p1"[..]));
    assert_eq!(client.lookup_name(b"svc"), Ok(&b"p2"[..]));
    assert_eq!(client.lookup_name(b"svc"), Err(PmiError::Fail));
    assert_eq!(client.lookup_name(b"svc"), Err(PmiError::Fail));
    // Success without a port is no answer.
    assert_eq!(client.lookup_name(b"svc"), Err(PmiError::Fail));
    drop(client);
    assert_wire(&finish(server), &after_handshake(&[LOOKUP.as_bytes(); 5]));
}

#[test]
fn name_service_words_with_spaces_are_invalid_arg_and_send_nothing() {
    let (mut client, server) = client(Script::new());
    assert_eq!(
        client.publish_name(b"s v", b"p1"),
        Err(PmiError::InvalidArg)
    );
    assert_eq!(
        client.publish_name(b"svc", b"p 1"),
        Err(PmiError::InvalidArg)
    );
    assert_eq!(client.publish_name(b"", b"p1"), Err(PmiError::InvalidArg));
    assert_eq!(
        client.publish_name(b"s=v", b"p1"),
        Err(PmiError::InvalidArg)
    );
    assert_eq!(client.unpublish_name(b"s v"), Err(PmiError::InvalidArg));
    assert_eq!(client.unpublish_name(b"s\nv"), Err(PmiError::InvalidArg));
    assert_eq!(client.lookup_name(b"s v"), Err(PmiError::InvalidArg));
    assert_eq!(client.lookup_name(b""), Err(PmiError::InvalidArg));
    drop(client);
    assert_wire(&finish(server), &after_handshake(&[]));
}

#[test]
fn name_service_words_too_long_for_a_line_are_invalid_arg_and_send_nothing() {
    // Service names and ports have no length limit of their own, but a request line
    // longer than MAX_LINE breaks the protocol (Hydra 4.0.2 kills the job).
    let long = vec![b's'; MAX_LINE];
    // The replies are sent ahead, so a client that wrongly sends its request is
    // answered at once instead of hanging.
    let (mut client, server) = client(
        Script::new()
            .send("cmd=publish_result info=ok rc=0\n")
            .send("cmd=unpublish_result info=ok rc=0\n")
            .send("cmd=lookup_result info=ok rc=0 port=p1\n"),
    );
    assert_eq!(client.publish_name(&long, b"p1"), Err(PmiError::InvalidArg));
    assert_eq!(
        client.publish_name(b"svc", &long),
        Err(PmiError::InvalidArg)
    );
    assert_eq!(client.unpublish_name(&long), Err(PmiError::InvalidArg));
    assert_eq!(client.lookup_name(&long), Err(PmiError::InvalidArg));
    drop(client);
    assert_wire(&finish(server), &after_handshake(&[]));
}

#[test]
fn crlf_line_endings_are_accepted() {
    let (mut client, server) = client(
        Script::new()
            .exchange("cmd=barrier_in\n", "cmd=barrier_out\r\n")
            .exchange("cmd=get_universe_size\n", "cmd=universe_size size=4\r\n"),
    );
    assert_eq!(client.barrier(), Ok(()));
    assert_eq!(client.universe_size(), Ok(4));
    drop(client);
    assert_wire(
        &finish(server),
        &after_handshake(&[b"cmd=barrier_in\n", b"cmd=get_universe_size\n"]),
    );
}

// ---------------------------------------------------------------------------------
// 13. clique

const RANK_2_OF_4: Identity = Identity {
    rank: 2,
    size: 4,
    spawned: false,
};

/// The clique as PMI_Get_clique_size and PMI_Get_clique_ranks see it.
fn clique_of(client: &mut Client) -> Result<Vec<i32>, PmiError> {
    let mut ranks = vec![-1; client.clique_size()?];
    client.clique_into(&mut ranks)?;
    Ok(ranks)
}

/// The clique of rank 2 of 4 when the mapping get is answered `reply`, asked twice;
/// and the transcript.
fn clique_with(reply: &str) -> (Vec<i32>, Vec<u8>) {
    let mapping = get_request("PMI_process_mapping");
    let (mut client, server) = client_as(
        RANK_2_OF_4,
        kvsname().exchange(&mapping, format!("{reply}\n")),
    );
    let first = clique_of(&mut client);
    let second = clique_of(&mut client);
    assert_eq!(first, second, "{reply}");
    drop(client);
    let wire = finish(server);
    assert_wire(&wire, &after_kvsname(&[&mapping]));
    (first.expect("clique"), wire)
}

#[test]
fn clique_from_process_mapping_is_fetched_once() {
    let (clique, _) = clique_with("cmd=get_result rc=0 msg=success value=(vector,(0,2,2))");
    assert_eq!(clique, [2, 3]);
}

/// The clique of rank 2 of 4 when `PMI_process_mapping` is missing and the get of Flux's
/// task map is answered `reply`, asked twice.
fn clique_from_taskmap(reply: &str) -> Vec<i32> {
    let mapping = get_request("PMI_process_mapping");
    let taskmap = get_request("flux.taskmap");
    let script = kvsname()
        // Flux 0.88's job shell, for a key nobody put (PMI_ERR_INVALID_KEY).
        .exchange(&mapping, "cmd=get_result rc=4\n")
        .exchange(&taskmap, format!("{reply}\n"));
    let (mut client, server) = client_as(RANK_2_OF_4, script);
    let first = clique_of(&mut client);
    assert_eq!(first, clique_of(&mut client), "{reply}");
    drop(client);
    assert_wire(&finish(server), &after_kvsname(&[&mapping, &taskmap]));
    first.expect("clique")
}

#[test]
fn clique_without_process_mapping_or_taskmap_is_this_rank() {
    let clique =
        clique_from_taskmap("cmd=get_result rc=-1 msg=key_flux.taskmap_not_found value=unknown");
    assert_eq!(clique, [2]);
}

#[test]
fn clique_from_flux_taskmap_when_process_mapping_is_missing() {
    // Flux leaves PMI_process_mapping out past 1024 bytes (flux-core#4778); 4 tasks
    // cyclic on 2 nodes, as its job shell writes the task map (RFC 34).
    for (reply, clique) in [
        (
            r#"cmd=get_result rc=0 value={"version":1,"map":[[0,2,1,2]]}"#,
            vec![0, 2],
        ),
        (r#"cmd=get_result rc=0 value=[[0,2,2,1]]"#, vec![2, 3]),
        (
            r#"cmd=get_result rc=0 value=[[1,1,2,1],[0,1,2,1]]"#,
            vec![2, 3],
        ),
    ] {
        assert_eq!(clique_from_taskmap(reply), clique, "{reply}");
    }
}

#[test]
fn clique_with_a_taskmap_that_is_not_this_jobs_is_this_rank() {
    for reply in [
        // Malformed, or of another size than the job's 4 tasks.
        r#"cmd=get_result rc=0 value={"version":2,"map":[[0,2,1,2]]}"#,
        r#"cmd=get_result rc=0 value=[[0,2,1,2]"#,
        r#"cmd=get_result rc=0 value=[[0,2,1,3]]"#,
        "cmd=get_result rc=0 value=(vector,(0,2,2))",
    ] {
        assert_eq!(clique_from_taskmap(reply), [2], "{reply}");
    }
}

#[test]
fn clique_with_empty_process_mapping_is_this_rank() {
    let (clique, _) = clique_with("cmd=get_result rc=0 msg=success value=");
    assert_eq!(clique, [2]);
}

#[test]
fn clique_with_malformed_process_mapping_is_this_rank() {
    for reply in [
        "cmd=get_result rc=0 msg=success value=(vector,(0,2",
        "cmd=get_result rc=0 msg=success value=garbage",
        "cmd=get_result rc=0 msg=success value=(vector,(0,0,0))",
    ] {
        let (clique, _) = clique_with(reply);
        assert_eq!(clique, [2], "{reply}");
    }
}

#[test]
fn clique_is_this_rank_when_keylen_max_cannot_hold_the_mapping_key() {
    let script = Script::new()
        .exchange(INIT_REQUEST, INIT_REPLY)
        .exchange(
            MAXES_REQUEST,
            "cmd=maxes kvsname_max=256 keylen_max=16 vallen_max=1024\n",
        )
        .then(kvsname());
    let id = Identity {
        rank: 2,
        size: 4,
        spawned: false,
    };
    let (client, server) = init_as(id, script);
    let mut client = client.unwrap();
    assert_eq!(clique_of(&mut client), Ok(vec![2]));
    drop(client);
    let expected = [INIT_REQUEST, MAXES_REQUEST, KVSNAME_REQUEST].concat();
    assert_wire(&finish(server), &expected);
}

/// What `PMI_KVS_Get` of the mapping answers rank 2 of 4 when the server sends `reply`.
fn mapping_get_with(reply: &str) -> Vec<u8> {
    let mapping = get_request("PMI_process_mapping");
    let (mut client, server) = client_as(
        RANK_2_OF_4,
        kvsname().exchange(&mapping, format!("{reply}\n")),
    );
    let name = client.kvsname().expect("kvsname").to_vec();
    let value = client
        .get(&name, b"PMI_process_mapping")
        .map(<[u8]>::to_vec);
    let clique = clique_of(&mut client);
    drop(client);
    assert_wire(&finish(server), &after_kvsname(&[&mapping]));
    assert_eq!(
        clique,
        Ok(vec![0, 1, 2, 3]),
        "{reply}: every rank on node 0"
    );
    value.expect("get")
}

#[test]
fn a_mapping_that_must_repeat_is_answered_written_out() {
    // Hydra 4.0.2, `mpiexec -n 4` without slot counts: Intel MPI would not repeat it.
    let got = mapping_get_with("cmd=get_result rc=0 msg=success value=(vector,(0,1,1))");
    assert_eq!(show(&got), "(vector,(0,1,4))");
    // Already whole (or over-covering): passed through as the server wrote it.
    let got = mapping_get_with("cmd=get_result rc=0 msg=success value=(vector,(0,1,16))");
    assert_eq!(show(&got), "(vector,(0,1,16))");
}

#[test]
fn a_server_that_reads_1024_byte_requests_gets_no_longer_put() {
    // Slurm 22.05's PMI-1 server announces vallen_max=1024 but cuts any request line past
    // 1024 bytes. The maxima stay as announced (every value can be read); a put whose line
    // would be longer is refused, nothing sent. Here 54 bytes go around the value.
    let fits = "v".repeat(1024 - 54);
    let script = handshake()
        .then(kvsname())
        .exchange(put_request("k", &fits), "cmd=put_result rc=0\n");
    let (stream, server) = serve(script);
    let mut client = pmi1_client(conn(stream), ID, 1024).expect("init");
    assert_eq!(client.maxes().value, 1024);
    let kvs = client.kvsname().expect("kvsname").to_vec();
    let too_long = "v".repeat(1024 - 53);
    assert_eq!(
        client.put(&kvs, b"k", too_long.as_bytes()),
        Err(PmiError::InvalidValLength)
    );
    assert_eq!(client.put(&kvs, b"k", fits.as_bytes()), Ok(()));
    // The name service too: a service name within the value maximum whose line would
    // pass 1024 bytes is refused (as a bad argument), nothing sent.
    let service = "s".repeat(1000);
    assert_eq!(
        client.publish_name(service.as_bytes(), b"p1"),
        Err(PmiError::InvalidArg)
    );
    assert_eq!(
        client.unpublish_name(service.as_bytes()),
        Err(PmiError::InvalidArg)
    );
    assert_eq!(
        client.lookup_name(service.as_bytes()).map(<[u8]>::to_vec),
        Err(PmiError::InvalidArg)
    );
    drop(client);
    let wire = finish(server);
    assert!(wire.split(|&b| b == b'\n').all(|line| line.len() < 1024));
}

#[test]
fn a_value_with_a_nul_byte_is_refused_not_cut() {
    // The C caller would get the value cut at the NUL: PMI_FAIL instead, not cached.
    let get = get_request("k");
    let (mut client, server) = client_with_kvsname(
        Script::new()
            .exchange(&get, &b"cmd=get_result rc=0 value=ab\0cd\n"[..])
            .exchange(&get, "cmd=get_result rc=0 value=abcd\n"),
    );
    assert_eq!(client.get(KVS, b"k"), Err(PmiError::Fail));
    assert_eq!(client.get(KVS, b"k"), Ok(&b"abcd"[..]));
    drop(client);
    finish(server);
}

/// A client of `script` under a 1 s PMI_TIMEOUT whose barrier fails after 0.9 s and
/// before `under`; the client and the server.
fn barrier_times_out(script: Script, under: Duration) -> (Client, JoinHandle<Vec<u8>>) {
    let (stream, server) = serve(script);
    let mut c = conn(stream);
    c.set_timeout(Some(1));
    let mut client = pmi1_client(c, ID, MAX_LINE).expect("init");
    let start = Instant::now();
    assert_eq!(client.barrier(), Err(PmiError::Fail));
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < under,
        "{took:?}"
    );
    (client, server)
}

#[test]
fn pmi_timeout_fails_a_call_the_server_never_answers() {
    // The server reads the barrier and says nothing for 6 s; with a 1 s limit the call
    // fails after about 1 s (under 5 s: a busy machine may be slow to run it again), and
    // the connection is broken (later calls fail at once).
    let script = handshake()
        .expect("cmd=barrier_in\n")
        .sleep(Duration::from_secs(6));
    let (mut client, server) = barrier_times_out(script, Duration::from_secs(5));
    assert_eq!(client.barrier(), Err(PmiError::Fail));
    drop(client);
    finish(server);
}

#[test]
fn pmi_timeout_bounds_a_whole_reply_not_each_read() {
    // The reply comes in pieces 600 ms apart, each well within the 1 s limit; the whole
    // would take 3 s. The call fails once the second has passed (under 2.5 s: a busy
    // machine may be slow), not after the last piece.
    let mut script = handshake().expect("cmd=barrier_in\n");
    for piece in ["cmd=", "barr", "ier_", "out", "\n"] {
        script = script.sleep(Duration::from_millis(600)).send(piece);
    }
    let (client, server) = barrier_times_out(script, Duration::from_millis(2500));
    drop(client);
    finish(server);
}

#[test]
fn the_clique_of_a_huge_job_is_counted_not_built() {
    // PMI_SIZE=2147483647 on one node: the size is arithmetic, and a short array gets
    // PMI_ERR_INVALID_LENGTH without anything built (before: 8 GiB and 8.6 s).
    let huge = Identity {
        rank: 5,
        size: i32::MAX,
        spawned: false,
    };
    let mapping = get_request("PMI_process_mapping");
    let (mut client, server) = client_as(
        huge,
        kvsname().exchange(&mapping, "cmd=get_result rc=0 value=(vector,(0,1,1))\n"),
    );
    let start = Instant::now();
    assert_eq!(client.clique_size(), Ok(i32::MAX as usize));
    let mut ranks = [-7; 16];
    assert_eq!(client.clique_into(&mut ranks), Err(PmiError::InvalidLength));
    assert_eq!(ranks, [-7; 16]);
    assert!(start.elapsed() < Duration::from_secs(1));
    drop(client);
    finish(server);
}

// ---------------------------------------------------------------------------------
// A spawn answered once for each of its commands (Flux 0.88, which cannot spawn)

#[test]
fn further_answers_to_a_spawn_are_passed_over() {
    // Flux's job shell answers at each endcmd: twice for a spawn of two commands.
    let mut script = Script::new();
    for n in 1..=2 {
        let segment = format!(
            "mcmd=spawn\nnprocs=1\nexecname=/bin/true\ntotspawns=2\nspawnssofar={n}\nargcnt=0\n\
             preput_num=0\ninfo_num=0\nendcmd\n"
        );
        for line in segment.split_inclusive('\n') {
            script = script.expect(line);
        }
        script = script.send("cmd=spawn_result rc=-1\n");
    }
    let script = script
        .exchange("cmd=barrier_in\n", "cmd=barrier_out rc=0\n")
        .then(kvsname())
        .exchange(get_request("k"), "cmd=get_result rc=0 value=v\n");
    let (mut client, server) = client_as(RANK_2_OF_4, script);
    let command = || SpawnCommand {
        execname: b"/bin/true",
        args: vec![],
        maxprocs: 1,
        info: vec![],
    };
    let spawned = client.spawn(&[command(), command()], &[]).err();
    let barrier = client.barrier();
    let name = client.kvsname().expect("kvsname").to_vec();
    let got = client.get(&name, b"k").map(<[u8]>::to_vec);
    drop(client);
    let wire = finish(server);
    assert_eq!(spawned, Some(PmiError::Fail));
    assert_eq!(
        (barrier, got),
        (Ok(()), Ok(b"v".to_vec())),
        "{}",
        show(&wire)
    );
}

// ---------------------------------------------------------------------------------
// Values past 1024 bytes: a server that raised vallen_max to 2048 (flux-core#4796, where
// clients with fixed 1024-byte buffers crashed)

#[test]
fn values_past_1024_bytes_go_whole_both_ways_when_the_server_says_so() {
    let long = "v".repeat(2047);
    let script = Script::new()
        .exchange(INIT_REQUEST, INIT_REPLY)
        .exchange(
            MAXES_REQUEST,
            "cmd=maxes kvsname_max=64 keylen_max=64 vallen_max=2048\n",
        )
        .then(kvsname())
        .exchange(put_request("mine", &long), "cmd=put_result rc=0\n")
        .exchange(
            get_request("theirs"),
            format!("cmd=get_result rc=0 value={long}\n"),
        );
    let (client, server) = init(script);
    let mut client = client.expect("init");
    assert_eq!(client.maxes().value, 2048);
    let name = client.kvsname().expect("kvsname").to_vec();
    // The longest value the maximum allows (with its NUL), and no longer.
    assert_eq!(client.put(&name, b"mine", long.as_bytes()), Ok(()));
    let longer = "v".repeat(2048);
    assert_eq!(
        client.put(&name, b"more", longer.as_bytes()),
        Err(PmiError::InvalidValLength)
    );
    assert_eq!(client.get(&name, b"theirs"), Ok(long.as_bytes()));
    drop(client);
    finish(server);
}
