//! Byte-pair merging of one piece of text (a pre-tokenizer match): the
//! lowest-ranked adjacent pair whose bytes form a token merges first, the
//! leftmost on ties, until no pair does. This is tiktoken's algorithm, so
//! counts are exact: a linear scan for short pieces, a heap for long ones
//! (the same merges in the same order; the heap keeps a long piece from
//! costing its length squared).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::vocab::Vocab;

/// Pieces at least this long are merged with the heap.
const LONG_PIECE: usize = 100;

/// Calls `emit` with the byte length of each token `piece` encodes into, in
/// order. `scratch` is reused between calls (no allocation per piece).
pub(super) fn token_lengths(
    vocab: &Vocab,
    piece: &[u8],
    scratch: &mut Vec<(usize, u32)>,
    mut emit: impl FnMut(usize),
) {
    match piece.len() {
        0 => {}
        1 => emit(1),
        n if vocab.rank(piece).is_some() => emit(n),
        n if n < LONG_PIECE => short(vocab, piece, scratch, emit),
        _ => long(vocab, piece, emit),
    }
}

/// The rank of `piece[a..b]` as a token (`u32::MAX`: not a token).
#[inline]
fn rank(vocab: &Vocab, piece: &[u8], a: usize, b: usize) -> u32 {
    piece
        .get(a..b)
        .and_then(|p| vocab.rank(p))
        .unwrap_or(u32::MAX)
}

/// `parts` holds (start, rank of the pair starting there); a merge removes
/// the part after the lowest-ranked pair and re-ranks its two neighbours.
fn short(vocab: &Vocab, piece: &[u8], parts: &mut Vec<(usize, u32)>, mut emit: impl FnMut(usize)) {
    let n = piece.len();
    parts.clear();
    let mut min = (u32::MAX, usize::MAX);
    for i in 0..n - 1 {
        let r = rank(vocab, piece, i, i + 2);
        if r < min.0 {
            min = (r, i);
        }
        parts.push((i, r));
    }
    parts.push((n - 1, u32::MAX));
    parts.push((n, u32::MAX));
    // The rank of the pair at part `i` once part `i + 1` is gone.
    let rerank = |parts: &[(usize, u32)], i: usize| {
        if i + 3 < parts.len() {
            rank(vocab, piece, parts[i].0, parts[i + 3].0)
        } else {
            u32::MAX
        }
    };
    while min.0 != u32::MAX {
        let i = min.1;
        if i > 0 {
            parts[i - 1].1 = rerank(parts, i - 1);
        }
        parts[i].1 = rerank(parts, i);
        parts.remove(i + 1);
        min = (u32::MAX, usize::MAX);
        for (j, &(_, r)) in parts[..parts.len() - 1].iter().enumerate() {
            if r < min.0 {
                min = (r, j);
            }
        }
    }
    for w in parts.windows(2) {
        emit(w[1].0 - w[0].0);
    }
}

/// One token of a long piece: `[start, end)`, the next token's end, the
/// rank of merging with it (`u32::MAX`: none), and the token before.
struct Node {
    prev: usize,
    end: usize,
    next_end: usize,
    next_rank: u32,
}

/// The heap version: candidate merges keyed by (rank, start), lowest first;
/// a candidate whose rank no longer matches its node's is stale.
fn long(vocab: &Vocab, piece: &[u8], mut emit: impl FnMut(usize)) {
    let n = piece.len();
    let mut nodes: Vec<Node> = (0..n)
        .map(|i| Node {
            prev: i.wrapping_sub(1),
            end: i + 1,
            next_end: i + 2,
            next_rank: u32::MAX,
        })
        .collect();
    let mut heap = BinaryHeap::with_capacity(n);
    for (i, node) in nodes.iter_mut().enumerate().take(n - 1) {
        let r = rank(vocab, piece, i, i + 2);
        if r != u32::MAX {
            heap.push(Reverse((r, i)));
            node.next_rank = r;
        }
    }
    // Sets the merge of the token at `start` with the one ending at `next_end`.
    let candidate = |nodes: &mut [Node],
                     heap: &mut BinaryHeap<Reverse<(u32, usize)>>,
                     start: usize,
                     next_end: usize| {
        nodes[start].next_end = next_end;
        nodes[start].next_rank = u32::MAX;
        if next_end <= n {
            let r = rank(vocab, piece, start, next_end);
            if r != u32::MAX {
                heap.push(Reverse((r, start)));
                nodes[start].next_rank = r;
            }
        }
    };
    while let Some(Reverse((r, left))) = heap.pop() {
        if r != nodes[left].next_rank {
            continue;
        }
        let right = nodes[left].end;
        let right_end = nodes[left].next_end;
        let right_next_end = nodes[right].next_end;
        nodes[left].end = right_end;
        candidate(&mut nodes, &mut heap, left, right_next_end);
        if right_end < n {
            nodes[right_end].prev = left;
        }
        if left > 0 {
            let before = nodes[left].prev;
            candidate(&mut nodes, &mut heap, before, right_end);
        }
        nodes[right].next_rank = u32::MAX;
    }
    let mut i = 0;
    while i < n {
        emit(nodes[i].end - i);
        i = nodes[i].end;
    }
}
