//! Pure PMI-1.1 codec: request lines out, reply lines in, and the validity rules for
//! what a caller may put on the wire. No I/O and no C types here.
#![forbid(unsafe_code)]

use crate::error::{PmiError, PmiResult};

/// The longest line, newline included, that is sent or accepted. Hydra 4.0.2 kills the
/// job on a request line over 64 KiB; a reply longer than this is a protocol error.
pub const MAX_LINE: usize = 64 * 1024;

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

/// One reply line (without its newline), with lenient field lookup: fields in any
/// order, runs of spaces, extra keys. `value=` runs to the end of the line, less a
/// trailing ` found=TRUE` / ` found=FALSE` (Hydra 4.1.1-4.2.0, mpich#7050).
#[derive(Debug, Clone, Copy)]
pub struct Reply<'a> {
    line: &'a [u8],
}

/// The key whose value runs to the end of the line.
const VALUE_KEY: &[u8] = b"value";

impl<'a> Reply<'a> {
    /// Wrap one line; a trailing `\r` is ignored.
    pub fn new(line: &'a [u8]) -> Reply<'a> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        Reply { line }
    }

    /// The whole line, for traces and messages.
    pub fn line(&self) -> &'a [u8] {
        self.line
    }

    /// Every `key=value` token before `value=`, then `value` itself, in line order.
    fn fields(&self) -> Fields<'a> {
        Fields { rest: self.line }
    }

    /// The first field named `key`, if any.
    pub fn field(&self, key: &[u8]) -> Option<&'a [u8]> {
        self.fields().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// The `cmd=` field.
    pub fn cmd(&self) -> Option<&'a [u8]> {
        self.field(b"cmd")
    }

    /// The `value=` field: the rest of the line after `value=`.
    pub fn value(&self) -> Option<&'a [u8]> {
        self.field(VALUE_KEY)
    }

    /// The `rc=` field as an integer; absent means success (RFC 13), so `Some(0)`.
    /// `None` when it is present but not an integer.
    pub fn rc(&self) -> Option<i64> {
        match self.field(b"rc") {
            None => Some(0),
            Some(text) => parse_int(text),
        }
    }

    /// An integer field; `None` when absent or not an integer.
    pub fn int(&self, key: &[u8]) -> Option<i64> {
        self.field(key).and_then(parse_int)
    }
}

/// Iterator over the fields of a reply line.
struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Fields<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let start = self.rest.iter().position(|&b| b != b' ' && b != b'\t')?;
            let rest = &self.rest[start..];
            let end = rest
                .iter()
                .position(|&b| b == b' ' || b == b'\t')
                .unwrap_or(rest.len());
            let token = &rest[..end];
            self.rest = &rest[end..];
            let Some(eq) = token.iter().position(|&b| b == b'=') else {
                continue; // a bare word carries no field: skip it
            };
            let key = &token[..eq];
            if key == VALUE_KEY {
                let value = &rest[eq + 1..];
                self.rest = &[];
                return Some((key, strip_found(value)));
            }
            return Some((key, &token[eq + 1..]));
        }
    }
}

/// Remove one trailing ` found=TRUE` or ` found=FALSE` from a value.
fn strip_found(value: &[u8]) -> &[u8] {
    for suffix in [&b" found=TRUE"[..], &b" found=FALSE"[..]] {
        if let Some(v) = value.strip_suffix(suffix) {
            return v;
        }
    }
    value
}

/// A decimal integer with an optional sign, as RFC 13's `int`; `None` on anything else
/// or on overflow.
pub fn parse_int(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut n: i64 = 0;
    for &d in digits {
        n = n.checked_mul(10)?.checked_add(i64::from(d - b'0'))?;
    }
    Some(if negative { -n } else { n })
}

/// A byte that may not appear in a key, kvsname, service or port (RFC 13 `word`, with
/// bytes above 0x7F allowed because Flux names are not ASCII).
fn breaks_word(b: u8) -> bool {
    b <= b' ' || b == b'=' || b == 0x7f
}

/// A byte that may not appear in a value: anything that would end or corrupt the line
/// (RFC 13 `string` is space, tab and visible characters).
fn breaks_string(b: u8) -> bool {
    (b < b' ' && b != b'\t') || b == 0x7f
}

/// True when `text` is a non-empty RFC 13 `word`.
pub fn is_word(text: &[u8]) -> bool {
    !text.is_empty() && !text.iter().any(|&b| breaks_word(b))
}

/// Check a key against RFC 13's `word` and the server's `keylen_max` (with the NUL).
pub fn check_key(key: &[u8], keylen_max: usize) -> PmiResult<()> {
    if !is_word(key) {
        return Err(PmiError::InvalidKey);
    }
    if key.len() >= keylen_max {
        return Err(PmiError::InvalidKeyLength);
    }
    Ok(())
}

/// Check a value against RFC 13's `string` and the server's `vallen_max` (with the NUL).
/// The empty value is allowed (Hydra stores and returns it).
pub fn check_value(value: &[u8], vallen_max: usize) -> PmiResult<()> {
    if value.iter().any(|&b| breaks_string(b)) {
        return Err(PmiError::InvalidVal);
    }
    if value.len() >= vallen_max {
        return Err(PmiError::InvalidValLength);
    }
    Ok(())
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
    fn bare_words_are_skipped() {
        let r = Reply::new(b"garbage cmd=appnum appnum=3");
        assert_eq!(r.int(b"appnum"), Some(3));
    }

    #[test]
    fn parse_int_is_strict() {
        assert_eq!(parse_int(b"-1"), Some(-1));
        assert_eq!(parse_int(b"+7"), Some(7));
        assert_eq!(parse_int(b"0012"), Some(12));
        for bad in [
            &b""[..],
            b"-",
            b"1x",
            b" 1",
            b"99999999999999999999",
            b"0x10",
        ] {
            assert_eq!(parse_int(bad), None, "{:?}", bad);
        }
    }

    #[test]
    fn key_rules() {
        assert_eq!(check_key(b"k0", 64), Ok(()));
        assert_eq!(check_key(b"\xc6\x92", 64), Ok(()));
        for bad in [&b""[..], b"a b", b"a=b", b"a\nb", b"a\tb", b"a\x7fb"] {
            assert_eq!(check_key(bad, 64), Err(PmiError::InvalidKey), "{:?}", bad);
        }
        assert_eq!(check_key(&[b'k'; 63], 64), Ok(()));
        assert_eq!(check_key(&[b'k'; 64], 64), Err(PmiError::InvalidKeyLength));
    }

    #[test]
    fn value_rules() {
        assert_eq!(check_value(b"", 1024), Ok(()));
        assert_eq!(check_value(b"a b\tc=d \xc6\x92", 1024), Ok(()));
        for bad in [&b"a\nb"[..], b"a\rb", b"\x01", b"\x7f"] {
            assert_eq!(
                check_value(bad, 1024),
                Err(PmiError::InvalidVal),
                "{:?}",
                bad
            );
        }
        assert_eq!(check_value(&[b'v'; 1023], 1024), Ok(()));
        assert_eq!(
            check_value(&[b'v'; 1024], 1024),
            Err(PmiError::InvalidValLength)
        );
    }
}
