//! What a caller may pass, written once for both APIs. The API (`libpmi.so.0`'s PMI-1 or
//! `libpmi2.so.0`'s PMI-2) is chosen once, at init; its facts (which bytes its wire
//! cannot carry, the maxima it promises, where the job layout comes from) are the
//! methods of [`Api`], and every check below takes it. Nothing here does I/O.
//!
//! The rules, for both APIs:
//! - keys, service names and ports are not empty and hold no byte the API's wire cannot
//!   carry; keys are shorter than the key maximum (with its NUL);
//! - values are not empty (MPICH 5.0.2's Hydra kills the job on an empty value, on
//!   either wire) and hold no such byte; shorter than the value maximum; on PMI-1 they do
//!   not end in ` found=TRUE` or ` found=FALSE` (taken for Hydra's field in a reply);
//! - spawn fields (executable, arguments, info and preput values) follow the value rule,
//!   and a request stays within what the servers take.
#![forbid(unsafe_code)]

use crate::backend::{Maxes, SpawnCommand};
use crate::error::{PmiError, PmiResult};

/// Which API a client serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// RFC 13's PMI-1 (`libpmi.so.0`), over the PMI-1.1 wire: line-based, `key=value`
    /// fields separated by spaces.
    Pmi1,
    /// PMI-2 (`libpmi2.so.0`), over the PMI-2 wire: length-framed, fields separated by
    /// `;`.
    Pmi2,
}

/// An operation, for messages: each API names it its own way ([`Api::call`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Init,
    Put,
    Barrier,
    Spawn,
    Publish,
    Unpublish,
    Lookup,
}

/// Where the job layout (`PMI_process_mapping`) is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MappingSource {
    /// A key of the job's key-value space (PMI-1 servers).
    KvsKey,
    /// A job attribute (PMI-2 servers).
    JobAttr,
}

/// `PMI2_MAX_KEYLEN`, `PMI2_MAX_VALLEN` (and `PMI2_MAX_ATTRVALUE`), NUL included: what
/// PMI-2's header promises whatever the server.
pub const PMI2_MAXES: Maxes = Maxes {
    kvsname: 256,
    key: 64,
    value: 1024,
};

/// The longest port name, NUL included, that publish accepts and lookup writes: MPICH
/// passes lookups a `char port[MPI_MAX_PORT_NAME]` of 256 bytes, so a longer answer would
/// be written past the caller's buffer.
pub const PORT_MAX: usize = 256;

impl Api {
    /// The API's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Api::Pmi1 => "PMI-1",
            Api::Pmi2 => "PMI-2",
        }
    }

    /// The C function of this API that carries out `op`, for messages: a PMI-2 program
    /// is told about `PMI2_Job_Spawn`, not `PMI_Spawn_multiple`.
    pub fn call(self, op: Op) -> &'static str {
        match (self, op) {
            (Api::Pmi1, Op::Init) => "PMI_Init",
            (Api::Pmi1, Op::Put) => "PMI_KVS_Put",
            (Api::Pmi1, Op::Barrier) => "PMI_Barrier",
            (Api::Pmi1, Op::Spawn) => "PMI_Spawn_multiple",
            (Api::Pmi1, Op::Publish) => "PMI_Publish_name",
            (Api::Pmi1, Op::Unpublish) => "PMI_Unpublish_name",
            (Api::Pmi1, Op::Lookup) => "PMI_Lookup_name",
            (Api::Pmi2, Op::Init) => "PMI2_Init",
            (Api::Pmi2, Op::Put) => "PMI2_KVS_Put",
            (Api::Pmi2, Op::Barrier) => "PMI2_KVS_Fence",
            (Api::Pmi2, Op::Spawn) => "PMI2_Job_Spawn",
            (Api::Pmi2, Op::Publish) => "PMI2_Nameserv_publish",
            (Api::Pmi2, Op::Unpublish) => "PMI2_Nameserv_unpublish",
            (Api::Pmi2, Op::Lookup) => "PMI2_Nameserv_lookup",
        }
    }

    /// The maxima the API promises its callers whatever the backend says (PMI-2's
    /// header constants); `None`: the backend's own (PMI-1's `get_maxes`).
    pub fn fixed_maxes(self) -> Option<Maxes> {
        match self {
            Api::Pmi1 => None,
            Api::Pmi2 => Some(PMI2_MAXES),
        }
    }

    /// Where this API's servers publish the job layout.
    pub fn mapping_source(self) -> MappingSource {
        match self {
            Api::Pmi1 => MappingSource::KvsKey,
            Api::Pmi2 => MappingSource::JobAttr,
        }
    }

    /// A byte the API's wire cannot carry in a key, name or port. PMI-1: RFC 13's
    /// `word` (no space, `=`, control character; bytes above 0x7F allowed, Flux names are
    /// not ASCII). PMI-2: a `;` (the wire doubles it, but MPICH's Hydra 4.0.2 and Slurm
    /// 22.05 cut keys and values at the first one all the same, measured).
    fn breaks_name(self, b: u8) -> bool {
        match self {
            Api::Pmi1 => b <= b' ' || b == b'=' || b == 0x7f,
            Api::Pmi2 => b == b';' || b == 0,
        }
    }

    /// A byte the API's wire cannot carry in a value. PMI-1: anything that would end or
    /// corrupt the line (RFC 13's `string` is space, tab and visible characters). PMI-2:
    /// a `;`, as for names.
    fn breaks_value(self, b: u8) -> bool {
        match self {
            Api::Pmi1 => (b < b' ' && b != b'\t') || b == 0x7f,
            Api::Pmi2 => b == b';' || b == 0,
        }
    }

    /// True when `text` is a non-empty name this API's wire carries intact.
    pub fn is_name(self, text: &[u8]) -> bool {
        !text.is_empty() && !any_byte(text, |b| self.breaks_name(b))
    }

    /// A key: a name shorter than `keylen_max` (NUL included).
    pub fn check_key(self, key: &[u8], keylen_max: usize) -> PmiResult<()> {
        require(self.is_name(key), PmiError::InvalidKey)?;
        require(key.len() < keylen_max, PmiError::InvalidKeyLength)
    }

    /// A value: at least one byte, none the wire cannot carry, on PMI-1 none that a
    /// `put` line would carry to its death ([`kills_hydra5`]), shorter than `vallen_max`
    /// (NUL included).
    pub fn check_value(self, value: &[u8], vallen_max: usize) -> PmiResult<()> {
        let put_trap = self == Api::Pmi1 && kills_hydra5(value);
        require(self.value_ok(value) && !put_trap, PmiError::InvalidVal)?;
        require(value.len() < vallen_max, PmiError::InvalidValLength)
    }

    fn value_ok(self, value: &[u8]) -> bool {
        let cut_in_reply = self == Api::Pmi1 && FOUND_FIELDS.iter().any(|f| value.ends_with(f));
        !value.is_empty() && !any_byte(value, |b| self.breaks_value(b)) && !cut_in_reply
    }

    /// Service names and ports: names (Hydra cuts them at a space, the PMI-2 servers at
    /// a `;`), each shorter than `max` (the value maximum, or [`PORT_MAX`] for ports).
    pub fn check_names(self, names: &[&[u8]], max: usize) -> PmiResult<()> {
        require(
            names.iter().all(|w| self.is_name(w) && w.len() < max),
            PmiError::InvalidArg,
        )
    }

    /// A spawn field (executable, argument, info or preput value): a value, which must
    /// not end in `endcmd` either (Hydra's PMI-1 proxy frames a spawn segment at the
    /// first line ending in it, wherever it is).
    fn spawn_field_ok(self, text: &[u8]) -> bool {
        self.value_ok(text) && !text.ends_with(END_OF_SPAWN)
    }

    /// An info or preput key: a key, which must not end in `endcmd` either (its line,
    /// `preput_key_0=KEY`, would end in it as a value's does).
    fn check_spawn_key(self, key: &[u8], max: usize) -> PmiResult<()> {
        self.check_key(key, max)?;
        require(!key.ends_with(END_OF_SPAWN), PmiError::InvalidKey)
    }

    /// Check every field of a spawn request, for every backend.
    ///
    /// Executable names and arguments that would break the framing get
    /// `PMI_ERR_INVALID_ARGS`; preput and info keys follow the key rules and may not end
    /// in `endcmd` either (`PMI_ERR_INVALID_KEY`); preput values
    /// follow the value rules and may not hold a space (Hydra 4.0.2's proxy for the
    /// children crashes on one); info values that would break the framing get
    /// `PMI_ERR_INVALID_VAL`. How many fields a request may have is each wire's own rule
    /// (`pmi1_codec::encode_spawn`, `pmi2_codec::encode`).
    pub fn check_spawn(
        self,
        commands: &[SpawnCommand<'_>],
        preput: &[(&[u8], &[u8])],
        maxes: Maxes,
    ) -> PmiResult<()> {
        for cmd in commands {
            require(!cmd.execname.is_empty(), PmiError::InvalidArgs)?;
            for text in std::iter::once(&cmd.execname).chain(&cmd.args) {
                require(self.spawn_field_ok(text), PmiError::InvalidArgs)?;
            }
            for (key, value) in &cmd.info {
                self.check_spawn_key(key, maxes.key)?;
                require(self.spawn_field_ok(value), PmiError::InvalidVal)?;
                require(value.len() < maxes.value, PmiError::InvalidValLength)?;
            }
        }
        for (key, value) in preput {
            self.check_spawn_key(key, maxes.key)?;
            self.check_value(value, maxes.value)?;
            require(
                self.spawn_field_ok(value) && !value.contains(&b' '),
                PmiError::InvalidVal,
            )?;
        }
        Ok(())
    }
}

/// Hydra's PMI-1 proxy frames a spawn segment at the first line ending in this word.
pub const END_OF_SPAWN: &[u8] = b"endcmd";

/// What Hydra 4.1.1-4.2.0 appends to the value of a PMI-1 get reply (mpich#7050). The
/// reply cannot say whether it is that field or the end of the value, so the PMI-1 reply
/// parser strips one, and a PMI-1 value may not end in either.
pub const FOUND_FIELDS: [&[u8]; 2] = [b" found=TRUE", b" found=FALSE"];

/// A PMI-1 value that MPICH 5.0.2's Hydra cannot parse in a `put` line (a spawn sends its
/// fields a line each), and ends the whole job for (measured): it reads the words after a
/// value's first space as more `key=value` fields, and dies on a value that starts with a
/// space (`value= x`), or has after a space a word that starts with `=` or ends at its
/// first `=` (`a =b`, `a b=`, `a b= c`). Hydra 4 keeps only the first word of any value
/// with a space.
fn kills_hydra5(value: &[u8]) -> bool {
    // (A value without a space, as most are, is found so by one `memchr`.)
    let Some(space) = memchr::memchr(b' ', value) else {
        return false;
    };
    space == 0
        || value[space + 1..]
            .split(|&b| b == b' ')
            .filter(|word| !word.is_empty())
            .any(|word| word[0] == b'=' || memchr::memchr(b'=', word) == Some(word.len() - 1))
}

/// Whether any byte of `text` is `bad`: every byte is looked at, without stopping at the
/// first, which lets the compiler test many at once (the texts are short, and good).
#[inline]
fn any_byte(text: &[u8], bad: impl Fn(u8) -> bool) -> bool {
    text.iter().fold(false, |found, &b| found | bad(b))
}

fn require(ok: bool, err: PmiError) -> PmiResult<()> {
    if ok {
        Ok(())
    } else {
        Err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_rules() {
        let api = Api::Pmi1;
        assert_eq!(api.check_key(b"k0", 64), Ok(()));
        assert_eq!(api.check_key(b"\xc6\x92", 64), Ok(()));
        for bad in [&b""[..], b"a b", b"a=b", b"a\nb", b"a\tb", b"a\x7fb"] {
            assert_eq!(api.check_key(bad, 64), Err(PmiError::InvalidKey), "{bad:?}");
        }
        assert_eq!(api.check_key(&[b'k'; 63], 64), Ok(()));
        assert_eq!(
            api.check_key(&[b'k'; 64], 64),
            Err(PmiError::InvalidKeyLength)
        );
        let api = Api::Pmi2;
        assert_eq!(api.check_key(b"a b=c", 64), Ok(()));
        for bad in [&b""[..], b"a;b", b";"] {
            assert_eq!(api.check_key(bad, 64), Err(PmiError::InvalidKey), "{bad:?}");
        }
    }

    #[test]
    fn value_rules() {
        let api = Api::Pmi1;
        assert_eq!(api.check_value(b"a b\tc=d \xc6\x92", 1024), Ok(()));
        // (Hydra's reply field is refused only at the end, where a reply would lose it.)
        for ok in [
            &b"found=TRUE"[..],
            b"x found=TRUE y",
            b"x found=true",
            b"x  found=FALSE.",
        ] {
            assert_eq!(api.check_value(ok, 1024), Ok(()), "{ok:?}");
        }
        // What MPICH 5.0.2's Hydra parses (it keeps the first word) and what it dies of.
        for ok in [
            &b"=x"[..],
            b"a=",
            b"x ",
            b"a  b",
            b"a b=c d",
            b"a b==c",
            b"a b=c=",
            b"a \\=b",
        ] {
            assert_eq!(api.check_value(ok, 1024), Ok(()), "{ok:?}");
        }
        for bad in [
            &b""[..],
            b"a\nb",
            b"a\rb",
            b"\x01",
            b"\x7f",
            b"x found=TRUE",
            b" found=FALSE",
            b" x",
            b"  ",
            b"a =b",
            b"a  =b",
            b"a b=",
            b"a b= c",
            b"a b c=",
            b"a b=c =d",
        ] {
            assert_eq!(
                api.check_value(bad, 1024),
                Err(PmiError::InvalidVal),
                "{bad:?}"
            );
        }
        assert_eq!(api.check_value(&[b'v'; 1023], 1024), Ok(()));
        assert_eq!(
            api.check_value(&[b'v'; 1024], 1024),
            Err(PmiError::InvalidValLength)
        );
        // PMI-2: an empty value is refused as on PMI-1 (MPICH 5.0.2's mpiexec exits 255
        // on `value=;`), and so is a `;`.
        let api = Api::Pmi2;
        assert_eq!(api.check_value(b"a b\nc=d", 1024), Ok(()));
        assert_eq!(api.check_value(b"x found=TRUE", 1024), Ok(()));
        for bad in [&b""[..], b"a;b", b";"] {
            assert_eq!(
                api.check_value(bad, 1024),
                Err(PmiError::InvalidVal),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn names_and_ports() {
        assert_eq!(Api::Pmi1.check_names(&[b"svc", b"port"], 256), Ok(()));
        assert_eq!(
            Api::Pmi1.check_names(&[b"s v"], 256),
            Err(PmiError::InvalidArg)
        );
        assert_eq!(
            Api::Pmi2.check_names(&[b"tcp://h;1"], 256),
            Err(PmiError::InvalidArg)
        );
        assert_eq!(
            Api::Pmi2.check_names(&[&[b'p'; 256]], 256),
            Err(PmiError::InvalidArg)
        );
    }

    #[test]
    fn spawn_rules_for_both_apis() {
        let ok = SpawnCommand {
            execname: b"/bin/prog",
            args: vec![b"a"],
            maxprocs: 1,
            info: vec![],
        };
        for api in [Api::Pmi1, Api::Pmi2] {
            assert_eq!(
                api.check_spawn(std::slice::from_ref(&ok), &[], PMI2_MAXES),
                Ok(())
            );
            let mut empty = ok.clone();
            empty.args = vec![b""];
            assert_eq!(
                api.check_spawn(&[empty], &[], PMI2_MAXES),
                Err(PmiError::InvalidArgs)
            );
            assert_eq!(
                api.check_spawn(std::slice::from_ref(&ok), &[(b"k", b"")], PMI2_MAXES),
                Err(PmiError::InvalidVal)
            );
        }
        let mut semi = ok.clone();
        semi.args = vec![b"a;b"];
        assert_eq!(
            Api::Pmi2.check_spawn(&[semi.clone()], &[], PMI2_MAXES),
            Err(PmiError::InvalidArgs)
        );
        assert_eq!(Api::Pmi1.check_spawn(&[semi], &[], PMI2_MAXES), Ok(()));
        assert_eq!(
            Api::Pmi2.check_spawn(&[ok], &[(b"k", b"x;y")], PMI2_MAXES),
            Err(PmiError::InvalidVal)
        );
    }
}
