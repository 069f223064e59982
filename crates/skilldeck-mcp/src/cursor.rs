//! Pagination cursors: `<generation>.<offset>`. A cursor from before a
//! catalog change is refused (`-32602`), so a client never stitches pages
//! of two different decks together; it lists again from the start, as the
//! `list_changed` notification told it to.

use std::ops::Range;

use rmcp::ErrorData;

/// The offset a request's cursor points at (0 without a cursor), into a
/// list of `len` items; a cursor past the end was not issued by this server.
fn offset(cursor: Option<&str>, generation: u64, len: usize) -> Result<usize, ErrorData> {
    let Some(cursor) = cursor else { return Ok(0) };
    let invalid =
        |why: &str| ErrorData::invalid_params(format!("invalid cursor '{cursor}': {why}"), None);
    let (g, o) = cursor
        .split_once('.')
        .ok_or_else(|| invalid("not a cursor this server issued"))?;
    let g: u64 = g
        .parse()
        .map_err(|_| invalid("not a cursor this server issued"))?;
    let o: usize = o
        .parse()
        .map_err(|_| invalid("not a cursor this server issued"))?;
    if g != generation {
        return Err(invalid("the list changed since; list again from the start"));
    }
    if o == 0 || o >= len {
        return Err(invalid("not a cursor this server issued"));
    }
    Ok(o)
}

/// The cursor of the page starting at `end`, when `end` is before `total`.
fn next(end: usize, total: usize, generation: u64) -> Option<String> {
    (end < total).then(|| format!("{generation}.{end}"))
}

/// One page of a list of `len` items: the range of items the request's
/// cursor asks for (at most `size`, at least 1), and the next page's cursor.
pub fn page(
    cursor: Option<&str>,
    generation: u64,
    len: usize,
    size: usize,
) -> Result<(Range<usize>, Option<String>), ErrorData> {
    let start = offset(cursor, generation, len)?;
    let end = start.saturating_add(size.max(1)).min(len);
    Ok((start..end, next(end, len, generation)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_cursor_from_another_generation_is_refused() {
        assert_eq!(offset(None, 3, 500).unwrap(), 0);
        assert_eq!(offset(Some("3.200"), 3, 500).unwrap(), 200);
        let stale = offset(Some("2.200"), 3, 500).unwrap_err();
        assert_eq!(stale.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(offset(Some("garbage"), 3, 500).is_err());
        assert!(offset(Some("3.-1"), 3, 500).is_err());
    }

    #[test]
    fn a_cursor_past_the_end_is_refused() {
        assert!(offset(Some("3.500"), 3, 500).is_err());
        assert!(offset(Some("3.99999"), 3, 500).is_err());
        assert!(offset(Some("3.0"), 3, 500).is_err());
    }

    #[test]
    fn the_last_page_has_no_next_cursor() {
        let (range, cursor) = page(None, 1, 250, 100).unwrap();
        assert_eq!((range, cursor.as_deref()), (0..100, Some("1.100")));
        let (range, cursor) = page(Some("1.200"), 1, 250, 100).unwrap();
        assert_eq!((range, cursor), (200..250, None));
        assert_eq!(page(None, 1, 0, 100).unwrap(), (0..0, None));
    }
}
