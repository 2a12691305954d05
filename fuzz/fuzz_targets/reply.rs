//! The reply parser on arbitrary bytes: no panic, every field it returns lies inside the
//! line, and a value encoded into a request comes back from a reply intact.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pmi_core::testkit::wire::parse_int_list;
use pmi_core::testkit::wire::pmi1::Reply;

fuzz_target!(|data: &[u8]| {
    let reply = Reply::new(data);
    for key in [&b"cmd"[..], b"rc", b"value", b"kvsname", b"port", b"errcodes", b""] {
        if let Some(v) = reply.field(key) {
            assert!(v.len() <= data.len());
        }
    }
    let _ = reply.rc();
    let _ = reply.int(b"size");
    if let Some(codes) = reply.field(b"errcodes") {
        let _ = parse_int_list(codes, 8);
    }
    // Whatever passes the value rules survives a round trip through a get reply.
    if pmi_core::api::Api::Pmi1.check_value(data, 1 << 20).is_ok() && !data.ends_with(b" found=TRUE") && !data.ends_with(b" found=FALSE") {
        let mut line = b"cmd=get_result rc=0 msg=success value=".to_vec();
        line.extend_from_slice(data);
        assert_eq!(Reply::new(&line).value(), Some(data.strip_suffix(b"\r").unwrap_or(data)));
    }
});
