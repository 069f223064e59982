//! The hash of the precomputed token tables: the build script
//! (`build.rs`, which includes this file) places each token with it, and
//! [`super::vocab`] looks tokens up with it, so both sides share one
//! definition.

/// The table slot hash of `bytes`: FxHash-style multiply-rotate over
/// 8-byte words, then a final mix (the low bits pick the slot).
#[inline]
pub fn token_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = bytes.len() as u64;
    let mut words = bytes.chunks_exact(8);
    for w in words.by_ref() {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    h ^ (h >> 29) ^ (h >> 41)
}
