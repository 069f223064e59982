//! What a file is, from its first bytes and its name: text to audit
//! (documentation or code), inert media, or content the audit cannot read
//! (reported as such, never as clean).

use std::borrow::Cow;

use crate::limits::{MAX_INVALID_PER_MILLE, MINIFIED_LINE_CHARS, SNIFF_BYTES};

/// What the audit does with a file.
pub(crate) enum Content<'a> {
    /// Text to scan.
    Text {
        /// Documentation (Markdown, plain text) or code.
        prose: bool,
        /// Markdown (fences and HTML comments mean something).
        markdown: bool,
        /// The text (decoded with replacements when it was not UTF-8).
        text: Cow<'a, str>,
        /// It was not UTF-8.
        lossy: bool,
    },
    /// Images, fonts, audio, video: not instructions, not code.
    Inert,
    /// Not analysable: the rule code and what it is.
    Unanalysable(&'static str, String),
}

fn ext(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default()
}

/// Sorts a file into [`Content`].
pub(crate) fn classify<'a>(path: &str, bytes: &'a [u8]) -> Content<'a> {
    let e = ext(path);
    let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
    if let Some(found) = sniff_binary(&e, bytes) {
        return found;
    }
    if matches!(
        e.as_str(),
        "pyc" | "pyo" | "class" | "so" | "dll" | "dylib" | "exe" | "wasm" | "o" | "a"
    ) {
        return Content::Unanalysable("unanalysable.executable", format!("a .{e} file"));
    }
    if matches!(e.as_str(), "gpg" | "pgp" | "age" | "enc") {
        return Content::Unanalysable("unanalysable.encrypted", format!("a .{e} file"));
    }
    let text: Cow<'a, str> = match std::str::from_utf8(bytes) {
        Ok(t) => Cow::Borrowed(t),
        Err(_) => {
            if memchr::memchr(0, head).is_some() {
                return Content::Unanalysable("unanalysable.binary", "binary data".into());
            }
            let lossy = String::from_utf8_lossy(bytes);
            let bad = lossy.matches('\u{FFFD}').count();
            if bad > 8 && bad * 1000 > bytes.len().max(1) * MAX_INVALID_PER_MILLE {
                return Content::Unanalysable("unanalysable.binary", "binary data".into());
            }
            return text_content(path, &e, Cow::Owned(lossy.into_owned()), true);
        }
    };
    if memchr::memchr(0, head).is_some() {
        return Content::Unanalysable("unanalysable.binary", "binary data (NUL bytes)".into());
    }
    text_content(path, &e, text, false)
}

fn text_content<'a>(path: &str, e: &str, text: Cow<'a, str>, lossy: bool) -> Content<'a> {
    for marker in [
        "-----BEGIN PGP MESSAGE-----",
        "U2FsdGVkX1",
        "$ANSIBLE_VAULT;",
        "age-encryption.org/v1",
    ] {
        if text.trim_start().starts_with(marker) {
            return Content::Unanalysable(
                "unanalysable.encrypted",
                format!("encrypted text ({})", marker.trim_matches('-')),
            );
        }
    }
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let markdown = matches!(e, "md" | "markdown" | "mdx" | "mdc");
    let prose = markdown
        || matches!(e, "txt" | "rst" | "adoc" | "org")
        || (e.is_empty() && !text.starts_with("#!"));
    let scripted = matches!(
        e,
        "js" | "mjs"
            | "cjs"
            | "ts"
            | "css"
            | "html"
            | "htm"
            | "py"
            | "sh"
            | "bash"
            | "rb"
            | "pl"
            | "php"
            | "ps1"
    );
    if scripted
        && (name.contains(".min.")
            || text
                .lines()
                .any(|l| l.len() > MINIFIED_LINE_CHARS && l.chars().count() > MINIFIED_LINE_CHARS))
    {
        return Content::Unanalysable(
            "unanalysable.minified",
            "minified or packed code (lines over 2,000 characters)".into(),
        );
    }
    Content::Text {
        prose,
        markdown,
        text,
        lossy,
    }
}

/// Binary formats told by their magic bytes.
fn sniff_binary<'a>(e: &str, b: &[u8]) -> Option<Content<'a>> {
    let starts = |m: &[u8]| b.starts_with(m);
    let un = |code: &'static str, what: &str| Some(Content::Unanalysable(code, what.to_owned()));
    if starts(b"\x7fELF") {
        return un("unanalysable.executable", "an ELF executable");
    }
    if starts(b"MZ") && !matches!(e, "txt" | "md") {
        return un("unanalysable.executable", "a Windows (PE) executable");
    }
    if starts(&[0xfe, 0xed, 0xfa, 0xce])
        || starts(&[0xfe, 0xed, 0xfa, 0xcf])
        || starts(&[0xcf, 0xfa, 0xed, 0xfe])
        || starts(&[0xce, 0xfa, 0xed, 0xfe])
    {
        return un("unanalysable.executable", "a Mach-O executable");
    }
    if starts(&[0xca, 0xfe, 0xba, 0xbe]) {
        return un(
            "unanalysable.executable",
            "a Java class or universal binary",
        );
    }
    if starts(b"\0asm") {
        return un("unanalysable.executable", "a WebAssembly module");
    }
    if starts(b"PK\x03\x04") || starts(b"PK\x05\x06") {
        // General purpose flag bit 0: the entry is encrypted.
        if b.len() > 6 && b[6] & 1 == 1 {
            return un("unanalysable.encrypted", "a password-protected zip archive");
        }
        return match e {
            "jar" | "apk" | "whl" | "egg" => {
                un("unanalysable.executable", "a packaged program (zip)")
            }
            "docx" | "xlsx" | "pptx" | "odt" | "ods" | "odp" | "epub" => {
                un("unanalysable.document", "an office document")
            }
            _ => un("unanalysable.archive", "a zip archive"),
        };
    }
    if starts(b"%PDF") {
        return un("unanalysable.document", "a PDF document");
    }
    for (magic, what) in [
        (&b"\x1f\x8b"[..], "a gzip archive"),
        (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
        (b"Rar!", "a RAR archive"),
        (b"\xfd7zXZ", "an xz archive"),
        (b"BZh", "a bzip2 archive"),
        (b"\x28\xb5\x2f\xfd", "a zstd archive"),
    ] {
        if starts(magic) {
            return un("unanalysable.archive", what);
        }
    }
    if b.len() > 262 && &b[257..262] == b"ustar" {
        return un("unanalysable.archive", "a tar archive");
    }
    if starts(b"SQLite format 3\0") {
        return un("unanalysable.binary", "an SQLite database");
    }
    let inert = starts(b"\x89PNG")
        || starts(&[0xff, 0xd8, 0xff])
        || starts(b"GIF8")
        || (starts(b"RIFF") && b.len() > 12 && matches!(&b[8..12], b"WEBP" | b"WAVE" | b"AVI "))
        || starts(&[0, 0, 1, 0])
        || starts(b"BM") && matches!(e, "bmp")
        || starts(b"II*\0")
        || starts(b"MM\0*")
        || starts(b"wOFF")
        || starts(b"wOF2")
        || starts(&[0, 1, 0, 0]) && matches!(e, "ttf")
        || starts(b"OTTO")
        || starts(b"ID3")
        || starts(b"OggS")
        || starts(b"fLaC")
        || (b.len() > 8 && &b[4..8] == b"ftyp");
    inert.then_some(Content::Inert)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_of(path: &str, bytes: &[u8]) -> &'static str {
        match classify(path, bytes) {
            Content::Text { prose: true, .. } => "prose",
            Content::Text { .. } => "code",
            Content::Inert => "inert",
            Content::Unanalysable(code, _) => code,
        }
    }

    #[test]
    fn files_are_sorted_by_magic_bytes_and_name() {
        assert_eq!(code_of("SKILL.md", b"# hi"), "prose");
        assert_eq!(code_of("scripts/x.py", b"print(1)"), "code");
        assert_eq!(
            code_of("bin/tool", b"\x7fELF\x02\x01"),
            "unanalysable.executable"
        );
        assert_eq!(
            code_of("a.zip", b"PK\x03\x04\x14\x00\x01\x00"),
            "unanalysable.encrypted"
        );
        assert_eq!(
            code_of("a.zip", b"PK\x03\x04\x14\x00\x00\x00"),
            "unanalysable.archive"
        );
        assert_eq!(code_of("logo.png", b"\x89PNG\r\n\x1a\n"), "inert");
        assert_eq!(
            code_of("x.bin", b"\x00\x01\x02\xff\xfe"),
            "unanalysable.binary"
        );
        assert_eq!(code_of("doc.pdf", b"%PDF-1.7"), "unanalysable.document");
        assert_eq!(
            code_of("s.txt", b"U2FsdGVkX1+abc"),
            "unanalysable.encrypted"
        );
        let long = format!("var a={};", "x".repeat(3000));
        assert_eq!(code_of("app.js", long.as_bytes()), "unanalysable.minified");
        assert_eq!(code_of("data.json", long.as_bytes()), "code");
        assert_eq!(code_of("latin1.txt", b"caf\xe9 au lait"), "prose");
    }
}
