//! The PMI-2 front through its C exports, against the scripted server speaking PMI-2
//! frames on `PMI_FD`: the codes are PMI-2's (`pmi2.h`), what the rules refuse is never
//! sent, outputs are written only on success. Its own test binary: the library's state is
//! process-wide.

use std::ffi::CString;
use std::os::raw::{c_char, c_int};
use std::ptr::{null, null_mut};

use pmi2::api::info::{PMI2_Info_GetJobAttr, PMI2_Info_PutNodeAttr, PMI2_Job_GetId};
use pmi2::api::kvs::{PMI2_KVS_Fence, PMI2_KVS_Get, PMI2_KVS_Put};
use pmi2::api::lifecycle::{PMI2_Finalize, PMI2_Init, PMI2_Initialized};
use pmi2::api::names::PMI2_Nameserv_publish;
use pmi2::codes::*;
use pmi_testkit::scripted::*;

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

#[test]
fn the_pmi2_front_over_the_wire() {
    let jobid = "kvs_77_0";
    let server = serve_in_child(
        Script::new()
            .exchange(
                "cmd=init pmi_version=2 pmi_subversion=0\n",
                "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n",
            )
            .exchange_frames(
                "cmd=fullinit;pmirank=1;threaded=FALSE;",
                "cmd=fullinit-response;rc=0;size=2;rank=1;appnum=3;",
            )
            .exchange_frames(
                "cmd=job-getid;",
                format!("cmd=job-getid-response;rc=0;jobid={jobid};"),
            )
            .exchange_frames("cmd=kvs-put;key=k;value=v;", "cmd=kvs-put-response;rc=0;")
            .exchange_frames("cmd=kvs-fence;", "cmd=kvs-fence-response;rc=0;")
            .exchange_frames(
                format!("cmd=kvs-get;jobid={jobid};srcid=0;key=peer;"),
                "cmd=kvs-get-response;rc=0;found=TRUE;value=0123456789;",
            )
            // Asked again after the short buffer: a key is kept from its second read on.
            .exchange_frames(
                format!("cmd=kvs-get;jobid={jobid};srcid=0;key=peer;"),
                "cmd=kvs-get-response;rc=0;found=TRUE;value=0123456789;",
            )
            .exchange_frames(
                "cmd=info-getjobattr;key=universeSize;",
                "cmd=info-getjobattr-response;rc=0;found=TRUE;value=8;",
            )
            .exchange_frames("cmd=finalize;", "cmd=finalize-response;rc=0;"),
        1,
        2,
    );
    let (mut spawned, mut size, mut rank, mut appnum) = (-1, -1, -1, -1);
    let mut buf = [b'X' as c_char; 64];
    let mut len: c_int = 0;
    let mut found: c_int = -1;
    // SAFETY (whole test): every pointer passed is NULL, a live CString, or a live buffer
    // at least as long as the length passed with it.
    unsafe {
        assert_eq!(PMI2_KVS_Fence(), PMI2_ERR_INIT);
        assert_eq!(
            PMI2_Init(&mut spawned, &mut size, &mut rank, null_mut()),
            PMI2_ERR_INVALID_ARG
        );
        assert_eq!(
            PMI2_Init(&mut spawned, &mut size, &mut rank, &mut appnum),
            PMI2_SUCCESS
        );
        assert_eq!((spawned, size, rank, appnum), (0, 2, 1, 3));
        assert_eq!(PMI2_Initialized(), 1);
        // Refused before anything is sent, with PMI-2's codes.
        assert_eq!(
            PMI2_KVS_Put(c("k").as_ptr(), c("").as_ptr()),
            PMI2_ERR_INVALID_VAL
        );
        assert_eq!(
            PMI2_KVS_Put(c("k;").as_ptr(), c("v").as_ptr()),
            PMI2_ERR_INVALID_KEY
        );
        assert_eq!(PMI2_KVS_Put(null(), c("v").as_ptr()), PMI2_ERR_INVALID_ARG);
        assert_eq!(
            PMI2_Info_PutNodeAttr(c("na").as_ptr(), c("").as_ptr()),
            PMI2_ERR_INVALID_VAL
        );
        assert_eq!(
            PMI2_Nameserv_publish(c("svc").as_ptr(), null(), c("h;1").as_ptr()),
            PMI2_ERR_INVALID_ARG
        );
        // Another job's id: an invalid argument (PMI-2 has no code of PMI-1's
        // PMI_ERR_INVALID_KVS, whose number is PMI2_ERR_OTHER's).
        assert_eq!(
            PMI2_KVS_Get(
                c("another").as_ptr(),
                0,
                c("peer").as_ptr(),
                buf.as_mut_ptr(),
                64,
                &mut len
            ),
            PMI2_ERR_INVALID_ARG
        );
        assert_eq!(PMI2_KVS_Put(c("k").as_ptr(), c("v").as_ptr()), PMI2_SUCCESS);
        assert_eq!(PMI2_KVS_Fence(), PMI2_SUCCESS);
        // A value that does not fit: nothing written, the length needed negated.
        assert_eq!(
            PMI2_KVS_Get(
                null(),
                0,
                c("peer").as_ptr(),
                buf.as_mut_ptr(),
                10,
                &mut len
            ),
            PMI2_ERR_INVALID_LENGTH
        );
        assert_eq!((buf[0], len), (b'X' as c_char, -10));
        assert_eq!(
            PMI2_KVS_Get(
                null(),
                0,
                c("peer").as_ptr(),
                buf.as_mut_ptr(),
                64,
                &mut len
            ),
            PMI2_SUCCESS
        );
        assert_eq!(len, 10);
        let mut id = [0 as c_char; 16];
        assert_eq!(PMI2_Job_GetId(id.as_mut_ptr(), 8), PMI2_ERR_INVALID_LENGTH);
        assert_eq!(PMI2_Job_GetId(id.as_mut_ptr(), 16), PMI2_SUCCESS);
        assert_eq!(
            PMI2_Info_GetJobAttr(c("universeSize").as_ptr(), buf.as_mut_ptr(), 64, &mut found),
            PMI2_SUCCESS
        );
        assert_eq!((found, buf[0]), (1, b'8' as c_char));
        assert_eq!(PMI2_Finalize(), PMI2_SUCCESS);
        assert_eq!(PMI2_Initialized(), 0);
        assert_eq!(PMI2_Finalize(), PMI2_ERR_INIT);
    }
    finish(server);
}
