//! The client's two key-value records (successful gets, this process's puts) in one byte
//! arena each: a new pair costs no allocation of its own. The arena, the entry list and
//! the hash table grow by doubling, so a run of new keys allocates O(log n) times, not
//! once or twice per key as a `Vec` per key and value did.
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::hash::WordHasher;

/// Keys and values stored back to back in one arena, found through a table from each
/// key's hash to the last entry with that hash (entries with equal hashes are chained).
#[derive(Default)]
pub struct Store {
    bytes: Vec<u8>,
    entries: Vec<Entry>,
    table: HashMap<u64, u32, BuildHasherDefault<Prehashed>>,
}

/// One pair: the key at `bytes[start..start + key_len]`, the value right after it.
struct Entry {
    start: usize,
    key_len: u32,
    value_len: u32,
    /// The previous entry with the same hash, or `NONE`.
    next: u32,
}

const NONE: u32 = u32::MAX;

/// Where a value lies in a [`Store`] (from [`Store::find`]).
#[derive(Clone, Copy)]
pub struct Found(usize, usize);

fn hash(key: &[u8]) -> u64 {
    let mut h = WordHasher::default();
    h.write(key);
    h.finish()
}

impl Store {
    /// The value stored under `key`.
    pub fn get(&self, key: &[u8]) -> Option<&[u8]> {
        self.find(key).map(|at| self.value(at))
    }

    /// Where the value stored under `key` is: a handle that borrows nothing, so a caller
    /// can test and then take the value with one lookup.
    pub fn find(&self, key: &[u8]) -> Option<Found> {
        let mut i = *self.table.get(&hash(key))?;
        while i != NONE {
            let e = &self.entries[i as usize];
            let key_end = e.start + e.key_len as usize;
            if &self.bytes[e.start..key_end] == key {
                return Some(Found(key_end, key_end + e.value_len as usize));
            }
            i = e.next;
        }
        None
    }

    /// The value `find` located.
    pub fn value(&self, at: Found) -> &[u8] {
        &self.bytes[at.0..at.1]
    }

    /// Store `value` under `key`, which must not be stored yet (the callers look first:
    /// RFC 13 keys are put once), and return the stored value.
    pub fn insert(&mut self, key: &[u8], value: &[u8]) -> &[u8] {
        let h = hash(key);
        let start = self.bytes.len();
        self.bytes.extend_from_slice(key);
        self.bytes.extend_from_slice(value);
        let index = self.entries.len() as u32;
        let next = self.table.insert(h, index).unwrap_or(NONE);
        self.entries.push(Entry {
            start,
            key_len: key.len() as u32,
            value_len: value.len() as u32,
            next,
        });
        &self.bytes[start + key.len()..]
    }
}

/// The table's keys are hashes already: passed through.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_and_finds_pairs_including_empty_and_colliding_ones() {
        let mut s = Store::default();
        assert_eq!(s.get(b"k"), None);
        assert_eq!(s.insert(b"k", b"v"), b"v");
        assert_eq!(s.insert(b"card-1019-0", b"tcp://a"), b"tcp://a");
        assert_eq!(s.insert(b"x", b""), b"");
        for i in 0..10_000 {
            s.insert(
                format!("key-{i}").as_bytes(),
                format!("value-{i}").as_bytes(),
            );
        }
        assert_eq!(s.get(b"k"), Some(&b"v"[..]));
        assert_eq!(s.get(b"x"), Some(&b""[..]));
        assert_eq!(s.get(b"card-1019-0"), Some(&b"tcp://a"[..]));
        assert_eq!(s.get(b"key-9999"), Some(&b"value-9999"[..]));
        assert_eq!(s.get(b"key-10000"), None);
    }

    #[test]
    fn equal_hashes_are_chained() {
        // Force every key into one chain through the table directly.
        let mut s = Store::default();
        s.insert(b"a", b"1");
        s.insert(b"b", b"2");
        let ha = hash(b"a");
        let hb = hash(b"b");
        // Move b's entry under a's hash, chained after a's.
        let b_index = s.table.remove(&hb).unwrap();
        let a_index = s.table.insert(ha, b_index).unwrap();
        s.entries[b_index as usize].next = a_index;
        // a is found past b's entry at the head of the chain.
        assert_eq!(s.get(b"a"), Some(&b"1"[..]));
    }
}
