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

use std::io;

use sha2::{Digest, Sha256};

/// The prefix of every digest and fingerprint.
pub const DIGEST_PREFIX: &str = "sha256:";

const HEX: &[u8; 16] = b"0123456789abcdef";

fn hex_digest(hash: &[u8]) -> String {
    let mut digest = String::with_capacity(DIGEST_PREFIX.len() + 2 * hash.len());
    digest.push_str(DIGEST_PREFIX);
    for byte in hash {
        digest.push(char::from(HEX[usize::from(byte >> 4)]));
        digest.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    digest
}

/// `sha256:<lowercase hex>` of `bytes`.
pub fn sha256_digest(bytes: &[u8]) -> String {
    hex_digest(&Sha256::digest(bytes))
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

    /// `sha256:<lowercase hex>` of everything written.
    pub fn finish(self) -> String {
        hex_digest(&self.hasher.finalize())
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
    /// `sha256:` and the lowercase hex SHA-256 of its bytes.
    pub sha256: String,
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
            sha256: sha256_digest(bytes),
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
    pub fn fingerprint(&self) -> String {
        fingerprint(
            self.files
                .iter()
                .map(|f| (f.path.as_str(), f.sha256.as_str())),
        )
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

/// The fingerprint of `(path, "sha256:<hex>")` pairs, which must already be
/// sorted by path (byte order).
pub fn fingerprint<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut hasher = Sha256::new();
    for (path, digest) in files {
        hasher.update(path.as_bytes());
        hasher.update(b"\t");
        hasher.update(digest.as_bytes());
        hasher.update(b"\n");
    }
    hex_digest(&hasher.finalize())
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
