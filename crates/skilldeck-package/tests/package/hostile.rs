//! Hostile archives, built here byte by byte: each is refused with its
//! diagnostic code, naming the entry, and nothing is written outside the
//! staging folder.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};

use skilldeck::Code;
use skilldeck_package::{Error, PackageLimits, UnpackOptions, unpack, unpack_bytes};

const SKILL: &[u8] = b"---\nname: demo\ndescription: Demo skill. Use when testing.\n---\n# Demo\n";

/// One tar entry with a raw name (no checks), as an attacker writes it.
struct T<'a> {
    name: &'a [u8],
    kind: tar::EntryType,
    data: &'a [u8],
    link: &'a [u8],
}

fn file<'a>(name: &'a [u8], data: &'a [u8]) -> T<'a> {
    T {
        name,
        kind: tar::EntryType::Regular,
        data,
        link: b"",
    }
}

fn tar_gz(entries: &[T<'_>]) -> Vec<u8> {
    tar_gz_level(entries, flate2::Compression::best())
}

fn tar_gz_level(entries: &[T<'_>], level: flate2::Compression) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for e in entries {
        let mut h = tar::Header::new_gnu();
        h.as_old_mut().name[..e.name.len()].copy_from_slice(e.name);
        h.as_old_mut().linkname[..e.link.len()].copy_from_slice(e.link);
        h.set_size(e.data.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(e.kind);
        h.set_cksum();
        b.append(&h, e.data).unwrap();
    }
    gz(&b.into_inner().unwrap(), level)
}

fn gz(bytes: &[u8], level: flate2::Compression) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), level);
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A stored (uncompressed) zip with raw names and optional Unix modes.
fn raw_zip(entries: &[(&[u8], &[u8], Option<u32>)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data, mode) in entries {
        let offset = out.len() as u32;
        let crc = crc32(data);
        let n = name.len() as u16;
        let len = data.len() as u32;
        out.extend_from_slice(b"PK\x03\x04");
        out.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(name);
        out.extend_from_slice(data);
        central.extend_from_slice(b"PK\x01\x02");
        // Made by Unix (3) when a mode is given.
        let made_by: u16 = if mode.is_some() { (3 << 8) | 20 } else { 20 };
        central.extend_from_slice(&made_by.to_le_bytes());
        central.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&len.to_le_bytes());
        central.extend_from_slice(&len.to_le_bytes());
        central.extend_from_slice(&n.to_le_bytes());
        central.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
        central.extend_from_slice(&(mode.unwrap_or(0) << 16).to_le_bytes());
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name);
    }
    let cd_offset = out.len() as u32;
    let count = entries.len().min(0xffff) as u16;
    out.extend_from_slice(&central);
    out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// A sandbox: `base/pkg` is the archive, `base/a/b/stage` the staging
/// folder, so a path that climbs two levels would land inside `base`.
struct Sandbox {
    _tmp: tempfile::TempDir,
    base: PathBuf,
}

impl Sandbox {
    fn new() -> Sandbox {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().to_path_buf();
        std::fs::create_dir_all(base.join("a/b")).unwrap();
        Sandbox { _tmp: tmp, base }
    }

    fn stage(&self) -> PathBuf {
        self.base.join("a/b/stage")
    }

    /// Where the in-memory unpack of the same bytes stages.
    fn stage_memory(&self) -> PathBuf {
        self.base.join("a/b/stage-memory")
    }

    /// Unpacks `bytes` twice, from a file (`unpack`) and from memory
    /// (`unpack_bytes`, what a registry publish uses), and checks that both
    /// give the same answer: the same refusal, or the same skill with the
    /// bytes the digests were taken of.
    fn unpack(&self, bytes: &[u8], options: &UnpackOptions) -> Result<PathBuf, Error> {
        let pkg = self.base.join("pkg");
        std::fs::write(&pkg, bytes).unwrap();
        let from_file = unpack(&pkg, &self.stage(), options);
        let from_memory = unpack_bytes(bytes, &pkg, &self.stage_memory(), options);
        match (&from_file, &from_memory) {
            (Ok(file), Ok(memory)) => {
                let m = &memory.unpacked;
                assert_eq!(file.name, m.name);
                assert_eq!(file.manifest.fingerprint(), m.manifest.fingerprint());
                assert_eq!(file.warnings.len(), m.warnings.len());
                assert_eq!(memory.contents.len(), m.manifest.files().len());
                for (f, bytes) in m.manifest.files().iter().zip(&memory.contents) {
                    assert_eq!(
                        skilldeck::sha256_digest(bytes),
                        f.sha256.to_string(),
                        "{}",
                        f.path
                    );
                    assert_eq!(
                        std::fs::read(m.dir.join(&f.path)).unwrap(),
                        *bytes,
                        "{}",
                        f.path
                    );
                }
            }
            (Err(file), Err(memory)) => {
                let shown = |e: &Error| {
                    e.diagnostics()
                        .iter()
                        .map(|d| (d.code, d.message.clone()))
                        .collect::<Vec<_>>()
                };
                assert_eq!(shown(file), shown(memory));
            }
            _ => panic!("unpack and unpack_bytes disagree: {from_file:?} / {from_memory:?}"),
        }
        from_file.map(|u| u.dir)
    }

    /// Every path in the sandbox outside the staging folder, but for the
    /// archive and the folders on the way.
    fn outside(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        walk(&self.base, &mut found);
        found
            .into_iter()
            .filter(|p| !p.starts_with(self.stage()) && !p.starts_with(self.stage_memory()))
            .filter(|p| {
                ![
                    self.base.join("pkg"),
                    self.base.join("a"),
                    self.base.join("a/b"),
                ]
                .contains(p)
            })
            .collect()
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        out.push(p.clone());
        if e.file_type().unwrap().is_dir() {
            walk(&p, out);
        }
    }
}

/// Unpacks `bytes`, expects a refusal with `code` naming `entry`, and that
/// nothing landed outside the staging folder.
fn refused(bytes: &[u8], code: Code, entry: &str) {
    refused_with(bytes, code, entry, &UnpackOptions::default());
}

fn refused_with(bytes: &[u8], code: Code, entry: &str, options: &UnpackOptions) {
    let sandbox = Sandbox::new();
    let err = sandbox.unpack(bytes, options).expect_err("must be refused");
    let d = err.diagnostics().first().unwrap_or_else(|| panic!("{err}"));
    assert_eq!(d.code, code, "{err}");
    assert!(
        d.message.contains(entry),
        "{} should name {entry}",
        d.message
    );
    assert_eq!(sandbox.outside(), Vec::<PathBuf>::new());
}

#[test]
fn a_valid_package_unpacks_with_the_same_fingerprint_as_its_files() {
    let sandbox = Sandbox::new();
    let bytes = tar_gz(&[file(b"demo/SKILL.md", SKILL), file(b"demo/ref.md", b"r")]);
    let dir = sandbox.unpack(&bytes, &UnpackOptions::default()).unwrap();
    assert_eq!(dir, sandbox.stage().join("demo"));
    let m = skilldeck_package::folder_manifest(&dir, &PackageLimits::default()).unwrap();
    assert_eq!(m.files().len(), 2);
    // The same files at the root (no top folder) are the same skill.
    let root_layout = tar_gz(&[file(b"SKILL.md", SKILL), file(b"ref.md", b"r")]);
    let other = Sandbox::new();
    let dir2 = other
        .unpack(&root_layout, &UnpackOptions::default())
        .unwrap();
    let m2 = skilldeck_package::folder_manifest(&dir2, &PackageLimits::default()).unwrap();
    assert_eq!(m.fingerprint(), m2.fingerprint());
}

#[test]
fn zip_slip_dot_dot_entries_are_refused() {
    let zip = raw_zip(&[
        (b"demo/SKILL.md", SKILL, None),
        (b"../../x", b"pwned", None),
    ]);
    refused(&zip, Code::PackageUnsafePath, "../../x");
    let tgz = tar_gz(&[
        file(b"demo/SKILL.md", SKILL),
        file(b"demo/../../../x", b"pwned"),
    ]);
    refused(&tgz, Code::PackageUnsafePath, "demo/../../../x");
}

#[test]
fn absolute_paths_are_refused() {
    let tgz = tar_gz(&[file(b"/tmp/skilldeck-abs-x", b"pwned")]);
    refused(&tgz, Code::PackageUnsafePath, "/tmp/skilldeck-abs-x");
    let zip = raw_zip(&[(b"/x", b"pwned", None)]);
    refused(&zip, Code::PackageUnsafePath, "/x");
    let drive = raw_zip(&[(b"C:/x", b"pwned", None)]);
    refused(&drive, Code::PackageUnsafePath, "C:/x");
}

#[test]
fn backslash_tricks_are_refused() {
    let zip = raw_zip(&[(b"demo\\..\\..\\x", b"pwned", None)]);
    refused(&zip, Code::PackageUnsafePath, "demo\\\\..\\\\..\\\\x");
}

#[test]
fn a_nul_byte_in_a_name_is_refused() {
    let zip = raw_zip(&[(b"demo/SKILL.md\0.txt", SKILL, None)]);
    refused(&zip, Code::PackageUnsafePath, "demo/SKILL.md\\0.txt");
}

#[test]
fn a_tar_symlink_then_a_file_written_through_it_is_refused_at_the_symlink() {
    let sandbox_target = b"../../../..";
    let tgz = tar_gz(&[
        file(b"demo/SKILL.md", SKILL),
        T {
            name: b"demo/link",
            kind: tar::EntryType::Symlink,
            data: b"",
            link: sandbox_target,
        },
        file(b"demo/link/evil", b"pwned"),
    ]);
    refused(&tgz, Code::PackageLink, "demo/link");
}

#[test]
fn a_tar_hardlink_to_etc_passwd_is_refused() {
    let tgz = tar_gz(&[
        file(b"demo/SKILL.md", SKILL),
        T {
            name: b"demo/passwd",
            kind: tar::EntryType::Link,
            data: b"",
            link: b"/etc/passwd",
        },
    ]);
    refused(&tgz, Code::PackageLink, "demo/passwd");
}

#[test]
fn device_and_fifo_entries_are_refused() {
    for kind in [
        tar::EntryType::Char,
        tar::EntryType::Block,
        tar::EntryType::Fifo,
    ] {
        let tgz = tar_gz(&[
            file(b"demo/SKILL.md", SKILL),
            T {
                name: b"demo/dev",
                kind,
                data: b"",
                link: b"",
            },
        ]);
        refused(&tgz, Code::PackageSpecialFile, "demo/dev");
    }
}

#[test]
fn a_zip_symlink_entry_is_refused() {
    let zip = raw_zip(&[
        (b"demo/SKILL.md", SKILL, Some(0o100644)),
        (b"demo/link", b"/etc", Some(0o120777)),
    ]);
    refused(&zip, Code::PackageLink, "demo/link");
}

#[test]
fn duplicate_names_are_refused() {
    let zip = raw_zip(&[
        (b"demo/SKILL.md", SKILL, None),
        (b"demo/SKILL.md", b"second", None),
    ]);
    let sandbox = Sandbox::new();
    let err = sandbox.unpack(&zip, &UnpackOptions::default()).unwrap_err();
    // The zip reader keeps one of two same-named entries: the central
    // directory is checked for duplicates before any entry is read.
    assert_eq!(err.diagnostics()[0].code, Code::PackageDuplicate, "{err}");
    assert_eq!(sandbox.outside(), Vec::<PathBuf>::new());
    let tgz = tar_gz(&[
        file(b"demo/SKILL.md", SKILL),
        file(b"demo/SKILL.md", b"second"),
    ]);
    refused(&tgz, Code::PackageDuplicate, "demo/SKILL.md");
}

#[test]
fn names_equal_but_for_letter_case_are_refused() {
    let tgz = tar_gz(&[
        file(b"demo/SKILL.md", SKILL),
        file(b"demo/Notes.md", b"a"),
        file(b"demo/notes.md", b"b"),
    ]);
    refused(&tgz, Code::PackageDuplicate, "demo/notes.md");
    let zip = raw_zip(&[
        (b"demo/SKILL.md", SKILL, None),
        (b"demo/skill.md", b"b", None),
    ]);
    refused(&zip, Code::PackageDuplicate, "demo/skill.md");
}

fn zeros_zip(entries: usize, each: usize) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    w.start_file("demo/SKILL.md", options).unwrap();
    w.write_all(SKILL).unwrap();
    let zeros = vec![0u8; each];
    for i in 0..entries {
        w.start_file(format!("demo/layer{i:02}.bin"), options)
            .unwrap();
        w.write_all(&zeros).unwrap();
    }
    w.finish().unwrap().into_inner()
}

#[test]
fn a_42_zip_style_bomb_is_refused_by_the_ratio_bound() {
    // 16 layers of 512 KiB of zeros, about 600 bytes each compressed.
    let zip = zeros_zip(16, 512 * 1024);
    assert!(zip.len() < 32 * 1024);
    refused(&zip, Code::PackageRatio, "demo/layer0");
}

#[test]
fn nested_archives_are_files_and_never_expanded() {
    let inner = zeros_zip(1, 1000);
    let zip = raw_zip(&[
        (b"demo/SKILL.md", SKILL, None),
        (b"demo/inner.zip", &inner, None),
    ]);
    let sandbox = Sandbox::new();
    let dir = sandbox.unpack(&zip, &UnpackOptions::default()).unwrap();
    assert_eq!(std::fs::read(dir.join("inner.zip")).unwrap(), inner);
    assert!(!dir.join("inner").exists());
}

#[test]
fn a_high_ratio_tar_gz_is_refused() {
    let zeros = vec![0u8; 8 * 1024 * 1024];
    let tgz = tar_gz(&[
        file(b"demo/SKILL.md", SKILL),
        file(b"demo/zeros.bin", &zeros),
    ]);
    refused(&tgz, Code::PackageRatio, "demo/zeros.bin");
}

#[test]
fn the_unpacked_byte_limit_is_configurable_and_refuses_beyond_it() {
    let noise: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let tgz = tar_gz(&[
        file(b"demo/SKILL.md", SKILL),
        file(b"demo/noise.bin", &noise),
    ]);
    let options = UnpackOptions {
        limits: PackageLimits {
            max_bytes: 100_000,
            ..PackageLimits::default()
        },
        ..UnpackOptions::default()
    };
    refused_with(&tgz, Code::PackageTooLarge, "demo/noise.bin", &options);
    assert!(
        Sandbox::new()
            .unpack(&tgz, &UnpackOptions::default())
            .is_ok()
    );
}

#[test]
fn a_tar_gz_of_100000_entries_is_refused_after_the_file_limit() {
    let names: Vec<String> = (0..100_000).map(|i| format!("demo/f{i}")).collect();
    let mut entries = vec![file(b"demo/SKILL.md", SKILL)];
    entries.extend(names.iter().map(|n| file(n.as_bytes(), b"")));
    // Stored, not compressed: the test is about the count, and building
    // 50 MB of deflate in a debug build is slow.
    let tgz = tar_gz_level(&entries, flate2::Compression::none());
    refused(&tgz, Code::PackageTooManyFiles, "demo/f511");
}

#[test]
fn a_zip_of_100000_entries_is_refused_before_any_is_read() {
    let names: Vec<String> = (0..100_000).map(|i| format!("demo/f{i}")).collect();
    let entries: Vec<(&[u8], &[u8], Option<u32>)> = names
        .iter()
        .map(|n| (n.as_bytes(), &b""[..], None))
        .collect();
    let zip = raw_zip(&entries);
    let sandbox = Sandbox::new();
    let err = sandbox.unpack(&zip, &UnpackOptions::default()).unwrap_err();
    let code = err.diagnostics()[0].code;
    // 100,000 is past the zip32 count field (65,535): the reader finds a
    // count that disagrees with the directory and refuses it as corrupt,
    // or the entry limit refuses it; never unpacked.
    assert!(
        matches!(code, Code::PackageTooManyFiles | Code::PackageTruncated),
        "{err}"
    );
    assert!(!sandbox.stage().join(".tree/demo").exists());
    let some: Vec<(&[u8], &[u8], Option<u32>)> = entries[..5000].to_vec();
    refused(
        &raw_zip(&some),
        Code::PackageTooManyFiles,
        "central directory",
    );
}

#[test]
fn a_truncated_archive_is_refused() {
    let tgz = tar_gz(&[
        file(b"demo/SKILL.md", SKILL),
        file(b"demo/ref.md", &[b'x'; 5000]),
    ]);
    for cut in [tgz.len() / 2, tgz.len() - 4] {
        let sandbox = Sandbox::new();
        let err = sandbox
            .unpack(&tgz[..cut], &UnpackOptions::default())
            .unwrap_err();
        assert_eq!(err.diagnostics()[0].code, Code::PackageTruncated, "{err}");
        assert_eq!(sandbox.outside(), Vec::<PathBuf>::new());
    }
    let zip = raw_zip(&[(b"demo/SKILL.md", SKILL, None)]);
    refused(
        &zip[..zip.len() - 10],
        Code::PackageTruncated,
        "central directory",
    );
}

#[test]
fn a_package_without_exactly_one_skill_is_refused() {
    let two = tar_gz(&[
        file(b"demo/SKILL.md", SKILL),
        file(b"other/SKILL.md", SKILL),
    ]);
    let sandbox = Sandbox::new();
    let err = sandbox.unpack(&two, &UnpackOptions::default()).unwrap_err();
    assert_eq!(err.diagnostics()[0].code, Code::PackageLayout, "{err}");
    let none = tar_gz(&[file(b"demo/README.md", b"x")]);
    let err = Sandbox::new()
        .unpack(&none, &UnpackOptions::default())
        .unwrap_err();
    assert_eq!(err.diagnostics()[0].code, Code::PackageLayout, "{err}");
    let misnamed = tar_gz(&[file(b"other/SKILL.md", SKILL)]);
    let err = Sandbox::new()
        .unpack(&misnamed, &UnpackOptions::default())
        .unwrap_err();
    assert_eq!(err.diagnostics()[0].code, Code::PackageLayout, "{err}");
    assert!(err.to_string().contains("not the skill's name"), "{err}");
}

#[test]
fn something_that_is_not_an_archive_is_refused() {
    refused_with(b"hello", Code::PackageFormat, "", &UnpackOptions::default());
}
