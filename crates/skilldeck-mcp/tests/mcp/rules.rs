//! The MCP server's rules, checked in-process on the engine and the face
//! functions (the transports are exercised end to end by
//! `scripts/test-mcp.sh` with the official Python SDK and MCP Inspector).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use rmcp::model::{ErrorCode, JsonObject, SkillResources};
use serde_json::{Value, json};
use skilldeck::DiscoveryOptions;
use skilldeck_mcp::Activated;
use skilldeck_mcp::{Engine, ServeOptions, extension, prompts, resources, tools};
use skilldeck_source::Target;

/// A root with four skills: `pdf` (a reference, a binary asset, an empty
/// folder), `manual-only` (disable-model-invocation), `hidden`
/// (user-invocable: false) and `greet` (argument-hint, $ARGUMENTS).
fn fixture() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    skilldeck_testkit::skill(root, "pdf")
        .description("Does pdf things.")
        .field("license", "MIT")
        .frontmatter_raw("metadata:\n  version: \"1.0\"\n  count: 3\n")
        .body("# PDF\nSee references/FORMS.md.\n")
        .file("references/FORMS.md", "# Forms\n")
        .file("assets/logo.bin", [0u8, 159, 146, 150])
        .dir("empty")
        .write();
    skilldeck_testkit::skill(root, "manual-only")
        .description("Does manual-only things.")
        .field("disable-model-invocation", "true")
        .body("Manual.\n")
        .write();
    skilldeck_testkit::skill(root, "hidden")
        .description("Does hidden things.")
        .field("user-invocable", "false")
        .body("Hidden from the user.\n")
        .write();
    skilldeck_testkit::skill(root, "greet")
        .description("Does greet things.")
        .field("argument-hint", "\"[who]\"")
        .body("Hello, $ARGUMENTS!\n")
        .write();
    tmp
}

fn options(root: &Path) -> ServeOptions {
    let mut options = ServeOptions::new(DiscoveryOptions::with_roots([root.to_path_buf()]));
    options.reload = None;
    options
}

fn engine(root: &Path) -> Arc<Engine> {
    Arc::new(Engine::new(options(root)).unwrap())
}

fn args(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

fn text_of(result: &rmcp::model::CallToolResult) -> String {
    result.content[0].as_text().unwrap().text.clone()
}

#[test]
fn a_second_activation_in_one_session_returns_the_short_notice() {
    let tmp = fixture();
    let engine = engine(tmp.path());
    let snap = engine.snapshot();
    let first = tools::activate(&engine, &snap, "s1", &args(json!({"name": "pdf"})));
    assert_eq!(first.is_error, Some(false));
    assert!(text_of(&first).starts_with("<skill_content name=\"pdf\">"));
    let again = tools::activate(&engine, &snap, "s1", &args(json!({"name": "pdf"})));
    assert!(
        text_of(&again).contains("already active"),
        "{}",
        text_of(&again)
    );
    // Another session gets the body.
    let other = tools::activate(&engine, &snap, "s2", &args(json!({"name": "pdf"})));
    assert!(text_of(&other).contains("# PDF"));
}

#[test]
fn arguments_are_substituted_on_activation() {
    let tmp = fixture();
    let engine = engine(tmp.path());
    let snap = engine.snapshot();
    let r = tools::activate(
        &engine,
        &snap,
        "s",
        &args(json!({"name": "greet", "arguments": "Ada"})),
    );
    assert!(text_of(&r).contains("Hello, Ada!"), "{}", text_of(&r));
}

#[test]
fn skills_the_model_may_not_invoke_are_tool_errors_and_not_in_the_enum() {
    let tmp = fixture();
    let engine = engine(tmp.path());
    let snap = engine.snapshot();
    let r = tools::activate(&engine, &snap, "s", &args(json!({"name": "manual-only"})));
    assert_eq!(r.is_error, Some(true));
    assert!(text_of(&r).contains("/manual-only"));
    let defs = tools::definitions(&snap);
    let schema = serde_json::to_value(&*defs[0].input_schema).unwrap();
    let names = schema["properties"]["name"]["enum"].as_array().unwrap();
    assert!(names.iter().all(|n| n != "manual-only"));
    assert!(names.iter().any(|n| n == "pdf"));
}

#[test]
fn the_name_enum_gives_way_to_a_string_past_its_limit() {
    let tmp = fixture();
    let mut opts = options(tmp.path());
    opts.max_tool_name_enum = 2;
    let engine = Engine::new(opts).unwrap();
    let snap = engine.snapshot();
    let defs = tools::definitions(&snap);
    let schema = serde_json::to_value(&*defs[0].input_schema).unwrap();
    assert!(schema["properties"]["name"].get("enum").is_none());
    assert_eq!(schema["properties"]["name"]["type"], "string");
}

#[test]
fn the_activate_tool_description_carries_the_catalog() {
    let tmp = fixture();
    let engine = engine(tmp.path());
    let snap = engine.snapshot();
    let defs = tools::definitions(&snap);
    let description = defs[0].description.as_deref().unwrap();
    assert!(description.contains("<available_skills>"));
    assert!(description.contains("Does pdf things."));
    assert!(!description.contains("Does manual-only things."));
}

#[test]
fn no_skill_tools_are_offered_when_no_skill_is_loaded() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = engine(tmp.path());
    assert!(tools::definitions(&engine.snapshot()).is_empty());
}

#[test]
fn an_unknown_skill_is_a_tool_error_with_a_suggestion() {
    let tmp = fixture();
    let engine = engine(tmp.path());
    let snap = engine.snapshot();
    let r = tools::activate(&engine, &snap, "s", &args(json!({"name": "pfd"})));
    assert_eq!(r.is_error, Some(true));
    assert!(
        text_of(&r).contains("did you mean 'pdf'"),
        "{}",
        text_of(&r)
    );
    let r = tools::activate(&engine, &snap, "s", &args(json!({"name": 7})));
    assert_eq!(r.is_error, Some(true));
    assert!(text_of(&r).contains("must be a string"));
}

#[test]
fn a_resource_path_that_leaves_the_skill_is_a_tool_error() {
    let tmp = fixture();
    let engine = engine(tmp.path());
    let snap = engine.snapshot();
    for path in [
        "../../etc/passwd",
        "/etc/passwd",
        "references/../../x",
        "%2e%2e/x",
    ] {
        let r = tools::read(&engine, &snap, &args(json!({"name": "pdf", "path": path})));
        assert_eq!(r.is_error, Some(true), "{path}");
        assert!(text_of(&r).contains("refused"), "{path}: {}", text_of(&r));
    }
    let ok = tools::read(
        &engine,
        &snap,
        &args(json!({"name": "pdf", "path": "references/FORMS.md"})),
    );
    assert_eq!(text_of(&ok), "# Forms\n");
}

#[test]
fn search_finds_skills_and_bounds_its_limit() {
    let tmp = fixture();
    let engine = engine(tmp.path());
    let snap = engine.snapshot();
    let r = tools::search(&snap, &args(json!({"query": "pdf things", "limit": 1})));
    let hits = r.structured_content.as_ref().unwrap()["results"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["name"], "pdf");
    let bad = tools::search(&snap, &args(json!({"query": "x", "limit": 0})));
    assert_eq!(bad.is_error, Some(true));
}

#[test]
fn prompts_are_the_user_invocable_skills_with_the_argument_hint() {
    let tmp = fixture();
    let engine = engine(tmp.path());
    let snap = engine.snapshot();
    let list = prompts::list(&snap, None).unwrap();
    let names: Vec<&str> = list.prompts.iter().map(|p| p.name.as_str()).collect();
    assert!(names.contains(&"greet") && names.contains(&"manual-only"));
    assert!(!names.contains(&"hidden"));
    let greet = list.prompts.iter().find(|p| p.name == "greet").unwrap();
    let arg = &greet.arguments.as_ref().unwrap()[0];
    assert_eq!(arg.name, "arguments");
    assert_eq!(arg.description.as_deref(), Some("[who]"));
    assert_eq!(arg.required, Some(false));
    let got = prompts::get(
        &engine,
        &snap,
        "greet",
        Some(&args(json!({"arguments": "Bob"}))),
    )
    .unwrap();
    let text = serde_json::to_string(&got.messages).unwrap();
    assert!(text.contains("Hello, Bob!"), "{text}");
    let err = prompts::get(&engine, &snap, "hidden", None).unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
}

#[test]
fn the_manifest_digests_and_sizes_are_those_of_the_bytes_read() {
    let tmp = fixture();
    let engine = engine(tmp.path());
    let snap = engine.snapshot();
    let entry = extension::entry(&engine, snap.get("pdf").unwrap()).unwrap();
    assert_eq!(entry.uri, "skill://pdf/SKILL.md");
    let SkillResources::Files(files) = &entry.resources else {
        panic!("dynamic")
    };
    let uris: Vec<&str> = files.iter().map(|f| f.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "skill://pdf/SKILL.md",
            "skill://pdf/assets/logo.bin",
            "skill://pdf/references/FORMS.md"
        ]
    );
    for file in files {
        let contents = resources::read(engine.host(), &snap, &file.uri).unwrap();
        let bytes = match serde_json::to_value(&contents).unwrap() {
            v if v.get("text").is_some() => v["text"].as_str().unwrap().as_bytes().to_vec(),
            v => {
                use base64::Engine as _;
                base64::engine::general_purpose::STANDARD
                    .decode(v["blob"].as_str().unwrap())
                    .unwrap()
            }
        };
        file.verify(&bytes).unwrap();
    }
}

#[test]
fn the_frontmatter_is_passed_through_verbatim_with_its_types() {
    let tmp = fixture();
    let engine = engine(tmp.path());
    let snap = engine.snapshot();
    let entry = extension::entry(&engine, snap.get("pdf").unwrap()).unwrap();
    let fm = serde_json::to_value(&entry.frontmatter).unwrap();
    assert_eq!(
        fm,
        json!({
            "name": "pdf",
            "description": "Does pdf things.",
            "license": "MIT",
            "metadata": {"version": "1.0", "count": 3}
        })
    );
}

#[test]
fn a_skill_over_the_extension_file_limit_has_no_entry() {
    let tmp = fixture();
    for i in 0..extension::MAX_SKILL_FILES {
        skilldeck_testkit::file(tmp.path().join(format!("greet/many/{i:04}.txt")), "x");
    }
    let engine = engine(tmp.path());
    let snap = engine.snapshot();
    let err = extension::entry(&engine, snap.get("greet").unwrap()).unwrap_err();
    assert!(err.to_string().contains("limit is 512"), "{err}");
}

#[test]
fn a_directory_read_lists_direct_children_and_folders() {
    let tmp = fixture();
    let engine = engine(tmp.path());
    let snap = engine.snapshot();
    let root = resources::read_directory(engine.host(), &snap, "skill://pdf", None, 100).unwrap();
    let children: Vec<(&str, Option<&str>)> = root
        .resources
        .iter()
        .map(|r| (r.uri.as_str(), r.mime_type.as_deref()))
        .collect();
    assert_eq!(
        children,
        [
            ("skill://pdf/SKILL.md", Some("text/markdown")),
            ("skill://pdf/assets", Some("inode/directory")),
            ("skill://pdf/empty", Some("inode/directory")),
            ("skill://pdf/references", Some("inode/directory")),
        ]
    );
    let refs = resources::read_directory(engine.host(), &snap, "skill://pdf/references", None, 100)
        .unwrap();
    assert_eq!(refs.resources.len(), 1);
    let empty =
        resources::read_directory(engine.host(), &snap, "skill://pdf/empty", None, 100).unwrap();
    assert!(empty.resources.is_empty());
    for bad in [
        "skill://pdf/SKILL.md",
        "skill://pdf/nope",
        "skill://nope",
        "skill://pdf/../x",
    ] {
        let err = resources::read_directory(engine.host(), &snap, bad, None, 100).unwrap_err();
        assert_eq!(err.code, ErrorCode::INVALID_PARAMS, "{bad}");
    }
}

#[test]
fn directory_reads_and_listings_paginate_and_refuse_stale_cursors() {
    let tmp = fixture();
    let engine = engine(tmp.path());
    let snap = engine.snapshot();
    let first = resources::read_directory(engine.host(), &snap, "skill://pdf", None, 2).unwrap();
    assert_eq!(first.resources.len(), 2);
    let cursor = first.next_cursor.clone().unwrap();
    let second =
        resources::read_directory(engine.host(), &snap, "skill://pdf", Some(&cursor), 2).unwrap();
    assert_eq!(second.resources.len(), 2);
    assert!(second.next_cursor.is_none());
    let list = resources::list(engine.host(), &snap, None, 1).unwrap();
    assert!(list.next_cursor.is_some());
    let err = resources::list(engine.host(), &snap, Some("99.1"), 1).unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
}

#[test]
fn reading_a_resource_gives_text_or_a_blob_with_its_mime_type() {
    let tmp = fixture();
    let engine = engine(tmp.path());
    let snap = engine.snapshot();
    let md = serde_json::to_value(
        resources::read(engine.host(), &snap, "skill://pdf/SKILL.md").unwrap(),
    )
    .unwrap();
    assert_eq!(md["mimeType"], "text/markdown");
    assert!(md["text"].as_str().unwrap().starts_with("---\nname: pdf"));
    let bin = serde_json::to_value(
        resources::read(engine.host(), &snap, "skill://pdf/assets/logo.bin").unwrap(),
    )
    .unwrap();
    assert_eq!(bin["mimeType"], "application/octet-stream");
    assert!(bin.get("blob").is_some());
    let missing = resources::read(engine.host(), &snap, "skill://pdf/nope.md").unwrap_err();
    assert_eq!(missing.code, ErrorCode::RESOURCE_NOT_FOUND);
    let unknown = resources::read(engine.host(), &snap, "skill://nope/SKILL.md").unwrap_err();
    assert_eq!(unknown.code, ErrorCode::RESOURCE_NOT_FOUND);
    let folder = resources::read(engine.host(), &snap, "skill://pdf").unwrap_err();
    assert_eq!(folder.code, ErrorCode::INVALID_PARAMS);
}

#[test]
fn a_body_edit_keeps_the_catalog_and_a_description_edit_swaps_it() {
    let tmp = fixture();
    let engine = engine(tmp.path());
    let mut changes = engine.subscribe();
    let before = engine.snapshot();
    let path = tmp.path().join("pdf/SKILL.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}\nMore body.\n")).unwrap();
    assert!(!engine.reload().unwrap());
    assert!(Arc::ptr_eq(&before, &engine.snapshot()));
    assert!(changes.try_recv().is_err());
    std::fs::write(&path, text.replace("Does pdf things.", "Does PDF work.")).unwrap();
    assert!(engine.reload().unwrap());
    assert_eq!(engine.snapshot().generation, before.generation + 1);
    assert_eq!(changes.try_recv().unwrap(), skilldeck_mcp::Change::Catalog);
}

#[test]
fn a_skill_edited_on_disk_is_sent_again_in_a_session_that_had_it() {
    let tmp = fixture();
    let engine = engine(tmp.path());
    let snap = engine.snapshot();
    assert!(matches!(
        engine
            .host()
            .activate(&snap, "s", "pdf", "", false)
            .unwrap(),
        Activated::Content(_)
    ));
    let path = tmp.path().join("pdf/SKILL.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}\nNew step.\n")).unwrap();
    engine.skill_files_changed("pdf");
    match engine
        .host()
        .activate(&snap, "s", "pdf", "", false)
        .unwrap()
    {
        Activated::Content(body) => assert!(body.contains("New step.")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_skill_that_becomes_invalid_is_not_served_and_says_why() {
    let tmp = fixture();
    let engine = engine(tmp.path());
    skilldeck_testkit::skill(tmp.path(), "pdf")
        .description("[unclosed")
        .body("body\n")
        .write();
    assert!(engine.reload().unwrap());
    let snap = engine.snapshot();
    assert!(snap.get("pdf").is_none());
    let r = tools::activate(&engine, &snap, "s", &args(json!({"name": "pdf"})));
    assert_eq!(r.is_error, Some(true));
    let message = text_of(&r);
    assert!(message.contains("SKILL.md:3"), "{message}");
    assert!(resources::read(engine.host(), &snap, "skill://pdf/SKILL.md").is_err());
}

#[test]
fn skills_turned_off_are_not_served() {
    let tmp = fixture();
    let mut opts = options(tmp.path());
    opts.discovery
        .modes
        .insert("pdf".to_owned(), skilldeck::SkillMode::Off);
    let engine = Engine::new(opts).unwrap();
    let snap = engine.snapshot();
    assert!(snap.get("pdf").is_none());
    assert!(!snap.model_names.iter().any(|n| n == "pdf"));
    assert!(
        prompts::list(&snap, None)
            .unwrap()
            .prompts
            .iter()
            .all(|p| p.name != "pdf")
    );
}

#[test]
fn a_lowercase_skill_md_is_served_under_its_own_name_but_has_no_extension_entry() {
    let tmp = fixture();
    skilldeck_testkit::skill(tmp.path(), "lower")
        .file_name("skill.md")
        .description("Lowercase file.")
        .body("Body.\n")
        .write();
    let engine = engine(tmp.path());
    let snap = engine.snapshot();
    let skill = snap
        .get("lower")
        .expect("lenient discovery accepts a lowercase skill.md");
    assert_eq!(
        resources::skill_md_resource(skill, None).uri,
        "skill://lower/skill.md"
    );
    assert!(resources::read(engine.host(), &snap, "skill://lower/skill.md").is_ok());
    let err = extension::entry(&engine, skill).unwrap_err();
    assert!(err.to_string().contains("SKILL.md"), "{err}");
}

#[test]
fn the_host_digest_is_byte_identical_to_the_sdk_digest() {
    for bytes in [&b""[..], b"abc", &[0u8, 159, 146, 150], "é\n".as_bytes()] {
        assert_eq!(
            skilldeck_host::sha256_digest(bytes),
            rmcp::model::sha256_digest(bytes)
        );
    }
}
