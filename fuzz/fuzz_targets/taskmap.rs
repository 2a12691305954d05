//! Flux's task map parser (RFC 34) on arbitrary bytes: no panic, no endless loop; a
//! map it takes places the job's ranks, each once, and every clique it computes
//! contains its rank, is ascending, holds only ranks below the size, agrees with
//! clique_size and with node_of.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pmi_core::testkit::Mapping;

fuzz_target!(|data: &[u8]| {
    if data.len() < 6 {
        return;
    }
    let size = u32::from_le_bytes([data[0], data[1], data[2], 0]) % 100_000 + 1;
    let rank = u32::from_le_bytes([data[3], data[4], data[5], 0]) % size;
    let Ok(mapping) = Mapping::parse_taskmap(&data[6..], size) else {
        return;
    };
    let clique = mapping.clique(rank, size).expect("rank < size has a clique");
    assert!(clique.contains(&rank));
    assert!(clique.windows(2).all(|w| w[0] < w[1]));
    assert!(clique.iter().all(|&r| r < size));
    assert_eq!(mapping.clique_size(rank, size), Some(clique.len()));
    let node = mapping.node_of(rank, size);
    assert!(node.is_some());
    assert!(clique.iter().all(|&r| mapping.node_of(r, size) == node));
});
