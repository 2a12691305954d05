//! The key directory (the module doc of `pmix` says why there is one): at each barrier
//! every process puts the names of the keys it put since its previous barrier, each with
//! its value when that is short, under a key of that barrier's own; a reader records
//! where each name it reads is to be found. This file is the directory's bookkeeping and
//! the text of its entries; `pmix` puts and gets them.

use std::collections::HashMap;

use crate::store::{Slot, Store};

/// Barrier F's entry: "P\n" (P the last earlier barrier whose entry has names, or "-")
/// then the names put since the barrier before F, each with its value when that is short
/// (`encode_item`).
pub(super) const DIR_KEY: &str = "libpmi:dir:";

/// A process's entry at a PMI 1.2 group barrier between barriers F - 1 and F: the same
/// text as barrier F's entry will be, so far (put again, whole, at each group barrier).
pub(super) const GROUP_DIR_KEY: &str = "libpmi:gdir:";

/// The longest value that travels in a directory entry beside its name (a business card
/// of MPICH or Intel MPI is 50 to 300 bytes).
const INLINE_VALUE_MAX: usize = 1024;
/// The most value bytes one entry carries: the fence moves these twice (once under their
/// own key, for PMIx readers, and once here).
const INLINE_ENTRY_MAX: usize = 16 << 10;
/// The most a process keeps of the values it read in entries (records of `Store`, key
/// and value with 8 bytes each); past it, a key is asked of its owner.
pub const KNOWN_BYTES: usize = 4 << 20;

/// Who put which key: this process's side of the key directory and what it has read of
/// the others'.
#[derive(Default)]
pub(super) struct Directory {
    /// The names put since the last barrier, encoded (`encode_item`).
    pending: Vec<u8>,
    /// The value bytes `pending` carries.
    pending_inline: usize,
    /// The last barrier whose entry had names.
    last_named: Option<u64>,
    /// Barriers this process has completed.
    pub(super) fences: u64,
    /// The owner of each key named without a value kept in `known`, and of this
    /// process's own keys (a key in `known` needs no owner: its value is answered).
    owners: HashMap<Vec<u8>, u32>,
    /// Per rank, how many of its entries have been read (the first `read[r]`).
    pub(super) read: Vec<u64>,
    /// `fences` when the entries were last read.
    pub(super) read_at: u64,
    /// Values that came in the peers' entries read, known without asking PMIx (at most
    /// `KNOWN_BYTES`).
    pub(super) known: Store,
}

/// Where the directory read so far places a key.
#[derive(Debug, PartialEq)]
pub(super) enum Seen {
    /// Its value, kept (`Directory::known`).
    Value(Slot),
    /// Put by this rank; its value is asked of it.
    Owner(u32),
}

impl Directory {
    /// This process's entry for the barrier it is entering: its key, and its text (the
    /// last earlier barrier with names, or "-", then the names put since, `encode_item`).
    pub(super) fn entry(&self) -> (String, Vec<u8>) {
        let mut value = match self.last_named {
            Some(p) => format!("{p}\n").into_bytes(),
            None => b"-\n".to_vec(),
        };
        value.extend_from_slice(&self.pending);
        (format!("{DIR_KEY}{}", self.fences), value)
    }

    /// This process's entry for a group barrier (`GROUP_DIR_KEY`): its key, and the text
    /// its next barrier's entry would have now. Nothing stops being pending.
    pub(super) fn group_entry(&self) -> (String, Vec<u8>) {
        let (_, value) = self.entry();
        (format!("{GROUP_DIR_KEY}{}", self.fences), value)
    }

    /// The entry of [`Directory::entry`] was put: the names in it are no longer pending.
    pub(super) fn entry_written(&mut self) {
        if !self.pending.is_empty() {
            self.last_named = Some(self.fences);
            self.pending.clear();
            self.pending_inline = 0;
        }
    }

    /// Keep `value` of `key`, unless that passes `KNOWN_BYTES`; whether it was kept.
    pub(super) fn keep(&mut self, key: &[u8], value: &[u8]) -> bool {
        let fits = self.known.footprint_with(key, value) <= KNOWN_BYTES;
        if fits {
            self.known.insert(key, value);
        }
        fits
    }

    /// What the entries read so far say of `key`.
    pub(super) fn seen(&self, key: &[u8]) -> Option<Seen> {
        match self.known.find(key) {
            Some(at) => Some(Seen::Value(at)),
            None => self.owners.get(key).map(|&rank| Seen::Owner(rank)),
        }
    }

    /// A name read in `rank`'s entry, with its value when the entry carried it: its
    /// value kept, else its owner recorded. A name already placed stays where it is
    /// (entries are read from the latest back, and the later put wins).
    pub(super) fn add_peer(&mut self, rank: u32, key: &[u8], value: Option<&[u8]>) {
        if self.seen(key).is_some() {
            return;
        }
        if !value.is_some_and(|v| self.keep(key, v)) {
            self.owners.insert(key.to_vec(), rank);
        }
    }

    /// `key` was put by this process (rank `me`): named in its next entry unless it was
    /// before, with `value` when that is short and the entry has room (a node
    /// attribute's is `None`: it is not for other nodes). Its value is not kept here:
    /// the client answers a process's own keys from its put record, with no `PMIx_Get`
    /// (each is a round trip through PMIx's progress thread: two thread switches; 63 and
    /// 194 us in one traced run under `prterun` here).
    pub(super) fn add_own(&mut self, me: u32, key: &[u8], value: Option<&[u8]>) {
        if self.owners.insert(key.to_vec(), me) == Some(me) {
            return;
        }
        let inline = value.filter(|v| {
            v.len() <= INLINE_VALUE_MAX && self.pending_inline + v.len() <= INLINE_ENTRY_MAX
        });
        if let Some(v) = inline {
            self.pending_inline += v.len();
        }
        encode_item(&mut self.pending, key, inline);
    }
}

/// A length-prefixed string: its length in decimal, ':', its bytes.
fn encode_name(out: &mut Vec<u8>, name: &[u8]) {
    out.extend_from_slice(name.len().to_string().as_bytes());
    out.push(b':');
    out.extend_from_slice(name);
}

/// An item of an entry: the name, then, when the value travels with it, '=' and the
/// value, both length-prefixed (`encode_name`).
fn encode_item(out: &mut Vec<u8>, name: &[u8], value: Option<&[u8]>) {
    encode_name(out, name);
    if let Some(value) = value {
        out.push(b'=');
        encode_name(out, value);
    }
}

/// A length-prefixed string at the start of `text`, and what follows it.
fn decode_name(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = memchr::memchr(b':', text)?;
    let digits = &text[..colon];
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let len: usize = std::str::from_utf8(digits).ok()?.parse().ok()?;
    let rest = &text[colon + 1..];
    Some((rest.get(..len)?, &rest[len..]))
}

/// One item of an entry: a name and its value when it travels with it.
type Item<'a> = (&'a [u8], Option<&'a [u8]>);

/// The items of an entry; `None` when they are not in `encode_item`'s form.
fn decode_items(mut text: &[u8]) -> Option<Vec<Item<'_>>> {
    let mut items = Vec::new();
    while !text.is_empty() {
        let (name, rest) = decode_name(text)?;
        let (value, rest) = match rest.strip_prefix(b"=") {
            Some(rest) => {
                let (value, rest) = decode_name(rest)?;
                (Some(value), rest)
            }
            None => (None, rest),
        };
        items.push((name, value));
        text = rest;
    }
    Some(items)
}

/// An entry: the last earlier barrier with names (`None`: there is none), the items.
pub(super) fn split_entry(text: &[u8]) -> Option<(Option<u64>, Vec<Item<'_>>)> {
    let nl = memchr::memchr(b'\n', text)?;
    let previous = match &text[..nl] {
        b"-" => None,
        p => Some(std::str::from_utf8(p).ok()?.parse().ok()?),
    };
    Some((previous, decode_items(&text[nl + 1..])?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_items_round_trip_whatever_bytes_they_hold() {
        let items: [Item<'_>; 6] = [
            (b"card-0", Some(b"tcp://10.0.0.1:40000")),
            (b"", None),
            (b"12:34", Some(b"")),
            (b"a\nb", None),
            (b"\xff:\x01", Some(b"=5:x=")),
            (b"last", None),
        ];
        let mut text = Vec::new();
        for (name, value) in items {
            encode_item(&mut text, name, value);
        }
        assert_eq!(decode_items(&text).unwrap(), items);
        assert_eq!(decode_items(b"").unwrap(), Vec::<Item<'_>>::new());
    }

    #[test]
    fn an_entry_carries_short_values_up_to_its_budget() {
        let mut dir = Directory::default();
        let card = vec![b'c'; 200];
        let long = vec![b'l'; INLINE_VALUE_MAX + 1];
        dir.add_own(3, b"long", Some(&long));
        dir.add_own(3, b"node-attr", None);
        for i in 0..INLINE_ENTRY_MAX / card.len() + 5 {
            dir.add_own(3, format!("card-{i}").as_bytes(), Some(&card));
        }
        // Put again: not named again.
        dir.add_own(3, b"card-0", Some(&card));
        let items = decode_items(&dir.pending).unwrap();
        assert_eq!(items[0], (&b"long"[..], None));
        assert_eq!(items[1], (&b"node-attr"[..], None));
        let cards = &items[2..];
        assert_eq!(cards.len(), INLINE_ENTRY_MAX / card.len() + 5);
        let inline = cards.iter().filter(|(_, v)| v.is_some()).count();
        assert_eq!(inline, INLINE_ENTRY_MAX / card.len());
        assert_eq!(dir.pending_inline, inline * card.len());
        assert!(cards[..inline].iter().all(|(_, v)| *v == Some(&card[..])));
        assert!(cards[inline..].iter().all(|(_, v)| v.is_none()));
        // Its own values are not kept (the client's put record answers them); their
        // owner is recorded.
        assert_eq!(dir.known.arena_len(), 0);
        assert_eq!(dir.seen(b"card-0"), Some(Seen::Owner(3)));
        assert_eq!(dir.seen(b"node-attr"), Some(Seen::Owner(3)));
    }

    #[test]
    fn a_group_entry_names_what_the_next_entry_will_and_leaves_it_pending() {
        let mut dir = Directory {
            fences: 2,
            ..Directory::default()
        };
        dir.add_own(1, b"a", Some(b"1"));
        let (key, first) = dir.group_entry();
        assert_eq!(key, "libpmi:gdir:2");
        dir.add_own(1, b"b", None);
        let (_, second) = dir.group_entry();
        let (previous, items) = split_entry(&second).unwrap();
        assert_eq!(previous, None);
        assert_eq!(items, vec![(&b"a"[..], Some(&b"1"[..])), (&b"b"[..], None)]);
        assert!(second.starts_with(&first));
        assert_eq!(
            dir.entry().1,
            second,
            "the barrier's entry still names both"
        );
    }

    #[test]
    fn a_peers_name_is_placed_once_by_its_value_or_its_owner() {
        let mut dir = Directory::default();
        dir.add_own(0, b"mine", Some(b"x"));
        dir.add_peer(1, b"card-1", Some(b"abc"));
        dir.add_peer(2, b"long-2", None);
        // Read later (an earlier entry, or another rank's): the first placing stays.
        dir.add_peer(3, b"card-1", Some(b"zzz"));
        dir.add_peer(3, b"long-2", Some(b"zzz"));
        dir.add_peer(3, b"mine", Some(b"zzz"));
        let at = match dir.seen(b"card-1") {
            Some(Seen::Value(at)) => at,
            other => panic!("card-1: {other:?}"),
        };
        assert_eq!(dir.known.value(at), b"abc");
        // A kept value needs no owner: none is recorded for it.
        assert!(!dir.owners.contains_key(&b"card-1"[..]));
        assert_eq!(dir.seen(b"long-2"), Some(Seen::Owner(2)));
        assert_eq!(dir.seen(b"mine"), Some(Seen::Owner(0)));
        assert_eq!(dir.seen(b"nobody"), None);
        // Past the budget a value is not kept, and its owner is recorded instead.
        let big = vec![b'v'; KNOWN_BYTES];
        dir.add_peer(4, b"big-4", Some(&big));
        assert_eq!(dir.seen(b"big-4"), Some(Seen::Owner(4)));
    }

    #[test]
    fn a_reader_keeps_values_up_to_its_budget() {
        let mut dir = Directory::default();
        let value = vec![b'v'; 1000];
        let mut kept = 0;
        for i in 0.. {
            let key = format!("k{i}");
            let before = dir.known.arena_len();
            let was_kept = dir.keep(key.as_bytes(), &value);
            assert_eq!(was_kept, dir.known.arena_len() != before);
            if !was_kept {
                break;
            }
            kept += 1;
        }
        // Full: the records and their table within the budget, one more past it.
        assert!(dir.known.footprint_with(b"", b"") <= KNOWN_BYTES);
        assert!(dir.known.footprint_with(b"k10000", &value) > KNOWN_BYTES);
        assert!(kept > KNOWN_BYTES / Store::record_len(b"k10000", &value) * 9 / 10);
        assert!(dir.known.get(b"k0").is_some());
    }

    #[test]
    fn directory_text_not_ours_is_refused() {
        for bad in [
            &b"3:ab"[..],
            b"x:abc",
            b"3abc",
            b"-1:a",
            b"+1:a",
            b"99999999999999999999999:a",
            b"1:a=",
            b"1:a=x:1",
            b"1:a=3:xy",
            b"1:a==1:x",
        ] {
            assert_eq!(decode_items(bad), None, "{}", bad.escape_ascii());
        }
        assert_eq!(split_entry(b"-\n"), Some((None, vec![])));
        assert_eq!(
            split_entry(b"7\n6:card-1=3:abc1:k"),
            Some((
                Some(7),
                vec![(&b"card-1"[..], Some(&b"abc"[..])), (&b"k"[..], None)]
            ))
        );
        assert_eq!(split_entry(b"-"), None);
        assert_eq!(split_entry(b"x\n"), None);
        assert_eq!(split_entry(b"-\n9:short"), None);
    }
}
