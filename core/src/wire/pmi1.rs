//! The PMI-1.1 wire format, pure: request lines out, reply lines in (what a caller may
//! put in them is `rules`, which takes this format's tokens from here).

use super::{format_int, parse_int, Framing, IntDigits, Scan, SpawnCommand};
use crate::error::{PmiError, PmiResult};

/// The longest line, newline included, that is sent or accepted. Hydra 4.0.2 kills the
/// job on a request line over 64 KiB; a reply longer than this is a protocol error.
pub const MAX_LINE: usize = 64 * 1024;

/// How replies are found in the bytes read: a line, up to [`MAX_LINE`] bytes.
pub const LINES: Framing = Framing {
    cap: MAX_LINE,
    suffix: "",
    find: find_line,
};

#[inline]
fn find_line(bytes: &[u8]) -> Scan {
    Ok(memchr::memchr(b'\n', bytes).map(|i| (0..i, i + 1)))
}

/// The largest key, value and kvsname lengths (with the NUL) the library will honour,
/// whatever `get_maxes` announces: together they keep every request under [`MAX_LINE`].
pub const CLAMP_NAME_MAX: usize = 4096;
pub const CLAMP_KEY_MAX: usize = 4096;
pub const CLAMP_VAL_MAX: usize = 32 * 1024;

/// Append `cmd=<cmd>` followed by ` key=value` for each field, and a newline, to `buf`
/// (which is cleared first). Callers validate fields beforehand.
pub fn encode(buf: &mut Vec<u8>, cmd: &str, fields: &[(&str, &[u8])]) {
    buf.clear();
    buf.extend_from_slice(b"cmd=");
    buf.extend_from_slice(cmd.as_bytes());
    for (key, value) in fields {
        buf.push(b' ');
        buf.extend_from_slice(key.as_bytes());
        buf.push(b'=');
        buf.extend_from_slice(value);
    }
    buf.push(b'\n');
}

/// One reply line (without its newline), read leniently: fields in any order, runs of
/// spaces and tabs, extra keys, bare words skipped, the first occurrence of a key wins.
/// `value=` runs to the end of the line, less a trailing ` found=TRUE` / ` found=FALSE`
/// (Hydra 4.1.1-4.2.0, mpich#7050). `cmd`, `rc` and `value`, which every reply is judged
/// by, are found in one pass; any other key is found by scanning the line again when
/// asked for (only the rare replies carry one), so the pass stays small. No allocation.
#[derive(Debug, Clone, Copy)]
pub struct Reply<'a> {
    line: &'a [u8],
    cmd: Option<&'a [u8]>,
    rc: Option<&'a [u8]>,
    value: Option<&'a [u8]>,
}

/// The key whose value runs to the end of the line.
const VALUE_KEY: &[u8] = b"value";

fn is_separator(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

impl<'a> Reply<'a> {
    /// Parse one line in a single pass; a trailing `\r` is ignored.
    pub fn new(line: &'a [u8]) -> Reply<'a> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let mut reply = Reply {
            line,
            cmd: None,
            rc: None,
            value: None,
        };
        let mut i = 0;
        let n = line.len();
        while i < n {
            if is_separator(line[i]) {
                i += 1;
                continue;
            }
            // The key runs to the first `=`; a token without one is a bare word.
            let start = i;
            while i < n && line[i] != b'=' && !is_separator(line[i]) {
                i += 1;
            }
            if i == n || line[i] != b'=' {
                continue;
            }
            let key = &line[start..i];
            i += 1;
            if key == VALUE_KEY {
                // Decided at the `=`: the value is the rest of the line, not scanned.
                reply.value = Some(strip_found(&line[i..]));
                break;
            }
            let value_start = i;
            while i < n && !is_separator(line[i]) {
                i += 1;
            }
            let slot = match key {
                b"cmd" => &mut reply.cmd,
                b"rc" => &mut reply.rc,
                _ => continue,
            };
            slot.get_or_insert(&line[value_start..i]);
        }
        reply
    }

    /// The whole line, for traces and messages.
    pub fn line(&self) -> &'a [u8] {
        self.line
    }

    /// The first field named `key`, if any: a key other than `cmd`, `rc` and `value` is
    /// the first `key=` token before `value=`.
    pub fn field(&self, key: &[u8]) -> Option<&'a [u8]> {
        match key {
            b"cmd" => self.cmd,
            b"rc" => self.rc,
            VALUE_KEY => self.value,
            _ => self
                .line
                .split(|&b| is_separator(b))
                .take_while(|token| !token.starts_with(b"value="))
                .find_map(|token| token.strip_prefix(key)?.strip_prefix(b"=")),
        }
    }

    /// The `cmd=` field.
    pub fn cmd(&self) -> Option<&'a [u8]> {
        self.cmd
    }

    /// The `value=` field: the rest of the line after `value=`.
    pub fn value(&self) -> Option<&'a [u8]> {
        self.value
    }

    /// The `rc=` field as an integer; absent means success (RFC 13), so `Some(0)`.
    /// `None` when it is present but not an integer.
    pub fn rc(&self) -> Option<i64> {
        match self.rc {
            None => Some(0),
            Some(text) => parse_int(text),
        }
    }

    /// An integer field; `None` when absent or not an integer.
    pub fn int(&self, key: &[u8]) -> Option<i64> {
        self.field(key).and_then(parse_int)
    }
}

/// Remove one trailing ` found=TRUE` or ` found=FALSE` from a value (which is why a
/// PMI-1 put refuses a value ending in one: `rules`).
fn strip_found(value: &[u8]) -> &[u8] {
    for suffix in FOUND_FIELDS {
        if let Some(v) = value.strip_suffix(suffix) {
            return v;
        }
    }
    value
}

fn require(ok: bool, err: PmiError) -> PmiResult<()> {
    if ok {
        Ok(())
    } else {
        Err(err)
    }
}

/// Encode a spawn request into `buf`: one `mcmd=spawn` ... `endcmd` segment per command,
/// the preput pairs repeated in each. Its fields were checked by `rules` (nothing in them
/// ends a line or ends in [`END_OF_SPAWN`]); here, the request as a whole must stay
/// within what Hydra takes (`PMI_ERR_INVALID_ARGS`).
pub fn encode_spawn(
    buf: &mut Vec<u8>,
    commands: &[SpawnCommand<'_>],
    preput: &[(&[u8], &[u8])],
) -> PmiResult<()> {
    buf.clear();
    let total = commands.len().to_string();
    for (i, cmd) in commands.iter().enumerate() {
        push_line(buf, format_args!("mcmd"), b"spawn");
        push_line(
            buf,
            format_args!("nprocs"),
            cmd.maxprocs.to_string().as_bytes(),
        );
        push_line(buf, format_args!("execname"), cmd.execname);
        push_line(buf, format_args!("totspawns"), total.as_bytes());
        push_line(
            buf,
            format_args!("spawnssofar"),
            (i + 1).to_string().as_bytes(),
        );
        for (j, arg) in cmd.args.iter().enumerate() {
            push_line(buf, format_args!("arg{}", j + 1), arg);
        }
        push_line(
            buf,
            format_args!("argcnt"),
            cmd.args.len().to_string().as_bytes(),
        );
        push_line(
            buf,
            format_args!("preput_num"),
            preput.len().to_string().as_bytes(),
        );
        for (j, (key, value)) in preput.iter().enumerate() {
            push_line(buf, format_args!("preput_key_{j}"), key);
            push_line(buf, format_args!("preput_val_{j}"), value);
        }
        push_line(
            buf,
            format_args!("info_num"),
            cmd.info.len().to_string().as_bytes(),
        );
        for (j, (key, value)) in cmd.info.iter().enumerate() {
            push_line(buf, format_args!("info_key_{j}"), key);
            push_line(buf, format_args!("info_val_{j}"), value);
        }
        buf.extend_from_slice(END_OF_SPAWN);
        buf.push(b'\n');
    }
    // What Hydra 4.0.2 and 5.0.2 take (SPAWN_MAX_*), and no line over 64 KiB.
    let lines = memchr::memchr_iter(b'\n', buf).count();
    require(
        buf.len() <= SPAWN_MAX_BYTES
            && lines <= SPAWN_MAX_LINES
            && buf.split(|&b| b == b'\n').all(|l| l.len() < MAX_LINE),
        PmiError::InvalidArgs,
    )
}

/// The largest spawn request, all segments together, that Hydra takes: 4.0.2's proxy
/// reads a segment and 5.0.2's the whole request into one 64 KiB buffer, and both write
/// a NUL past what they read (65 536 bytes worked by luck; 65 537 killed the job).
const SPAWN_MAX_BYTES: usize = 65_535;
/// The most lines in a spawn request, all segments together: MPICH 5.0.2's Hydra asserts
/// past 1000 tokens (1001 lines aborted mpiexec; measured). It also keeps a command
/// under Hydra 4.0.2's 998 arguments (999 made its mpiexec segfault).
const SPAWN_MAX_LINES: usize = 1000;

/// Append one `key=value` line of a spawn segment.
fn push_line(buf: &mut Vec<u8>, key: std::fmt::Arguments<'_>, value: &[u8]) {
    use std::io::Write;
    let _ = buf.write_fmt(key);
    buf.push(b'=');
    buf.extend_from_slice(value);
    buf.push(b'\n');
}

/// Who a PMI 1.2 group barrier waits for, as the wire names it (`pmi-1.2.txt`:
/// `barrier_in group=<name>:<tag>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group<'a> {
    /// Every process of the job: `WORLD`.
    World,
    /// The processes on this node: `NODE`.
    Node,
    /// These ranks (at least two, ascending, none twice): `0,1,5`.
    Ranks(&'a [i32]),
}

/// The barrier tag of a string tag, as MPICH 5's client makes it (FNV-1a over the
/// string's bytes, as a C `int`, made non-negative); 0 without a tag. Every member of
/// a group must use the same tag for the barrier's name to match.
pub fn group_tag(tag: Option<&[u8]>) -> i32 {
    let Some(tag) = tag else {
        return 0;
    };
    let hash = tag.iter().fold(2_166_136_261u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(16_777_619)
    }) as i32;
    // (MPICH's abs() leaves INT_MIN negative; here it is 0, a name Hydra parses alike.)
    hash.checked_abs().unwrap_or(0)
}

/// Encode `cmd=barrier_in group=<group>:<tag>` into `buf`.
pub fn encode_group_barrier(buf: &mut Vec<u8>, group: Group<'_>, tag: i32) {
    buf.clear();
    buf.extend_from_slice(b"cmd=barrier_in group=");
    let mut digits = IntDigits::default();
    match group {
        Group::World => buf.extend_from_slice(b"WORLD"),
        Group::Node => buf.extend_from_slice(b"NODE"),
        Group::Ranks(ranks) => {
            for (i, &rank) in ranks.iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                buf.extend_from_slice(format_int(i64::from(rank), &mut digits));
            }
        }
    }
    buf.push(b':');
    buf.extend_from_slice(format_int(i64::from(tag), &mut digits));
    buf.push(b'\n');
}

/// Hydra's PMI-1 proxy frames a spawn segment at the first line ending in this word.
pub const END_OF_SPAWN: &[u8] = b"endcmd";

/// What Hydra 4.1.1-4.2.0 appends to the value of a PMI-1 get reply (mpich#7050). The
/// reply cannot say whether it is that field or the end of the value, so the reply
/// parser strips one, and `rules` refuses a PMI-1 value that ends in either.
pub const FOUND_FIELDS: [&[u8]; 2] = [b" found=TRUE", b" found=FALSE"];

/// The line `cmd=abort exitcode=<code>`, which is all Hydra reads (it crashes without
/// `exitcode`), written into `buf` (no allocation: `PMI_Abort` may run in a signal
/// handler).
pub fn abort_line(buf: &mut [u8; 64], code: i32) -> &[u8] {
    let mut digits = IntDigits::default();
    let code = format_int(i64::from(code), &mut digits);
    let parts: [&[u8]; 3] = [b"cmd=abort exitcode=", code, b"\n"];
    let mut len = 0;
    for part in parts {
        buf[len..len + part.len()].copy_from_slice(part);
        len += part.len();
    }
    &buf[..len]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(cmd: &str, fields: &[(&str, &[u8])]) -> Vec<u8> {
        let mut buf = Vec::new();
        encode(&mut buf, cmd, fields);
        buf
    }

    #[test]
    fn encode_writes_one_line_in_field_order() {
        assert_eq!(encoded("barrier_in", &[]), b"cmd=barrier_in\n");
        assert_eq!(
            encoded(
                "put",
                &[("kvsname", b"kvs_1"), ("key", b"k"), ("value", b"a b")]
            ),
            b"cmd=put kvsname=kvs_1 key=k value=a b\n"
        );
    }

    #[test]
    fn encode_reuses_the_buffer() {
        let mut buf = Vec::new();
        encode(&mut buf, "get_maxes", &[]);
        encode(&mut buf, "finalize", &[]);
        assert_eq!(buf, b"cmd=finalize\n");
    }

    #[test]
    fn reply_fields_in_any_order_with_runs_of_spaces() {
        let r = Reply::new(
            b"  rc=0   cmd=maxes\tvallen_max=1024 keylen_max=64  kvsname_max=256 extra=x ",
        );
        assert_eq!(r.cmd(), Some(&b"maxes"[..]));
        assert_eq!(r.int(b"vallen_max"), Some(1024));
        assert_eq!(r.int(b"keylen_max"), Some(64));
        assert_eq!(r.int(b"kvsname_max"), Some(256));
        assert_eq!(r.rc(), Some(0));
        assert_eq!(r.field(b"missing"), None);
    }

    #[test]
    fn value_runs_to_end_of_line() {
        let r = Reply::new(b"cmd=get_result rc=0 msg=success value=hello world rc=5");
        assert_eq!(r.value(), Some(&b"hello world rc=5"[..]));
        assert_eq!(r.rc(), Some(0), "fields inside the value are not fields");
    }

    #[test]
    fn value_loses_a_trailing_found_flag() {
        let r = Reply::new(b"cmd=get_result rc=0 msg=success value=abc found=TRUE");
        assert_eq!(r.value(), Some(&b"abc"[..]));
        let r = Reply::new(b"cmd=get_result value=x y found=FALSE");
        assert_eq!(r.value(), Some(&b"x y"[..]));
    }

    #[test]
    fn empty_value_and_crlf() {
        let r = Reply::new(b"cmd=get_result rc=0 value=\r");
        assert_eq!(r.value(), Some(&b""[..]));
    }

    #[test]
    fn value_keeps_equals_and_non_ascii_bytes() {
        let r = Reply::new(b"cmd=get_result value=a=b \xc6\x92=c");
        assert_eq!(r.value(), Some(&b"a=b \xc6\x92=c"[..]));
    }

    #[test]
    fn rc_absent_is_success_and_garbage_is_an_error() {
        assert_eq!(Reply::new(b"cmd=barrier_out").rc(), Some(0));
        assert_eq!(Reply::new(b"cmd=get_result rc=-1").rc(), Some(-1));
        assert_eq!(Reply::new(b"cmd=get_result rc=x").rc(), None);
    }

    #[test]
    fn first_occurrence_wins_and_extra_fields_are_all_found() {
        let r = Reply::new(b"cmd=a cmd=b rc=0 rc=1 k=1 k=2");
        assert_eq!(
            (r.cmd(), r.rc(), r.int(b"k")),
            (Some(&b"a"[..]), Some(0), Some(1))
        );
        let mut line = b"cmd=get_result".to_vec();
        for i in 0..40 {
            line.extend_from_slice(format!(" extra{i}=x").as_bytes());
        }
        line.extend_from_slice(b" rc=0 value=kept");
        let r = Reply::new(&line);
        assert_eq!((r.rc(), r.value()), (Some(0), Some(&b"kept"[..])));
        assert_eq!(r.field(b"extra0"), Some(&b"x"[..]));
        assert_eq!(r.field(b"extra39"), Some(&b"x"[..]));
        assert_eq!(r.field(b"absent"), None);
    }

    #[test]
    fn bare_words_are_skipped() {
        let r = Reply::new(b"garbage cmd=appnum appnum=3");
        assert_eq!(r.int(b"appnum"), Some(3));
    }

    fn spawn_of(args: &[&'static [u8]]) -> SpawnCommand<'static> {
        SpawnCommand {
            execname: b"/bin/prog",
            args: args.to_vec(),
            maxprocs: 2,
            info: vec![],
        }
    }

    #[test]
    fn spawn_segments_match_the_documented_layout() {
        let mut buf = Vec::new();
        let mut first = spawn_of(&[b"hello world", b"a=b"]);
        first.info = vec![(b"wdir", b"/tmp")];
        let second = SpawnCommand {
            maxprocs: 1,
            ..spawn_of(&[])
        };
        encode_spawn(&mut buf, &[first, second], &[(b"pk", b"pv")]).unwrap();
        let expected = "mcmd=spawn\nnprocs=2\nexecname=/bin/prog\ntotspawns=2\nspawnssofar=1\n\
            arg1=hello world\narg2=a=b\nargcnt=2\npreput_num=1\npreput_key_0=pk\npreput_val_0=pv\n\
            info_num=1\ninfo_key_0=wdir\ninfo_val_0=/tmp\nendcmd\n\
            mcmd=spawn\nnprocs=1\nexecname=/bin/prog\ntotspawns=2\nspawnssofar=2\nargcnt=0\n\
            preput_num=1\npreput_key_0=pk\npreput_val_0=pv\ninfo_num=0\nendcmd\n";
        assert_eq!(String::from_utf8(buf).unwrap(), expected);
    }

    /// `n` commands with `args` each.
    fn fits<'a>(n: usize, args: &[&'a [u8]]) -> Vec<SpawnCommand<'a>> {
        (0..n)
            .map(|_| SpawnCommand {
                execname: b"/bin/prog",
                args: args.to_vec(),
                maxprocs: 2,
                info: vec![],
            })
            .collect()
    }

    /// Hydra's limits, measured (FIELD-NOTES): each case just inside works there, just
    /// outside crashed mpiexec or killed the job.
    #[test]
    fn spawn_requests_stay_within_what_hydra_takes() {
        let mut buf = Vec::new();
        let x: &[u8] = b"x";
        // 998 one-byte arguments: one segment of 1008 lines, over 5.0.2's 1000 lines.
        let args_998 = vec![x; 998];
        assert_eq!(
            encode_spawn(&mut buf, &fits(1, &args_998), &[]),
            Err(PmiError::InvalidArgs)
        );
        // 991 arguments: 1000 lines, the most MPICH 5.0.2's Hydra took; 992 is 1001.
        let args_991 = vec![x; 991];
        assert_eq!(encode_spawn(&mut buf, &fits(1, &args_991), &[]), Ok(()));
        assert_eq!(memchr::memchr_iter(b'\n', &buf).count(), 1000);
        let args_992 = vec![x; 992];
        assert_eq!(
            encode_spawn(&mut buf, &fits(1, &args_992), &[]),
            Err(PmiError::InvalidArgs)
        );
        // Lines count across segments: two commands of 491 arguments (1000 lines) fit.
        let args_491 = vec![x; 491];
        assert_eq!(encode_spawn(&mut buf, &fits(2, &args_491), &[]), Ok(()));
        let args_492 = vec![x; 492];
        assert_eq!(
            encode_spawn(&mut buf, &fits(2, &args_492), &[]),
            Err(PmiError::InvalidArgs)
        );
        // Bytes: two arguments of 32 710 bytes (a 65.5 KB segment) are refused; the
        // request may be 65 535 bytes at most.
        let big = vec![b'a'; 32_710];
        assert_eq!(
            encode_spawn(&mut buf, &fits(1, &[&big, &big]), &[]),
            Err(PmiError::InvalidArgs)
        );
        let half = vec![b'a'; 32_600];
        assert_eq!(
            encode_spawn(&mut buf, &fits(1, &[&half, &half]), &[]),
            Ok(())
        );
        assert!(buf.len() <= SPAWN_MAX_BYTES);
    }

    #[test]
    fn group_barriers_are_named_as_mpich_5_names_them() {
        let mut buf = Vec::new();
        encode_group_barrier(&mut buf, Group::World, 0);
        assert_eq!(buf, b"cmd=barrier_in group=WORLD:0\n");
        encode_group_barrier(&mut buf, Group::Node, 17);
        assert_eq!(buf, b"cmd=barrier_in group=NODE:17\n");
        encode_group_barrier(&mut buf, Group::Ranks(&[0, 1, 5]), 3);
        assert_eq!(buf, b"cmd=barrier_in group=0,1,5:3\n");
        // FNV-1a of the string's bytes, as MPICH 5's HASH_FNV computes it.
        assert_eq!(group_tag(None), 0);
        assert_eq!(group_tag(Some(b"")), (2_166_136_261u32 as i32).abs());
        assert_eq!(group_tag(Some(b"a")), (0xe40c_292c_u32 as i32).abs());
        assert!((0..64u8).all(|i| group_tag(Some(&[b'x', i])) >= 0));
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        /// Bytes a line carries: no line end, no other control byte but a tab.
        fn one_line(text: &[u8]) -> bool {
            !text.iter().any(|&b| (b < b' ' && b != b'\t') || b == 0x7f)
        }

        proptest! {
            /// Any bytes: no panic, and every field found lies inside the line.
            #[test]
            fn reply_parser_never_panics(line in proptest::collection::vec(any::<u8>(), 0..512)) {
                let reply = Reply::new(&line);
                for key in [&b"cmd"[..], b"rc", b"value", b"x", b""] {
                    if let Some(v) = reply.field(key) {
                        prop_assert!(v.len() <= line.len());
                    }
                }
                let _ = (reply.rc(), reply.int(b"size"));
            }

            /// A value the rules accept comes back intact from a get reply, whatever
            /// fields precede it.
            #[test]
            fn value_round_trips(
                value in "[ -~\t\u{80}-\u{10ffff}]{0,200}",
                extra in proptest::collection::vec("[a-z]{1,8}=[!-~&&[^=]]{0,8}", 0..4),
            ) {
                let value = value.as_bytes();
                prop_assume!(one_line(value));
                prop_assume!(!value.ends_with(b" found=TRUE") && !value.ends_with(b" found=FALSE"));
                let mut line = b"cmd=get_result".to_vec();
                for field in &extra {
                    line.push(b' ');
                    line.extend_from_slice(field.as_bytes());
                }
                line.extend_from_slice(b" value=");
                line.extend_from_slice(value);
                prop_assert_eq!(Reply::new(&line).value(), Some(value));
                prop_assert_eq!(Reply::new(&line).cmd(), Some(&b"get_result"[..]));
            }

            /// An encoded request is one line: exactly one newline, at the end, for any
            /// key and value that pass the rules.
            #[test]
            fn encoded_requests_are_one_line(
                key in "[!-<>-~\u{80}-\u{3ff}]{1,30}",
                value in "[ -~\t\u{80}-\u{10ffff}]{0,300}",
            ) {
                let (key, value) = (key.as_bytes(), value.as_bytes());
                prop_assume!(
                    one_line(key) && !key.contains(&b' ') && !key.contains(&b'=') && one_line(value)
                );
                let mut buf = Vec::new();
                encode(&mut buf, "put", &[("kvsname", b"kvs"), ("key", key), ("value", value)]);
                prop_assert_eq!(buf.iter().filter(|&&b| b == b'\n').count(), 1);
                prop_assert_eq!(buf.last(), Some(&b'\n'));
                prop_assert!(!buf.contains(&b'\r'));
            }
        }
    }
}
