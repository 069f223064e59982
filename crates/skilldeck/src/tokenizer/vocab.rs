//! A precomputed vocabulary: token bytes by rank and a hash table from
//! bytes to rank, all static data made by `build.rs` (nothing is built at
//! run time; the pages are read as lookups touch them).

use super::hash::{RANK_BITS, tag_of, token_hash};

/// One encoding's tables (see `build.rs` for the layout).
pub(crate) struct Vocab {
    /// Every token's bytes, by rank.
    bytes: &'static [u8],
    /// Where each rank's bytes start (little-endian `u32`), plus the end.
    offsets: &'static [u8],
    /// Open-addressing hash table of little-endian `u32` slots, a power of
    /// two of them: rank + 1 and a tag of the hash (0: empty; the layout is
    /// `hash.rs`'s).
    table: &'static [u8],
}

/// The `u32` at index `i` of a little-endian table (0 past the end: the
/// tables are made together by `build.rs`, so that does not happen).
#[inline]
fn u32_at(table: &[u8], i: usize) -> u32 {
    table
        .get(4 * i..4 * i + 4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map_or(0, u32::from_le_bytes)
}

impl Vocab {
    pub(crate) const O200K_BASE: Vocab = Vocab {
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.bytes")),
        offsets: include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.offsets")),
        table: include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.table")),
    };

    pub(crate) const CL100K_BASE: Vocab = Vocab {
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.bytes")),
        offsets: include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.offsets")),
        table: include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.table")),
    };

    /// How many ordinary tokens there are.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.offsets.len() / 4 - 1
    }

    /// The bytes of token `rank` (empty for a rank out of range).
    #[inline]
    pub(crate) fn token(&self, rank: u32) -> &'static [u8] {
        let r = rank as usize;
        let (start, end) = (u32_at(self.offsets, r), u32_at(self.offsets, r + 1));
        self.bytes
            .get(start as usize..end as usize)
            .unwrap_or_default()
    }

    /// The rank of the token whose bytes are `piece`, if there is one.
    #[inline]
    pub(crate) fn rank(&self, piece: &[u8]) -> Option<u32> {
        let mask = self.table.len() / 4 - 1;
        let hash = token_hash(piece);
        let tag = tag_of(hash);
        let mut i = (hash as usize) & mask;
        loop {
            let entry = u32_at(self.table, i);
            if entry == 0 {
                return None;
            }
            if entry >> RANK_BITS == tag {
                let rank = (entry & ((1 << RANK_BITS) - 1)).wrapping_sub(1);
                if self.token(rank) == piece {
                    return Some(rank);
                }
            }
            i = (i + 1) & mask;
        }
    }
}
