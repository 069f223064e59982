//! Every limit of the audit, once.

/// Largest file read and audited (bytes); a larger one is reported as
/// `unanalysable.too-large`, never as clean. Packages hold at most 16 MiB
/// in all, so one file this size is already unusual.
pub const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// Most files of one skill audited; the rest are reported as
/// `unanalysable.too-many-files`. The package limit (512) fits under it.
pub const MAX_FILES: usize = 1024;

/// Deepest folder nesting followed when reading a skill folder.
pub const MAX_DEPTH: usize = 16;

/// Most findings of one code reported per file (the rest are counted in
/// the last one's message): a file full of one pattern says it once.
pub const MAX_FINDINGS_PER_CODE_PER_FILE: usize = 20;

/// Characters of evidence shown around a match.
pub const EVIDENCE_CHARS: usize = 120;

/// Lines before a match searched for words that mark an example
/// ("attackers use", "for example", "never run").
pub const EXAMPLE_CONTEXT_LINES: usize = 3;

/// Lines apart a secret read and a network send may be in documentation
/// and still count as one instruction (scripts: the whole file).
pub const PROSE_PAIR_LINES: u32 = 6;

/// A line this long (characters) in code means minified or packed code.
pub const MINIFIED_LINE_CHARS: usize = 2_000;

/// Bytes looked at to tell binary data from text.
pub const SNIFF_BYTES: usize = 8 * 1024;

/// Share of bytes (per mille) that may be invalid UTF-8 in a file still
/// audited as text (decoded with replacements).
pub const MAX_INVALID_PER_MILLE: usize = 20;

/// Longest one package-index lookup (`deps.not-on-index`) may take
/// (connect, request and response), in seconds; a slower one is
/// `deps.index-lookup-failed`, never "not on the index".
pub const INDEX_LOOKUP_TIMEOUT_SECS: u64 = 10;

/// Most distinct package names looked up on an index in one run (every
/// skill of the run together); the names past it are
/// `deps.index-lookup-failed` ("not checked").
pub const MAX_INDEX_LOOKUPS: usize = 256;

/// Most redirects followed by one index lookup, and only on the
/// configured host (scheme, host and port unchanged).
pub const MAX_INDEX_REDIRECTS: usize = 3;

/// Most entries of a `--find-links` folder read.
pub const MAX_FIND_LINKS_ENTRIES: usize = 100_000;
