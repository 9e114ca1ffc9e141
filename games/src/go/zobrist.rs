//! Zobrist keys for whole-board position hashing.
//!
//! The keys are generated at compile time from a fixed seed so that hashes
//! are identical across runs and platforms, and no RNG is needed at
//! runtime. With 64-bit keys the chance that two distinct positions in one
//! game collide (and a legal move is refused as superko) is negligible.

/// Cells of the largest padded board (19×19 plus a one-point border).
pub(crate) const MAX_CELLS: usize = 21 * 21;

/// One key per padded cell and colour (index 0 Black, 1 White).
pub(crate) static KEYS: [[u64; 2]; MAX_CELLS] = build_keys();

/// SplitMix64: tiny, well-distributed, and usable in a `const fn`.
const fn splitmix64(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (state, z ^ (z >> 31))
}

const fn build_keys() -> [[u64; 2]; MAX_CELLS] {
    let mut keys = [[0u64; 2]; MAX_CELLS];
    let mut state = 0x6D63_706C_2D67_6F21; // "mcpl-go!"
    let mut i = 0;
    while i < MAX_CELLS {
        let (s, black) = splitmix64(state);
        let (s, white) = splitmix64(s);
        keys[i] = [black, white];
        state = s;
        i += 1;
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn keys_are_distinct_and_nonzero() {
        let all: HashSet<u64> = KEYS.iter().flatten().copied().collect();
        assert_eq!(all.len(), MAX_CELLS * 2);
        assert!(!all.contains(&0));
    }
}
