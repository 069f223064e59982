//! The approval rule ([`skilldeck_host::approval`]): what the active
//! skills' `allowed-tools` pre-approve (names and Claude Code `Bash(...)`
//! patterns), what a decision is bound to (the skill's fingerprint and the
//! tool, the code's sha256), that a caller who cannot ask is refused (fail
//! closed), and that `always-deny` refuses. The host-level tests run with
//! the sandbox off (the operator's explicit choice) so a marker file in the
//! skill's folder proves whether the script ran.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::Cell;
use std::path::Path;

use serde_json::{Map, Value, json};
use skilldeck::DiscoveryOptions;
use skilldeck::deck::{ApprovalMode, ExecConfig, SandboxProfile};
use skilldeck_exec::CallContext;
use skilldeck_host::approval::{
    AllowedTool, ApprovalKey, ApprovalSubject, Approvals, Decision, NoApprover,
};
use skilldeck_host::{ApprovalRequest, Host, HostOptions, Language, ToolErrorKind};

fn tokens(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_owned).collect()
}

fn python(code: &str) -> ApprovalSubject<'_> {
    ApprovalSubject::Code {
        language: Language::Python,
        code,
        skill: None,
    }
}

fn script<'a>(path: &'a str, args: &'a [String]) -> ApprovalSubject<'a> {
    ApprovalSubject::Script {
        skill: "pdf",
        path,
        args,
    }
}

fn covered(allowed: &str, subject: &ApprovalSubject<'_>) -> bool {
    AllowedTool::parse_all(&tokens(allowed))
        .iter()
        .any(|a| a.covers(subject))
}

#[test]
fn allowed_tools_pre_approve_by_tool_name() {
    let none: Vec<String> = Vec::new();
    assert!(covered("run_code", &python("print(1)")));
    assert!(covered(
        "Read run_skill_script",
        &script("scripts/x.py", &none)
    ));
    let tool = ApprovalSubject::Tool {
        skill: "pdf",
        full_name: "pdf__extract",
    };
    assert!(covered("pdf__extract", &tool));
    assert!(!covered("pdf__other run_code run_skill_script", &tool));
    assert!(!covered("run_skill_script", &python("print(1)")));
    assert!(!covered("run_code", &script("scripts/x.py", &none)));
}

#[test]
fn bash_patterns_map_to_a_language_interpreter_or_a_script_path() {
    let none: Vec<String> = Vec::new();
    let args = vec!["in.pdf".to_owned()];
    // A language's interpreter.
    assert!(covered("Bash(python3:*)", &python("print(1)")));
    assert!(covered("Bash(python:*)", &python("print(1)")));
    assert!(!covered("Bash(node:*)", &python("print(1)")));
    let bash = ApprovalSubject::Code {
        language: Language::Bash,
        code: "ls",
        skill: None,
    };
    assert!(covered("Bash(sh:*)", &bash));
    assert!(!covered("Bash(python3:*)", &bash));
    // Words, not characters: `py` is not `python3`.
    assert!(!covered("Bash(py:*)", &python("print(1)")));
    // A script, by path, ./path or interpreter + path, with its arguments.
    assert!(covered(
        "Bash(scripts/x.py:*)",
        &script("scripts/x.py", &args)
    ));
    assert!(covered(
        "Bash(./scripts/x.py:*)",
        &script("scripts/x.py", &args)
    ));
    assert!(covered(
        "Bash(python3 scripts/x.py:*)",
        &script("scripts/x.py", &args)
    ));
    assert!(covered(
        "Bash(scripts/x.py)",
        &script("scripts/x.py", &none)
    ));
    assert!(!covered(
        "Bash(scripts/x.py)",
        &script("scripts/x.py", &args)
    ));
    assert!(!covered(
        "Bash(scripts/y.py:*)",
        &script("scripts/x.py", &args)
    ));
    assert!(!covered(
        "Bash(scripts/x:*)",
        &script("scripts/x.py", &args)
    ));
    // The core splits on whitespace; an entry with spaces is joined back.
    assert!(covered(
        "Read Bash(python3 scripts/x.py in.pdf) Write",
        &script("scripts/x.py", &args)
    ));
    // `Bash` alone is every command, but a skill tool is not a command.
    assert!(covered("Bash", &python("print(1)")));
    assert!(covered("Bash(*)", &script("scripts/x.py", &args)));
    let tool = ApprovalSubject::Tool {
        skill: "pdf",
        full_name: "pdf__extract",
    };
    assert!(!covered("Bash", &tool));
}

/// An approver that answers `answer` and counts the questions.
struct Counting {
    answer: Decision,
    asked: Cell<usize>,
}

impl skilldeck_host::Approver for Counting {
    fn approve(&self, _request: &ApprovalRequest) -> Decision {
        self.asked.set(self.asked.get() + 1);
        self.answer.clone()
    }
}

fn counting(answer: Decision) -> Counting {
    Counting {
        answer,
        asked: Cell::new(0),
    }
}

#[test]
fn an_approval_of_code_is_bound_to_the_codes_hash() {
    let approvals = Approvals::new(ApprovalMode::Ask);
    let yes = counting(Decision::Accept);
    approvals
        .check("c1", &python("print(1)"), &[], "", &yes)
        .unwrap();
    approvals
        .check("c1", &python("print(1)"), &[], "", &yes)
        .unwrap();
    assert_eq!(yes.asked.get(), 1, "the same code is not asked twice");
    approvals
        .check("c1", &python("print(2)"), &[], "", &yes)
        .unwrap();
    assert_eq!(yes.asked.get(), 2, "different code is asked again");
    // Kept per conversation: another one is asked.
    approvals
        .check("c2", &python("print(1)"), &[], "", &yes)
        .unwrap();
    assert_eq!(yes.asked.get(), 3);
}

#[test]
fn an_approval_of_a_script_is_bound_to_the_skills_fingerprint() {
    let approvals = Approvals::new(ApprovalMode::Ask);
    let yes = counting(Decision::Accept);
    let none: Vec<String> = Vec::new();
    let subject = script("scripts/x.py", &none);
    approvals
        .check("c", &subject, &[], "sha256:a", &yes)
        .unwrap();
    approvals
        .check("c", &subject, &[], "sha256:a", &yes)
        .unwrap();
    assert_eq!(yes.asked.get(), 1);
    approvals
        .check("c", &subject, &[], "sha256:b", &yes)
        .unwrap();
    assert_eq!(yes.asked.get(), 2, "a changed skill is asked again");
    assert_ne!(
        ApprovalKey::new(&subject, "sha256:a"),
        ApprovalKey::new(&script("scripts/y.py", &none), "sha256:a")
    );
}

#[test]
fn a_declined_call_is_refused_and_not_asked_again() {
    let approvals = Approvals::new(ApprovalMode::Ask);
    let no = counting(Decision::Decline);
    let err = approvals
        .check("c", &python("print(1)"), &[], "", &no)
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Denied);
    assert!(err.message.contains("declined"), "{err}");
    let err = approvals
        .check("c", &python("print(1)"), &[], "", &no)
        .unwrap_err();
    assert!(err.message.contains("earlier"), "{err}");
    assert_eq!(no.asked.get(), 1);
}

#[test]
fn a_caller_that_cannot_ask_is_refused_never_run() {
    let approvals = Approvals::new(ApprovalMode::Ask);
    let err = approvals
        .check(
            "c",
            &python("print(1)"),
            &[],
            "",
            &NoApprover("no elicitation".to_owned()),
        )
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Denied);
    assert!(err.message.contains("no elicitation"), "{err}");
    assert!(err.message.contains("allowed-tools"), "{err}");
    // A dismissed question is not remembered either way.
    let cancel = counting(Decision::Cancel);
    assert!(
        approvals
            .check("c", &python("x"), &[], "", &cancel)
            .is_err()
    );
    assert!(
        approvals
            .check("c", &python("x"), &[], "", &cancel)
            .is_err()
    );
    assert_eq!(cancel.asked.get(), 2);
}

#[test]
fn always_deny_refuses_what_allowed_tools_do_not_pre_approve() {
    let approvals = Approvals::new(ApprovalMode::AlwaysDeny);
    let yes = counting(Decision::Accept);
    let err = approvals
        .check("c", &python("print(1)"), &[], "", &yes)
        .unwrap_err();
    assert!(err.message.contains("always-deny"), "{err}");
    assert!(err.message.contains("Bash(python3:*)"), "{err}");
    assert_eq!(yes.asked.get(), 0, "always-deny never asks");
    let allowed = AllowedTool::parse_all(&tokens("Bash(python3:*)"));
    approvals
        .check("c", &python("print(1)"), &allowed, "", &yes)
        .unwrap();
    // `never` runs everything without asking.
    let never = Approvals::new(ApprovalMode::Never);
    never
        .check("c", &python("print(1)"), &[], "", &NoApprover("x".into()))
        .unwrap();
}

// --- Through the host: the rule applies to run_skill_script and skill tools.

fn host(root: &Path, approval: ApprovalMode) -> Host {
    let mut options = HostOptions::new(DiscoveryOptions::with_roots([root.to_path_buf()]));
    options.exec = ExecConfig {
        enabled: true,
        sandbox: SandboxProfile::None,
        approval,
        ..ExecConfig::default()
    };
    Host::new(options).unwrap()
}

fn marker_skill(root: &Path, name: &str, allowed: &str) -> std::path::PathBuf {
    let mut skill = skilldeck_testkit::skill(root, name)
        .description(format!("Does {name} things. Use when testing."))
        .frontmatter_raw(
            "tools:\n  - name: mark\n    description: Leave a mark.\n    run: scripts/mark.sh\n",
        )
        .file(
            "scripts/mark.sh",
            "touch \"$SKILLDECK_SKILL_DIR/ran.marker\"\necho ran\n",
        );
    if !allowed.is_empty() {
        skill = skill.field("allowed-tools", allowed);
    }
    skill.write();
    root.join(name).join("ran.marker")
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

#[test]
fn with_ask_a_declined_script_never_runs_and_an_accepted_one_does() {
    let root = skilldeck_testkit::Root::new();
    let marker = marker_skill(&root, "marks", "");
    let host = host(&root, ApprovalMode::Ask);
    let snapshot = host.snapshot();
    let call = args(json!({"name": "marks", "path": "scripts/mark.sh"}));

    let no = |_: &ApprovalRequest| Decision::Decline;
    let err = host
        .call_with(
            &snapshot,
            "conv",
            "run_skill_script",
            &call,
            CallContext::default(),
            &no,
        )
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Denied, "{err}");
    assert!(!marker.exists(), "a declined script ran");

    // Without a way to ask (Host::call): refused, not run.
    let err = host
        .call(
            &snapshot,
            "other",
            "run_skill_script",
            &call,
            CallContext::default(),
        )
        .unwrap_err();
    assert!(err.message.contains("cannot be asked"), "{err}");
    assert!(!marker.exists());

    let asked = Cell::new(None::<String>);
    let yes = |r: &ApprovalRequest| {
        asked.set(Some(r.message.clone()));
        Decision::Accept
    };
    host.call_with(
        &snapshot,
        "third",
        "run_skill_script",
        &call,
        CallContext::default(),
        &yes,
    )
    .unwrap();
    assert!(marker.exists(), "an accepted script did not run");
    let message = asked.take().unwrap();
    assert!(message.contains("scripts/mark.sh"), "{message}");
}

#[test]
fn an_active_skills_allowed_tools_pre_approve_its_tool_without_asking() {
    let root = skilldeck_testkit::Root::new();
    let marker = marker_skill(&root, "marks", "marks__mark");
    let host = host(&root, ApprovalMode::AlwaysDeny);
    let snapshot = host.snapshot();
    let never_asked = |_: &ApprovalRequest| -> Decision { panic!("asked") };
    // Not active yet: its allowed-tools do not count (and under
    // on-activate the tool is not offered either).
    let err = host
        .call_with(
            &snapshot,
            "conv",
            "run_skill_script",
            &args(json!({"name": "marks", "path": "scripts/mark.sh"})),
            CallContext::default(),
            &never_asked,
        )
        .unwrap_err();
    assert!(err.message.contains("always-deny"), "{err}");
    assert!(!marker.exists());
    host.activate(&snapshot, "conv", "marks", "", false)
        .unwrap();
    host.call_with(
        &snapshot,
        "conv",
        "marks__mark",
        &Map::new(),
        CallContext::default(),
        &never_asked,
    )
    .unwrap();
    assert!(marker.exists(), "a pre-approved tool did not run");
    // The script by path is still not pre-approved (only the tool's name is).
    let err = host
        .call_with(
            &snapshot,
            "conv",
            "run_skill_script",
            &args(json!({"name": "marks", "path": "scripts/mark.sh"})),
            CallContext::default(),
            &never_asked,
        )
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Denied);
}

#[test]
fn an_approver_the_application_hands_in_is_asked_even_where_the_config_says_never() {
    let root = skilldeck_testkit::Root::new();
    let marker = marker_skill(&root, "marks", "");
    let host = host(&root, ApprovalMode::Never);
    let snapshot = host.snapshot();
    let call = args(json!({"name": "marks", "path": "scripts/mark.sh"}));
    let no = |_: &ApprovalRequest| Decision::Decline;
    // A face's approver (MCP elicitation) under `never`: not asked, runs.
    // The application's own callback (CallerApprover): asked, declined,
    // nothing ran.
    let err = host
        .call_with(
            &snapshot,
            "conv",
            "run_skill_script",
            &call,
            CallContext::default(),
            &skilldeck_host::CallerApprover(no),
        )
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Denied, "{err}");
    assert!(
        !marker.exists(),
        "a script the application's callback declined ran"
    );
    host.call_with(
        &snapshot,
        "conv2",
        "run_skill_script",
        &call,
        CallContext::default(),
        &no,
    )
    .unwrap();
    assert!(
        marker.exists(),
        "under never, a face's approver is not asked"
    );
}
