//! The rank order: pinned first, then relevance, scope, name and input
//! order, as one comparable key.

use crate::skill::Scope;

/// An item's place in the rank order (compared field by field).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct RankKey<'a> {
    pub(super) unpinned: bool,
    pub(super) score: std::cmp::Reverse<i64>,
    pub(super) scope: Scope,
    pub(super) name: &'a str,
    pub(super) input: usize,
    /// Its position in the items (the same order as `input`).
    pub(super) item: usize,
}

/// `x` as an integer ordered as `f64::total_cmp` orders floats.
pub(super) fn total_order(x: f64) -> i64 {
    let bits = x.to_bits().cast_signed();
    bits ^ (((bits >> 63).cast_unsigned() >> 1).cast_signed())
}
