//! The hash and slot layout of the precomputed token tables: the build
//! script (`build.rs`, which includes this file) places each token with
//! them, and [`super::vocab`] looks tokens up with them, so both sides
//! share one definition.
//!
//! A slot is a little-endian `u32`: 0 when empty, else the token's rank + 1
//! in the low [`RANK_BITS`] bits and a [`TAG_BITS`]-bit tag of its hash
//! above them. The tag answers most probes of other tokens without reading
//! their bytes, so the table can be three-quarters full (76 %) (1 MiB for
//! `o200k_base`'s 200,000 tokens instead of 2 MiB at half full: issue 30's
//! binary size) and a lookup of a piece that is no token still stops at the
//! first empty slot after a few cheap compares.

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

/// The bits of a slot that hold rank + 1 (ranks below 2^18 - 1: both
/// encodings have at most 200,000 ordinary tokens).
pub const RANK_BITS: u32 = 18;

/// The bits of a slot above [`RANK_BITS`] that hold a tag of the hash.
pub const TAG_BITS: u32 = 32 - RANK_BITS;

/// The slots of the table for `tokens` tokens: a power of two (the low bits
/// of the hash pick the slot), at least 5/4 of the tokens (at most four
/// fifths full: 76 % for both encodings).
#[allow(
    dead_code,
    reason = "build.rs (which includes this file) sizes the tables"
)]
pub fn slots_for(tokens: usize) -> usize {
    (tokens + tokens / 4 + 1).next_power_of_two()
}

/// The tag of a hash: its top [`TAG_BITS`] bits (the slot index uses the
/// low bits, so the two are independent).
#[inline]
pub fn tag_of(hash: u64) -> u32 {
    // Lossless: the shift leaves TAG_BITS (< 32) bits.
    (hash >> (64 - TAG_BITS)) as u32
}

/// The slot entry of the token of rank `rank` whose hash is `hash`.
#[allow(
    dead_code,
    reason = "build.rs (which includes this file) fills the tables"
)]
#[inline]
pub fn entry(rank: u32, hash: u64) -> u32 {
    (tag_of(hash) << RANK_BITS) | (rank + 1)
}
