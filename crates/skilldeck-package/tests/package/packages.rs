//! Pack, install and verify through the library: reproducible archives,
//! one fingerprint for a folder, a tar.gz and a zip, the executable bit
//! kept, local edits protected, the frozen lock, and crash recovery.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use skilldeck::Code;
use skilldeck_package::{
    ArchiveFormat, InstallOptions, Lockfile, PackOptions, PackageLimits, Source, Status,
    UnpackOptions, archive, folder_manifest, install, lock_path, pack, pack_to_file, recover,
    unpack_bytes, verify,
};

fn demo(base: &Path, body: &str) -> PathBuf {
    let dir = skilldeck_testkit::skill(base, "demo")
        .description("Demo skill. Use when testing packages.")
        .frontmatter_raw("metadata:\n  version: \"1.0\"")
        .body(body)
        .file("references/guide.md", "# Guide\n")
        .file(".hidden/config", "k=v\n")
        .file("scripts/run.sh", "#!/bin/sh\necho hi\n")
        .write();
    chmod(&dir.join("scripts/run.sh"), 0o755);
    dir
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn options(format: ArchiveFormat) -> PackOptions {
    PackOptions {
        format,
        ..PackOptions::default()
    }
}

/// A registry publish reads an upload once (`unpack_bytes`) and packs
/// the canonical archive from the bytes and digests it read (`archive`):
/// byte for byte what `pack` of the unpacked folder gives, with the
/// validation's warnings and frontmatter carried from the one validation.
#[test]
fn an_upload_read_once_packs_to_the_archive_pack_gives_its_folder() {
    let tmp = tempfile::tempdir().unwrap();
    // A lenient warning (an unknown frontmatter field) so the report is
    // not empty.
    let dir = skilldeck_testkit::skill(tmp.path(), "demo")
        .description("Demo skill. Use when testing packages.")
        .frontmatter_raw("metadata:\n  version: \"1.0\"\nflavour: sweet")
        .body("# Demo\n")
        .file("references/guide.md", "# Guide\n")
        .file("scripts/run.sh", "#!/bin/sh\necho hi\n")
        .write();
    chmod(&dir.join("scripts/run.sh"), 0o755);
    for format in [ArchiveFormat::TarGz, ArchiveFormat::Zip] {
        let options = UnpackOptions::default();
        let upload = pack(
            &dir,
            &PackOptions {
                format,
                validation: options.validation.clone(),
                limits: options.limits,
            },
        )
        .unwrap()
        .bytes;
        let stage = tmp.path().join(format!("stage-{format:?}"));
        let read = unpack_bytes(&upload, Path::new("package"), &stage, &options).unwrap();
        let unpacked = &read.unpacked;
        let canonical = archive(
            &unpacked.name,
            &unpacked.manifest,
            &read.contents,
            ArchiveFormat::TarGz,
        )
        .unwrap();
        let repacked = pack(
            &unpacked.dir,
            &PackOptions {
                format: ArchiveFormat::TarGz,
                validation: options.validation.clone(),
                limits: options.limits,
            },
        )
        .unwrap();
        assert_eq!(canonical, repacked.bytes, "{format:?}");
        assert_eq!(unpacked.manifest.fingerprint(), repacked.fingerprint());
        assert_eq!(unpacked.warnings, repacked.warnings, "{format:?}");
        assert!(!unpacked.warnings.is_empty());
        assert_eq!(
            unpacked.frontmatter.as_ref().and_then(|f| f.name.clone()),
            Some("demo".to_owned())
        );
        assert_eq!(unpacked.version.as_deref(), Some("1.0"));
    }
}

#[test]
fn packing_twice_gives_byte_identical_archives() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = demo(tmp.path(), "# Demo\n");
    for format in [ArchiveFormat::TarGz, ArchiveFormat::Zip] {
        let a = pack(&dir, &options(format)).unwrap();
        let b = pack(&dir, &options(format)).unwrap();
        assert_eq!(a.bytes, b.bytes, "{format:?}");
    }
}

#[test]
fn a_copy_with_other_mtimes_and_umask_packs_to_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = demo(tmp.path(), "# Demo\n");
    let copy = tmp.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    // A copy made under another umask, at another time: new mtimes, other
    // permission bits (0600/0700 instead of 0644/0755).
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "umask 077 && cp -r '{}' '{}/demo'",
            dir.display(),
            copy.display()
        ))
        .status()
        .unwrap();
    assert!(status.success());
    let copied = copy.join("demo");
    let meta = std::fs::metadata(copied.join("SKILL.md")).unwrap();
    assert_ne!(
        meta.modified().unwrap(),
        std::fs::metadata(dir.join("SKILL.md"))
            .unwrap()
            .modified()
            .unwrap()
    );
    for format in [ArchiveFormat::TarGz, ArchiveFormat::Zip] {
        let a = pack(&dir, &options(format)).unwrap();
        let b = pack(&copied, &options(format)).unwrap();
        assert_eq!(a.bytes, b.bytes, "{format:?}");
    }
}

#[test]
fn a_folder_a_tar_gz_and_a_zip_have_one_fingerprint() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = demo(tmp.path(), "# Demo\n");
    let folder = folder_manifest(&dir, &PackageLimits::default()).unwrap();
    let tgz = pack_to_file(
        &dir,
        &tmp.path().join("d.tar.gz"),
        &options(ArchiveFormat::TarGz),
    )
    .unwrap();
    let zip = pack_to_file(
        &dir,
        &tmp.path().join("d.zip"),
        &options(ArchiveFormat::Zip),
    )
    .unwrap();
    assert_eq!(tgz.fingerprint(), folder.fingerprint());
    assert_eq!(zip.fingerprint(), folder.fingerprint());
    // The hidden file is part of the skill.
    assert!(folder.files().iter().any(|f| f.path == ".hidden/config"));
    for pkg in ["d.tar.gz", "d.zip"] {
        let staging = tmp.path().join(format!("stage-{pkg}"));
        let u = skilldeck_package::unpack(&tmp.path().join(pkg), &staging, &Default::default())
            .unwrap();
        assert_eq!(u.manifest.fingerprint(), folder.fingerprint(), "{pkg}");
        let again = folder_manifest(&u.dir, &PackageLimits::default()).unwrap();
        assert_eq!(again, folder, "{pkg}: files and executable bits");
    }
}

#[test]
fn the_executable_bit_survives_pack_and_install() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let dir = demo(tmp.path(), "# Demo\n");
    for format in [ArchiveFormat::TarGz, ArchiveFormat::Zip] {
        let pkg = tmp.path().join(format!("d.{}", format.extension()));
        pack_to_file(&dir, &pkg, &options(format)).unwrap();
        let root = tmp
            .path()
            .join(format!("root-{}", format.extension()))
            .join("skills");
        install(&root, &[Source::Package(pkg)], &InstallOptions::default()).unwrap();
        let mode = |p: &str| {
            std::fs::metadata(root.join("demo").join(p))
                .unwrap()
                .permissions()
                .mode()
        };
        assert_ne!(mode("scripts/run.sh") & 0o100, 0, "{format:?}");
        assert_eq!(mode("SKILL.md") & 0o111, 0, "{format:?}");
    }
}

#[test]
fn pack_refuses_what_install_would_refuse() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = demo(tmp.path(), "# Demo\n");
    std::os::unix::fs::symlink("/etc/passwd", dir.join("passwd")).unwrap();
    let err = pack(&dir, &PackOptions::default()).unwrap_err();
    assert_eq!(err.diagnostics()[0].code, Code::PackageLink, "{err}");
    let root = tmp.path().join("r/skills");
    let err = install(
        &root,
        &[Source::Folder(dir.clone())],
        &InstallOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err.diagnostics()[0].code, Code::PackageLink, "{err}");
    std::fs::remove_file(dir.join("passwd")).unwrap();
    for i in 0..513 {
        std::fs::write(dir.join(format!("references/f{i}.md")), "x").unwrap();
    }
    let err = pack(&dir, &PackOptions::default()).unwrap_err();
    assert_eq!(
        err.diagnostics()[0].code,
        Code::PackageTooManyFiles,
        "{err}"
    );
}

#[test]
fn pack_validates_strictly_unless_lenient() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = skilldeck_testkit::skill(tmp.path(), "demo")
        .description("Demo skill. Use when testing.")
        .field("unknown-key", "x")
        .write();
    let err = pack(&dir, &PackOptions::default()).unwrap_err();
    assert_eq!(err.diagnostics()[0].code, Code::UnknownField, "{err}");
    let lenient = PackOptions {
        validation: skilldeck::ValidationOptions::lenient(),
        ..PackOptions::default()
    };
    let packed = pack(&dir, &lenient).unwrap();
    assert_eq!(packed.warnings[0].code, Code::UnknownField);
}

fn root_with_demo(tmp: &Path) -> (PathBuf, PathBuf) {
    let src = demo(&tmp.join("src"), "# Demo v1\n");
    let pkg = tmp.join("demo-1.tar.gz");
    pack_to_file(&src, &pkg, &PackOptions::default()).unwrap();
    let root = tmp.join("project/.agents/skills");
    install(
        &root,
        &[Source::Package(pkg.clone())],
        &InstallOptions::default(),
    )
    .unwrap();
    (root, pkg)
}

#[test]
fn an_install_is_recorded_in_the_lock_and_verifies_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, _) = root_with_demo(tmp.path());
    let lock = Lockfile::load(&lock_path(&root)).unwrap().unwrap();
    let entry = &lock.skill["demo"];
    assert_eq!(entry.version.as_deref(), Some("1.0"));
    assert_eq!(entry.source, "../../demo-1.tar.gz");
    let report = verify(&root, None, &PackageLimits::default()).unwrap();
    assert!(report.is_clean(), "{report:?}");
    // Nothing of install's own is left in the root.
    let names: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".skilldeck-install.lock")
        .collect();
    assert_eq!(names, vec!["demo"]);
}

#[test]
fn verify_reports_modified_added_and_missing_files() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, _) = root_with_demo(tmp.path());
    let skill = root.join("demo");
    std::fs::write(skill.join("references/guide.md"), "changed").unwrap();
    chmod(&skill.join("scripts/run.sh"), 0o644);
    std::fs::write(skill.join("extra.md"), "new").unwrap();
    std::fs::remove_file(skill.join(".hidden/config")).unwrap();
    let report = verify(&root, None, &PackageLimits::default()).unwrap();
    assert!(!report.is_clean());
    let s = &report.skills[0];
    assert_eq!(s.status, Status::Modified);
    assert_eq!(
        s.diff.modified,
        vec!["references/guide.md", "scripts/run.sh"]
    );
    assert_eq!(s.diff.added, vec!["extra.md"]);
    assert_eq!(s.diff.missing, vec![".hidden/config"]);
    std::fs::remove_dir_all(&skill).unwrap();
    let report = verify(&root, None, &PackageLimits::default()).unwrap();
    assert_eq!(report.skills[0].status, Status::Missing);
}

#[test]
fn a_skill_with_local_edits_is_not_replaced_without_force() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, _) = root_with_demo(tmp.path());
    std::fs::write(
        root.join("demo/SKILL.md"),
        "---\nname: demo\ndescription: Mine. Use when editing.\n---\n",
    )
    .unwrap();
    let v2 = demo(&tmp.path().join("v2"), "# Demo v2\n");
    let err = install(
        &root,
        &[Source::Folder(v2.clone())],
        &InstallOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err.diagnostics()[0].code, Code::InstallLocalEdits, "{err}");
    assert!(
        std::fs::read_to_string(root.join("demo/SKILL.md"))
            .unwrap()
            .contains("Mine")
    );
    let forced = InstallOptions {
        force: true,
        ..InstallOptions::default()
    };
    install(&root, &[Source::Folder(v2)], &forced).unwrap();
    assert!(
        std::fs::read_to_string(root.join("demo/SKILL.md"))
            .unwrap()
            .contains("v2")
    );
    assert!(
        verify(&root, None, &PackageLimits::default())
            .unwrap()
            .is_clean()
    );
}

#[test]
fn a_frozen_install_fails_on_any_mismatch_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, pkg) = root_with_demo(tmp.path());
    let lock_before = std::fs::read(lock_path(&root)).unwrap();
    let v2 = demo(&tmp.path().join("v2"), "# Demo v2\n");
    let frozen = InstallOptions {
        frozen: true,
        ..InstallOptions::default()
    };
    let err = install(&root, &[Source::Folder(v2)], &frozen).unwrap_err();
    assert_eq!(err.diagnostics()[0].code, Code::LockMismatch, "{err}");
    assert_eq!(std::fs::read(lock_path(&root)).unwrap(), lock_before);
    assert!(
        std::fs::read_to_string(root.join("demo/SKILL.md"))
            .unwrap()
            .contains("v1")
    );
    // With no source: what the lock says, from its recorded source.
    std::fs::remove_dir_all(root.join("demo")).unwrap();
    let done = install(&root, &[], &frozen).unwrap();
    assert_eq!(done[0].name, "demo");
    assert!(
        verify(&root, None, &PackageLimits::default())
            .unwrap()
            .is_clean()
    );
    // A package whose bytes changed under the lock's feet is refused.
    let other = demo(&tmp.path().join("other"), "# Tampered\n");
    pack_to_file(&other, &pkg, &PackOptions::default()).unwrap();
    std::fs::remove_dir_all(root.join("demo")).unwrap();
    let err = install(&root, &[], &frozen).unwrap_err();
    assert_eq!(err.diagnostics()[0].code, Code::LockMismatch, "{err}");
    assert!(!root.join("demo").exists());
}

#[test]
fn recovery_records_a_swapped_skill_whose_lock_write_was_interrupted() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, _) = root_with_demo(tmp.path());
    // Simulate a crash after the swap: v2 in place, the journal there, the
    // lock still naming v1.
    let v2 = demo(&tmp.path().join("v2"), "# Demo v2\n");
    let lock_v1 = std::fs::read(lock_path(&root)).unwrap();
    install(&root, &[Source::Folder(v2)], &InstallOptions::default()).unwrap();
    let lock_v2 = Lockfile::load(&lock_path(&root)).unwrap().unwrap();
    let mut journal = Lockfile::new("skills");
    journal
        .skill
        .insert("demo".into(), lock_v2.skill["demo"].clone());
    journal
        .save(&root.join(".skilldeck-pending-demo.toml"))
        .unwrap();
    std::fs::write(lock_path(&root), &lock_v1).unwrap();
    std::fs::create_dir_all(root.join(".skilldeck-stage-1-0/demo")).unwrap();
    assert!(
        !verify(&root, None, &PackageLimits::default())
            .unwrap()
            .is_clean()
    );
    let completed = recover(&root, &InstallOptions::default()).unwrap();
    assert_eq!(completed, vec!["demo"]);
    assert!(
        verify(&root, None, &PackageLimits::default())
            .unwrap()
            .is_clean()
    );
    assert!(!root.join(".skilldeck-pending-demo.toml").exists());
    assert!(!root.join(".skilldeck-stage-1-0").exists());
}

#[test]
fn recovery_puts_back_an_old_skill_set_aside_when_the_new_one_is_not_in_place() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, _) = root_with_demo(tmp.path());
    std::fs::rename(root.join("demo"), root.join(".skilldeck-old-demo")).unwrap();
    recover(&root, &InstallOptions::default()).unwrap();
    assert!(
        verify(&root, None, &PackageLimits::default())
            .unwrap()
            .is_clean()
    );
}

#[test]
fn a_journal_killed_before_its_rename_is_removed_by_the_next_install() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, _) = root_with_demo(tmp.path());
    // A crash while the journal was written: only its temporary file
    // (`write_atomic`'s `.NAME.tmp-PID`); the swap had not started.
    let partial = root.join("..skilldeck-pending-demo.toml.tmp-4242");
    std::fs::write(&partial, "[skill.demo]\nsource = \"trunc").unwrap();
    let v2 = demo(&tmp.path().join("v2"), "# Demo v2\n");
    install(&root, &[Source::Folder(v2)], &InstallOptions::default()).unwrap();
    assert!(!partial.exists(), "the partial journal was left behind");
    let left: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".skilldeck-install.lock")
        .collect();
    assert_eq!(left, ["demo"]);
}

#[test]
fn a_git_archive_of_a_skill_installs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = demo(tmp.path(), "# Demo\n");
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(&dir)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    // `git archive` writes a pax global header with the commit id.
    if !(git(&["init", "-q"])
        && git(&["add", "-A"])
        && git(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "x",
        ]))
    {
        eprintln!("git unavailable: skipped");
        return;
    }
    let pkg = tmp.path().join("g.tar.gz");
    assert!(git(&[
        "archive",
        "--prefix=demo/",
        "-o",
        pkg.to_str().unwrap(),
        "HEAD"
    ]));
    let root = tmp.path().join("r/skills");
    let done = install(&root, &[Source::Package(pkg)], &InstallOptions::default()).unwrap();
    assert_eq!(done[0].name, "demo");
    let mut expected = folder_manifest(&dir, &PackageLimits::default()).unwrap();
    expected = skilldeck::SkillManifest::new(
        expected
            .files()
            .iter()
            .filter(|f| !f.path.starts_with(".git/"))
            .cloned()
            .collect(),
    );
    assert_eq!(done[0].fingerprint, expected.fingerprint());
}

#[test]
fn a_fetched_package_is_recorded_with_its_source_and_refused_on_another_fingerprint() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = demo(tmp.path(), "# Demo\n");
    let package = tmp.path().join("dl.tar.gz");
    let packed = pack_to_file(&dir, &package, &options(ArchiveFormat::TarGz)).unwrap();
    let root = tmp.path().join("proj/.agents/skills");
    let source = "registry+http://127.0.0.1:7878#acme/demo@1.0.0".to_owned();
    let wrong = Source::Fetched {
        package: package.clone(),
        source: source.clone(),
        fingerprint: skilldeck::Digest::from_bytes([0; 32]),
        signature: None,
        published: Vec::new(),
    };
    let e = install(&root, &[wrong], &InstallOptions::default()).unwrap_err();
    assert_eq!(e.diagnostics()[0].code, Code::LockMismatch, "{e}");
    assert!(!root.join("demo").exists(), "nothing installed");
    let right = Source::Fetched {
        package,
        source: source.clone(),
        fingerprint: packed.fingerprint(),
        signature: None,
        published: Vec::new(),
    };
    install(&root, &[right], &InstallOptions::default()).unwrap();
    let lock = Lockfile::load(&lock_path(&root)).unwrap().unwrap();
    assert_eq!(lock.skill["demo"].source, source);
    assert_eq!(lock.skill["demo"].fingerprint, packed.fingerprint());
    let report = verify(&root, None, &PackageLimits::default()).unwrap();
    assert_eq!(report.skills[0].status, Status::Ok);
}

#[test]
fn a_link_to_a_file_inside_the_skill_is_packed_as_that_files_content_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = demo(tmp.path(), "# Demo\n");
    std::os::unix::fs::symlink("guide.md", dir.join("references/alias.md")).unwrap();
    std::os::unix::fs::symlink("../references/guide.md", dir.join("scripts/guide.md")).unwrap();
    let packed = pack(&dir, &PackOptions::default()).unwrap();
    let linked: Vec<_> = packed
        .warnings
        .iter()
        .filter(|d| d.code == Code::PackageLink)
        .map(|d| d.message.clone())
        .collect();
    assert_eq!(linked.len(), 2, "{linked:?}");
    assert!(linked[0].contains("references/guide.md"), "{linked:?}");
    let digest = |path: &str| {
        packed
            .manifest
            .files()
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.sha256)
            .unwrap_or_else(|| panic!("{path} not packed"))
    };
    assert_eq!(digest("references/alias.md"), digest("references/guide.md"));
    assert_eq!(digest("scripts/guide.md"), digest("references/guide.md"));
    // The folder's fingerprint is the package's (one rule for both).
    let folder =
        skilldeck_package::folder_manifest(&dir, &skilldeck_package::PackageLimits::default())
            .unwrap();
    assert_eq!(folder.fingerprint(), packed.fingerprint());
    // Installed from the folder: a regular file with the content.
    let root = tmp.path().join("r/skills");
    install(
        &root,
        &[Source::Folder(dir.clone())],
        &InstallOptions::default(),
    )
    .unwrap();
    let alias = root.join("demo/references/alias.md");
    assert!(
        !std::fs::symlink_metadata(&alias)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(alias).unwrap(), "# Guide\n");
}

#[test]
fn a_link_leaving_the_skill_dangling_or_to_a_folder_is_refused_with_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("outside.md"), "secret\n").unwrap();
    for (name, target, says, help) in [
        (
            "out.md",
            "../../outside.md",
            "outside the skill",
            "cp --remove-destination",
        ),
        (
            "abs.md",
            "/etc/passwd",
            "outside the skill",
            "cp --remove-destination",
        ),
        ("gone.md", "nowhere.md", "does not exist", "remove the link"),
        ("dir.md", "references", "not a regular file", "copy"),
    ] {
        let dir = demo(&tmp.path().join(name), "# Demo\n");
        std::os::unix::fs::symlink(target, dir.join(name)).unwrap();
        let err = pack(&dir, &PackOptions::default()).unwrap_err();
        let d = &err.diagnostics()[0];
        assert_eq!(d.code, Code::PackageLink, "{name}: {err}");
        assert!(d.message.contains(says), "{name}: {}", d.message);
        assert!(d.message.contains(name), "{name}: {}", d.message);
        let h = d.help.as_deref().unwrap_or_default();
        assert!(h.contains(help), "{name}: {h}");
    }
}
