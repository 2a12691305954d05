//! The PMI-2 wire protocol's codec (the MPICH wiki's "PMI v2 Wire Protocol"), pure: no
//! I/O. After the one PMI-1 style line `cmd=init pmi_version=2 pmi_subversion=0`, every
//! command and reply is framed as six ASCII characters giving the length (left-justified,
//! blank-padded, as MPICH and Slurm write it) followed by that many bytes of
//! `cmd=name;key=value;...;`, where a `;` inside a key or a value is doubled.

use super::{format_int, parse_int, Framing, IntDigits, Scan};
use crate::error::{PmiError, PmiResult};

/// The length prefix: six ASCII characters.
pub const LEN_DIGITS: usize = 6;
/// The longest command either side may send: MPICH's and Slurm's `PMII_MAX_COMMAND_LEN`.
pub const MAX_COMMAND: usize = 64 * 1024;
/// The most `key=value` fields in a command, `cmd` included: MPICH 5.0.2's Hydra aborts
/// mpiexec on a command of 1000 (`num_tokens < 1000`: a spawn of 1000 arguments, or of
/// 600 info entries), and Hydra 4.0.2's mpiexec segfaults on a spawn of 999 arguments
/// (measured; issue 24). Only a spawn request comes near.
pub const MAX_FIELDS: usize = 999;

/// How replies are found in the bytes read: six characters of length, then the command.
pub const FRAMES: Framing = Framing {
    cap: MAX_COMMAND + LEN_DIGITS,
    suffix: "-response",
    find: find_frame,
};

fn find_frame(bytes: &[u8]) -> Scan {
    let Some(prefix) = bytes.get(..LEN_DIGITS) else {
        return Ok(None);
    };
    let len = frame_len(prefix).ok_or("a PMI-2 frame without a length")?;
    let end = LEN_DIGITS + len;
    Ok((bytes.len() >= end).then_some((LEN_DIGITS..end, end)))
}

/// Build one framed command: `encode(buf, "kvs-put", &[("key", k), ("value", v)])` gives
/// `     NNcmd=kvs-put;key=k;value=v;` with every `;` in a key or value doubled.
/// `PMI_ERR_INVALID_LENGTH` (nothing built) when the command would pass [`MAX_COMMAND`];
/// `PMI_ERR_INVALID_ARGS` when it has more than [`MAX_FIELDS`] fields.
pub fn encode(buf: &mut Vec<u8>, cmd: &str, fields: &[(&str, &[u8])]) -> PmiResult<()> {
    buf.clear();
    if fields.len() + 1 > MAX_FIELDS {
        return Err(PmiError::InvalidArgs);
    }
    buf.extend_from_slice(&[b' '; LEN_DIGITS]);
    push_field(buf, b"cmd", cmd.as_bytes());
    for (key, value) in fields {
        push_field(buf, key.as_bytes(), value);
    }
    let len = buf.len() - LEN_DIGITS;
    if len > MAX_COMMAND || len > 999_999 {
        buf.clear();
        return Err(PmiError::InvalidLength);
    }
    // Left-justified in the six blanks already there (at most six digits, above).
    let mut digits = IntDigits::default();
    let text = format_int(len as i64, &mut digits);
    buf[..text.len()].copy_from_slice(text);
    Ok(())
}

fn push_field(buf: &mut Vec<u8>, key: &[u8], value: &[u8]) {
    push_escaped(buf, key);
    buf.push(b'=');
    push_escaped(buf, value);
    buf.push(b';');
}

fn push_escaped(buf: &mut Vec<u8>, text: &[u8]) {
    let mut rest = text;
    while let Some(at) = memchr::memchr(b';', rest) {
        buf.extend_from_slice(&rest[..=at]);
        buf.push(b';');
        rest = &rest[at + 1..];
    }
    buf.extend_from_slice(rest);
}

/// The length a frame's six-character prefix gives: digits, blank-padded on either side.
pub fn frame_len(prefix: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(prefix).ok()?.trim_matches(' ');
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok().filter(|&n| n <= MAX_COMMAND)
}

/// A parsed command: its `key=value` pairs, `;;` turned back into `;`. The keys and
/// values lie back to back in one buffer; parsing into a command again reuses it, so a
/// connection's replies cost no allocation once the buffers have grown.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Command {
    data: Vec<u8>,
    /// Each field: where its key starts, where it ends (its value starts), where the
    /// value ends, in `data`.
    fields: Vec<(usize, usize, usize)>,
}

impl Command {
    /// Parse `cmd=name;key=value;...;`. A field without `=` or a missing final `;` is an
    /// error; so is a command that does not start with `cmd=`.
    #[cfg(any(test, feature = "test-kit"))]
    pub fn parse(text: &[u8]) -> Option<Command> {
        let mut command = Command::default();
        command.parse_from(text).then_some(command)
    }

    /// [`Command::parse`] into `self`, reusing its buffers; false (and `self` unusable)
    /// for text that is not a command.
    pub fn parse_from(&mut self, text: &[u8]) -> bool {
        self.data.clear();
        self.fields.clear();
        let (mut start, mut eq) = (0, None);
        let mut rest = text;
        // From one `;` (or, in a key, `=`) to the next: the bytes between are copied whole.
        loop {
            let next = match eq {
                None => memchr::memchr2(b';', b'=', rest),
                Some(_) => memchr::memchr(b';', rest),
            };
            let Some(at) = next else {
                self.data.extend_from_slice(rest);
                break;
            };
            self.data.extend_from_slice(&rest[..at]);
            if rest[at] == b'=' {
                eq = Some(self.data.len());
            } else if rest.get(at + 1) == Some(&b';') {
                self.data.push(b';');
                rest = &rest[at + 2..];
                continue;
            } else {
                let Some(key_end) = eq.take() else {
                    return false;
                };
                self.fields.push((start, key_end, self.data.len()));
                start = self.data.len();
            }
            rest = &rest[at + 1..];
        }
        self.data.len() == start
            && eq.is_none()
            && self.fields.first().map(|&(k, e, _)| &self.data[k..e]) == Some(b"cmd")
    }

    /// The value of the first field named `key`.
    pub fn get(&self, key: &[u8]) -> Option<&[u8]> {
        self.pairs().find(|&(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn cmd(&self) -> &[u8] {
        self.get(b"cmd").unwrap_or_default()
    }

    /// `rc`, when it is an integer.
    pub fn rc(&self) -> Option<i64> {
        parse_int(self.get(b"rc")?)
    }

    pub fn int(&self, key: &[u8]) -> Option<i64> {
        parse_int(self.get(key)?)
    }

    /// The per-process error codes of a `spawn-response` as the PMI-2 wire text spells
    /// them, `nerrs=N;err0=..;...;errN-1=..;`, as `parse_errcodes` reads `errcodes=a,b,...`
    /// (Hydra's and Slurm's spelling): none without `nerrs`. `None` when a code is missing
    /// or not an `int`, or there are more codes than `slots`.
    pub fn spec_errcodes(&self, slots: usize) -> Option<Vec<i32>> {
        let count = match self.get(b"nerrs") {
            Some(count) => usize::try_from(parse_int(count)?).ok()?,
            None => 0,
        };
        if count > slots {
            return None;
        }
        let code = |i: usize| i32::try_from(self.int(format!("err{i}").as_bytes())?).ok();
        (0..count).map(code).collect()
    }

    /// A PMI-2 boolean: `TRUE`/`true`/`yes`, `FALSE`/`false`/`no` (servers differ).
    pub fn flag(&self, key: &[u8]) -> Option<bool> {
        let value = self.get(key)?;
        let is = |word: &[u8]| value.eq_ignore_ascii_case(word);
        if is(b"true") || is(b"yes") || is(b"1") {
            Some(true)
        } else if is(b"false") || is(b"no") || is(b"0") {
            Some(false)
        } else {
            None
        }
    }

    /// Every field, in order.
    pub fn pairs(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.fields
            .iter()
            .map(|&(k, e, v)| (&self.data[k..e], &self.data[e..v]))
    }
}

/// `cmd=abort;isworld=TRUE|FALSE;msg=..;` framed into `buf` without allocating (PMI2_Abort
/// may run in a signal handler); the message is cut to what fits, each `;` doubled as
/// the wire text says. Without a message there is no `msg` field: MPICH 5.0.2's mpiexec
/// cannot parse an empty one ("unable to parse PMI command", status 255 instead of the
/// abort's; measured).
pub fn abort_frame<'a>(buf: &'a mut [u8; 1024], world: bool, message: &[u8]) -> &'a [u8] {
    let head: &[u8] = if world {
        b"cmd=abort;isworld=TRUE;"
    } else {
        b"cmd=abort;isworld=FALSE;"
    };
    let mut len = LEN_DIGITS;
    let room = buf.len() - 1; // the final ';'
    let mut push = |bytes: &[u8], len: &mut usize| {
        buf[*len..*len + bytes.len()].copy_from_slice(bytes);
        *len += bytes.len();
    };
    push(head, &mut len);
    if !message.is_empty() {
        push(b"msg=", &mut len);
        for &b in message {
            let escaped: &[u8] = if b == b';' { b";;" } else { &[b] };
            if len + escaped.len() > room {
                break;
            }
            push(escaped, &mut len);
        }
        push(b";", &mut len);
    }
    // The six-character length, left-justified in blanks, as `encode` writes it
    // (`format_int` formats on the stack: no allocation).
    let mut digits = IntDigits::default();
    let text = format_int((len - LEN_DIGITS) as i64, &mut digits);
    buf[..LEN_DIGITS].fill(b' ');
    buf[..text.len()].copy_from_slice(text);
    &buf[..len]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(cmd: &str, fields: &[(&str, &[u8])]) -> Vec<u8> {
        let mut buf = Vec::new();
        encode(&mut buf, cmd, fields).unwrap();
        buf
    }

    #[test]
    fn commands_are_framed_left_justified() {
        assert_eq!(
            framed("kvs-fence", &[]),
            b"14    cmd=kvs-fence;".to_vec(),
            "MPICH writes the length with %-6d"
        );
        let put = framed("kvs-put", &[("key", b"k"), ("value", b"v")]);
        assert_eq!(&put[..6], b"26    ");
        assert_eq!(&put[6..], b"cmd=kvs-put;key=k;value=v;");
    }

    #[test]
    fn semicolons_are_doubled_and_read_back() {
        let buf = framed("kvs-put", &[("key", b"a;b"), ("value", b";x;;y;")]);
        assert_eq!(&buf[6..], b"cmd=kvs-put;key=a;;b;value=;;x;;;;y;;;");
        assert_eq!(frame_len(&buf[..6]), Some(buf.len() - 6));
        let back = Command::parse(&buf[6..]).unwrap();
        assert_eq!(back.get(b"key"), Some(&b"a;b"[..]));
        assert_eq!(back.get(b"value"), Some(&b";x;;y;"[..]));
    }

    #[test]
    fn values_keep_equals_spaces_newlines_and_nuls() {
        let value = b"a=b c\nd\0e";
        let buf = framed("kvs-put", &[("value", value)]);
        let back = Command::parse(&buf[6..]).unwrap();
        assert_eq!(back.get(b"value"), Some(&value[..]));
    }

    #[test]
    fn a_command_parsed_again_reuses_nothing_of_the_last() {
        let mut c = Command::default();
        assert!(c.parse_from(b"cmd=kvs-get-response;found=TRUE;value=a;;b=c;rc=0;"));
        assert_eq!(
            (c.get(b"value"), c.flag(b"found")),
            (Some(&b"a;b=c"[..]), Some(true))
        );
        assert!(c.parse_from(b"cmd=kvs-put-response;rc=1;"));
        assert_eq!(
            (c.cmd(), c.rc(), c.get(b"value")),
            (&b"kvs-put-response"[..], Some(1), None)
        );
        for bad in [
            &b"cmd=x;k;"[..],
            b"cmd=x;k=v",
            b"key=v;cmd=x;",
            b"cmd=x;k=",
            b"",
        ] {
            assert!(!c.parse_from(bad), "{}", bad.escape_ascii());
        }
    }

    #[test]
    fn replies_from_servers_are_parsed() {
        // Hydra 4.0.2 and Slurm 22.05 (FIELD-NOTES): rc last or first, TRUE/FALSE flags.
        let r = Command::parse(
            b"cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=1;size=4;appnum=0;\
              debugged=FALSE;pmiverbose=FALSE;rc=0;",
        )
        .unwrap();
        assert_eq!(r.cmd(), b"fullinit-response");
        assert_eq!(
            (r.rc(), r.int(b"size"), r.flag(b"debugged")),
            (Some(0), Some(4), Some(false))
        );
        let r = Command::parse(b"cmd=kvs-get-response;rc=0;found=TRUE;value=x;").unwrap();
        assert_eq!(r.flag(b"found"), Some(true));
    }

    #[test]
    fn malformed_commands_are_refused() {
        for bad in [
            &b"cmd=x;key"[..],
            b"cmd=x;key;",
            b"key=v;cmd=x;",
            b"",
            b"cmd=x;a=b",
        ] {
            assert_eq!(Command::parse(bad), None, "{}", bad.escape_ascii());
        }
        for bad in [&b"      "[..], b"12a   ", b"-1    ", b"999999"] {
            assert_eq!(frame_len(bad), None, "{}", bad.escape_ascii());
        }
        assert_eq!(frame_len(b"    12"), Some(12));
    }

    #[test]
    fn over_long_commands_are_not_built() {
        let mut buf = Vec::new();
        let big = vec![b'x'; MAX_COMMAND];
        assert_eq!(
            encode(&mut buf, "kvs-put", &[("value", &big)]),
            Err(PmiError::InvalidLength)
        );
        assert!(buf.is_empty());
    }

    #[test]
    fn at_most_max_fields() {
        let mut buf = Vec::new();
        let fields = vec![("argv", &b"a"[..]); MAX_FIELDS - 1];
        assert_eq!(encode(&mut buf, "spawn", &fields), Ok(()));
        let fields = vec![("argv", &b"a"[..]); MAX_FIELDS];
        assert_eq!(
            encode(&mut buf, "spawn", &fields),
            Err(PmiError::InvalidArgs)
        );
        assert!(buf.is_empty());
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        /// The parser as it was written first, a byte at a time: the one `parse_from`
        /// must agree with.
        fn bytewise(text: &[u8]) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
            let (mut data, mut fields) = (Vec::new(), Vec::new());
            let (mut start, mut eq) = (0, None);
            let mut i = 0;
            while i < text.len() {
                match text[i] {
                    b';' if text.get(i + 1) == Some(&b';') => {
                        data.push(b';');
                        i += 1;
                    }
                    b';' => {
                        let key_end = eq.take()?;
                        fields.push((start, key_end, data.len()));
                        start = data.len();
                    }
                    b'=' if eq.is_none() => eq = Some(data.len()),
                    b => data.push(b),
                }
                i += 1;
            }
            let pairs: Vec<(Vec<u8>, Vec<u8>)> = fields
                .iter()
                .map(|&(k, e, end)| (data[k..e].to_vec(), data[e..end].to_vec()))
                .collect();
            (data.len() == start && eq.is_none() && pairs.first().map(|p| &p.0[..]) == Some(b"cmd"))
                .then_some(pairs)
        }

        proptest! {
            /// Any text over the bytes that matter: the same fields as the bytewise
            /// parser, or the same refusal.
            #[test]
            fn parsing_agrees_with_the_bytewise_parser(
                text in proptest::collection::vec(prop_oneof![Just(b';'), Just(b'='), Just(b'a'), Just(b'c')], 0..40),
                prefix in proptest::bool::ANY,
            ) {
                let text = if prefix { [&b"cmd=x;"[..], &text].concat() } else { text };
                let ours = Command::parse(&text)
                    .map(|c| c.pairs().map(|(k, v)| (k.to_vec(), v.to_vec())).collect::<Vec<_>>());
                prop_assert_eq!(ours, bytewise(&text));
            }

            /// Any fields encoded come back as they were.
            #[test]
            fn fields_round_trip(
                fields in proptest::collection::vec(("[a-z]{1,6}", proptest::collection::vec(any::<u8>(), 0..20)), 0..6),
            ) {
                let fields: Vec<(&str, &[u8])> = fields.iter().map(|(k, v)| (k.as_str(), &v[..])).collect();
                let mut buf = Vec::new();
                encode(&mut buf, "x", &fields).unwrap();
                let parsed = Command::parse(&buf[LEN_DIGITS..]).expect("parsed");
                let got: Vec<(&[u8], &[u8])> = parsed.pairs().skip(1).collect();
                let want: Vec<(&[u8], &[u8])> = fields.iter().map(|&(k, v)| (k.as_bytes(), v)).collect();
                prop_assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn the_abort_frame_escapes_its_message_and_has_no_empty_one() {
        let mut buf = [0u8; 1024];
        assert_eq!(
            abort_frame(&mut buf, true, b"a;b c"),
            &b"34    cmd=abort;isworld=TRUE;msg=a;;b c;"[..]
        );
        assert_eq!(
            abort_frame(&mut buf, false, b""),
            &b"24    cmd=abort;isworld=FALSE;"[..]
        );
        // A long message is cut to fill the buffer, and the frame still ends in ';'.
        let long = [b'x'; 2000];
        let frame = abort_frame(&mut buf, true, &long);
        assert_eq!(frame.len(), 1024);
        assert_eq!(&frame[..6], b"1018  ");
        assert!(frame.ends_with(b"x;"));
    }
}
