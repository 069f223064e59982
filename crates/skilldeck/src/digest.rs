//! Digests, per-file manifests and the content fingerprint of a skill.
//!
//! This is the one place a SHA-256 is computed: the host layer's MCP
//! manifest, packages, installs and the lockfile all call these functions.
//!
//! A skill's manifest lists every file as `{path, size, sha256}` (plus
//! whether it is executable), sorted by path (byte order of the UTF-8
//! `/`-separated relative path). Its **fingerprint** is
//! `sha256:` + the lowercase hex SHA-256 of the concatenation, in that
//! order, of one line per file:
//!
//! ```text
//! <path>\tsha256:<lowercase hex of the file's SHA-256>\n
//! ```
//!
//! The fingerprint covers paths and contents only (not sizes, which the
//! digests imply, nor modes or times), so a folder, a tar.gz and a zip of
//! the same files give the same fingerprint, and a client that holds the
//! MCP manifest (paths and `sha256:` digests) can compute it too.

use std::fmt;
use std::io;
use std::str::FromStr;

use sha2::{Digest as _, Sha256};

/// The prefix of every digest and fingerprint.
pub const DIGEST_PREFIX: &str = "sha256:";

/// The length of a SHA-256 in bytes.
pub const DIGEST_BYTES: usize = 32;

/// The length of a SHA-256 in hex digits.
pub const DIGEST_HEX_LEN: usize = 2 * DIGEST_BYTES;

/// A SHA-256 digest, written `sha256:<64 lowercase hex digits>` (a file's
/// digest, a skill's fingerprint, an archive's digest). Parsing is the one
/// place that text is checked: a value of this type is always a complete,
/// lowercase SHA-256, so it can name a folder or a blob key as it is.
///
/// It serializes as that text and deserializes only from it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; DIGEST_BYTES]);

/// Why a text is not a [`Digest`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DigestError {
    /// The `sha256:` prefix is missing.
    #[error("'{text}' is not a sha256 digest: it must start with 'sha256:'")]
    MissingPrefix {
        /// The text given (cut to 80 characters).
        text: String,
    },
    /// Not 64 hex digits.
    #[error("'{text}' is not a sha256 digest: it has {found} characters after 'sha256:', not 64")]
    Length {
        /// The text given (cut to 80 characters).
        text: String,
        /// How many characters there are.
        found: usize,
    },
    /// A character that is not a lowercase hex digit.
    #[error(
        "'{text}' is not a sha256 digest: {found:?} at position {position} is not a lowercase hex digit (0-9, a-f)"
    )]
    NotLowercaseHex {
        /// The text given (cut to 80 characters).
        text: String,
        /// The character.
        found: char,
        /// Its position in the hex part (0-based).
        position: usize,
    },
}

/// At most 80 characters of `text`, for an error message.
fn shown(text: &str) -> String {
    text.chars().take(80).collect()
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Lowercase hex of `bytes`, two digits a byte: the one hex encoder of the
/// workspace (digests, session keys, blob keys, asset names).
pub fn lowercase_hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(2 * bytes.len());
    push_hex(&mut out, bytes);
    out
}

fn push_hex(out: &mut String, bytes: &[u8]) {
    for byte in bytes {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
}

impl Digest {
    /// The SHA-256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        Digest(Sha256::digest(bytes).into())
    }

    /// A digest from its 32 raw bytes.
    pub fn from_bytes(bytes: [u8; DIGEST_BYTES]) -> Digest {
        Digest(bytes)
    }

    /// Parses `sha256:<64 lowercase hex>`.
    pub fn parse(text: &str) -> Result<Digest, DigestError> {
        let Some(hex) = text.strip_prefix(DIGEST_PREFIX) else {
            return Err(DigestError::MissingPrefix { text: shown(text) });
        };
        Digest::parse_hex_of(hex, text)
    }

    /// Parses the bare 64 lowercase hex digits (a blob key, an `ETag`, a
    /// stored token hash), without the prefix.
    pub fn from_hex(hex: &str) -> Result<Digest, DigestError> {
        Digest::parse_hex_of(hex, hex)
    }

    fn parse_hex_of(hex: &str, text: &str) -> Result<Digest, DigestError> {
        let found = hex.chars().count();
        if found != DIGEST_HEX_LEN {
            return Err(DigestError::Length {
                text: shown(text),
                found,
            });
        }
        let mut bytes = [0u8; DIGEST_BYTES];
        for (position, c) in hex.chars().enumerate() {
            let value = match c {
                '0'..='9' => c as u8 - b'0',
                'a'..='f' => c as u8 - b'a' + 10,
                _ => {
                    return Err(DigestError::NotLowercaseHex {
                        text: shown(text),
                        found: c,
                        position,
                    });
                }
            };
            let byte = &mut bytes[position / 2];
            *byte = if position % 2 == 0 {
                value << 4
            } else {
                *byte | value
            };
        }
        Ok(Digest(bytes))
    }

    /// The 32 raw bytes.
    pub fn as_bytes(&self) -> &[u8; DIGEST_BYTES] {
        &self.0
    }

    /// The 64 lowercase hex digits, without the prefix (a blob key, a
    /// folder name, an `ETag`).
    pub fn hex(&self) -> String {
        lowercase_hex(&self.0)
    }

    /// The strong HTTP `ETag` of this digest: the hex in double quotes.
    pub fn etag(&self) -> String {
        format!("\"{}\"", self.hex())
    }

    /// The digest an `ETag` header names: `"<hex>"`, `W/"<hex>"` or
    /// `"sha256:<hex>"`; `None` when it names none.
    pub fn from_etag(etag: &str) -> Option<Digest> {
        let t = etag.trim();
        let t = t.strip_prefix("W/").unwrap_or(t).trim_matches('"');
        match t.strip_prefix(DIGEST_PREFIX) {
            Some(_) => Digest::parse(t).ok(),
            None => Digest::from_hex(t).ok(),
        }
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::with_capacity(DIGEST_PREFIX.len() + DIGEST_HEX_LEN);
        text.push_str(DIGEST_PREFIX);
        push_hex(&mut text, &self.0);
        f.write_str(&text)
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

impl FromStr for Digest {
    type Err = DigestError;
    fn from_str(s: &str) -> Result<Digest, DigestError> {
        Digest::parse(s)
    }
}

impl PartialEq<str> for Digest {
    fn eq(&self, other: &str) -> bool {
        Digest::parse(other).is_ok_and(|d| d == *self)
    }
}

impl PartialEq<&str> for Digest {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

impl PartialEq<String> for Digest {
    fn eq(&self, other: &String) -> bool {
        *self == **other
    }
}

impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Digest, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Digest::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// `sha256:<lowercase hex>` of `bytes` as text; [`Digest::of`] is the typed
/// form.
pub fn sha256_digest(bytes: &[u8]) -> String {
    Digest::of(bytes).to_string()
}

/// A writer that hashes what is written to it (for streamed content).
#[derive(Debug, Clone, Default)]
pub struct DigestWriter {
    hasher: Sha256,
    len: u64,
}

impl DigestWriter {
    /// An empty digest.
    pub fn new() -> Self {
        DigestWriter::default()
    }

    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The digest of everything written.
    pub fn finish(self) -> Digest {
        Digest(self.hasher.finalize().into())
    }
}

impl io::Write for DigestWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.hasher.update(buf);
        self.len += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One file of a skill, as its manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileDigest {
    /// The path relative to the skill folder (`/`-separated, UTF-8).
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// The SHA-256 of its bytes (`sha256:<hex>` in JSON and TOML).
    pub sha256: Digest,
    /// True when the file is executable (any `x` bit on Unix).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub executable: bool,
}

impl FileDigest {
    /// The manifest line of bytes already read.
    pub fn of_bytes(path: impl Into<String>, bytes: &[u8], executable: bool) -> FileDigest {
        FileDigest {
            path: path.into(),
            size: bytes.len() as u64,
            sha256: Digest::of(bytes),
            executable,
        }
    }
}

/// Every file of a skill, sorted by path; see the module documentation for
/// the fingerprint rule.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SkillManifest {
    files: Vec<FileDigest>,
}

impl SkillManifest {
    /// A manifest of `files`, sorted by path (byte order).
    pub fn new(mut files: Vec<FileDigest>) -> SkillManifest {
        files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        SkillManifest { files }
    }

    /// The files, sorted by path.
    pub fn files(&self) -> &[FileDigest] {
        &self.files
    }

    /// Total bytes of the files.
    pub fn total_size(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// The content fingerprint: `sha256:` over `path\tsha256:<hex>\n` per
    /// file, in path order.
    pub fn fingerprint(&self) -> Digest {
        fingerprint(self.files.iter().map(|f| (f.path.as_str(), &f.sha256)))
    }

    /// How `self` (what is there) differs from `expected`: files changed
    /// (content or executable bit), present only here, present only there.
    pub fn diff(&self, expected: &SkillManifest) -> ManifestDiff {
        let mut diff = ManifestDiff::default();
        let (mut a, mut b) = (
            self.files.iter().peekable(),
            expected.files.iter().peekable(),
        );
        loop {
            match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => match x.path.as_bytes().cmp(y.path.as_bytes()) {
                    std::cmp::Ordering::Less => {
                        diff.added.push(x.path.clone());
                        a.next();
                    }
                    std::cmp::Ordering::Greater => {
                        diff.missing.push(y.path.clone());
                        b.next();
                    }
                    std::cmp::Ordering::Equal => {
                        if x.sha256 != y.sha256 || x.executable != y.executable {
                            diff.modified.push(x.path.clone());
                        }
                        a.next();
                        b.next();
                    }
                },
                (Some(x), None) => {
                    diff.added.push(x.path.clone());
                    a.next();
                }
                (None, Some(y)) => {
                    diff.missing.push(y.path.clone());
                    b.next();
                }
                (None, None) => return diff,
            }
        }
    }
}

/// The files that differ between two manifests, each list sorted by path.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ManifestDiff {
    /// Files whose content or executable bit changed.
    pub modified: Vec<String>,
    /// Files that are there but not expected.
    pub added: Vec<String>,
    /// Files expected but not there.
    pub missing: Vec<String>,
}

impl ManifestDiff {
    /// True when nothing differs.
    pub fn is_empty(&self) -> bool {
        self.modified.is_empty() && self.added.is_empty() && self.missing.is_empty()
    }
}

/// The fingerprint of `(path, digest)` pairs, which must already be sorted
/// by path (byte order).
pub fn fingerprint<'a>(files: impl IntoIterator<Item = (&'a str, &'a Digest)>) -> Digest {
    let mut hasher = Sha256::new();
    let mut line = String::with_capacity(DIGEST_PREFIX.len() + DIGEST_HEX_LEN);
    for (path, digest) in files {
        line.clear();
        line.push_str(DIGEST_PREFIX);
        push_hex(&mut line, digest.as_bytes());
        hasher.update(path.as_bytes());
        hasher.update(b"\t");
        hasher.update(line.as_bytes());
        hasher.update(b"\n");
    }
    Digest(hasher.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_hashes_one_tab_separated_line_per_file_in_path_order() {
        let files = vec![
            FileDigest::of_bytes("b.md", b"b", false),
            FileDigest::of_bytes("SKILL.md", b"s", false),
        ];
        let manifest = SkillManifest::new(files);
        let lines = format!(
            "SKILL.md\t{}\nb.md\t{}\n",
            sha256_digest(b"s"),
            sha256_digest(b"b")
        );
        assert_eq!(manifest.fingerprint(), sha256_digest(lines.as_bytes()));
        assert_eq!(manifest.files()[0].path, "SKILL.md");
    }

    #[test]
    fn a_streamed_digest_equals_the_digest_of_the_bytes() {
        use std::io::Write;
        let mut w = DigestWriter::new();
        w.write_all(b"ab").ok();
        w.write_all(b"c").ok();
        assert_eq!(w.len(), 3);
        assert_eq!(w.finish(), sha256_digest(b"abc"));
    }

    #[test]
    fn a_digest_rejects_uppercase_hex_and_a_missing_prefix() {
        let hex = "ab".repeat(32);
        assert!(Digest::parse(&format!("sha256:{hex}")).is_ok());
        assert!(matches!(
            Digest::parse(&hex),
            Err(DigestError::MissingPrefix { .. })
        ));
        assert!(matches!(
            Digest::parse(&format!("sha256:{}", hex.to_uppercase())),
            Err(DigestError::NotLowercaseHex {
                found: 'A',
                position: 0,
                ..
            })
        ));
        assert!(matches!(
            Digest::parse("sha256:abc"),
            Err(DigestError::Length { found: 3, .. })
        ));
        for bad in [
            "sha256:../../etc".to_owned(),
            format!("sha256:{}", "g".repeat(64)),
            format!("sha256:{hex}\n"),
            format!("SHA256:{hex}"),
            format!("sha256:{}é", &hex[..63]),
            String::new(),
        ] {
            assert!(Digest::parse(&bad).is_err(), "{bad:?}");
        }
        let e = Digest::parse("sha256:ABC")
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains("sha256:ABC") && e.contains("64"), "{e}");
    }

    #[test]
    fn a_digest_is_written_as_sha256_and_64_lowercase_hex_in_text_and_json() {
        let d = Digest::of(b"abc");
        let text = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(d.to_string(), text);
        assert_eq!(d.hex(), &text[7..]);
        assert_eq!(Digest::parse(text).ok(), Some(d));
        assert_eq!(Digest::from_hex(&text[7..]).ok(), Some(d));
        assert_eq!(sha256_digest(b"abc"), text);
        assert_eq!(serde_json::to_string(&d).ok(), Some(format!("\"{text}\"")));
        assert_eq!(
            serde_json::from_str::<Digest>(&format!("\"{text}\"")).ok(),
            Some(d)
        );
        assert!(serde_json::from_str::<Digest>(&format!("\"{}\"", &text[7..])).is_err());
        assert_eq!(d, text);
        assert_ne!(d, "sha256:zz");
    }

    #[test]
    fn an_etag_names_a_digest_quoted_weak_or_prefixed() {
        let d = Digest::of(b"abc");
        assert_eq!(d.etag(), format!("\"{}\"", d.hex()));
        for tag in [
            d.etag(),
            format!("W/{}", d.etag()),
            format!("\"{d}\""),
            format!(" {} ", d.etag()),
        ] {
            assert_eq!(Digest::from_etag(&tag), Some(d), "{tag}");
        }
        assert_eq!(Digest::from_etag("\"abc\""), None);
    }

    #[test]
    fn lowercase_hex_writes_two_digits_a_byte() {
        assert_eq!(lowercase_hex(&[0, 15, 16, 255]), "000f10ff");
        assert_eq!(lowercase_hex(&[]), "");
    }

    #[test]
    fn the_diff_names_modified_added_and_missing_files() {
        let old = SkillManifest::new(vec![
            FileDigest::of_bytes("SKILL.md", b"a", false),
            FileDigest::of_bytes("gone.md", b"g", false),
            FileDigest::of_bytes("run.sh", b"r", true),
        ]);
        let new = SkillManifest::new(vec![
            FileDigest::of_bytes("SKILL.md", b"A", false),
            FileDigest::of_bytes("new.md", b"n", false),
            FileDigest::of_bytes("run.sh", b"r", false),
        ]);
        let diff = new.diff(&old);
        assert_eq!(diff.modified, vec!["SKILL.md", "run.sh"]);
        assert_eq!(diff.added, vec!["new.md"]);
        assert_eq!(diff.missing, vec!["gone.md"]);
        assert!(old.diff(&old).is_empty());
    }
}
