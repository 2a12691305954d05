//! The client's key-value records (successful gets, this process's puts) in one byte
//! arena each: a new pair costs no allocation of its own. The arena and the slot table
//! grow by doubling, so a run of new keys allocates O(log n) times, not once or twice per
//! key as a `Vec` per key and value did. Each pair's lengths sit in the arena in front of
//! it and the table holds only offsets, so a rank that reads every peer's business card
//! touches few pages of memory (each new page is a page fault).

use std::hash::Hasher;

use crate::hash::WordHasher;

/// Records stored back to back in one arena, found through an open-addressing table of
/// their offsets.
#[derive(Default)]
pub struct Store {
    /// Each record: the key's length and the value's length (`u32`, little-endian), the
    /// key, the value.
    bytes: Vec<u8>,
    /// A power-of-two number of slots (or none yet), at most half of them used: `EMPTY`,
    /// or the offset of a record in `bytes`, plus one. Linear probing from the key's hash.
    slots: Vec<usize>,
    /// Records in the table.
    len: usize,
}

const EMPTY: usize = 0;
const HEADER: usize = 8;
const FIRST_SLOTS: usize = 16;

/// Where a value lies in a [`Store`] (from [`Store::find`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot(usize, usize);

/// A key's hash, as a [`Store`] and a [`Recent`] use it.
pub fn hash(key: &[u8]) -> u64 {
    let mut h = WordHasher::default();
    h.write(key);
    h.finish()
}

/// A value's digest, as the put record keeps it on the wires: 8 bytes whatever its
/// length, another hash than the tables' (seeded with the value's length), so that the
/// record refuses a second put of another value without keeping the first. Two values of
/// one key with the same digest (a chance of about 2^-64) would be taken for one.
pub fn digest(value: &[u8]) -> [u8; 8] {
    crate::hash::digest(value).to_le_bytes()
}

impl Store {
    /// The value stored under `key`.
    pub fn get(&self, key: &[u8]) -> Option<&[u8]> {
        self.find(key).map(|at| self.value(at))
    }

    /// Where the value stored under `key` is: a handle that borrows nothing, so a caller
    /// can test and then take the value with one lookup.
    pub fn find(&self, key: &[u8]) -> Option<Slot> {
        self.find_hashed(hash(key), key)
    }

    /// [`Store::find`] for a key whose [`hash`] the caller has.
    pub fn find_hashed(&self, h: u64, key: &[u8]) -> Option<Slot> {
        let slot = self.slot_of(h, key)?;
        let (key_end, value_end) = self.record(self.slots[slot] - 1, key.len());
        Some(Slot(key_end, value_end))
    }

    /// The bytes the records take in the arena, headers included (not the table).
    #[cfg(test)]
    pub fn arena_len(&self) -> usize {
        self.bytes.len()
    }

    /// What a record of `key` and `value` adds to the arena.
    pub fn record_len(key: &[u8], value: &[u8]) -> usize {
        HEADER + key.len() + value.len()
    }

    /// The bytes the store would hold with a record of `key` and `value` added: the
    /// arena and the table (which doubles when it would be more than half full), for a
    /// budget that counts both.
    pub fn footprint_with(&self, key: &[u8], value: &[u8]) -> usize {
        let slots = if 2 * (self.len + 1) > self.slots.len() {
            (self.slots.len() * 2).max(FIRST_SLOTS)
        } else {
            self.slots.len()
        };
        self.bytes.len() + Store::record_len(key, value) + slots * std::mem::size_of::<usize>()
    }

    /// Forget every record, keeping the arena's memory for the next ones; the table
    /// starts again small (it grows back by doubling).
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.slots = Vec::new();
        self.len = 0;
    }

    /// The value `find` located.
    pub fn value(&self, at: Slot) -> &[u8] {
        &self.bytes[at.0..at.1]
    }

    /// Store `value` under `key` and return the stored value. The callers look first
    /// (RFC 13 keys are put once); a key stored again is answered with its newest value.
    pub fn insert(&mut self, key: &[u8], value: &[u8]) -> &[u8] {
        self.insert_hashed(hash(key), key, value)
    }

    /// [`Store::insert`] for a key whose [`hash`] the caller has.
    pub fn insert_hashed(&mut self, h: u64, key: &[u8], value: &[u8]) -> &[u8] {
        let start = self.bytes.len();
        // The whole record at once: the arena grows at most once a record, not once for
        // each of its four pieces (a first put grew it 8, 16, then 36 bytes).
        self.bytes.reserve(Store::record_len(key, value));
        self.bytes.extend_from_slice(&length(key).to_le_bytes());
        self.bytes.extend_from_slice(&length(value).to_le_bytes());
        self.bytes.extend_from_slice(key);
        self.bytes.extend_from_slice(value);
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        // One walk from the hash: the key's slot (then it is stored again) or a free one.
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        loop {
            let entry = self.slots[i];
            if entry == EMPTY {
                self.len += 1;
                break;
            }
            if self.key_at(entry - 1) == key {
                break;
            }
            i = (i + 1) & mask;
        }
        self.slots[i] = start + 1;
        &self.bytes[start + HEADER + key.len()..]
    }

    /// The slot holding `key`, whose hash is `h`.
    fn slot_of(&self, h: u64, key: &[u8]) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        loop {
            let entry = self.slots[i];
            if entry == EMPTY {
                return None;
            }
            if self.key_at(entry - 1) == key {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// The first empty slot from `h` on (there is one: the table is at most half full).
    fn free_slot(&self, h: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        while self.slots[i] != EMPTY {
            i = (i + 1) & mask;
        }
        i
    }

    /// Twice the slots (or the first ones), every record placed again.
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(FIRST_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; size]);
        for entry in old.into_iter().filter(|&e| e != EMPTY) {
            let slot = self.free_slot(hash(self.key_at(entry - 1)));
            self.slots[slot] = entry;
        }
    }

    /// The key of the record at `start`.
    fn key_at(&self, start: usize) -> &[u8] {
        let key_len = self.field(start) as usize;
        &self.bytes[start + HEADER..start + HEADER + key_len]
    }

    /// Where the key of `key_len` bytes at `start` ends, and where its value ends.
    fn record(&self, start: usize, key_len: usize) -> (usize, usize) {
        let key_end = start + HEADER + key_len;
        (key_end, key_end + self.field(start + 4) as usize)
    }

    fn field(&self, at: usize) -> u32 {
        let mut word = [0u8; 4];
        word.copy_from_slice(&self.bytes[at..at + 4]);
        u32::from_le_bytes(word)
    }
}

/// The hashes of the last [`RECENT`] keys read, to tell a key read again soon from a
/// key read once: a cache that keeps a value only when its key comes again (a retry
/// with a larger buffer, a loop over a few keys) costs a job's ranks nothing, and
/// each of them reads each peer's business card once. Keeping every value cost a rank
/// of 256 that read 512 cards 22 more page faults than MPICH's client, which caches
/// nothing. (A page-sized bitmap of every key read would touch a cold line of a page of
/// its own on every get; these few hashes sit inside the client, beside its other
/// fields.)
#[derive(Default)]
pub struct Recent {
    hashes: [u64; RECENT],
    next: usize,
}

/// How many keys [`Recent`] remembers.
pub const RECENT: usize = 8;

impl Recent {
    /// Remember the key of hash `h`; whether it was not among the last [`RECENT`] (but
    /// for a collision of two 64-bit hashes).
    pub fn first_time(&mut self, h: u64) -> bool {
        if self.hashes.contains(&h) {
            return false;
        }
        self.hashes[self.next] = h;
        self.next = (self.next + 1) % RECENT;
        true
    }
}

/// A key's or value's length in a record's header. Keys and values are bounded far below
/// 4 GiB (by the line and value limits every backend applies before storing).
fn length(bytes: &[u8]) -> u32 {
    u32::try_from(bytes.len()).expect("a key or value under 4 GiB")
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
        assert_eq!(s.insert(b"", b"empty key"), b"empty key");
        for i in 0..10_000 {
            s.insert(
                format!("key-{i}").as_bytes(),
                format!("value-{i}").as_bytes(),
            );
        }
        assert_eq!(s.get(b"k"), Some(&b"v"[..]));
        assert_eq!(s.get(b"x"), Some(&b""[..]));
        assert_eq!(s.get(b""), Some(&b"empty key"[..]));
        assert_eq!(s.get(b"card-1019-0"), Some(&b"tcp://a"[..]));
        for i in (0..10_000).step_by(97) {
            let value = format!("value-{i}");
            assert_eq!(s.get(format!("key-{i}").as_bytes()), Some(value.as_bytes()));
        }
        assert_eq!(s.get(b"key-9999"), Some(&b"value-9999"[..]));
        assert_eq!(s.get(b"key-10000"), None);
        assert!(2 * s.len <= s.slots.len());
    }

    #[test]
    fn the_footprint_counts_the_arena_and_the_table() {
        let mut s = Store::default();
        let word = std::mem::size_of::<usize>();
        // The first record brings the first table.
        assert_eq!(s.footprint_with(b"k", b"v"), 10 + FIRST_SLOTS * word);
        for i in 0..8 {
            s.insert(format!("k{i}").as_bytes(), b"v");
        }
        // Eight records fill half of 16 slots: a ninth doubles the table.
        assert_eq!(s.slots.len(), FIRST_SLOTS);
        let arena = s.arena_len();
        assert_eq!(
            s.footprint_with(b"k8", b"v"),
            arena + 11 + 2 * FIRST_SLOTS * word
        );
        s.insert(b"k8", b"v");
        assert_eq!(
            s.footprint_with(b"k9", b"v"),
            arena + 22 + 2 * FIRST_SLOTS * word
        );
    }

    #[test]
    fn four_mib_hold_16681_business_cards() {
        // pmi(3)'s figure (Memory): records of a 12-byte key and a 200-byte card, and their table,
        // within the get cache's budget (client::GET_CACHE_BYTES).
        let mut s = Store::default();
        let card = [b'c'; 200];
        let mut n = 0;
        while s.footprint_with(format!("card-{n:07}").as_bytes(), &card) <= 4 << 20 {
            s.insert(format!("card-{n:07}").as_bytes(), &card);
            n += 1;
        }
        assert_eq!(n, 16681);
    }

    #[test]
    fn a_cleared_store_forgets_and_keeps_its_arena() {
        let mut s = Store::default();
        for i in 0..1000 {
            s.insert(format!("k{i}").as_bytes(), b"value");
        }
        let arena = s.bytes.capacity();
        assert_eq!(
            s.arena_len(),
            (0..1000)
                .map(|i| Store::record_len(format!("k{i}").as_bytes(), b"value"))
                .sum::<usize>()
        );
        s.clear();
        assert_eq!((s.get(b"k1"), s.arena_len(), s.len), (None, 0, 0));
        assert_eq!(s.insert(b"k1", b"again"), b"again");
        assert_eq!(s.get(b"k1"), Some(&b"again"[..]));
        assert_eq!(s.bytes.capacity(), arena);
        // ...but not its table, which a budget counts: it starts small again.
        assert_eq!(s.slots.len(), FIRST_SLOTS);
    }

    #[test]
    fn equal_hashes_are_probed_past() {
        // Eight keys under one hash fill a run of the first sixteen slots (no growth yet):
        // each lookup walks the run, and a ninth key is not in it.
        let mut s = Store::default();
        for i in 0..8 {
            s.insert_hashed(7, format!("k{i}").as_bytes(), format!("v{i}").as_bytes());
        }
        assert_eq!(s.slots.len(), FIRST_SLOTS);
        for i in 0..8 {
            let key = format!("k{i}");
            let slot = s.slot_of(7, key.as_bytes()).expect("stored");
            assert_eq!(slot, 7 + i, "linear probing from the hash");
            let (key_end, value_end) = s.record(s.slots[slot] - 1, key.len());
            assert_eq!(&s.bytes[key_end..value_end], format!("v{i}").as_bytes());
        }
        assert_eq!(s.slot_of(7, b"k8"), None);
    }

    #[test]
    fn recent_remembers_the_last_keys_only() {
        let mut recent = Recent::default();
        let h = |i: usize| hash(format!("card-{i}-0").as_bytes());
        for i in 0..RECENT {
            assert!(recent.first_time(h(i)));
        }
        // Each of the last RECENT again: not new (and each stays remembered).
        for i in 0..RECENT {
            assert!(!recent.first_time(h(i)));
        }
        // One more key pushes out the oldest.
        assert!(recent.first_time(h(RECENT)));
        assert!(recent.first_time(h(0)));
        assert!(!recent.first_time(h(RECENT)));
    }

    #[test]
    fn a_key_stored_again_gives_its_newest_value() {
        let mut s = Store::default();
        s.insert(b"attr", b"old");
        s.insert(b"other", b"x");
        assert_eq!(s.insert(b"attr", b"new"), b"new");
        assert_eq!(s.get(b"attr"), Some(&b"new"[..]));
        assert_eq!(s.get(b"other"), Some(&b"x"[..]));
        assert_eq!(s.len, 2);
    }
}
