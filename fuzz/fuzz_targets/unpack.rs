//! The package unpacker on arbitrary bytes as a `.tar.gz` or `.zip`: the
//! input is the archive, unpacked into a staging folder inside a fresh
//! temporary folder.
//!
//! Nothing may panic, and nothing may be written outside the staging
//! folder: after the unpack, whatever its outcome, the temporary folder
//! holds only the package, the staging folder and a sentinel file placed
//! beside them (unchanged), and nothing inside staging is a link or a
//! special file.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use skilldeck_package::{UnpackOptions, unpack};

const SENTINEL: &[u8] = b"left alone\n";

/// Every entry under `dir` is a plain folder or a plain file.
fn only_plain_entries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            only_plain_entries(&entry.path());
        } else {
            assert!(
                kind.is_file(),
                "unpack created a link or a special file: {}",
                entry.path().display()
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(root) = tempfile::tempdir() else {
        return;
    };
    let work = root.path().join("work");
    let package = root.path().join("package");
    let sentinel = work.join("sentinel");
    let staging = work.join("staging");
    if std::fs::create_dir(&work).is_err()
        || std::fs::write(&package, data).is_err()
        || std::fs::write(&sentinel, SENTINEL).is_err()
    {
        return;
    }
    let outcome = unpack(&package, &staging, &UnpackOptions::default());
    if let Ok(unpacked) = &outcome {
        assert!(
            unpacked.dir.starts_with(&staging),
            "the skill folder {} is outside the staging folder",
            unpacked.dir.display()
        );
    }
    let mut names: Vec<_> = std::fs::read_dir(root.path())
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    names.sort();
    assert_eq!(
        names,
        ["package", "work"],
        "unpack wrote beside the staging folder"
    );
    let mut names: Vec<_> = std::fs::read_dir(&work)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    names.sort();
    assert!(
        names == ["sentinel", "staging"] || names == ["sentinel"],
        "unpack wrote beside the staging folder: {names:?}"
    );
    assert_eq!(
        std::fs::read(&sentinel).ok().as_deref(),
        Some(SENTINEL),
        "unpack changed a file outside the staging folder"
    );
    assert_eq!(
        std::fs::read(&package).ok().as_deref(),
        Some(data),
        "unpack changed the package"
    );
    only_plain_entries(&staging);
});
