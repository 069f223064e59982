//! OCI artifacts as a user runs them, against a real registry (Debian's
//! `docker-registry`, the CNCF distribution server, on loopback:
//! `scripts/test-oci.sh` starts it and sets `SKILLDECK_TEST_OCI_REGISTRY`;
//! with `SKILLDECK_TEST_REQUIRE_OCI=1` a missing registry fails these tests
//! instead of skipping them): `push`, then `install` by tag and by digest
//! with the folder's fingerprint, `verify`, `install --frozen` at the locked
//! digest after the tag moved; and what a registry or publisher can do
//! wrong: a fingerprint annotation that lies, a layer changed in storage, a
//! manifest that is not a skill, a tag that does not exist.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use skilldeck::Digest;
use skilldeck_testkit::oci::{self, Registry};

use crate::common::{lock, lock_value, text};

/// Runs skilldeck in `cwd` with no registry credentials from the
/// environment or the user's Docker config.
fn skilldeck(cwd: &Path, args: &[&str]) -> Output {
    let docker = cwd.join(".no-docker-config");
    std::fs::create_dir_all(&docker).unwrap();
    Command::new(env!("CARGO_BIN_EXE_skilldeck"))
        .args(args)
        .current_dir(cwd)
        .env("DOCKER_CONFIG", &docker)
        .env_remove("SKILLDECK_OCI_TOKEN")
        .env_remove("SKILLDECK_OCI_USERNAME")
        .env_remove("SKILLDECK_OCI_PASSWORD")
        .env_remove("SKILLDECK_OCI_CREDENTIALS")
        .output()
        .unwrap()
}

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A skill folder `NAME` (version 1.0.0) whose content is unique to `salt`
/// (so its layer blob is not shared with another test's).
fn skill(base: &Path, name: &str, salt: &str) -> PathBuf {
    let dir = base.join("src").join(name);
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: The {name} skill. Use when testing OCI artifacts.\n\
             metadata:\n  version: 1.0.0\n---\n\n# {name}\n\n{salt}\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("scripts/run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            dir.join("scripts/run.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    dir
}

fn project(base: &Path, name: &str) -> PathBuf {
    let p = base.join(name);
    std::fs::create_dir_all(&p).unwrap();
    p
}

/// `pushed NAME VERSION FP to REF as DIGEST` → (FP, DIGEST).
fn pushed(stdout: &str) -> (String, String) {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("pushed "))
        .unwrap_or_else(|| panic!("no pushed line: {stdout}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    (words[3].to_owned(), words[words.len() - 1].to_owned())
}

/// A unique repository per test (tests share one registry).
fn repo(test: &str) -> String {
    format!("skilldeck-tests/{test}")
}

#[test]
fn push_then_install_by_tag_and_by_digest_gives_the_folder_fingerprint_and_frozen_pulls_the_locked_digest()
 {
    let Some(Registry { addr, .. }) = oci::registry("push_then_install") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = skill(tmp.path(), "pdf", "push-and-pull");
    let repo = repo("push-and-pull");
    let tagged = format!("oci://{addr}/{repo}:1.0.0");
    let out = ok(skilldeck(
        tmp.path(),
        &["push", &tagged, dir.to_str().unwrap()],
    ));
    let (fingerprint, digest) = pushed(&out);
    let canonical = format!("oci://{addr}/{repo}@{digest}");
    assert!(
        out.contains(&format!("skilldeck install {canonical}")),
        "{out}"
    );

    // The same skill installed from its folder: the same fingerprint.
    let folder = project(tmp.path(), "folder");
    ok(skilldeck(&folder, &["install", dir.to_str().unwrap()]));
    assert_eq!(lock_value(&folder, "fingerprint"), fingerprint);

    // By tag: recorded by the digest the tag named, with the tag it
    // follows.
    let by_tag = project(tmp.path(), "by-tag");
    let out = ok(skilldeck(&by_tag, &["install", &tagged]));
    let follows = format!("oci://{addr}/{repo}:1.0.0@{digest}");
    assert_eq!(
        out.trim(),
        format!("installed pdf 1.0.0 {fingerprint} from {follows}")
    );
    assert_eq!(lock_value(&by_tag, "source"), follows);
    assert_eq!(lock_value(&by_tag, "fingerprint"), fingerprint);
    let installed = by_tag.join(".agents/skills/pdf");
    assert!(installed.join("SKILL.md").is_file());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(installed.join("scripts/run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o111,
            0o111,
            "the executable bit survives the registry"
        );
    }
    let out = ok(skilldeck(&by_tag, &["verify"]));
    assert!(out.contains("ok") && out.contains("pdf"), "{out}");

    // By digest: the same.
    let by_digest = project(tmp.path(), "by-digest");
    let out = ok(skilldeck(&by_digest, &["install", &canonical]));
    assert_eq!(
        out.trim(),
        format!("installed pdf 1.0.0 {fingerprint} from {canonical}")
    );
    assert_eq!(lock_value(&by_digest, "source"), canonical);
    assert_eq!(
        lock(&by_digest),
        lock(&by_tag).replace(&follows, &canonical),
        "the same entry but for the followed tag"
    );

    // Pushing the same folder again gives the same manifest (deterministic).
    let again = ok(skilldeck(
        tmp.path(),
        &["push", &tagged, dir.to_str().unwrap()],
    ));
    assert_eq!(pushed(&again), (fingerprint.clone(), digest.clone()));

    // The tag moves to other content; a frozen install still pulls the
    // locked digest, with the locked fingerprint.
    std::fs::write(dir.join("references.md"), "moved on\n").unwrap();
    let moved = ok(skilldeck(
        tmp.path(),
        &["push", &tagged, dir.to_str().unwrap()],
    ));
    assert_ne!(pushed(&moved).1, digest);
    std::fs::remove_dir_all(&installed).unwrap();
    let out = ok(skilldeck(&by_tag, &["install", "--frozen"]));
    assert!(
        out.contains(&format!("pdf 1.0.0 {fingerprint} from {follows}")),
        "{out}"
    );
    assert!(!installed.join("references.md").exists());
    // Naming the tag under --frozen installs the lock's digest, not the tag's now.
    let out = ok(skilldeck(&by_tag, &["install", "--frozen", &tagged]));
    assert!(out.contains(&follows), "{out}");
    ok(skilldeck(&by_tag, &["verify"]));
    // Without --frozen the tag is resolved again: the new content.
    let out = ok(skilldeck(&by_tag, &["install", &tagged]));
    assert!(out.starts_with("replaced pdf"), "{out}");
    assert!(installed.join("references.md").is_file());
    assert_ne!(lock_value(&by_tag, "source"), follows);
    // And remove takes it out of the lock and the root.
    ok(skilldeck(&by_tag, &["remove", "pdf"]));
    assert!(!installed.exists());
}

#[test]
fn a_manifest_whose_fingerprint_annotation_lies_is_refused_naming_both_values() {
    let Some(Registry { addr, .. }) = oci::registry("annotation_lies") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = skill(tmp.path(), "pdf", "annotation-lies");
    let repo = repo("annotation-lies");
    let out = ok(skilldeck(
        tmp.path(),
        &[
            "push",
            &format!("oci://{addr}/{repo}:honest"),
            dir.to_str().unwrap(),
        ],
    ));
    let (fingerprint, digest) = pushed(&out);
    // The same manifest with another fingerprint, through the API.
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&oci::get_manifest(&addr, &repo, &digest)).unwrap();
    let lie = Digest::of(b"some other skill").to_string();
    manifest["annotations"]["dev.skilldeck.skill.fingerprint"] = lie.clone().into();
    let answer = oci::put_manifest(
        &addr,
        &repo,
        "lying",
        &serde_json::to_vec(&manifest).unwrap(),
    );
    assert_eq!(answer.status, 201, "{answer:?}");

    let target = project(tmp.path(), "target");
    let out = skilldeck(&target, &["install", &format!("oci://{addr}/{repo}:lying")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&fingerprint) && err.contains(&lie), "{err}");
    assert!(err.contains("dev.skilldeck.skill.fingerprint"), "{err}");
    assert!(!target.join(".agents/skilldeck.lock").exists());
    assert!(!target.join(".agents/skills/pdf").exists());

    // A lock whose fingerprint is not the artifact's: --frozen refuses.
    let honest = project(tmp.path(), "honest");
    ok(skilldeck(
        &honest,
        &["install", &format!("oci://{addr}/{repo}:honest")],
    ));
    let lockfile = honest.join(".agents/skilldeck.lock");
    let edited = lock(&honest).replace(&fingerprint, &lie);
    std::fs::write(&lockfile, edited).unwrap();
    std::fs::remove_dir_all(honest.join(".agents/skills/pdf")).unwrap();
    let out = skilldeck(&honest, &["install", "--frozen"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&fingerprint) && err.contains(&lie), "{err}");
    assert!(!honest.join(".agents/skills/pdf").exists());
}

#[test]
fn a_layer_changed_in_the_registry_storage_is_refused_by_its_digest() {
    let Some(Registry {
        addr,
        storage: Some(storage),
    }) = oci::registry("layer_changed")
    else {
        assert!(
            std::env::var(oci::REQUIRE_ENV).as_deref() != Ok("1")
                || std::env::var_os(oci::STORAGE_ENV).is_some(),
            "{} is required with {}=1",
            oci::STORAGE_ENV,
            oci::REQUIRE_ENV
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = skill(tmp.path(), "pdf", "layer-changed");
    let repo = repo("layer-changed");
    let tagged = format!("oci://{addr}/{repo}:1");
    ok(skilldeck(
        tmp.path(),
        &["push", &tagged, dir.to_str().unwrap()],
    ));
    let manifest: serde_json::Value =
        serde_json::from_slice(&oci::get_manifest(&addr, &repo, "1")).unwrap();
    let layer = manifest["layers"][0]["digest"].as_str().unwrap().to_owned();
    // One byte flipped where the registry keeps the blob.
    let path = oci::blob_path(&storage, &layer);
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();

    let target = project(tmp.path(), "target");
    let out = skilldeck(&target, &["install", &tagged]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&layer) && err.contains(&Digest::of(&bytes).to_string()),
        "{err}"
    );
    assert!(!target.join(".agents/skills/pdf").exists());
}

#[test]
fn a_manifest_that_is_not_a_skill_is_refused_saying_what_it_is() {
    let Some(Registry { addr, .. }) = oci::registry("not_a_skill") else {
        return;
    };
    let repo = repo("not-a-skill");
    let config = br#"{"architecture":"amd64","os":"linux"}"#;
    let config_digest = Digest::of(config).to_string();
    oci::put_blob(&addr, &repo, &config_digest, config);
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": oci::MANIFEST_MEDIA_TYPE,
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": config_digest,
            "size": config.len(),
        },
        "layers": [],
    });
    let answer = oci::put_manifest(
        &addr,
        &repo,
        "image",
        &serde_json::to_vec(&manifest).unwrap(),
    );
    assert_eq!(answer.status, 201, "{answer:?}");
    let tmp = tempfile::tempdir().unwrap();
    let out = skilldeck(
        tmp.path(),
        &["install", &format!("oci://{addr}/{repo}:image")],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a skill artifact")
            && err.contains("application/vnd.agentskills.skill.v1"),
        "{err}"
    );
}

#[test]
fn a_missing_tag_names_the_tags_there_are_and_how_to_push() {
    let Some(Registry { addr, .. }) = oci::registry("missing_tag") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = skill(tmp.path(), "pdf", "missing-tag");
    let repo = repo("missing-tag");
    ok(skilldeck(
        tmp.path(),
        &[
            "push",
            &format!("oci://{addr}/{repo}:1.0.0"),
            dir.to_str().unwrap(),
        ],
    ));
    let out = skilldeck(
        tmp.path(),
        &["install", &format!("oci://{addr}/{repo}:2.0.0")],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no tag '2.0.0'"), "{err}");
    assert!(err.contains("its tags: 1.0.0"), "{err}");
    assert!(err.contains("skilldeck push"), "{err}");
    // A repository that does not exist at all.
    let out = skilldeck(
        tmp.path(),
        &["install", &format!("oci://{addr}/nothing/here:1")],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no tag '1'") && err.contains("has no tags"),
        "{err}"
    );
}

#[test]
fn a_registry_not_on_this_machine_gets_https_and_an_unreachable_one_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    // Port 1 on loopback: nothing listens; http (loopback).
    let out = skilldeck(tmp.path(), &["install", "oci://127.0.0.1:1/acme/pdf:1"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot reach the registry at http://127.0.0.1:1") && err.contains("running"),
        "{err}"
    );
    // A name that never resolves (RFC 6761): https, and how to allow http.
    let out = skilldeck(
        tmp.path(),
        &["install", "oci://registry.invalid/acme/pdf:1"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("https://registry.invalid") && err.contains("--insecure-http"),
        "{err}"
    );
    // A bad reference is refused before any request.
    let out = skilldeck(
        tmp.path(),
        &["install", "oci://registry.invalid/Acme/pdf:1"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("repository 'Acme/pdf'"));
}

#[test]
fn a_tag_that_names_a_new_digest_is_outdated_and_update_pulls_it_but_a_pinned_digest_never_is() {
    let Some(Registry { addr, .. }) = oci::registry("a_tag_that_names_a_new_digest") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = skill(tmp.path(), "pdf", "tag-follows");
    let repo = repo("tag-follows");
    let tagged = format!("oci://{addr}/{repo}:1.0.0");
    let (old_fp, old_digest) = pushed(&ok(skilldeck(
        tmp.path(),
        &["push", &tagged, dir.to_str().unwrap()],
    )));
    let by_tag = project(tmp.path(), "by-tag");
    ok(skilldeck(&by_tag, &["install", &tagged]));
    let by_digest = project(tmp.path(), "by-digest");
    ok(skilldeck(
        &by_digest,
        &["install", &format!("oci://{addr}/{repo}@{old_digest}")],
    ));
    let o = ok(skilldeck(&by_tag, &["outdated"]));
    assert!(
        o.contains(&format!("pdf: up to date at {old_digest} (tag 1.0.0)")),
        "{o}"
    );

    // The tag now names other content.
    std::fs::write(dir.join("references.md"), "moved on\n").unwrap();
    let (new_fp, new_digest) = pushed(&ok(skilldeck(
        tmp.path(),
        &["push", &tagged, dir.to_str().unwrap()],
    )));
    assert_ne!(new_digest, old_digest);
    let o = skilldeck(&by_tag, &["outdated"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains(&format!("pdf: {old_digest} → {new_digest} (tag 1.0.0;")),
        "{}",
        text(&o)
    );
    let before = lock(&by_tag);
    let dry = ok(skilldeck(&by_tag, &["update", "--dry-run"]));
    assert!(dry.contains("would update pdf"), "{dry}");
    assert_eq!(lock(&by_tag), before);
    let u = ok(skilldeck(&by_tag, &["update"]));
    assert_eq!(
        u.trim(),
        format!(
            "updated pdf: tag 1.0.0 {old_digest} → {new_digest}, fingerprint {old_fp} → {new_fp}"
        )
    );
    assert_eq!(
        lock_value(&by_tag, "source"),
        format!("oci://{addr}/{repo}:1.0.0@{new_digest}")
    );
    assert_eq!(lock_value(&by_tag, "fingerprint"), new_fp);
    assert!(by_tag.join(".agents/skills/pdf/references.md").is_file());
    ok(skilldeck(&by_tag, &["outdated"]));
    ok(skilldeck(&by_tag, &["verify"]));

    // Installed by digest: a pin, never outdated, kept by update.
    let pinned = lock(&by_digest);
    let o = ok(skilldeck(&by_digest, &["outdated"]));
    assert!(
        o.contains("pdf: pinned at") && o.contains("0 outdated"),
        "{o}"
    );
    let u = ok(skilldeck(&by_digest, &["update"]));
    assert!(u.starts_with(&format!("pinned pdf at {old_digest}")), "{u}");
    assert_eq!(lock(&by_digest), pinned);
}
