//! Path questions answered on bytes, for the hot paths of discovery
//! (`Path::strip_prefix`, `Path::parent` and `Path::starts_with` parse
//! components: about 2,000 instructions per skill at 10,000 skills).
//! Each answers exactly what the `Path` method would, or `None` when the
//! bytes alone cannot tell (the caller then asks `Path`).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// `dir` below `root` (`dir.strip_prefix(root)`), when `dir` is `root`'s
/// bytes, a `/` and plain names (no empty, `.` component or trailing
/// `/`): the form of every folder a walk of `root` finds. `None` when the
/// bytes do not say (the caller falls back to [`Path::strip_prefix`]).
pub(crate) fn below<'a>(dir: &'a Path, root: &Path) -> Option<&'a Path> {
    let d = dir.as_os_str().as_bytes();
    let r = root.as_os_str().as_bytes();
    let rest = d.strip_prefix(r)?;
    let rest = if r.ends_with(b"/") {
        rest
    } else {
        rest.strip_prefix(b"/")?
    };
    if rest.is_empty() || !rest.split(|b| *b == b'/').all(plain_name) {
        return None;
    }
    Some(Path::new(OsStr::from_bytes(rest)))
}

/// The bytes of `dir` before its last `/` (its parent folder), when its
/// last component is a plain name (not `.`, `..` or empty, where
/// `Path::parent` is not that prefix). Two paths with the same such
/// prefix have the same folders above them. `None` for a folder of `/`.
pub(crate) fn plain_parent(dir: &Path) -> Option<&[u8]> {
    let bytes = dir.as_os_str().as_bytes();
    let slash = memchr::memrchr(b'/', bytes).filter(|s| *s > 0)?;
    let name = &bytes[slash + 1..];
    (plain_name(name) && name != b"..").then_some(&bytes[..slash])
}

/// `path.file_name()`, read off the bytes after the last `/` when they are
/// a plain name.
pub(crate) fn file_name(path: &Path) -> Option<&OsStr> {
    let bytes = path.as_os_str().as_bytes();
    let start = memchr::memrchr(b'/', bytes).map_or(0, |i| i + 1);
    let name = &bytes[start..];
    if plain_name(name) && name != b".." {
        Some(OsStr::from_bytes(name))
    } else {
        path.file_name()
    }
}

/// A component `Path` keeps as it is written (`..` included).
fn plain_name(name: &[u8]) -> bool {
    !name.is_empty() && name != b"."
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_answers_what_strip_prefix_answers_or_nothing() {
        let cases = [
            ("/r/a/b", "/r"),
            ("/r/a/b", "/r/"),
            ("r/a", "r"),
            ("./r/a", "./r"),
            ("/r/../a", "/r"),
            ("/r", "/r"),
            ("/r/", "/r"),
            ("/ra/b", "/r"),
            ("/r//a", "/r"),
            ("/r/./a", "/r"),
            ("/r/a/.", "/r"),
            ("/r/a/", "/r"),
            ("/x/a", "/r"),
        ];
        for (dir, root) in cases {
            let (dir, root) = (Path::new(dir), Path::new(root));
            if let Some(rest) = below(dir, root) {
                assert_eq!(Some(rest), dir.strip_prefix(root).ok(), "{dir:?} {root:?}");
            }
        }
        assert_eq!(
            below(Path::new("/r/a/b"), Path::new("/r")),
            Some(Path::new("a/b"))
        );
        assert_eq!(below(Path::new("/ra/b"), Path::new("/r")), None);
    }

    #[test]
    fn file_name_is_path_file_name() {
        for p in [
            "/r/a", "a", "/r/a/", "/r/a/.", "/r/..", "/", ".", "..", "", "/r//a",
        ] {
            assert_eq!(file_name(Path::new(p)), Path::new(p).file_name(), "{p}");
        }
    }

    #[test]
    fn plain_parent_is_the_parent_or_nothing() {
        for p in [
            "/r/a", "r/a", "/r/a/.", "/r/a/..", "/r/a/", "a", "/a", "/r//a",
        ] {
            let path = Path::new(p);
            if let Some(parent) = plain_parent(path) {
                assert_eq!(
                    Path::new(OsStr::from_bytes(parent)),
                    path.parent().unwrap(),
                    "{p}"
                );
            }
        }
        assert_eq!(plain_parent(Path::new("/r/a")), Some(&b"/r"[..]));
        assert_eq!(plain_parent(Path::new("/r/a/..")), None);
    }
}
