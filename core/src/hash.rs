//! A fast hasher for the client's records keyed by KVS keys (`store.rs`). The keys come from the local
//! application, not from the network, so SipHash's resistance to chosen collisions buys
//! nothing here, and it costs more than the rest of a cached get.

use std::hash::Hasher;

/// Folds the input eight bytes at a time, mixing the state fully after each word with
/// murmur3's 64-bit finalizer (a bijection in which every output bit depends on every
/// input bit). A bare multiply-fold (FxHash) is cheaper but carries differences only
/// upwards: keys like `card-1019-0` and `card-1092-0` then collide outright.
#[derive(Default, Clone, Copy)]
pub struct WordHasher {
    state: u64,
}

impl WordHasher {
    fn add(&mut self, word: u64) {
        self.state = mix(self.state ^ word);
    }
}

/// murmur3's fmix64.
fn mix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 56));
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.state
    }
}

/// A value's 64-bit digest (the put record's, `store::digest`): the length, then each
/// word folded in with a multiply and a rotation, then murmur3's finalizer. Each step is a
/// bijection of the state for a given word, and of the word for a given state, so two
/// values of one length that differ in a single word never share a digest; the rotation
/// carries high bits down, so differences do not only travel upwards as in a bare
/// multiply-fold. About a third of [`WordHasher`]'s instructions a word: a digest is taken
/// at every put, of values of up to a kilobyte.
pub fn digest(value: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let fold = |h: u64, word: [u8; 8]| {
        (h ^ u64::from_le_bytes(word))
            .wrapping_mul(K)
            .rotate_left(29)
    };
    let mut h = (value.len() as u64 ^ 0x6a09_e667_f3bc_c908).wrapping_mul(K);
    let mut words = value.chunks_exact(8);
    for chunk in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = fold(h, word);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = fold(h, word);
    }
    mix(h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::hash::{BuildHasher, BuildHasherDefault};

    fn hash(key: &[u8]) -> u64 {
        BuildHasherDefault::<WordHasher>::default().hash_one(key)
    }

    #[test]
    fn digests_tell_values_apart() {
        // Cards that differ in a digit, in one byte of a word or across words, by length
        // or by trailing zero bytes.
        let mut values: Vec<Vec<u8>> = (0..20_000)
            .map(|i| {
                format!(
                    "tcp://10.0.{}.{}:40001;shm:/dev/shm/mpich-{i}",
                    i / 256,
                    i % 256
                )
                .into_bytes()
            })
            .collect();
        values.extend((0..=64).map(|n| vec![0u8; n]));
        values.extend((0..64).map(|bit| (1u64 << bit).to_le_bytes().to_vec()));
        let mut digests: Vec<u64> = values.iter().map(|v| digest(v)).collect();
        digests.sort_unstable();
        digests.dedup();
        assert_eq!(digests.len(), values.len());
        assert_ne!(digest(b"ab"), digest(b"ba"));
    }

    #[test]
    fn distinct_keys_hash_apart() {
        let keys: Vec<Vec<u8>> = (0..10_000)
            .map(|i| format!("card-{i}-0").into_bytes())
            .collect();
        let mut hashes: Vec<u64> = keys.iter().map(|k| hash(k)).collect();
        hashes.sort_unstable();
        hashes.dedup();
        assert_eq!(hashes.len(), keys.len());
        // Trailing zero bytes and length still tell keys apart.
        assert_ne!(hash(b"a"), hash(b"a\0"));
        assert_ne!(hash(b""), hash(b"\0"));
    }

    #[test]
    fn the_map_works_as_a_map() {
        let mut map: HashMap<Vec<u8>, usize, BuildHasherDefault<WordHasher>> = HashMap::default();
        for i in 0..1000 {
            map.insert(format!("k{i}").into_bytes(), i);
        }
        assert!((0..1000).all(|i| map.get(format!("k{i}").as_bytes()) == Some(&i)));
    }
}
