//! `skilldeck pack --sign`, `install` and `verify` with signatures, as a
//! user runs them next to the real `ssh-keygen`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use skilldeck_testkit::ssh;

fn skilldeck(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skilldeck"))
        .args(args)
        .current_dir(cwd)
        .env_remove("SKILLDECK_ALLOWED_SIGNERS")
        .env_remove("SKILLDECK_SIGNING_KEY_PASSPHRASE")
        .output()
        .unwrap()
}

fn demo(base: &Path, body: &str) -> PathBuf {
    skilldeck_testkit::skill(base.join(format!("src-{}", body.len())), "demo")
        .description("Demo skill. Use when testing signatures.")
        .body(body)
        .file("scripts/run.sh", "#!/bin/sh\necho hi\n")
        .write()
}

fn text(out: &Output) -> String {
    ssh::text(out)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `skilldeck pack` of `demo` with `body` into `demo.tar.gz`, signed with
/// `key` when given; its fingerprint.
fn pack(cwd: &Path, body: &str, key: Option<&str>) -> String {
    let dir = demo(cwd, body);
    let mut args = vec!["pack", dir.to_str().unwrap(), "-o", "demo.tar.gz"];
    if let Some(key) = key {
        args.extend(["--sign", key]);
    }
    let out = skilldeck(cwd, &args);
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn pack_sign_writes_a_signature_that_ssh_keygen_verify_accepts() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, alice) = ssh::keypair(tmp.path(), "alice", "ed25519", "");
    let fp = pack(tmp.path(), "# v1\n", Some("alice"));
    assert!(fp.starts_with("sha256:"), "{fp}");
    let sig = tmp.path().join("demo.tar.gz.sig");
    assert!(
        std::fs::read_to_string(&sig)
            .unwrap()
            .starts_with("-----BEGIN SSH SIGNATURE-----\n")
    );
    std::fs::write(
        tmp.path().join("allowed_signers"),
        format!("alice@example.com namespaces=\"skilldeck\" {alice}\n"),
    )
    .unwrap();
    let out = ssh::verify(
        &tmp.path().join("allowed_signers"),
        "alice@example.com",
        "skilldeck",
        &sig,
        fp.as_bytes(),
    );
    assert!(out.status.success(), "{}", text(&out));
    let out = skilldeck(
        tmp.path(),
        &[
            "install",
            "demo.tar.gz",
            "--allowed-signers",
            "allowed_signers",
            "--require-signature",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("signed by SHA256:"),
        "{}",
        text(&out)
    );
    let lock = std::fs::read_to_string(tmp.path().join(".agents/skilldeck.lock")).unwrap();
    assert!(lock.contains("signer = \"SHA256:"), "{lock}");
}

#[test]
fn a_signature_made_by_ssh_keygen_from_packs_output_installs() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, alice) = ssh::keypair(tmp.path(), "alice", "ed25519", "");
    let fp = pack(tmp.path(), "# v1\n", None);
    // As a user with a key skilldeck cannot read (a security key):
    // `skilldeck pack ... | ssh-keygen -Y sign -n skilldeck`, line and all.
    let sig = ssh::sign(&key, "skilldeck", format!("{fp}\n").as_bytes());
    std::fs::write(tmp.path().join("demo.tar.gz.sig"), sig).unwrap();
    std::fs::write(
        tmp.path().join("allowed_signers"),
        format!("alice {alice}\n"),
    )
    .unwrap();
    let out = skilldeck(
        tmp.path(),
        &[
            "install",
            "demo.tar.gz",
            "--allowed-signers",
            "allowed_signers",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn install_refuses_a_package_changed_after_signing_with_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    ssh::keypair(tmp.path(), "alice", "ed25519", "");
    pack(tmp.path(), "# v1\n", Some("alice"));
    // Another package copied over the signed one; the signature stays.
    let other = demo(tmp.path(), "# v1 and a payload\n");
    let out = skilldeck(
        tmp.path(),
        &["pack", other.to_str().unwrap(), "-o", "other.tar.gz"],
    );
    assert!(out.status.success(), "{}", text(&out));
    std::fs::rename(
        tmp.path().join("other.tar.gz"),
        tmp.path().join("demo.tar.gz"),
    )
    .unwrap();
    let out = skilldeck(tmp.path(), &["install", "demo.tar.gz"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains("error[signature-invalid]") && err.contains("= help:"),
        "{err}"
    );
    assert!(!tmp.path().join(".agents/skills/demo").exists());
}

#[test]
fn install_with_allowed_signers_refuses_an_unknown_signer_and_says_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, alice) = ssh::keypair(tmp.path(), "alice", "ed25519", "");
    ssh::keypair(tmp.path(), "mallory", "ed25519", "");
    pack(tmp.path(), "# v1\n", Some("mallory"));
    std::fs::write(
        tmp.path().join("allowed_signers"),
        format!("alice {alice}\n"),
    )
    .unwrap();
    let out = skilldeck(
        tmp.path(),
        &[
            "install",
            "demo.tar.gz",
            "--allowed-signers",
            "allowed_signers",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains("error[signature-unknown-signer]")
            && err.contains("not in the allowed signers")
            && err.contains("add it to the allowed-signers file"),
        "{err}"
    );
    assert!(!tmp.path().join(".agents/skills/demo").exists());
}

#[test]
fn install_require_signature_refuses_an_unsigned_package() {
    let tmp = tempfile::tempdir().unwrap();
    pack(tmp.path(), "# v1\n", None);
    let out = skilldeck(
        tmp.path(),
        &["install", "demo.tar.gz", "--require-signature"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains("error[signature-missing]") && err.contains("demo.tar.gz.sig"),
        "{err}"
    );
    assert!(!tmp.path().join(".agents/skills/demo").exists());
}

#[test]
fn install_frozen_and_verify_refuse_a_signer_change_until_it_is_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    ssh::keypair(tmp.path(), "alice", "ed25519", "");
    ssh::keypair(tmp.path(), "bob", "ed25519", "");
    pack(tmp.path(), "# v1\n", Some("alice"));
    let out = skilldeck(tmp.path(), &["install", "demo.tar.gz"]);
    assert!(out.status.success(), "{}", text(&out));
    // The same content, now signed by bob.
    pack(tmp.path(), "# v1\n", Some("bob"));
    let out = skilldeck(tmp.path(), &["verify"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("signer-changed demo"),
        "{}",
        text(&out)
    );
    let out = skilldeck(tmp.path(), &["install", "--frozen"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).contains("error[signature-signer-changed]")
            && stderr(&out).contains("--allow-signer-change"),
        "{}",
        text(&out)
    );
    let out = skilldeck(tmp.path(), &["verify", "--allow-signer-change"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = skilldeck(
        tmp.path(),
        &["install", "--frozen", "--allow-signer-change"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // A frozen install does not move the pin; a plain one with the flag
    // does, and verify is clean again.
    let out = skilldeck(tmp.path(), &["verify"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let out = skilldeck(
        tmp.path(),
        &["install", "demo.tar.gz", "--allow-signer-change"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let out = skilldeck(tmp.path(), &["verify", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["skills"][0]["signature"]["state"], "verified");
}

#[test]
fn pack_without_sign_removes_the_signature_of_an_earlier_package() {
    let tmp = tempfile::tempdir().unwrap();
    ssh::keypair(tmp.path(), "alice", "ed25519", "");
    pack(tmp.path(), "# v1\n", Some("alice"));
    let sig = tmp.path().join("demo.tar.gz.sig");
    // The same content again: the signature still signs it and stays.
    pack(tmp.path(), "# v1\n", None);
    assert!(sig.exists());
    // New content: the old signature would be refused, so it goes.
    pack(tmp.path(), "# v2\n", None);
    assert!(!sig.exists());
    let out = skilldeck(tmp.path(), &["install", "demo.tar.gz"]);
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn an_allowed_signers_error_names_its_line_and_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, alice) = ssh::keypair(tmp.path(), "alice", "ed25519", "");
    pack(tmp.path(), "# v1\n", None);
    std::fs::write(
        tmp.path().join("allowed_signers"),
        format!("# keys\nalice cert-authority {alice}\n"),
    )
    .unwrap();
    let out = skilldeck(
        tmp.path(),
        &[
            "install",
            "demo.tar.gz",
            "--allowed-signers",
            "allowed_signers",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains("allowed_signers:2: cert-authority is not supported"),
        "{err}"
    );
}

#[test]
fn pack_sign_with_an_encrypted_key_says_how_to_give_the_passphrase() {
    let tmp = tempfile::tempdir().unwrap();
    ssh::keypair(tmp.path(), "locked", "ed25519", "s3cret pass");
    let dir = demo(tmp.path(), "# v1\n");
    let args = [
        "pack",
        dir.to_str().unwrap(),
        "-o",
        "demo.tar.gz",
        "--sign",
        "locked",
    ];
    let out = skilldeck(tmp.path(), &args);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("SKILLDECK_SIGNING_KEY_PASSPHRASE"),
        "{}",
        text(&out)
    );
    // Nothing was written.
    assert!(!tmp.path().join("demo.tar.gz").exists());
    let out = Command::new(env!("CARGO_BIN_EXE_skilldeck"))
        .args(args)
        .current_dir(tmp.path())
        .env("SKILLDECK_SIGNING_KEY_PASSPHRASE", "s3cret pass")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(tmp.path().join("demo.tar.gz.sig").exists());
}
