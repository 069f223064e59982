//! `deps.not-on-index`: declared packages looked up on the index the
//! caller names, against a real wheel folder and a real HTTP index
//! (Python's `http.server` on loopback, started here, stopped on drop).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use skilldeck_audit::{
    AuditOptions, IndexCheck, IndexSources, PythonIndex, Severity, SkillAudit, Verdict, audit_skill,
};
use skilldeck_testkit::simple_index::IndexServer;

/// The smallest valid zip (an empty end-of-central-directory record): a
/// wheel's name is what the check reads.
const EMPTY_ZIP: [u8; 22] = [
    0x50, 0x4b, 0x05, 0x06, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
];

fn skill(root: &Path, file: &str, text: &str) -> std::path::PathBuf {
    let dir = root.join("skill");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: skill\ndescription: Formats dates. Use when asked to format a date.\n---\n\nRun the script.\n",
    )
    .unwrap();
    std::fs::write(dir.join(file), text).unwrap();
    dir
}

fn options(sources: IndexSources) -> AuditOptions {
    AuditOptions {
        index: Some(IndexCheck::new(sources)),
        ..AuditOptions::default()
    }
}

fn python(find_links: Vec<std::path::PathBuf>, simple: Option<String>) -> IndexSources {
    IndexSources {
        python: Some(PythonIndex { find_links, simple }),
        npm: None,
    }
}

fn codes(audit: &SkillAudit) -> Vec<(&str, Option<u32>)> {
    audit
        .findings
        .iter()
        .map(|f| (f.code.as_str(), f.line))
        .collect()
}

#[test]
fn a_requirement_the_wheel_folder_holds_is_not_a_finding_and_one_it_lacks_is() {
    let tmp = tempfile::tempdir().unwrap();
    let wheels = tmp.path().join("wheels");
    std::fs::create_dir(&wheels).unwrap();
    std::fs::write(wheels.join("my_tool-1.0-py3-none-any.whl"), EMPTY_ZIP).unwrap();
    std::fs::write(wheels.join("other_pkg-2.0.tar.gz"), b"").unwrap();
    // A file named like the missing package but not a distribution.
    std::fs::write(wheels.join("internal-helper.txt"), b"").unwrap();
    let dir = skill(
        tmp.path(),
        "requirements.txt",
        "My.Tool>=1\nother-pkg\ninternal-helper==1.0\n",
    );
    let audit = audit_skill(&dir, &options(python(vec![wheels.clone()], None))).unwrap();
    assert_eq!(
        codes(&audit),
        [("deps.not-on-index", Some(3))],
        "{audit:#?}"
    );
    let f = &audit.findings[0];
    assert_eq!(f.severity, Severity::High);
    assert!(f.message.contains("'internal-helper'"), "{}", f.message);
    assert!(
        f.help.as_deref().unwrap().contains("register"),
        "the help explains the risk: {:?}",
        f.help
    );
    assert_eq!(audit.verdict, Verdict::High);

    // Without an index the audit looks nothing up.
    let offline = audit_skill(&dir, &AuditOptions::default()).unwrap();
    assert_eq!(codes(&offline), []);
}

#[test]
fn an_unreadable_wheel_folder_is_a_failed_lookup_not_a_missing_package() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = skill(tmp.path(), "requirements.txt", "my-tool\n");
    let audit = audit_skill(
        &dir,
        &options(python(vec![tmp.path().join("no-such-folder")], None)),
    )
    .unwrap();
    assert_eq!(codes(&audit), [("deps.index-lookup-failed", Some(1))]);
    assert_ne!(audit.verdict, Verdict::Clean);
}

#[test]
fn a_requirement_the_simple_index_has_is_not_a_finding_and_one_it_lacks_is() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("index");
    std::fs::create_dir(&root).unwrap();
    let server = IndexServer::start(&root);
    server.add_project("requests");
    server.add_project("python-dateutil");
    let dir = skill(
        tmp.path(),
        "requirements.txt",
        "requests>=2\nPython_Dateutil\nacme-internal-tool\n",
    );
    let check = IndexCheck::new(python(vec![], Some(format!("{}/", server.url))));
    let options = AuditOptions {
        index: Some(check),
        ..AuditOptions::default()
    };
    let audit = audit_skill(&dir, &options).unwrap();
    assert_eq!(
        codes(&audit),
        [("deps.not-on-index", Some(3))],
        "{audit:#?}"
    );
    assert!(audit.findings[0].message.contains(&server.url));

    // One request per distinct name per run: the answer is kept, so a
    // project removed from the index meanwhile is still found in this run.
    std::fs::remove_dir_all(root.join("requests")).unwrap();
    let again = audit_skill(&dir, &options).unwrap();
    assert_eq!(codes(&again), [("deps.not-on-index", Some(3))]);
}

#[test]
fn a_server_error_is_a_failed_lookup_never_not_on_the_index_nor_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("index");
    std::fs::create_dir(&root).unwrap();
    let server = IndexServer::start(&root);
    server.fail_project("flaky", 503);
    let dir = skill(tmp.path(), "requirements.txt", "flaky==1\n");
    let audit = audit_skill(&dir, &options(python(vec![], Some(server.url.clone())))).unwrap();
    assert_eq!(codes(&audit), [("deps.index-lookup-failed", Some(1))]);
    assert!(audit.findings[0].message.contains("503"), "{audit:#?}");
    assert_eq!(audit.verdict, Verdict::Medium);
}

#[test]
fn a_redirect_is_followed_on_the_index_host_only() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("index");
    std::fs::create_dir(&root).unwrap();
    let server = IndexServer::start(&root);
    server.add_project("requests");
    server.redirect_project("alias", &format!("{}/requests/", server.url));
    // Another origin (port 1: nothing listens). Followed, the lookup would
    // fail to connect; not followed, it says so.
    server.redirect_project("moved", "http://127.0.0.1:1/moved/");
    let dir = skill(tmp.path(), "requirements.txt", "alias\nmoved\n");
    let audit = audit_skill(&dir, &options(python(vec![], Some(server.url.clone())))).unwrap();
    assert_eq!(codes(&audit), [("deps.index-lookup-failed", Some(2))]);
    assert!(
        audit.findings[0].message.contains("another host"),
        "{audit:#?}"
    );
}

#[test]
fn a_wheel_folder_answers_before_the_index_is_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("index");
    std::fs::create_dir(&root).unwrap();
    let server = IndexServer::start(&root);
    // The index would fail for it; the folder already has it.
    server.fail_project("local-only", 500);
    let wheels = tmp.path().join("wheels");
    std::fs::create_dir(&wheels).unwrap();
    std::fs::write(wheels.join("local_only-0.1-py3-none-any.whl"), EMPTY_ZIP).unwrap();
    let dir = skill(tmp.path(), "requirements.txt", "local-only\nnowhere\n");
    let audit = audit_skill(
        &dir,
        &options(python(vec![wheels], Some(server.url.clone()))),
    )
    .unwrap();
    assert_eq!(codes(&audit), [("deps.not-on-index", Some(2))]);
    let message = &audit.findings[0].message;
    assert!(
        message.contains("wheel folder") && message.contains(&server.url),
        "{message}"
    );
}

#[test]
fn an_npm_dependency_the_registry_lacks_is_a_finding_and_a_spec_with_its_own_source_is_not_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("registry");
    std::fs::create_dir(&root).unwrap();
    let server = IndexServer::start(&root);
    server.add_npm_package("is-odd");
    server.add_npm_package("@acme/util");
    let dir = skill(
        tmp.path(),
        "package.json",
        "{\n  \"name\": \"x\",\n  \"dependencies\": {\n    \"is-odd\": \"^3.0.1\",\n    \
         \"@acme/util\": \"1.0.0\",\n    \"@acme/secret-tool\": \"1.0.0\",\n    \
         \"from-git\": \"github:someone/from-git\"\n  }\n}\n",
    );
    let audit = audit_skill(
        &dir,
        &options(IndexSources {
            python: None,
            npm: Some(server.url.clone()),
        }),
    )
    .unwrap();
    assert_eq!(
        codes(&audit),
        [
            ("deps.not-on-index", Some(6)),
            ("deps.source-override", Some(7))
        ],
        "{audit:#?}"
    );
    assert!(audit.findings[0].message.contains("'@acme/secret-tool'"));
}
