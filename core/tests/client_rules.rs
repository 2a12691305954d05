//! The client's rules over a fake backend that records every call: what reaches a
//! backend (nothing the rules refuse, no second put of a key, no second get of a key read
//! once), the per-API facts chosen at init, and the clique from either source.

use std::sync::{Arc, Mutex};

use pmi_core::api::Maxes;
use pmi_core::api::{Api, PMI2_MAXES};
use pmi_core::client::Client;
use pmi_core::error::{PmiError, PmiResult};
use pmi_core::{Identity, SpawnCommand, Spawned};
use pmi_testkit::core::Backend;
use pmi_testkit::core::GET_CACHE_BYTES;
use pmi_testkit::core::RECENT;

/// What the fake answers for any key `card-*`: a business card of 60 bytes.
const CARD: &[u8] = b"tcp://10.0.0.1:40000;ofi://fi_sockets/0a000001:9c40/000000000";

/// A backend answering from a table, recording each call as a line.
struct Fake {
    calls: Arc<Mutex<Vec<String>>>,
    values: Vec<(&'static [u8], &'static [u8])>,
    local: Option<Vec<i32>>,
    size: i32,
    /// Whether it says it keeps values whole (as the PMIx backend does).
    whole: bool,
}

impl Fake {
    fn log(&self, call: String) {
        self.calls.lock().unwrap().push(call);
    }
}

impl Backend for Fake {
    fn name(&self) -> &'static str {
        "fake"
    }
    fn keeps_values_whole(&self) -> bool {
        self.whole
    }
    fn identity(&self) -> Identity {
        Identity {
            rank: 1,
            size: self.size,
            spawned: false,
        }
    }
    fn maxes(&self) -> Maxes {
        Maxes {
            kvsname: 16,
            key: 20,
            value: 64,
        }
    }
    fn kvsname(&mut self) -> PmiResult<Vec<u8>> {
        self.log("kvsname".into());
        Ok(b"kvs".to_vec())
    }
    fn universe_size(&mut self) -> PmiResult<i32> {
        Ok(-1)
    }
    fn appnum(&mut self) -> PmiResult<i32> {
        Ok(0)
    }
    fn put(&mut self, _: &[u8], key: &[u8], value: &[u8]) -> PmiResult<()> {
        self.log(format!(
            "put {} {}",
            key.escape_ascii(),
            value.escape_ascii()
        ));
        Ok(())
    }
    fn commit(&mut self) -> PmiResult<()> {
        self.log("commit".into());
        Ok(())
    }
    fn barrier(&mut self) -> PmiResult<()> {
        self.log("barrier".into());
        Ok(())
    }
    fn get(&mut self, _: &[u8], key: &[u8]) -> PmiResult<&[u8]> {
        self.log(format!("get {}", key.escape_ascii()));
        if key.starts_with(b"card-") {
            return Ok(CARD);
        }
        self.values
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
            .ok_or(PmiError::InvalidKey)
    }
    fn job_attr(&mut self, name: &[u8]) -> PmiResult<Option<Vec<u8>>> {
        self.log(format!("job_attr {}", name.escape_ascii()));
        Ok(self
            .values
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_vec()))
    }
    fn local_ranks(&mut self) -> PmiResult<Option<Vec<i32>>> {
        Ok(self.local.clone())
    }
    fn publish_name(&mut self, _: &[u8], _: &[u8]) -> PmiResult<()> {
        self.log("publish".into());
        Ok(())
    }
    fn unpublish_name(&mut self, _: &[u8]) -> PmiResult<()> {
        Ok(())
    }
    fn lookup_name(&mut self, _: &[u8]) -> PmiResult<&[u8]> {
        Ok(b"port")
    }
    fn spawn(
        &mut self,
        _: &[SpawnCommand<'_>],
        _: &[(&[u8], &[u8])],
        _: usize,
    ) -> PmiResult<Spawned> {
        self.log("spawn".into());
        Ok(Spawned::default())
    }
    fn finalize(&mut self) -> PmiResult<()> {
        Ok(())
    }
}

fn client(
    api: Api,
    values: Vec<(&'static [u8], &'static [u8])>,
) -> (Client, Arc<Mutex<Vec<String>>>) {
    client_with(api, values, None, 4)
}

fn client_with(
    api: Api,
    values: Vec<(&'static [u8], &'static [u8])>,
    local: Option<Vec<i32>>,
    size: i32,
) -> (Client, Arc<Mutex<Vec<String>>>) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let fake = Fake {
        calls: Arc::clone(&calls),
        values,
        local,
        size,
        whole: false,
    };
    (pmi_testkit::core::client(Box::new(fake), api), calls)
}

fn calls(log: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
    log.lock().unwrap().clone()
}

#[test]
fn a_key_is_put_once_and_kept_from_its_second_read() {
    // The server holds "k" as it kept it (as a server that cuts at a space would keep it).
    let (mut c, log) = client(Api::Pmi1, vec![(b"peer", b"v1"), (b"k", b"kept")]);
    assert_eq!(c.put(b"kvs", b"k", b"v"), Ok(()));
    assert_eq!(c.put(b"kvs", b"k", b"v"), Ok(()));
    assert_eq!(c.put(b"kvs", b"k", b"w"), Err(PmiError::InvalidKey));
    for _ in 0..3 {
        assert_eq!(c.get(b"kvs", b"peer"), Ok(&b"v1"[..]));
    }
    assert_eq!(c.get(b"kvs", b"none"), Err(PmiError::InvalidKey));
    assert_eq!(c.get(b"other", b"peer"), Err(PmiError::InvalidKvs));
    // Its own key is asked of the server, as its peers ask: it reads what they read
    // (PMI-2's get too), and then keeps it as any key read again.
    assert_eq!(c.get(b"kvs", b"k"), Ok(&b"kept"[..]));
    assert_eq!(c.get_own(b"k", Some(0)), Ok(&b"kept"[..]));
    assert_eq!(
        calls(&log),
        ["kvsname", "put k v", "get peer", "get peer", "get none", "get k", "get k"]
    );
}

#[test]
fn where_the_server_keeps_values_whole_own_keys_are_answered_from_what_was_put() {
    let calls_log = Arc::new(Mutex::new(Vec::new()));
    let fake = Fake {
        calls: Arc::clone(&calls_log),
        values: vec![],
        local: None,
        size: 4,
        whole: true,
    };
    let mut c = pmi_testkit::core::client(Box::new(fake), Api::Pmi1);
    assert_eq!(c.put(b"kvs", b"k", b"a b"), Ok(()));
    assert_eq!(c.put(b"kvs", b"k", b"a c"), Err(PmiError::InvalidKey));
    assert_eq!(c.get(b"kvs", b"k"), Ok(&b"a b"[..]));
    assert_eq!(calls(&calls_log), ["kvsname", "put k a b"]);
}

#[test]
fn each_api_has_its_own_maxima_and_bytes() {
    // PMI-1: the backend's maxima; no space in a key, no newline in a value.
    let (mut c, log) = client(Api::Pmi1, vec![]);
    assert_eq!(c.maxes().key, 20);
    assert_eq!(c.put(b"kvs", b"a b", b"v"), Err(PmiError::InvalidKey));
    assert_eq!(c.put(b"kvs", b"k", b"a\nb"), Err(PmiError::InvalidVal));
    assert_eq!(
        c.put(b"kvs", b"k2345678901234567890", b"v"),
        Err(PmiError::InvalidKeyLength)
    );
    assert_eq!(c.put(b"kvs", b"k", b""), Err(PmiError::InvalidVal));
    assert_eq!(calls(&log), ["kvsname"]);
    // PMI-2: its header's maxima whatever the backend says; a ';' is refused, a space is
    // not; an empty value is refused as on PMI-1.
    let (mut c, log) = client(Api::Pmi2, vec![]);
    assert_eq!(c.maxes(), PMI2_MAXES);
    assert_eq!(c.put_own(b"a b", b"v\nw"), Ok(()));
    assert_eq!(c.put_own(b"a;b", b"v"), Err(PmiError::InvalidKey));
    assert_eq!(c.put_own(b"k", b""), Err(PmiError::InvalidVal));
    assert_eq!(c.put_own(b"k2345678901234567890", b"v"), Ok(()));
    assert_eq!(
        calls(&log),
        ["kvsname", "put a b v\\nw", "put k2345678901234567890 v"]
    );
}

#[test]
fn a_key_read_again_soon_is_cached_within_the_budget() {
    let (mut c, log) = client(Api::Pmi1, vec![]);
    let gets = || calls(&log).iter().filter(|l| l.starts_with("get ")).count();
    // Keys read in turns of more than RECENT are never kept: each read asks the server
    // (a job's business cards, read once each).
    for _ in 0..3 {
        for i in 0..100 {
            assert_eq!(c.get(b"kvs", format!("card-{i}").as_bytes()), Ok(CARD));
        }
    }
    assert_eq!(gets(), 300);
    // A key read again among the last RECENT keys is kept from that read on.
    for i in 0..RECENT {
        assert_eq!(c.get(b"kvs", format!("card-r{i}").as_bytes()), Ok(CARD));
    }
    for _ in 0..3 {
        for i in 0..RECENT {
            assert_eq!(c.get(b"kvs", format!("card-r{i}").as_bytes()), Ok(CARD));
        }
    }
    assert_eq!(gets(), 300 + 2 * RECENT);
    // Keys read twice in a row, more than twice what the cache holds: the cache starts
    // again when full, so the first ones are gone.
    let n = 2 * GET_CACHE_BYTES / (8 + "card-k0".len() + CARD.len()) + 1;
    for i in 0..n {
        let key = format!("card-k{i}");
        assert_eq!(c.get(b"kvs", key.as_bytes()), Ok(CARD));
        assert_eq!(c.get(b"kvs", key.as_bytes()), Ok(CARD));
    }
    let before = gets();
    assert_eq!(before, 300 + 2 * RECENT + 2 * n);
    let last = format!("card-k{}", n - 1);
    assert_eq!(c.get(b"kvs", last.as_bytes()), Ok(CARD));
    assert_eq!(gets(), before, "the newest key is still cached");
    assert_eq!(c.get(b"kvs", b"card-k0"), Ok(CARD));
    assert_eq!(gets(), before + 1, "the oldest key was let go");
}

#[test]
fn a_nul_in_a_value_is_refused_and_not_cached() {
    let (mut c, log) = client(Api::Pmi1, vec![(b"bad", b"a\0b")]);
    assert_eq!(c.get(b"kvs", b"bad"), Err(PmiError::Fail));
    assert_eq!(c.get(b"kvs", b"bad"), Err(PmiError::Fail));
    assert_eq!(calls(&log), ["kvsname", "get bad", "get bad"]);
    // A PMI-2 job attribute is a C string too.
    let (mut c, log) = client(Api::Pmi2, vec![(b"attr", b"a\0b"), (b"fine", b"ab")]);
    assert_eq!(c.job_attr(b"attr"), Err(PmiError::Fail));
    assert_eq!(c.job_attr(b"fine"), Ok(Some(b"ab".to_vec())));
    assert_eq!(calls(&log), ["job_attr attr", "job_attr fine"]);
}

#[test]
fn the_mapping_comes_from_where_the_api_says() {
    // PMI-1: a key, written out in full when it must repeat (4 ranks, one node).
    let (mut c, log) = client(
        Api::Pmi1,
        vec![(b"PMI_process_mapping", b"(vector,(0,1,1))")],
    );
    assert_eq!(c.clique_size(), Ok(4));
    assert_eq!(
        c.get(b"kvs", b"PMI_process_mapping"),
        Ok(&b"(vector,(0,1,4))"[..])
    );
    assert_eq!(calls(&log), ["kvsname", "get PMI_process_mapping"]);
    // PMI-2: a job attribute; two nodes of two.
    let (mut c, log) = client(
        Api::Pmi2,
        vec![(b"PMI_process_mapping", b"(vector,(0,2,2))")],
    );
    let mut ranks = [0; 2];
    assert_eq!(c.clique_into(&mut ranks), Ok(2));
    assert_eq!(ranks, [0, 1]);
    assert_eq!(calls(&log), ["kvsname", "job_attr PMI_process_mapping"]);
    // A backend that knows its local peers (PMIx) is asked nothing else.
    let (mut c, log) = client_with(Api::Pmi1, vec![], Some(vec![1, 3]), 4);
    let mut short = [0; 1];
    assert_eq!(c.clique_into(&mut short), Err(PmiError::InvalidLength));
    let mut ranks = [0; 2];
    assert_eq!(c.clique_into(&mut ranks), Ok(2));
    assert_eq!(ranks, [1, 3]);
    assert!(calls(&log).is_empty());
}

#[test]
fn names_and_spawns_are_checked_before_the_backend() {
    let (mut c, log) = client(Api::Pmi1, vec![]);
    assert_eq!(c.publish_name(b"s v", b"p"), Err(PmiError::InvalidArg));
    assert_eq!(
        c.publish_name(b"s", &[b'p'; 256]),
        Err(PmiError::InvalidArg)
    );
    assert_eq!(c.publish_name(b"s", b"p"), Ok(()));
    let empty = SpawnCommand {
        execname: b"",
        args: vec![],
        maxprocs: 1,
        info: vec![],
    };
    assert_eq!(c.spawn(&[empty], &[]), Err(PmiError::InvalidArgs));
    assert_eq!(calls(&log), ["publish"]);
}
