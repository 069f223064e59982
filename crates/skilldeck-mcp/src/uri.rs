//! `skill://` URIs: `skill://<skill-path>/<path>` for a file of a skill,
//! `skill://<skill-path>` for its folder (the Skills extension's directory
//! resource). The skill path is the skill's folder relative to its root
//! (`pdf`; `outer/inner` for a skill nested in another), whose last segment
//! is the skill's name, as SEP-2640 says ([`skill_path`]); a skill whose
//! folder does not end in its name is published under its name alone. Path
//! segments are percent-encoded where a URI needs it; skill path segments
//! are used as is (a name with characters a URI cannot carry there gets no
//! URI: [`name_fits_uri`]). A plugin skill (`PLUGIN:SKILL`) is published
//! with the plugin as an escaped-colon segment before its own name:
//! `skill://document-skills%3A/pdf/SKILL.md` (the last segment is the
//! frontmatter name, as SEP-2640 requires; the `%3A` marks the plugin,
//! which no other skill path can hold).

/// The URI scheme.
pub const SCHEME: &str = "skill://";

/// A parsed `skill://` URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillUri {
    /// The skill's name (the authority).
    pub name: String,
    /// The path inside the skill folder, decoded, `/`-separated; empty for
    /// the folder itself.
    pub path: String,
}

/// Why a URI is not a skill URI.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UriError {
    /// Another scheme.
    #[error("{0} is not a skill:// URI")]
    Scheme(String),
    /// `skill://` with nothing after it, or a query or fragment.
    #[error("{0} is not a skill file or folder URI")]
    Malformed(String),
    /// A `%` escape that is not two hex digits or does not decode to UTF-8.
    #[error("{0} has a malformed percent escape")]
    Escape(String),
}

/// The separator of a plugin skill's name (`PLUGIN:SKILL`), written
/// [`PLUGIN_SEPARATOR_ESCAPED`] in a URI.
pub const PLUGIN_SEPARATOR: char = ':';

/// How a plugin skill's `:` is written in its URI: the plugin, `%3A`, then
/// the skill as the next segment: `skill://document-skills%3A/pdf/SKILL.md`.
/// A bare `:` there would read as a port (RFC 3986), and some parsers drop
/// an empty one; escaped, the authority is a valid reg-name that decodes
/// back, and no other skill's path can hold it (names and folders in a
/// skill path hold neither `:` nor `%`). The skill's own name stays the
/// last segment, as SEP-2640 requires of a skill URI.
pub const PLUGIN_SEPARATOR_ESCAPED: &str = "%3A";

fn plain_fits_uri(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// True when `name` can be a URI authority: letters, digits, `-`, `_`,
/// `.` (spec-valid names are a subset), or a plugin skill's
/// `PLUGIN:SKILL` with both parts such (its `:` escaped by
/// [`skill_uri`]).
pub fn name_fits_uri(name: &str) -> bool {
    match name.split_once(PLUGIN_SEPARATOR) {
        Some((plugin, skill)) => plain_fits_uri(plugin) && plain_fits_uri(skill),
        None => plain_fits_uri(name),
    }
}

/// The skill path as a URI writes it: a plugin skill's `PLUGIN:SKILL` as
/// `PLUGIN%3A/SKILL`.
fn encode_skill_path(name: &str) -> std::borrow::Cow<'_, str> {
    if name.contains(PLUGIN_SEPARATOR) {
        let escaped = format!("{PLUGIN_SEPARATOR_ESCAPED}/");
        std::borrow::Cow::Owned(name.replace(PLUGIN_SEPARATOR, &escaped))
    } else {
        std::borrow::Cow::Borrowed(name)
    }
}

/// The path `skill` is published under: its folder relative to its root
/// (`outer/inner` for a nested skill) when every segment can be part of a
/// URI authority-and-path as is and the last is the skill's name; else the
/// name alone (a folder named differently from its skill, a skill at the
/// root itself).
pub fn skill_path(skill: &skilldeck::Skill) -> String {
    let nested = skill.dir().strip_prefix(&*skill.root).ok().and_then(|rel| {
        let segments: Vec<&str> = rel
            .components()
            .map(|c| match c {
                std::path::Component::Normal(s) => s.to_str(),
                _ => None,
            })
            .collect::<Option<_>>()?;
        (segments.len() > 1
            && segments.last() == Some(&skill.name.as_str())
            && segments.iter().all(|s| plain_fits_uri(s)))
        .then(|| segments.join("/"))
    });
    nested.unwrap_or_else(|| skill.name.clone())
}

/// `skill://<name>/<path>`, or `skill://<name>` when `path` is empty.
/// `name` is a skill path ([`skill_path`]): a name, or `outer/inner`.
pub fn skill_uri(name: &str, path: &str) -> String {
    let mut uri = String::with_capacity(SCHEME.len() + name.len() + 3 + path.len());
    uri.push_str(SCHEME);
    uri.push_str(&encode_skill_path(name));
    if !path.is_empty() {
        uri.push('/');
        uri.push_str(&skilldeck::text::percent::encode_path(path));
    }
    uri
}

/// The URI of a file `run_code` returned from its work folder's
/// `outputs/`: `run-code:outputs/<name>` (percent-encoded). It names the
/// file within the result; it is not a resource the server serves.
pub fn output_uri(name: &str) -> String {
    format!(
        "run-code:outputs/{}",
        skilldeck::text::percent::encode_path(name)
    )
}

/// The URI of a skill's `SKILL.md`; `name` is a skill path ([`skill_path`]).
pub fn skill_md_uri(name: &str) -> String {
    skill_uri(name, "SKILL.md")
}

/// Where a parsed URI may point: `(skill name, skill path, file path)`
/// for each way to split it, the most specific first. For
/// `skill://a/b/c.md`: the skill `b` published at `a/b` with `c.md`, then
/// the skill `a` with `b/c.md`. The caller takes the first whose skill
/// exists and is published at that skill path; the last split (the first
/// segment as a name) also matches a skill by name alone, the flat form
/// `skill://<name>/...` older releases published for nested skills.
pub fn splits(parsed: &SkillUri) -> Vec<(String, String, String)> {
    let full = if parsed.path.is_empty() {
        parsed.name.clone()
    } else {
        format!("{}/{}", parsed.name, parsed.path)
    };
    let segments: Vec<&str> = full.split('/').collect();
    (1..=segments.len())
        .rev()
        .filter(|&n| !segments[n - 1].ends_with(PLUGIN_SEPARATOR))
        .map(|n| {
            // `PLUGIN:` then `SKILL`: the plugin skill `PLUGIN:SKILL`.
            match n.checked_sub(2).map(|i| segments[i]) {
                Some(plugin) if plugin.ends_with(PLUGIN_SEPARATOR) => {
                    let name = format!("{plugin}{}", segments[n - 1]);
                    let mut path: Vec<&str> = segments[..n - 2].to_vec();
                    path.push(&name);
                    (name.clone(), path.join("/"), segments[n..].join("/"))
                }
                _ => (
                    segments[n - 1].to_owned(),
                    segments[..n].join("/"),
                    segments[n..].join("/"),
                ),
            }
        })
        .collect()
}

/// Parses a `skill://` URI. The path is percent-decoded but not otherwise
/// checked: the core's resource rules (no `..`, no absolute paths, ...)
/// apply when it is read.
pub fn parse(uri: &str) -> Result<SkillUri, UriError> {
    let rest = uri
        .strip_prefix(SCHEME)
        .ok_or_else(|| UriError::Scheme(uri.to_owned()))?;
    if rest.contains(['?', '#']) {
        return Err(UriError::Malformed(uri.to_owned()));
    }
    let (name, path) = rest.split_once('/').unwrap_or((rest, ""));
    if name.is_empty() {
        return Err(UriError::Malformed(uri.to_owned()));
    }
    // The authority: a name as is, or a plugin skill's with its `:`
    // escaped; no other escape (no name has one).
    if name.contains(PLUGIN_SEPARATOR) {
        // `host:port` to any URI parser: a plugin skill's is escaped.
        return Err(UriError::Malformed(uri.to_owned()));
    }
    let name = decode_authority(name).ok_or_else(|| UriError::Escape(uri.to_owned()))?;
    // `PLUGIN%3A` is a plugin's segment: one escape, at its end, and a
    // skill after it.
    if name.contains(PLUGIN_SEPARATOR)
        && (name.matches(PLUGIN_SEPARATOR).count() > 1
            || !name.ends_with(PLUGIN_SEPARATOR)
            || name.len() == 1
            || path.trim_matches('/').is_empty())
    {
        return Err(UriError::Malformed(uri.to_owned()));
    }
    let path = skilldeck::text::percent::decode_strict(path.trim_end_matches('/'))
        .ok_or_else(|| UriError::Escape(uri.to_owned()))?
        .into_owned();
    Ok(SkillUri {
        name: name.to_owned(),
        path,
    })
}

/// `plugin%3Askill` → `plugin:skill` (either case of the hex); `None` for
/// any other `%` escape.
fn decode_authority(name: &str) -> Option<String> {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let escape = rest.get(at..at + 3)?;
        if !escape.eq_ignore_ascii_case(PLUGIN_SEPARATOR_ESCAPED) {
            return None;
        }
        out.push(PLUGIN_SEPARATOR);
        rest = &rest[at + 3..];
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn uris_round_trip_through_percent_encoding() {
        let uri = skill_uri("pdf", "references/a file%.md");
        assert_eq!(uri, "skill://pdf/references/a%20file%25.md");
        assert_eq!(
            parse(&uri).unwrap(),
            SkillUri {
                name: "pdf".into(),
                path: "references/a file%.md".into()
            }
        );
    }

    #[test]
    fn folder_uris_have_no_trailing_slash() {
        assert_eq!(skill_uri("pdf", ""), "skill://pdf");
        assert_eq!(parse("skill://pdf").unwrap().path, "");
        assert_eq!(parse("skill://pdf/templates/").unwrap().path, "templates");
    }

    #[test]
    fn other_schemes_queries_and_bad_escapes_are_refused() {
        assert!(matches!(
            parse("file:///etc/passwd"),
            Err(UriError::Scheme(_))
        ));
        assert!(matches!(parse("skill://"), Err(UriError::Malformed(_))));
        assert!(matches!(
            parse("skill://a/b?x=1"),
            Err(UriError::Malformed(_))
        ));
        assert!(matches!(parse("skill://a/%zz"), Err(UriError::Escape(_))));
        assert!(matches!(parse("skill://a/%ff"), Err(UriError::Escape(_))));
    }

    #[test]
    fn a_uri_splits_into_skill_paths_most_specific_first() {
        let parsed = parse("skill://outer/inner/SKILL.md").unwrap();
        assert_eq!(
            splits(&parsed),
            vec![
                (
                    "SKILL.md".into(),
                    "outer/inner/SKILL.md".into(),
                    String::new()
                ),
                ("inner".into(), "outer/inner".into(), "SKILL.md".into()),
                ("outer".into(), "outer".into(), "inner/SKILL.md".into()),
            ]
        );
        let folder = parse("skill://pdf").unwrap();
        assert_eq!(
            splits(&folder),
            vec![("pdf".into(), "pdf".into(), String::new())]
        );
    }

    #[test]
    fn a_plugin_skill_uri_escapes_its_colon_and_round_trips_to_the_name() {
        let uri = skill_uri("document-skills:pdf", "SKILL.md");
        assert_eq!(uri, "skill://document-skills%3A/pdf/SKILL.md");
        let parsed = parse(&uri).unwrap();
        assert_eq!(parsed.name, "document-skills:");
        assert_eq!(parsed.path, "pdf/SKILL.md");
        // The most specific split that is a skill is the plugin skill, its
        // path the file inside it.
        let found: Vec<(String, String, String)> = splits(&parsed);
        assert_eq!(
            found[1],
            (
                "document-skills:pdf".into(),
                "document-skills:pdf".into(),
                "SKILL.md".into()
            )
        );
        assert_eq!(skill_uri(&found[1].1, &found[1].2), uri);
        assert_eq!(
            parse("skill://document-skills%3a/pdf").unwrap().name,
            "document-skills:"
        );
        assert_eq!(
            skill_uri("document-skills:pdf", ""),
            "skill://document-skills%3A/pdf"
        );
    }

    #[test]
    fn a_plugin_skill_uri_collides_with_no_plain_or_nested_skill() {
        // Not the plain skill `pdf`, nor a skill nested at
        // `document-skills/pdf`, nor an upstream's `document-skills/pdf`.
        let plugin = skill_uri("document-skills:pdf", "SKILL.md");
        assert_ne!(plugin, skill_uri("pdf", "SKILL.md"));
        assert_ne!(plugin, skill_uri("document-skills/pdf", "SKILL.md"));
        let names: Vec<String> = splits(&parse(&plugin).unwrap())
            .into_iter()
            .map(|(name, _, _)| name)
            .collect();
        assert_eq!(names, ["SKILL.md", "document-skills:pdf"]);
        // And a plain URI never splits into a plugin skill.
        let plain: Vec<String> = splits(&parse("skill://document-skills/pdf/SKILL.md").unwrap())
            .into_iter()
            .map(|(name, _, _)| name)
            .collect();
        assert!(plain.iter().all(|n| !n.contains(':')), "{plain:?}");
        // A plain name cannot be written as an escaped one, a bare `:` is a
        // port, the escape belongs at the end of the plugin's segment with a
        // skill after it, and any other escape in the authority is refused.
        assert!(!name_fits_uri("document-skills%3Apdf"));
        for bad in [
            "skill://document-skills:pdf/SKILL.md",
            "skill://document-skills%3Apdf/SKILL.md",
            "skill://document-skills%3A",
            "skill://%3A/pdf/SKILL.md",
            "skill://a%3Ab%3A/pdf/SKILL.md",
        ] {
            assert!(matches!(parse(bad), Err(UriError::Malformed(_))), "{bad}");
        }
        assert!(matches!(
            parse("skill://pdf%2Fx/SKILL.md"),
            Err(UriError::Escape(_))
        ));
        assert!(!name_fits_uri("a:b:c"));
        assert!(!name_fits_uri(":pdf"));
    }

    #[test]
    fn names_that_cannot_be_an_authority_get_no_uri() {
        assert!(name_fits_uri("pdf-processing"));
        assert!(name_fits_uri("données"));
        assert!(!name_fits_uri("has space"));
        assert!(!name_fits_uri("a/b"));
        assert!(!name_fits_uri(""));
    }
}
