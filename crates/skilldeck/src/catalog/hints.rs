//! Catalog hints: what every render would otherwise check in a skill's
//! texts, checked once when a deck is built and kept with the skill.

use crate::catalog::text::all_ascii;
use crate::catalog::text::is_one_line;
use crate::catalog::text::python_strip;
use crate::skill::Skill;
use crate::spec::control::first_control;

/// What every render would otherwise check in each skill's texts, checked
/// once by [`crate::Deck::new`] and kept in [`crate::skill::HostFields`]
/// (see [`hints_of`]). Bits of a `u16`.
pub(super) mod hint {
    /// The hints were computed (0: nothing is known).
    pub const KNOWN: u16 = 1;
    /// `python_strip` leaves the description as it is.
    pub const DESC_STRIPPED: u16 = 1 << 1;
    /// `collapse_whitespace` leaves the stripped description as it is.
    pub const DESC_ONE_LINE: u16 = 1 << 2;
    /// Per text, shifted by `NAME`, `DESC` or `LOCATION`: ASCII.
    pub const ASCII: u16 = 1;
    /// No byte that `Esc::Xml`/`Esc::Html` replace.
    pub const XML: u16 = 2;
    /// No byte that `Esc::Json` replaces.
    pub const JSON: u16 = 4;
    pub const NAME: u32 = 3;
    /// The stripped description.
    pub const DESC: u32 = 6;
    /// `SKILL.md` as text (nothing is known when it is not UTF-8).
    pub const LOCATION: u32 = 9;
    /// Neither `SKILL.md`'s path nor the skill's real folder holds a control
    /// character, tab or line feed ([`crate::spec::control`]): a render
    /// shows the location as it is.
    pub const LOCATION_CLEAN: u16 = 1 << 12;
}

/// The catalog hints of `skill`'s current texts.
pub(crate) fn hints_of(skill: &Skill) -> u16 {
    // SIMD searches and a vectorized fold: this runs for every skill a
    // deck loads (a byte-table fold cost ~3,300 instructions per skill).
    let text = |s: &str| {
        let bytes = s.as_bytes();
        let mut bits = 0;
        if all_ascii(s) {
            bits |= hint::ASCII;
        }
        let xml = memchr::memchr3(b'&', b'<', b'>', bytes).is_none()
            && memchr::memchr2(b'"', b'\'', bytes).is_none();
        if xml {
            bits |= hint::XML;
            let control = bytes.iter().fold(false, |any, &b| any | (b < 0x20));
            if !control && memchr::memchr(b'\\', bytes).is_none() {
                bits |= hint::JSON;
            }
        }
        bits
    };
    let stripped = python_strip(&skill.description);
    let mut hints =
        hint::KNOWN | (text(&skill.name) << hint::NAME) | (text(stripped) << hint::DESC);
    if stripped.len() == skill.description.len() {
        hints |= hint::DESC_STRIPPED;
    }
    if is_one_line(stripped) {
        hints |= hint::DESC_ONE_LINE;
    }
    if let Some(location) = skill.skill_md.to_str() {
        hints |= text(location) << hint::LOCATION;
        // Every location a catalog shows: `SKILL.md`'s path, or (skills-ref)
        // the real folder plus the file name, a suffix of that path.
        let clean = |path: &std::path::Path| {
            path.to_str()
                .is_some_and(|p| first_control(p, true).is_none())
        };
        if first_control(location, true).is_none() && clean(skill.real_dir()) {
            hints |= hint::LOCATION_CLEAN;
        }
    }
    hints
}
