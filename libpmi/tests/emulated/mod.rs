//! An emulating PMI-1 server for tests that drive the library through its C exports:
//! a forked process (the shared harness's `in_child`) that answers every request the way Hydra
//! 4.0.2 does, keeps an in-memory KVS, optionally waits before each reply, and records
//! every line the client sent. The client end is handed to the library through `PMI_FD`
//! as a launcher hands it: inherited (not close-on-exec) and connected to another
//! process (the library refuses a socket whose peer is itself).

#![allow(dead_code)]

use pmi_testkit::scripted as common;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// The kvsname the emulated server hands out.
pub const KVS: &str = "kvs_emulated_0";

/// Start the server (in a forked process, `common::in_child`); set `PMI_FD`,
/// `PMI_RANK=0`, `PMI_SIZE=1` for the library. `delay` is slept before every reply (to
/// make the client block in `read`). Returns the thread, which yields every line the
/// client sent once the client closes its end.
pub fn start(delay: Duration) -> JoinHandle<Vec<String>> {
    let server = common::in_child(
        move |stream| serve(stream, delay).concat().into_bytes(),
        0,
        1,
    );
    thread::spawn(move || {
        let recorded = String::from_utf8_lossy(&common::finish(server)).into_owned();
        recorded.split_inclusive('\n').map(str::to_string).collect()
    })
}

fn serve(stream: UnixStream, delay: Duration) -> Vec<String> {
    let mut out = stream.try_clone().expect("clone");
    let mut lines = Vec::new();
    let mut kvs: HashMap<String, String> = HashMap::new();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        lines.push(line.clone());
        let Some(reply) = answer(line.trim_end_matches('\n'), &mut kvs) else {
            continue;
        };
        if !delay.is_zero() {
            thread::sleep(delay);
        }
        if out.write_all(reply.as_bytes()).is_err() {
            break;
        }
    }
    lines
}

/// Where `answer` keeps the command of a spawn request while its lines arrive.
const SPAWNING: &str = "\0spawning";

/// Hydra's answer to one request line (None: no reply, as for `abort`).
fn answer(line: &str, kvs: &mut HashMap<String, String>) -> Option<String> {
    // A spawn request (one command here): its lines from `mcmd=spawn` to `endcmd`,
    // answered after the last with a code per process for two of them; a command
    // named `fail` is refused.
    if line == "mcmd=spawn" {
        kvs.insert(SPAWNING.into(), String::new());
        return None;
    }
    if let Some(command) = kvs.get_mut(SPAWNING) {
        if let Some(name) = line.strip_prefix("execname=") {
            *command = name.into();
        }
        if line != "endcmd" {
            return None;
        }
        return Some(match kvs.remove(SPAWNING).as_deref() {
            Some("fail") => "cmd=spawn_result rc=-1\n".into(),
            _ => "cmd=spawn_result rc=0 errcodes=0,7\n".into(),
        });
    }
    let field = |key: &str| -> String {
        let prefix = format!("{key}=");
        if key == "value" {
            return line
                .split_once(" value=")
                .map(|(_, v)| v.to_string())
                .unwrap_or_default();
        }
        line.split(' ')
            .find_map(|t| t.strip_prefix(prefix.as_str()))
            .unwrap_or_default()
            .to_string()
    };
    let cmd = field("cmd");
    Some(match cmd.as_str() {
        "init" => "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n".into(),
        "get_maxes" => "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n".into(),
        "get_my_kvsname" => format!("cmd=my_kvsname kvsname={KVS}\n"),
        "get_universe_size" => "cmd=universe_size size=1\n".into(),
        "get_appnum" => "cmd=appnum appnum=0\n".into(),
        "barrier_in" => "cmd=barrier_out\n".into(),
        "finalize" => "cmd=finalize_ack\n".into(),
        "put" => {
            kvs.insert(field("key"), field("value"));
            "cmd=put_result rc=0 msg=success\n".into()
        }
        "get" => match kvs
            .get(&field("key"))
            .cloned()
            .or_else(|| peer_value(&field("key")))
        {
            Some(v) => format!("cmd=get_result rc=0 msg=success value={v}\n"),
            None => "cmd=get_result rc=-1 msg=key_not_found value=unknown\n".into(),
        },
        // One name answers with a port longer than MPICH's MPI_MAX_PORT_NAME.
        "lookup_name" if field("service") == "long-port" => {
            format!("cmd=lookup_result port={} info=ok rc=0\n", "p".repeat(300))
        }
        "lookup_name" => "cmd=lookup_result port=tcp://h:1 info=ok rc=0\n".into(),
        "abort" => return None,
        _ => panic!("the emulated server got an unknown request: {line:?}"),
    })
}

/// What another process of the job put under `key`, for keys starting with `peer-`
/// (keys this process put are answered from what the server stored).
pub fn peer_value(key: &str) -> Option<String> {
    key.starts_with("peer-").then(|| format!("value of {key}"))
}

/// `PMI_Init` through the C export, then `PMI_KVS_Get_my_name`: the kvsname.
pub fn init_through_c() -> std::ffi::CString {
    let mut spawned: std::os::raw::c_int = -1;
    let mut name = [0 as std::os::raw::c_char; 256];
    // SAFETY: `spawned` is a writable int and `name` 256 writable bytes; a successful
    // PMI_KVS_Get_my_name wrote a NUL-terminated string into it.
    unsafe {
        assert_eq!(
            pmi::api::lifecycle::PMI_Init(&mut spawned),
            pmi::codes::PMI_SUCCESS
        );
        let rc = pmi::api::kvs::PMI_KVS_Get_my_name(name.as_mut_ptr(), 256);
        assert_eq!(rc, pmi::codes::PMI_SUCCESS);
        std::ffi::CStr::from_ptr(name.as_ptr()).to_owned()
    }
}

/// True when `line` is one whole request of a form the library may send.
pub fn is_request(line: &str) -> bool {
    let Some(body) = line.strip_suffix('\n') else {
        return false;
    };
    if body.contains('\n') {
        return false;
    }
    const FIXED: &[&str] = &[
        "cmd=init pmi_version=1 pmi_subversion=1",
        "cmd=get_maxes",
        "cmd=get_my_kvsname",
        "cmd=get_universe_size",
        "cmd=get_appnum",
        "cmd=barrier_in",
        "cmd=finalize",
    ];
    if FIXED.contains(&body) {
        return true;
    }
    let put = format!("cmd=put kvsname={KVS} key=");
    let get = format!("cmd=get kvsname={KVS} key=");
    if let Some(rest) = body.strip_prefix(&put) {
        return rest
            .split_once(" value=")
            .is_some_and(|(k, _)| !k.is_empty() && !k.contains(' '));
    }
    if let Some(key) = body.strip_prefix(&get) {
        return !key.is_empty() && !key.contains(' ');
    }
    false
}
