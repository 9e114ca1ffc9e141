//! A small, fast generator for playouts, seeded from the caller's RNG.
//!
//! Playouts draw one random number per move, millions per second. The
//! caller's generator (typically `StdRng`, ChaCha-based) is cryptographic
//! and, in unoptimised dependency builds, many times slower than the rest of
//! a playout. So each search draws one seed from the caller's RNG and runs
//! SplitMix64 from it: results stay a pure function of the caller's seed.

use rand::{Rng, RngCore};

/// SplitMix64; statistically fine for choosing random moves.
pub(super) struct FastRng(u64);

impl FastRng {
    /// A generator seeded by one draw from `rng`.
    pub(super) fn from_rng<R: Rng + ?Sized>(rng: &mut R) -> FastRng {
        FastRng(rng.next_u64())
    }
}

impl RngCore for FastRng {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(8) {
            let bytes = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }
}
