//! The budget planner: shortens descriptions evenly down to the floor;
//! when even the floor does not fit, lists as many skills as fit at the
//! floor (in [`keep_order`]) and leaves the rest unlisted, counted by the
//! closing line. A listed skill always keeps a description (unless its
//! mode is `name-only`): a bare name tells the model nothing to choose by.

use crate::catalog::entry::DescPart;
use crate::catalog::entry::View;
use crate::catalog::entry::desc_esc;
use crate::catalog::entry::desc_part;
use crate::catalog::entry::footer;
use crate::catalog::entry::header;
use crate::catalog::entry::render_text;
use crate::catalog::entry::write_entry;
use crate::catalog::escape::escaped_size;
use crate::catalog::format::CatalogFormat;
use crate::catalog::item::Item;
use crate::catalog::rank::keep_order;
use crate::catalog::text::ELLIPSIS;
use crate::catalog::text::cut_end;
use crate::catalog::tokens::Meter;
use crate::catalog::tokens::token_ends;
use crate::catalog::unlisted::closing_line;

/// Cached sizes of one item's entry.
#[derive(Default)]
pub(super) struct Cost {
    pub(super) name_only: Option<usize>,
    pub(super) full: Option<usize>,
    pub(super) floor: Option<usize>,
    pub(super) desc_chars: Option<usize>,
    /// Tokens only: where each token of the full entry ends (bytes), until
    /// the cut table is built from them.
    pub(super) token_ends: Option<Vec<u32>>,
    /// Cut points `(characters kept, entry size)`, by characters kept.
    pub(super) cuts: Option<Vec<(u32, u32)>>,
}

/// Fits a catalog to a budget.
pub(super) struct Planner<'s, 'a> {
    pub(super) format: CatalogFormat,
    pub(super) items: &'s [Item<'a>],
    pub(super) meter: Meter,
    pub(super) floor: usize,
    pub(super) costs: Vec<Cost>,
    pub(super) scratch: String,
    /// How the model finds unlisted skills (the closing line's hint).
    pub(super) hint: Option<&'s str>,
    /// The keep order of the non-pinned items, once computed.
    pub(super) keep: Option<Vec<usize>>,
}

impl Planner<'_, '_> {
    /// Plans, renders and counts the whole text, re-planning with less room
    /// while it exceeds `limit`. Returns the text, its size and the cap.
    pub(super) fn fit(
        &mut self,
        limit: usize,
        ranked: &[usize],
        output: &[usize],
        views: &mut [View],
    ) -> (String, usize, Option<usize>) {
        let (pinned, rest): (Vec<usize>, Vec<usize>) =
            ranked.iter().partition(|&&i| self.items[i].pinned());
        let fixed =
            self.meter.measure(header(self.format)) + self.meter.measure(footer(self.format));
        let pinned_size: usize = pinned.iter().map(|&i| self.full(i)).sum();
        let mut room = limit.saturating_sub(fixed + pinned_size);
        let mut step = 1usize;
        loop {
            let cap = self.plan(&rest, room, views);
            let mut text = render_text(self.format, self.items, output, views);
            let unlisted = rest.iter().filter(|&&i| views[i] == View::Dropped).count();
            let listed = pinned.len() + rest.len() - unlisted;
            if let Some(line) = closing_line(self.format, unlisted, listed, self.hint) {
                text.push_str(&line);
            }
            let size = self.meter.measure(&text);
            let any_left = rest.iter().any(|&i| views[i] != View::Dropped);
            if size <= limit {
                return (text, size, cap);
            }
            if !any_left {
                if pinned.is_empty() {
                    // Not even the frame (skills-ref) or the closing line
                    // fits: nothing does.
                    return (String::new(), 0, cap);
                }
                return (text, size, cap);
            }
            // The per-entry sum was short of the whole count: retry with
            // less room, shrinking faster each time.
            step = step.max(size - limit);
            room = room.saturating_sub(step);
            step = step.saturating_mul(2);
        }
    }

    /// Sets the view of every non-pinned item (`rest`, in rank order) so
    /// their summed sizes (and the closing line, when some are unlisted)
    /// fit `room`. Returns the common cap, if any.
    pub(super) fn plan(
        &mut self,
        rest: &[usize],
        room: usize,
        views: &mut [View],
    ) -> Option<usize> {
        // Names alone bound every other size from below: when they do not
        // fit (thousands of skills), neither does the floor, and no full
        // entry need be measured.
        let names_fit = self.sum_within(rest, room, Self::name_only);
        if names_fit && self.sum_within(rest, room, Self::full) {
            for &i in rest {
                views[i] = self.base_view(i, View::Full);
            }
            return None;
        }
        if names_fit && self.sum_within(rest, room, Self::at_floor) {
            let cap = self.largest_cap(rest, room);
            for &i in rest {
                views[i] = self.base_view(i, View::Cut(cap));
            }
            return Some(cap);
        }
        // The floor does not fit: list the longest prefix of the keep order
        // that fits at the floor, with room for the closing line (sized for
        // the most skills it can count); the rest are unlisted. The listed
        // stay at the floor: the slack left is less than one more entry, and
        // searching a larger cap would tokenize every listed description
        // whole.
        let order = match self.keep.take() {
            Some(order) => order,
            None => keep_order(self.items, rest),
        };
        let reserve = closing_line(self.format, rest.len(), 1, self.hint)
            .map_or(0, |line| self.meter.measure(&line));
        let room = room.saturating_sub(reserve);
        let mut sum = 0;
        let mut keep = 0;
        for &i in &order {
            sum += self.at_floor(i);
            if sum > room {
                break;
            }
            keep += 1;
        }
        let (listed, unlisted) = order.split_at(keep);
        let cap = self.floor;
        for &i in listed {
            views[i] = self.base_view(i, View::Cut(cap));
        }
        for &i in unlisted {
            views[i] = View::Dropped;
        }
        // A re-plan with less room (see `fit`) reuses the order.
        self.keep = Some(order);
        Some(cap)
    }

    pub(super) fn base_view(&self, i: usize, view: View) -> View {
        if self.items[i].name_only() {
            View::NameOnly
        } else {
            view
        }
    }

    /// True when the sizes of `items` sum to at most `room` (stops early).
    pub(super) fn sum_within(
        &mut self,
        items: &[usize],
        room: usize,
        size: fn(&mut Self, usize) -> usize,
    ) -> bool {
        let mut sum = 0;
        for &i in items {
            sum += size(self, i);
            if sum > room {
                return false;
            }
        }
        true
    }

    /// The largest cap at or above the floor at which `rest` fits `room`.
    pub(super) fn largest_cap(&mut self, rest: &[usize], room: usize) -> usize {
        let longest = rest
            .iter()
            .filter(|&&i| !self.items[i].name_only())
            .map(|&i| self.desc_chars(i))
            .max()
            .unwrap_or(0);
        let (mut lo, mut hi) = (self.floor, longest.saturating_sub(1));
        let mut best = self.floor;
        while lo <= hi {
            let mid = lo + (hi - lo) / 2;
            let total: usize = rest.iter().map(|&i| self.at_cap(i, mid)).sum();
            if total <= room {
                best = mid;
                lo = mid + 1;
            } else {
                match mid.checked_sub(1) {
                    Some(m) => hi = m,
                    None => break,
                }
            }
        }
        best
    }

    /// Size of item `i`'s entry rendered with `desc`.
    pub(super) fn measure_entry(&mut self, i: usize, desc: Option<DescPart>) -> usize {
        self.scratch.clear();
        write_entry(&mut self.scratch, self.format, &self.items[i], desc);
        self.meter.measure(&self.scratch)
    }

    pub(super) fn name_only(&mut self, i: usize) -> usize {
        if let Some(n) = self.costs[i].name_only {
            return n;
        }
        let n = self.measure_entry(i, None);
        self.costs[i].name_only = Some(n);
        n
    }

    pub(super) fn full(&mut self, i: usize) -> usize {
        if self.items[i].name_only() {
            return self.name_only(i);
        }
        if let Some(n) = self.costs[i].full {
            return n;
        }
        let desc = desc_part(&self.items[i], View::Full);
        let n = match self.meter {
            Meter::Chars => self.measure_entry(i, desc),
            Meter::Tokens(bpe) => {
                // Tokenized once: the cut table reuses the token ends.
                self.scratch.clear();
                write_entry(&mut self.scratch, self.format, &self.items[i], desc);
                let ends = token_ends(bpe, &self.scratch);
                let n = ends.len();
                self.costs[i].token_ends = Some(ends);
                n
            }
        };
        self.costs[i].full = Some(n);
        n
    }

    pub(super) fn at_floor(&mut self, i: usize) -> usize {
        if self.items[i].name_only() {
            return self.name_only(i);
        }
        if let Some(n) = self.costs[i].floor {
            return n;
        }
        let n = match cut_end(&self.items[i].desc, self.floor) {
            None => self.full(i),
            Some(end) => self.measure_entry(
                i,
                Some(DescPart {
                    end,
                    shortened: true,
                }),
            ),
        };
        self.costs[i].floor = Some(n);
        n
    }

    pub(super) fn desc_chars(&mut self, i: usize) -> usize {
        if let Some(n) = self.costs[i].desc_chars {
            return n;
        }
        let n = self.items[i].desc.chars().count();
        self.costs[i].desc_chars = Some(n);
        n
    }

    /// Size of item `i`'s entry with its description capped at `cap`
    /// characters, from its table of cut points.
    pub(super) fn at_cap(&mut self, i: usize, cap: usize) -> usize {
        if self.items[i].name_only() {
            return self.name_only(i);
        }
        if self.desc_chars(i) <= cap {
            return self.full(i);
        }
        if self.costs[i].cuts.is_none() {
            let cuts = self.cut_table(i);
            self.costs[i].cuts = Some(cuts);
        }
        let keep = cap.saturating_sub(1);
        let cuts = self.costs[i].cuts.as_deref().unwrap_or_default();
        let found = match cuts.partition_point(|&(k, _)| k as usize <= keep) {
            0 => None,
            p => Some(cuts[p - 1].1 as usize),
        };
        found.unwrap_or_else(|| self.full(i))
    }

    /// Every place `cut_end` may cut item `i`'s description (at or above
    /// the floor), with the entry's size when cut there: one rendering and,
    /// for tokens, one tokenization of the full entry.
    pub(super) fn cut_table(&mut self, i: usize) -> Vec<(u32, u32)> {
        self.full(i);
        let token_ends = self.costs[i].token_ends.take().unwrap_or_default();
        let items = self.items;
        let item = &items[i];
        let esc = desc_esc(self.format);
        self.scratch.clear();
        let Some((start, end)) = write_entry(
            &mut self.scratch,
            self.format,
            item,
            desc_part(item, View::Full),
        ) else {
            return Vec::new();
        };
        let entry = self.scratch.as_str();
        let tail = format!("{ELLIPSIS}{}", &entry[end..]);
        let tail_size = self.meter.measure(&tail);
        // Size of the entry's first `start + bytes` bytes.
        let head_chars = entry[..start].chars().count();
        let head = |bytes: usize, chars: usize| match self.meter {
            Meter::Chars => head_chars + chars,
            Meter::Tokens(_) => token_ends.partition_point(|&e| e as usize <= start + bytes),
        };
        let hard_from = self.floor.saturating_sub(1).max(1);
        let mut cuts = Vec::new();
        let (mut bytes, mut chars) = (0, 0);
        let mut prev_ws = false;
        let mut first_word = true;
        for (k, c) in item.desc.chars().enumerate() {
            let ws = c.is_whitespace();
            let word_end = ws && !prev_ws && k > 0;
            let inside_first = first_word && !ws && k >= hard_from;
            if word_end || inside_first {
                let size = head(bytes, chars) + tail_size;
                cuts.push((
                    u32::try_from(k).unwrap_or(u32::MAX),
                    u32::try_from(size).unwrap_or(u32::MAX),
                ));
            }
            if ws {
                first_word = false;
            }
            let (b, n) = escaped_size(esc, c);
            bytes += b;
            chars += n;
            prev_ws = ws;
        }
        cuts
    }
}
