//! Skill-defined tools (`tools:`), requirements (`requires:`) and
//! eligibility: the frontmatter rules, their codes and positions, and what
//! a deck makes of them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::json;
use skilldeck::{
    Code, Diagnostic, DiscoveryOptions, EligibilityContext, Mode, Severity, ValidationOptions,
    discover, validate_path,
};
use skilldeck_testkit::Root;

use crate::common::options;

fn lenient_diagnostics(dir: &Path) -> Vec<Diagnostic> {
    validate_path(dir, &options(Mode::Lenient)).diagnostics
}

fn find(diags: &[Diagnostic], code: Code) -> Diagnostic {
    diags
        .iter()
        .find(|d| d.code == code)
        .cloned()
        .unwrap_or_else(|| panic!("{code} not reported: {diags:#?}"))
}

fn tool_skill(root: &Root, name: &str, tools_yaml: &str) -> std::path::PathBuf {
    root.skill(name)
        .description("Tools demo. Use when testing tools.")
        .frontmatter_raw(tools_yaml)
        .file("scripts/run.py", "print('{}')\n")
        .write()
}

fn frontmatter_of(dir: &Path, mode: Mode) -> skilldeck::Frontmatter {
    let text = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
    skilldeck::check_text(&text, Some(dir), &options(mode))
        .frontmatter
        .unwrap()
}

#[test]
fn compact_parameters_become_a_closed_object_schema() {
    let root = Root::new();
    let dir = tool_skill(
        &root,
        "notes",
        "tools:\n  - name: search\n    description: Search notes.\n    parameters:\n      query: {type: string, description: Words, required: true}\n      tags: {type: array, items: {type: string}}\n      limit: {type: integer, enum: [5, 10]}\n    run: scripts/run.py\n",
    );
    assert!(
        lenient_diagnostics(&dir).is_empty(),
        "{:#?}",
        lenient_diagnostics(&dir)
    );
    let fm = frontmatter_of(&dir, Mode::Lenient);
    assert_eq!(fm.tools.len(), 1);
    let tool = &fm.tools[0];
    assert_eq!(tool.name.as_str(), "search");
    assert_eq!(tool.run.as_deref(), Some("scripts/run.py"));
    assert_eq!(tool.full_name("notes"), "notes__search");
    assert_eq!(
        tool.input_schema,
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "limit": {"type": "integer", "enum": [5, 10]}
            },
            "required": ["query"],
            "additionalProperties": false
        })
    );
}

#[test]
fn items_given_as_a_bare_type_name_mean_items_of_that_type() {
    // Seed 002's `deep-research` skill writes `items: string`.
    let root = Root::new();
    let dir = tool_skill(
        &root,
        "research",
        "tools:\n  - name: initiate\n    description: Start research.\n    parameters:\n      query:\n        type: string\n        required: true\n      sources:\n        type: array\n        items: string\n        description: Sources to search\n    run: scripts/run.py\n",
    );
    assert!(
        lenient_diagnostics(&dir).is_empty(),
        "{:#?}",
        lenient_diagnostics(&dir)
    );
    let fm = frontmatter_of(&dir, Mode::Lenient);
    assert_eq!(
        fm.tools[0].input_schema["properties"]["sources"],
        json!({"type": "array", "items": {"type": "string"}, "description": "Sources to search"})
    );
}

#[test]
fn a_full_input_schema_keeps_yaml_types() {
    let root = Root::new();
    let dir = tool_skill(
        &root,
        "sch",
        "tools:\n  - name: pick\n    description: Pick.\n    input_schema:\n      type: object\n      properties:\n        n: {type: integer, minimum: 3}\n        label: {type: string, const: \"7\"}\n      required: [n]\n    run: ./scripts/run.py\n",
    );
    let fm = frontmatter_of(&dir, Mode::Lenient);
    assert_eq!(fm.tools.len(), 1, "{:#?}", lenient_diagnostics(&dir));
    let schema = &fm.tools[0].input_schema;
    assert_eq!(schema["properties"]["n"]["minimum"], json!(3));
    assert_eq!(schema["properties"]["label"]["const"], json!("7"));
    assert_eq!(fm.tools[0].run.as_deref(), Some("scripts/run.py"));
}

#[test]
fn tools_is_a_host_field_lenient_knows_and_strict_reports_unless_allowed() {
    let root = Root::new();
    let dir = tool_skill(
        &root,
        "host",
        "tools:\n  - name: go\n    description: Go.\n    run: scripts/run.py\n",
    );
    assert!(lenient_diagnostics(&dir).is_empty());
    let strict = validate_path(&dir, &options(Mode::Strict)).diagnostics;
    let d = find(&strict, Code::UnknownField);
    assert_eq!(d.severity, Severity::Error);
    assert!(d.message.contains("tools"), "{d}");
    let allowed = ValidationOptions {
        allowed_fields: vec!["tools".to_owned()],
        ..options(Mode::Strict)
    };
    assert!(validate_path(&dir, &allowed).diagnostics.is_empty());
}

#[test]
fn a_list_of_tool_names_is_another_hosts_allowlist_not_skill_tools() {
    let root = Root::new();
    let dir = tool_skill(&root, "copilot", "tools: ['codebase', 'search']\n");
    assert!(lenient_diagnostics(&dir).is_empty());
    assert!(frontmatter_of(&dir, Mode::Lenient).tools.is_empty());
}

/// `(yaml, code, line, column)`: the tool entry, the code it must give and
/// where (file line: `---` is 1, `name` 2, `description` 3, `tools:` 4).
fn assert_tool_problem(yaml: &str, code: Code, line: u32, column: u32) {
    let root = Root::new();
    let dir = tool_skill(&root, "probe", yaml);
    let lenient = lenient_diagnostics(&dir);
    let d = find(&lenient, code);
    assert_eq!(d.severity, Severity::Warning, "{d}");
    assert_eq!((d.line, d.column), (Some(line), Some(column)), "{d}");
    assert!(d.file.is_some(), "{d}");
    // A broken tool is never offered.
    assert!(frontmatter_of(&dir, Mode::Lenient).tools.is_empty());
    let allowed = ValidationOptions {
        allowed_fields: vec!["tools".to_owned()],
        ..options(Mode::Strict)
    };
    let strict = validate_path(&dir, &allowed).diagnostics;
    assert_eq!(find(&strict, code).severity, Severity::Error);
}

#[test]
fn tools_must_be_a_list() {
    assert_tool_problem("tools: {go: x}\n", Code::ToolsNotList, 4, 1);
}

#[test]
fn a_tool_entry_has_only_the_known_keys() {
    assert_tool_problem(
        "tools:\n  - name: go\n    description: Go.\n    run: scripts/run.py\n    timeout: 5\n",
        Code::ToolInvalid,
        8,
        5,
    );
}

#[test]
fn tool_name_must_be_snake_case() {
    assert_tool_problem(
        "tools:\n  - name: Go-Fast\n    description: Go.\n    run: scripts/run.py\n",
        Code::ToolNameInvalid,
        5,
        11,
    );
}

#[test]
fn tool_names_are_unique_in_a_skill() {
    let yaml = "tools:\n  - name: go\n    description: Go.\n    run: scripts/run.py\n  - name: go\n    description: Again.\n    run: scripts/run.py\n";
    let root = Root::new();
    let dir = tool_skill(&root, "dup", yaml);
    let d = find(&lenient_diagnostics(&dir), Code::ToolNameDuplicate);
    assert_eq!((d.line, d.column), (Some(8), Some(11)));
    assert!(d.message.contains("line 5"), "{d}");
    // The first keeps its name; the duplicate is left out.
    assert_eq!(frontmatter_of(&dir, Mode::Lenient).tools.len(), 1);
}

#[test]
fn full_tool_name_is_at_most_64_characters() {
    let long = "t".repeat(60);
    assert_tool_problem(
        &format!("tools:\n  - name: {long}\n    description: Go.\n    run: scripts/run.py\n"),
        Code::ToolFullNameTooLong,
        5,
        11,
    );
}

#[test]
fn a_tool_needs_a_description() {
    assert_tool_problem(
        "tools:\n  - name: go\n    run: scripts/run.py\n",
        Code::ToolDescriptionMissing,
        5,
        5,
    );
}

#[test]
fn a_tool_without_run_is_kept_as_host_implemented() {
    let root = Root::new();
    let dir = tool_skill(
        &root,
        "hosted",
        "tools:\n  - name: go\n    description: Go.\n",
    );
    assert!(lenient_diagnostics(&dir).is_empty());
    let fm = frontmatter_of(&dir, Mode::Lenient);
    assert_eq!(fm.tools.len(), 1);
    assert!(fm.tools[0].is_host_implemented());
    assert_eq!(fm.tools[0].run, None);
}

#[test]
fn an_empty_run_is_reported() {
    assert_tool_problem(
        "tools:\n  - name: go\n    description: Go.\n    run: ''\n",
        Code::ToolRunMissing,
        7,
        5,
    );
}

#[test]
fn run_must_not_leave_the_skill() {
    assert_tool_problem(
        "tools:\n  - name: go\n    description: Go.\n    run: ../other/run.py\n",
        Code::ToolRunEscapes,
        7,
        10,
    );
    assert_tool_problem(
        "tools:\n  - name: go\n    description: Go.\n    run: /bin/sh\n",
        Code::ToolRunEscapes,
        7,
        10,
    );
}

#[test]
fn run_through_a_symlink_out_of_the_skill_is_refused() {
    let root = Root::new();
    let outside = root.file("outside.sh", "echo hi\n");
    let dir = tool_skill(
        &root,
        "linky",
        "tools:\n  - name: go\n    description: Go.\n    run: scripts/link.sh\n",
    );
    std::os::unix::fs::symlink(&outside, dir.join("scripts/link.sh")).unwrap();
    let d = find(&lenient_diagnostics(&dir), Code::ToolRunEscapes);
    assert_eq!(d.line, Some(7));
}

#[test]
fn run_must_name_an_existing_regular_file() {
    assert_tool_problem(
        "tools:\n  - name: go\n    description: Go.\n    run: scripts/missing.py\n",
        Code::ToolRunNotFound,
        7,
        10,
    );
    let root = Root::new();
    let dir = tool_skill(
        &root,
        "fifo",
        "tools:\n  - name: go\n    description: Go.\n    run: scripts/pipe\n",
    );
    let status = std::process::Command::new("mkfifo")
        .arg(dir.join("scripts/pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    let d = find(&lenient_diagnostics(&dir), Code::ToolRunNotFound);
    assert!(d.message.contains("not a regular file"), "{d}");
}

#[test]
fn schema_must_compile_and_describe_an_object() {
    // Not a JSON Schema: `type` must be a type name.
    assert_tool_problem(
        "tools:\n  - name: go\n    description: Go.\n    input_schema:\n      type: object\n      properties:\n        n: {type: 12}\n    run: scripts/run.py\n",
        Code::ToolSchemaInvalid,
        7,
        5,
    );
    // A schema of a string is not a tool's arguments.
    assert_tool_problem(
        "tools:\n  - name: go\n    description: Go.\n    input_schema: {type: string}\n    run: scripts/run.py\n",
        Code::ToolSchemaInvalid,
        7,
        5,
    );
    // A compact parameter without a type.
    assert_tool_problem(
        "tools:\n  - name: go\n    description: Go.\n    parameters:\n      q: {description: Query}\n    run: scripts/run.py\n",
        Code::ToolSchemaInvalid,
        8,
        7,
    );
}

#[test]
fn parameters_and_input_schema_are_exclusive() {
    assert_tool_problem(
        "tools:\n  - name: go\n    description: Go.\n    parameters: {}\n    input_schema: {type: object}\n    run: scripts/run.py\n",
        Code::ToolSchemaConflict,
        8,
        5,
    );
}

#[test]
fn a_malformed_requires_block_is_reported_at_its_key() {
    let root = Root::new();
    let dir = root
        .skill("req")
        .description("Req. Use when testing.")
        .frontmatter_raw("requires:\n  bins: [curl]\n  gpus: 2\n")
        .write();
    let d = find(&lenient_diagnostics(&dir), Code::RequiresInvalid);
    assert_eq!((d.line, d.column), (Some(6), Some(3)));
    let fm = frontmatter_of(&dir, Mode::Lenient);
    assert_eq!(fm.requires.len(), 1);
    assert_eq!(fm.requires[0].bins, vec!["curl".to_owned()]);
}

fn deck_of(root: &Root) -> skilldeck::Deck {
    let mut options = DiscoveryOptions::with_roots([root.path().to_path_buf()]);
    options.validation = ValidationOptions::lenient();
    discover(&options)
}

#[test]
fn a_skill_needing_a_missing_binary_is_not_served_and_says_why() {
    let root = Root::new();
    root.skill("needy")
        .description("Needs a tool. Use when testing.")
        .frontmatter_raw("requires:\n  bins: [skilldeck-no-such-binary-xyz]\n")
        .write();
    root.skill("claw")
        .description("openclaw style. Use when testing.")
        .frontmatter_raw(
            "metadata: {\"openclaw\": {\"requires\": {\"env\": [\"SKILLDECK_TEST_UNSET_VAR\"]}}}\n",
        )
        .write();
    root.skill("plain")
        .description("No requirements. Use when testing.")
        .write();
    let deck = deck_of(&root);
    let needy = deck.get("needy").unwrap();
    assert!(!needy.is_served());
    assert!(!needy.is_eligible());
    assert_eq!(
        needy.ineligible_reason(),
        Some("needs 'skilldeck-no-such-binary-xyz' on PATH (requires.bins)")
    );
    let claw = deck.get("claw").unwrap();
    assert!(!claw.is_served());
    assert!(
        claw.ineligible_reason()
            .unwrap()
            .contains("SKILLDECK_TEST_UNSET_VAR to be set (metadata.openclaw.requires.env)"),
        "{:?}",
        claw.ineligible_reason()
    );
    assert!(deck.get("plain").unwrap().is_served());
    // Ineligible skills leave the catalog.
    let catalog =
        skilldeck::render_catalog(deck.skills(), &skilldeck::CatalogOptions::default(), None)
            .unwrap();
    let text = catalog.text;
    assert!(text.contains("plain") && !text.contains("needy") && !text.contains("claw"));
}

#[test]
fn eligibility_is_decided_again_against_a_given_context() {
    let root = Root::new();
    let bin = root.file("bin/mytool", "#!/bin/sh\n");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    root.skill("tooly")
        .description("Needs mytool. Use when testing.")
        .frontmatter_raw("requires:\n  bins: [mytool]\n  os: [linux, darwin]\n")
        .write();
    let deck = deck_of(&root);
    assert!(!deck.get("tooly").unwrap().is_served());
    let ctx = EligibilityContext::new(
        "linux",
        Some(root.path().join("bin").into_os_string()),
        Vec::new(),
    );
    let deck = deck.with_eligibility(&ctx);
    assert!(deck.get("tooly").unwrap().is_served());
    let win = EligibilityContext::new(
        "win32",
        Some(root.path().join("bin").into_os_string()),
        Vec::new(),
    );
    let deck = deck.with_eligibility(&win);
    assert!(
        deck.get("tooly")
            .unwrap()
            .ineligible_reason()
            .unwrap()
            .contains("this host is win32")
    );
}

#[test]
fn a_served_skill_exposes_its_tools_after_discovery() {
    let root = Root::new();
    tool_skill(
        &root,
        "pdf-tools",
        "tools:\n  - name: merge\n    description: Merge.\n    parameters:\n      files: {type: array, items: {type: string}, required: true}\n    run: scripts/run.py\n",
    );
    let deck = deck_of(&root);
    let skill = deck.get("pdf-tools").unwrap();
    assert_eq!(skill.tools().len(), 1);
    assert_eq!(skill.tools()[0].full_name(&skill.name), "pdf_tools__merge");
    assert!(skill.tool("merge").is_some() && skill.tool("split").is_none());
}

#[test]
fn a_dropped_tool_is_reported_in_the_decks_diagnostics_from_a_fresh_parse_and_from_the_index() {
    let root = Root::new();
    let dir = tool_skill(
        &root,
        "half",
        "tools:\n  - name: good\n    description: Fine.\n    run: scripts/run.py\n  - name: bad\n    description: Broken.\n    parameters: [not, a, map]\n    run: scripts/run.py\n",
    );
    let tmp = tempfile::tempdir().unwrap();
    let mut options = DiscoveryOptions::with_roots([root.path().to_path_buf()]);
    options.validation = ValidationOptions::lenient();
    options.index = Some(tmp.path().join("index.idx"));
    options.index_racy_window = std::time::Duration::ZERO;
    for pass in ["fresh", "indexed"] {
        let deck = discover(&options);
        let skill = deck.get("half").unwrap();
        assert_eq!(skill.tools().len(), 1, "{pass}: the good tool stays");
        let d = find(deck.diagnostics(), Code::ToolSchemaInvalid);
        assert_eq!(d.severity, Severity::Warning, "{pass}");
        assert_eq!(
            d.file.as_deref(),
            Some(dir.join("SKILL.md").as_path()),
            "{pass}"
        );
        assert_eq!(d.line, Some(10), "{pass}: {d}");
    }
    assert_eq!(
        discover(&options).index_stats().unwrap().hits,
        1,
        "the second pass was served by the index"
    );
}
