//! The rank order: pinned first, then the operator's priority, relevance to
//! the query, recent use, scope, name and input order, as one comparable
//! key; and the order in which skills keep their place when the budget
//! cannot list them all ([`keep_order`]).

use std::cmp::Reverse;
use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::catalog::item::Item;
use crate::skill::Scope;

/// An item's place in the rank order (compared field by field).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct RankKey<'a> {
    pub(super) unpinned: bool,
    pub(super) priority: Reverse<i64>,
    pub(super) score: Reverse<i64>,
    pub(super) uses: Reverse<u64>,
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

/// What the rank says about an item before its name: skills equal in it
/// are equally wanted as far as anyone said.
fn tie_class(item: &Item<'_>) -> (bool, i64, i64, u64, Scope) {
    (
        item.pinned(),
        item.priority,
        total_order(item.score()),
        item.uses,
        item.skill.scope,
    )
}

/// `rest` (item indices in rank order) in the order skills keep their
/// place when not all can be listed. Among skills equal in everything the
/// rank knows before the name (priority, relevance, use, scope), sources
/// take turns: the first skill of each source folder (the folder holding
/// the skill folders: a repository, a plugin, a team's collection), then
/// the second of each, and so on, each source in rank order. So a library
/// of many collections is listed as a cross-section of all of them, not
/// as the alphabetical head of the list.
pub(super) fn keep_order(items: &[Item<'_>], rest: &[usize]) -> Vec<usize> {
    // foldhash, not SipHash: one lookup per listed skill on every budgeted
    // render (the keys are folder paths; the seed is still random).
    let mut turns: HashMap<(usize, &[u8]), usize, foldhash::fast::RandomState> =
        HashMap::with_capacity_and_hasher(rest.len().min(1024), Default::default());
    let mut class = 0usize;
    let mut keyed: Vec<(usize, usize, usize, usize)> = Vec::with_capacity(rest.len());
    for (position, &i) in rest.iter().enumerate() {
        if position > 0 && tie_class(&items[rest[position - 1]]) != tie_class(&items[i]) {
            class += 1;
        }
        let turn = turns
            .entry((class, source(items[i].skill.dir())))
            .or_insert(0);
        keyed.push((class, *turn, position, i));
        *turn += 1;
    }
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, _, _, i)| i).collect()
}

/// The folder holding a skill folder, as bytes (no path parsing: a deck's
/// folders are absolute and normalised), `b""` for a bare name.
fn source(dir: &Path) -> &[u8] {
    let bytes = dir.as_os_str().as_bytes();
    let bytes = bytes.strip_suffix(b"/").unwrap_or(bytes);
    memchr::memrchr(b'/', bytes).map_or(&b""[..], |slash| &bytes[..slash])
}
