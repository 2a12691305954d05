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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::hash::{BuildHasher, BuildHasherDefault};

    fn hash(key: &[u8]) -> u64 {
        BuildHasherDefault::<WordHasher>::default().hash_one(key)
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
