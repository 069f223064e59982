//! The host layer's rules: what is served, the unknown-skill error with its
//! reason, the already-active notice per session (and once under
//! concurrency), tool specs and argument errors, the manifest's digest
//! cache, the conversation store and the config's cache options.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use serde_json::{Map, Value, json};
use skilldeck::{DiscoveryOptions, SkillMode};
use skilldeck_host::tools::{self, activate_skill, read_skill_resource, search_skills};
use skilldeck_host::{
    Activated, ActivationLog, ContentCacheOptions, ConversationStore, FileContent, Host,
    HostOptions, Seen, ToolErrorKind, ToolOutput, sha256_digest,
};

fn skill(root: &Path, name: &str, extra: &str, body: &str) {
    skilldeck_testkit::skill(root, name)
        .description(format!("Does {name} things."))
        .frontmatter_raw(extra)
        .body(format!("{body}\n"))
        .write();
}

/// `pdf` (a reference and a binary file), `manual` (mode manual by
/// frontmatter flag), `old` (turned off by options).
fn fixture() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    skill(root, "pdf", "", "# PDF\nSee references/FORMS.md.");
    skilldeck_testkit::file(root.join("pdf/references/FORMS.md"), "# Forms\n");
    std::fs::write(root.join("pdf/logo.bin"), [0u8, 159, 146, 150]).unwrap();
    skill(
        root,
        "manual",
        "disable-model-invocation: true\n",
        "Manual.",
    );
    skill(root, "old", "", "Old.");
    tmp
}

fn options(root: &Path) -> HostOptions {
    let mut options = HostOptions::new(DiscoveryOptions::with_roots([root.to_path_buf()]));
    options
        .discovery
        .modes
        .insert("old".to_owned(), SkillMode::Off);
    options
}

fn host(root: &Path) -> Host {
    Host::new(options(root)).unwrap()
}

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

#[test]
fn served_means_mode_not_off() {
    let tmp = fixture();
    let host = host(tmp.path());
    let snap = host.snapshot();
    assert!(snap.get("pdf").is_some());
    assert!(snap.get("manual").is_some());
    assert!(snap.get("old").is_none());
    assert!(snap.deck.get("old").is_some());
    assert!(!snap.served().any(|s| s.name == "old"));
    assert_eq!(snap.model_names, ["pdf"]);
    let err = snap.require("old").unwrap_err();
    assert!(matches!(err, skilldeck::Error::SkillOff(_)), "{err}");
    assert!(err.to_string().contains("turned off"));
}

#[test]
fn an_unknown_skill_says_why_or_suggests_a_served_name() {
    let tmp = fixture();
    skilldeck_testkit::skill(tmp.path(), "broken")
        .description("[unclosed")
        .body("body\n")
        .write();
    let host = host(tmp.path());
    let snap = host.snapshot();
    let typo = snap.require("pfd").unwrap_err().to_string();
    assert_eq!(typo, "unknown skill 'pfd'; did you mean 'pdf'?");
    let skipped = snap.require("broken").unwrap_err().to_string();
    assert!(
        skipped.starts_with("skill 'broken' is not available: "),
        "{skipped}"
    );
    assert!(skipped.contains("SKILL.md:3"), "{skipped}");
    let tool = host
        .call_tool(
            &snap,
            "s",
            activate_skill::NAME,
            &args(json!({"name": "pfd"})),
        )
        .unwrap_err();
    assert_eq!(tool.kind, ToolErrorKind::UnknownSkill);
    assert_eq!(tool.message, typo);
}

#[test]
fn the_already_active_notice_is_per_session() {
    let tmp = fixture();
    let host = host(tmp.path());
    let snap = host.snapshot();
    let first = host.activate(&snap, "a", "pdf", "", false).unwrap();
    assert!(matches!(&first, Activated::Content(t) if t.contains("# PDF")));
    let again = host.activate(&snap, "a", "pdf", "", false).unwrap();
    assert!(matches!(&again, Activated::AlreadyActive(t) if t.contains("already active")));
    let other = host.activate(&snap, "b", "pdf", "", false).unwrap();
    assert!(matches!(other, Activated::Content(_)));
    assert_eq!(host.skill_files_changed("pdf"), 2);
    assert!(matches!(
        host.activate(&snap, "a", "pdf", "", false).unwrap(),
        Activated::Content(_)
    ));
}

/// `activate_skill` through the host's one tool entry (the path of MCP,
/// Python and LangChain).
fn activate_tool(host: &Host, session: &str, args: Value) -> String {
    let Value::Object(args) = args else {
        panic!("arguments are an object")
    };
    host.call_tool(&host.snapshot(), session, activate_skill::NAME, &args)
        .unwrap()
        .text()
        .to_string()
}

#[test]
fn the_same_skill_with_other_arguments_is_delivered_again() {
    let tmp = tempfile::tempdir().unwrap();
    skill(tmp.path(), "greet", "", "Greet $ARGUMENTS warmly.");
    let host = host(tmp.path());
    let ada = activate_tool(&host, "c", json!({"name": "greet", "arguments": "Ada"}));
    assert!(ada.contains("Greet Ada warmly."), "{ada}");
    // Other arguments: other content, delivered (not "already active").
    let bob = activate_tool(&host, "c", json!({"name": "greet", "arguments": "Bob"}));
    assert!(bob.contains("Greet Bob warmly."), "{bob}");
    // The same arguments as the last delivery: the short notice.
    let again = activate_tool(&host, "c", json!({"name": "greet", "arguments": " Bob "}));
    assert!(again.contains("already active"), "{again}");
    assert!(!again.contains("Greet"), "{again}");
    // Back to the first arguments: delivered again (only the last is kept).
    let ada = activate_tool(&host, "c", json!({"name": "greet", "arguments": "Ada"}));
    assert!(ada.contains("Greet Ada warmly."), "{ada}");
}

#[test]
fn reload_delivers_the_instructions_again_after_compaction() {
    let tmp = fixture();
    let host = host(tmp.path());
    let first = activate_tool(&host, "c", json!({"name": "pdf"}));
    assert!(first.contains("# PDF"), "{first}");
    let notice = activate_tool(&host, "c", json!({"name": "pdf"}));
    assert!(
        notice.contains(r#""reload": true"#),
        "the notice says how: {notice}"
    );
    let reloaded = activate_tool(&host, "c", json!({"name": "pdf", "reload": true}));
    assert!(reloaded.contains("# PDF"), "{reloaded}");
    // Delivered and recorded: the same call without reload is a notice again.
    let notice = activate_tool(&host, "c", json!({"name": "pdf", "reload": false}));
    assert!(notice.contains("already active"), "{notice}");
    // `reload` must be a boolean, and the schema offers it.
    let Value::Object(bad) = json!({"name": "pdf", "reload": "yes"}) else {
        unreachable!()
    };
    let err = host
        .call_tool(&host.snapshot(), "c", activate_skill::NAME, &bad)
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::InvalidArguments);
    assert!(
        err.message.contains("`reload` must be true or false"),
        "{err}"
    );
    let spec = activate_skill::spec(&host.snapshot());
    assert_eq!(spec.input_schema["properties"]["reload"]["type"], "boolean");
}

#[test]
fn a_skill_withdrawn_by_a_reload_is_delivered_again_when_it_comes_back() {
    let tmp = fixture();
    skill(tmp.path(), "notes", "", "# Notes");
    let host = host(tmp.path());
    let first = activate_tool(&host, "c", json!({"name": "pdf"}));
    assert!(first.contains("# PDF"), "{first}");
    let notes = activate_tool(&host, "c", json!({"name": "notes"}));
    assert!(notes.contains("# Notes"), "{notes}");
    let skill_md = tmp.path().join("pdf/SKILL.md");
    let good = std::fs::read_to_string(&skill_md).unwrap();
    // Broken: the reload withdraws it (whoever asked for the reload: the
    // watcher with the file's path, or with none after losing events).
    std::fs::write(
        &skill_md,
        "---\nname: pdf\ndescription: [unclosed\n---\nBROKEN\n",
    )
    .unwrap();
    assert!(host.reload().unwrap().catalog_changed);
    assert!(host.snapshot().get("pdf").is_none());
    // Back as it was: the session was told it is gone, so it gets the
    // instructions again, not the already-active notice.
    std::fs::write(&skill_md, &good).unwrap();
    assert!(host.reload().unwrap().catalog_changed);
    let back = activate_tool(&host, "c", json!({"name": "pdf"}));
    assert!(back.contains("# PDF"), "{back}");
    // A skill both reloads kept stays active where it was.
    let notes = activate_tool(&host, "c", json!({"name": "notes"}));
    assert!(notes.contains("already active"), "{notes}");
}

#[test]
fn the_conversation_store_delivers_other_arguments_and_dedupes_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let store = ConversationStore::new(tmp.path().join("c"), Duration::from_secs(3600));
    let (ada, bob) = (
        skilldeck_host::content_key("Ada"),
        skilldeck_host::content_key("Bob"),
    );
    assert_ne!(ada, bob);
    // Each step: arguments, time, what the store answers.
    for (key, at, seen) in [
        (ada, 1_000, Seen::First),
        (ada, 1_001, Seen::Again),
        (bob, 1_002, Seen::First),
        (bob, 1_003, Seen::Again),
    ] {
        assert_eq!(
            store.record_at("c", "greet", key, at).unwrap(),
            seen,
            "at {at}"
        );
    }
    // A file written before content keys (a bare time) reads as the
    // activation without arguments.
    std::fs::write(store.path("old"), br#"{"greet": 1000}"#).unwrap();
    let none = skilldeck_host::content_key("");
    assert_eq!(
        store.record_at("old", "greet", none, 1_001).unwrap(),
        Seen::Again
    );
    assert_eq!(
        store.record_at("old", "greet", ada, 1_002).unwrap(),
        Seen::First
    );
}

#[test]
fn concurrent_activations_in_one_session_send_the_body_once() {
    let tmp = fixture();
    let host = Arc::new(host(tmp.path()));
    let snap = host.snapshot();
    let threads = 8;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (host, snap, barrier) =
                (Arc::clone(&host), Arc::clone(&snap), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                host.activate(&snap, "one", "pdf", "", false).unwrap()
            })
        })
        .collect();
    let bodies = handles
        .into_iter()
        .map(|h| h.join().unwrap())
        .filter(|a| matches!(a, Activated::Content(_)))
        .count();
    assert_eq!(bodies, 1);
}

#[test]
fn a_failed_activation_is_forgotten() {
    let tmp = fixture();
    let mut opts = options(tmp.path());
    opts.cache.activation.max_arguments_bytes = 4;
    let host = Host::new(opts).unwrap();
    let snap = host.snapshot();
    let err = host
        .activate(&snap, "s", "pdf", "too long", false)
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
    assert!(matches!(
        host.activate(&snap, "s", "pdf", "", false).unwrap(),
        Activated::Content(_)
    ));
}

#[test]
fn skills_the_model_may_not_invoke_are_refused_by_name() {
    let tmp = fixture();
    let host = host(tmp.path());
    let err = host
        .activate(&host.snapshot(), "s", "manual", "", false)
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::NotModelInvocable);
    assert!(err.message.contains("/manual"));
}

#[test]
fn tool_arguments_are_checked_with_the_documented_wording() {
    let tmp = fixture();
    let host = host(tmp.path());
    let snap = host.snapshot();
    let call = |tool: &str, a: Value| host.call_tool(&snap, "s", tool, &args(a)).unwrap_err();
    let cases = [
        (activate_skill::NAME, json!({}), "`name` is required"),
        (
            activate_skill::NAME,
            json!({"name": 7}),
            "`name` must be a string, not a number",
        ),
        (
            activate_skill::NAME,
            json!({"name": "pdf", "arguments": []}),
            "`arguments` must be a string, not an array",
        ),
        (
            read_skill_resource::NAME,
            json!({"name": "pdf"}),
            "`path` is required",
        ),
        (
            search_skills::NAME,
            json!({"query": "x", "limit": 0}),
            "`limit` must be a whole number from 1 to 100",
        ),
        (
            search_skills::NAME,
            json!({"query": "x", "limit": 1.5}),
            "`limit` must be a whole number from 1 to 100",
        ),
        (
            search_skills::NAME,
            json!({"query": "x", "limit": "3"}),
            "`limit` must be a number, not a string",
        ),
    ];
    for (tool, a, message) in cases {
        let err = call(tool, a);
        assert_eq!(err.kind, ToolErrorKind::InvalidArguments, "{message}");
        assert_eq!(err.message, message);
    }
    let unknown = call("nope", json!({}));
    assert_eq!(unknown.kind, ToolErrorKind::UnknownTool);
    assert_eq!(
        unknown.message,
        "unknown tool 'nope'; the tools are activate_skill, read_skill_resource and search_skills"
    );
}

#[test]
fn tool_arguments_outside_the_schema_are_refused_naming_the_accepted_ones() {
    let tmp = fixture();
    let host = host(tmp.path());
    let snap = host.snapshot();
    let cases = [
        (
            activate_skill::NAME,
            json!({"name": "pdf", "extra": 1}),
            "unknown argument `extra`; the accepted arguments are `name`, `arguments`, `reload`",
        ),
        (
            read_skill_resource::NAME,
            json!({"name": "pdf", "path": "SKILL.md", "mode": "rb"}),
            "unknown argument `mode`; the accepted arguments are `name`, `path`",
        ),
        (
            search_skills::NAME,
            json!({"query": "x", "limt": 3}),
            "unknown argument `limt`; the accepted arguments are `query`, `limit`",
        ),
    ];
    for (tool, a, message) in cases {
        let err = host.call_tool(&snap, "s", tool, &args(a)).unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::InvalidArguments, "{message}");
        assert_eq!(err.message, message);
    }
    // The schema's own arguments still pass.
    assert!(
        host.call_tool(
            &snap,
            "s",
            activate_skill::NAME,
            &args(json!({"name": "pdf", "arguments": "a"}))
        )
        .is_ok()
    );
}

#[test]
fn tool_outputs_are_typed_with_text_for_the_model() {
    let tmp = fixture();
    let host = host(tmp.path());
    let snap = host.snapshot();
    let out = host
        .call_tool(
            &snap,
            "s",
            read_skill_resource::NAME,
            &args(json!({"name": "pdf", "path": "logo.bin"})),
        )
        .unwrap();
    let ToolOutput::File(file) = &out else {
        panic!("{out:?}")
    };
    assert_eq!(file.content, FileContent::Binary(vec![0, 159, 146, 150]));
    assert_eq!(file.size, 4);
    assert_eq!(
        out.text(),
        "logo.bin is a binary file (4 bytes, application/octet-stream); its content is attached."
    );
    let refused = host
        .call_tool(
            &snap,
            "s",
            read_skill_resource::NAME,
            &args(json!({"name": "pdf", "path": "../manual/SKILL.md"})),
        )
        .unwrap_err();
    assert_eq!(refused.kind, ToolErrorKind::Failed);
    assert!(refused.message.contains("refused"));
    let found = host
        .call_tool(
            &snap,
            "s",
            search_skills::NAME,
            &args(json!({"query": "things"})),
        )
        .unwrap();
    let ToolOutput::Search(hits) = &found else {
        panic!("{found:?}")
    };
    assert!(
        hits.iter().all(|h| h.name != "old"),
        "off skills are not served"
    );
    assert!(
        hits.iter().all(|h| h.name != "manual" && h.model_invocable),
        "search_skills offers the model only skills it may use"
    );
    assert!(found.text().contains("- pdf: Does pdf things.\n"));
}

#[test]
fn no_tools_are_offered_when_nothing_is_served() {
    let tmp = tempfile::tempdir().unwrap();
    skill(tmp.path(), "old", "", "Old.");
    let host = host(tmp.path());
    let snap = host.snapshot();
    assert!(tools::specs(&snap).is_empty());
    let err = host
        .call_tool(
            &snap,
            "s",
            activate_skill::NAME,
            &args(json!({"name": "old"})),
        )
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::UnknownTool);
}

#[test]
fn the_name_enum_is_capped_by_the_option() {
    let tmp = fixture();
    let host = host(tmp.path());
    let specs = host.tool_specs(&host.snapshot());
    let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
    assert_eq!(names, tools::TOOL_NAMES);
    assert!(specs.iter().all(|s| s.read_only));
    assert_eq!(
        specs[0].input_schema["properties"]["name"]["enum"],
        json!(["pdf"])
    );
    let mut opts = options(tmp.path());
    opts.max_tool_name_enum = 0;
    let capped = Host::new(opts).unwrap();
    let specs = tools::specs(&capped.snapshot());
    let name = &specs[0].input_schema["properties"]["name"];
    assert!(name.get("enum").is_none());
    assert_eq!(name["type"], "string");
}

#[test]
fn the_digest_is_sha256_in_lowercase_hex() {
    assert_eq!(
        sha256_digest(b"abc"),
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn manifest_digests_are_cached_by_stamp_and_refreshed_after_an_edit() {
    let tmp = fixture();
    let host = host(tmp.path());
    let snap = host.snapshot();
    let pdf = snap.get("pdf").unwrap();
    let manifest = host.manifest();
    let first = manifest.file(pdf, "references/FORMS.md").unwrap();
    assert_eq!(first.digest.as_ref(), sha256_digest(b"# Forms\n"));
    assert_eq!(first.size, 8);
    assert_eq!(manifest.len(), 1);
    let again = manifest.file(pdf, "references/FORMS.md").unwrap();
    assert!(
        Arc::ptr_eq(&first.digest, &again.digest),
        "served from the cache"
    );
    std::fs::write(
        tmp.path().join("pdf/references/FORMS.md"),
        "# Forms, edited\n",
    )
    .unwrap();
    let edited = manifest.file(pdf, "references/FORMS.md").unwrap();
    assert_eq!(edited.digest.as_ref(), sha256_digest(b"# Forms, edited\n"));
    assert_eq!(edited.size, 16);
    assert!(manifest.file(pdf, "../manual/SKILL.md").is_err());
}

#[test]
fn the_conversation_store_round_trips_and_expires() {
    let tmp = tempfile::tempdir().unwrap();
    let ttl = Duration::from_secs(60);
    let store = ConversationStore::new(tmp.path().join("conversations"), ttl);
    assert!(!store.is_active_at("c", "pdf", 1_000));
    assert_eq!(store.record_at("c", "pdf", 0, 1_000).unwrap(), Seen::First);
    // Another store over the same folder (another process) sees it.
    let reopened = ConversationStore::new(tmp.path().join("conversations"), ttl);
    assert!(reopened.is_active_at("c", "pdf", 1_059));
    assert_eq!(
        reopened.record_at("c", "pdf", 0, 1_030).unwrap(),
        Seen::Again
    );
    assert!(!reopened.is_active_at("other", "pdf", 1_030));
    // Expired after the ttl.
    assert!(!reopened.is_active_at("c", "pdf", 1_060));
    assert_eq!(
        reopened.record_at("c", "pdf", 0, 1_060).unwrap(),
        Seen::First
    );
    assert!(reopened.forget_at("c", "pdf", 1_061).unwrap());
    assert!(!reopened.is_active_at("c", "pdf", 1_061));
    // A corrupt file is an empty conversation.
    std::fs::write(reopened.path("c"), "not json").unwrap();
    assert!(!reopened.is_active_at("c", "pdf", 1_061));
    let name = reopened.path("c");
    let file = name.file_name().unwrap().to_str().unwrap();
    assert_eq!(file.len(), "0123456789abcdef.json".len());
}

#[test]
fn the_tracker_and_the_store_share_one_activation_log_api() {
    fn twice(log: &mut impl ActivationLog) -> (Seen, Seen) {
        let first = log.record("c", "pdf", 0).unwrap();
        (first, log.record("c", "pdf", 0).unwrap())
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut store = ConversationStore::new(tmp.path(), Duration::from_secs(60));
    let mut tracker = skilldeck_host::ActivationTracker::default();
    assert_eq!(twice(&mut store), (Seen::First, Seen::Again));
    assert_eq!(twice(&mut tracker), (Seen::First, Seen::Again));
}

#[test]
fn content_cache_options_follow_the_config() {
    let config = skilldeck::Config::parse(
        "[cache]\ncapacity = 64\n",
        Path::new("/etc/proj/skilldeck.toml"),
    )
    .unwrap();
    assert_eq!(ContentCacheOptions::from_config(&config).capacity, 64);
}

#[test]
fn a_body_edit_keeps_the_snapshot_and_a_description_edit_swaps_it() {
    let tmp = fixture();
    let host = host(tmp.path());
    let before = host.snapshot();
    let path = tmp.path().join("pdf/SKILL.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}\nMore.\n")).unwrap();
    let r = host.reload().unwrap();
    assert!(!r.catalog_changed);
    assert!(Arc::ptr_eq(&before, &host.snapshot()));
    std::fs::write(&path, text.replace("Does pdf things.", "Does PDF work.")).unwrap();
    let r = host.reload().unwrap();
    assert!(r.catalog_changed);
    assert_eq!(r.generation, before.generation + 1);
    assert_eq!(host.snapshot().generation, r.generation);
}

#[test]
fn a_catalog_request_lists_only_served_skills_under_the_configured_catalog() {
    let tmp = fixture();
    let mut options = options(tmp.path());
    options.prompt_catalog.format = skilldeck::CatalogFormat::Markdown;
    let host = Host::new(options).unwrap();
    // The configured catalog as it is: markdown, served skills only.
    let plain = host
        .catalog(&skilldeck_host::CatalogRequest::default())
        .unwrap();
    assert_eq!(plain.format, skilldeck::CatalogFormat::Markdown);
    assert!(plain.text.contains("pdf"), "{}", plain.text);
    assert!(
        !plain.text.contains("old"),
        "a skill turned off is listed: {}",
        plain.text
    );
    assert_eq!(plain.explanation, None);
    // The request's format, query and budget; the explanation on demand.
    let request = skilldeck_host::CatalogRequest {
        format: Some(skilldeck::CatalogFormat::Json),
        budget: skilldeck::BudgetOverride {
            chars: Some(1),
            ..Default::default()
        },
        query: Some("pdf".to_owned()),
        unlisted_hint: Some("ask the librarian".to_owned()),
        explain: true,
        ..Default::default()
    };
    let fitted = host.catalog(&request).unwrap();
    assert_eq!(fitted.format, skilldeck::CatalogFormat::Json);
    assert_eq!(fitted.summary.listed(), 0, "{}", fitted.text);
    // `pdf` only: `old` is off, `manual` is not the model's to invoke.
    assert_eq!(fitted.summary.skills, 1, "served skills only");
    assert!(fitted.explanation.is_some());
    // Characters and tokens together: the core's one override rule refuses.
    let both = skilldeck_host::CatalogRequest {
        budget: skilldeck::BudgetOverride {
            chars: Some(100),
            tokens: Some(100),
            encoding: None,
        },
        ..Default::default()
    };
    assert!(host.catalog(&both).is_err());
}

#[test]
fn the_conversation_rule_is_the_same_over_the_file_store() {
    // The CLI (one process per call) keeps conversations in files; the
    // rule is the host's `deliver`, the same as the servers' tracker.
    let tmp = tempfile::tempdir().unwrap();
    let mut store = ConversationStore::new(tmp.path(), Duration::from_secs(3600));
    let deliver = |store: &mut ConversationStore, args: &str, reload: bool| {
        skilldeck_host::deliver(store, "c1", "pdf", args, reload, || {
            Ok::<_, ()>(format!("body {args}"))
        })
        .unwrap()
    };
    use skilldeck_host::Delivery;
    assert_eq!(
        deliver(&mut store, "a", false),
        Delivery::Content("body a".into())
    );
    assert!(matches!(
        deliver(&mut store, "a", false),
        Delivery::AlreadyActive(_)
    ));
    assert_eq!(
        deliver(&mut store, "b", false),
        Delivery::Content("body b".into())
    );
    assert_eq!(
        deliver(&mut store, "b", true),
        Delivery::Content("body b".into())
    );
    // A failed render is not recorded.
    let failed =
        skilldeck_host::deliver(
            &mut store,
            "c1",
            "other",
            "",
            false,
            || Err::<String, _>(()),
        );
    assert!(matches!(
        failed,
        Err(skilldeck_host::DeliveryError::Render(()))
    ));
    assert!(!store.is_active("c1", "other"));
}
