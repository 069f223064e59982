//! `run_code` ([`skilldeck_host::code`]): offered only when turned on; a
//! work folder per conversation that keeps its files, with a checked quota
//! and an idle expiry (timed by an injected clock: no sleeps); `outputs/`
//! files returned typed and capped, never through a link. The runs use
//! the sandbox where this machine has it (else the refusal is asserted)
//! and, for the folder's rules, the operator's `sandbox = "none"`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use skilldeck::DiscoveryOptions;
use skilldeck::deck::{ExecConfig, SandboxProfile};
use skilldeck_exec::CallContext;
use skilldeck_host::code::{
    Clock, MAX_OUTPUT_FILES, OUTPUTS_DIR, WorkFolders, collect_outputs, scan,
};
use skilldeck_host::{Host, HostOptions, Language, RUN_CODE, ToolError, ToolErrorKind, ToolRun};

/// A clock the test moves.
#[derive(Debug)]
struct TestClock(Mutex<Instant>);

impl TestClock {
    fn new() -> Arc<TestClock> {
        Arc::new(TestClock(Mutex::new(Instant::now())))
    }
    fn advance(&self, by: Duration) {
        *self.0.lock().unwrap() += by;
    }
}

impl Clock for TestClock {
    fn now(&self) -> Instant {
        *self.0.lock().unwrap()
    }
}

fn host(root: &Path, exec: ExecConfig) -> Host {
    let mut options = HostOptions::new(DiscoveryOptions::with_roots([root.to_path_buf()]));
    options.exec = exec;
    Host::new(options).unwrap()
}

fn code_on(profile: SandboxProfile) -> ExecConfig {
    ExecConfig {
        enabled: true,
        code: true,
        sandbox: profile,
        ..ExecConfig::default()
    }
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

fn run(host: &Host, conversation: &str, call: Value) -> Result<ToolRun, ToolError> {
    let snapshot = host.snapshot();
    host.call_execution_tool(
        &snapshot,
        conversation,
        RUN_CODE,
        &args(call),
        CallContext::default(),
    )
}

fn python() -> bool {
    Language::Python.interpreter().is_some()
}

#[test]
fn run_code_is_offered_only_when_the_operator_turns_it_on() {
    let root = skilldeck_testkit::Root::new();
    let off = host(
        &root,
        ExecConfig {
            enabled: true,
            ..ExecConfig::default()
        },
    );
    let names = |h: &Host| -> Vec<String> {
        h.execution_tool_specs(&h.snapshot(), "c")
            .into_iter()
            .map(|s| s.name)
            .collect()
    };
    assert!(!names(&off).contains(&RUN_CODE.to_owned()));
    let err = run(&off, "c", json!({"language": "python", "code": "print(1)"})).unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::UnknownTool, "{err}");

    let on = host(&root, code_on(SandboxProfile::None));
    let specs = on.execution_tool_specs(&on.snapshot(), "c");
    let spec = specs.iter().find(|s| s.name == RUN_CODE);
    if Language::available().is_empty() {
        assert!(spec.is_none(), "no interpreter: nothing to offer");
        return;
    }
    let spec = spec.expect("run_code offered when turned on, even without skills");
    let offered = spec.input_schema["properties"]["language"]["enum"].clone();
    for language in Language::ALL {
        let installed = language.interpreter().is_some();
        assert_eq!(
            offered
                .as_array()
                .unwrap()
                .contains(&json!(language.name())),
            installed,
            "{} offered only where installed",
            language.name()
        );
    }
}

#[test]
fn a_file_written_by_one_call_is_there_for_the_next_in_the_same_conversation_only() {
    if !python() {
        eprintln!("python3 is not on the sandbox PATH: nothing to run");
        return;
    }
    let root = skilldeck_testkit::Root::new();
    let host = host(&root, code_on(SandboxProfile::None));
    run(
        &host,
        "a",
        json!({"language": "python", "code": "open('notes.txt','w').write('kept')"}),
    )
    .unwrap();
    let again = run(
        &host,
        "a",
        json!({"language": "python", "code": "print(open('notes.txt').read())"}),
    )
    .unwrap();
    assert_eq!(again.text.trim(), "kept");
    let other = run(
        &host,
        "b",
        json!({"language": "python", "code": "import os; print(os.path.exists('notes.txt'))"}),
    )
    .unwrap();
    assert_eq!(other.text.trim(), "False", "conversations share no folder");
}

#[test]
fn outputs_come_back_as_typed_files_only_when_the_call_wrote_them() {
    if !python() {
        return;
    }
    let root = skilldeck_testkit::Root::new();
    let host = host(&root, code_on(SandboxProfile::None));
    let first = run(
        &host,
        "a",
        json!({"language": "python", "code":
            "open('outputs/table.csv','w').write('a,b\\n1,2\\n')\n\
             open('outputs/chart.png','wb').write(bytes([0x89,0x50,0x4e,0x47,0,1,2]))\n\
             print('done')"}),
    )
    .unwrap();
    let mut files = first.files.clone();
    files.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(files.len(), 2, "{files:?}");
    assert_eq!(files[0].name, "chart.png");
    assert_eq!(files[0].mime_type, "image/png");
    assert_eq!(files[0].data, vec![0x89, 0x50, 0x4e, 0x47, 0, 1, 2]);
    assert_eq!(files[1].name, "table.csv");
    assert_eq!(files[1].mime_type, "text/csv");
    assert_eq!(files[1].text(), Some("a,b\n1,2\n"));
    // A call that writes nothing there returns nothing (not the old files).
    let second = run(
        &host,
        "a",
        json!({"language": "python", "code": "print(2)"}),
    )
    .unwrap();
    assert!(second.files.is_empty(), "{:?}", second.files);
}

#[test]
fn an_output_that_is_a_link_is_never_read() {
    let work = tempfile::tempdir().unwrap();
    let secret = work.path().join("secret.txt");
    std::fs::write(&secret, "host secret").unwrap();
    let folder = work.path().join("f");
    std::fs::create_dir_all(folder.join(OUTPUTS_DIR)).unwrap();
    let before = scan(&folder).unwrap();
    std::os::unix::fs::symlink(&secret, folder.join("outputs/link.txt")).unwrap();
    std::fs::hard_link(&secret, folder.join("outputs/hard.txt")).unwrap();
    std::fs::write(folder.join("outputs/fine.txt"), "ok").unwrap();
    let after = scan(&folder).unwrap();
    let (files, omitted) = collect_outputs(&folder, &before, &after);
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, vec!["fine.txt"]);
    assert!(
        files.iter().all(|f| f.data != b"host secret"),
        "a link's target was read"
    );
    assert!(
        omitted.iter().any(|o| o.starts_with("hard.txt")),
        "{omitted:?}"
    );
}

#[test]
fn outputs_past_the_count_cap_are_named_not_returned() {
    let work = tempfile::tempdir().unwrap();
    let folder = work.path();
    std::fs::create_dir_all(folder.join(OUTPUTS_DIR)).unwrap();
    let before = scan(folder).unwrap();
    for i in 0..MAX_OUTPUT_FILES + 3 {
        std::fs::write(folder.join(format!("outputs/f{i:02}.txt")), "x").unwrap();
    }
    let after = scan(folder).unwrap();
    let (files, omitted) = collect_outputs(folder, &before, &after);
    assert_eq!(files.len(), MAX_OUTPUT_FILES);
    assert_eq!(omitted.len(), 3, "{omitted:?}");
}

#[test]
fn a_call_that_goes_over_the_quota_loses_what_it_wrote_and_fails() {
    let work = tempfile::tempdir().unwrap();
    let folders = WorkFolders::new(
        work.path().join("code"),
        1_000,
        Duration::from_secs(60),
        None,
        TestClock::new(),
    );
    let lease = folders.acquire("c").unwrap();
    std::fs::write(lease.path.join("old.txt"), vec![b'o'; 400]).unwrap();
    let before = scan(&lease.path).unwrap();
    // The "call" writes past the quota: a new file and a new folder.
    std::fs::write(lease.path.join("big.bin"), vec![0u8; 900]).unwrap();
    std::fs::create_dir_all(lease.path.join("deep/er")).unwrap();
    std::fs::write(lease.path.join("deep/er/x"), "x").unwrap();
    let err = folders.enforce(&lease.path, &before).unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Denied);
    assert!(err.message.contains("quota"), "{err}");
    assert!(!lease.path.join("big.bin").exists());
    assert!(!lease.path.join("deep").exists());
    assert!(
        lease.path.join("old.txt").exists(),
        "earlier files are kept"
    );
    // Within the quota: nothing is removed.
    let before = scan(&lease.path).unwrap();
    std::fs::write(lease.path.join("small.txt"), "s").unwrap();
    folders.enforce(&lease.path, &before).unwrap();
    assert!(lease.path.join("small.txt").exists());
}

#[test]
fn run_code_enforces_the_work_folder_quota() {
    if !python() {
        return;
    }
    let root = skilldeck_testkit::Root::new();
    let host = host(
        &root,
        ExecConfig {
            code_quota_bytes: 10_000,
            ..code_on(SandboxProfile::None)
        },
    );
    let err = run(
        &host,
        "a",
        json!({"language": "python", "code": "open('big','wb').write(b'0'*20000)"}),
    )
    .unwrap_err();
    assert!(err.message.contains("quota"), "{err}");
    let check = run(
        &host,
        "a",
        json!({"language": "python", "code": "import os; print(os.path.exists('big'))"}),
    )
    .unwrap();
    assert_eq!(check.text.trim(), "False");
}

#[test]
fn an_idle_folder_expires_and_one_in_use_does_not() {
    let work = tempfile::tempdir().unwrap();
    let clock = TestClock::new();
    let folders = WorkFolders::new(
        work.path().join("code"),
        1_000_000,
        Duration::from_secs(60),
        None,
        clock.clone(),
    );
    let first = folders.acquire("a").unwrap();
    std::fs::write(first.path.join("kept"), "1").unwrap();
    drop(first);
    clock.advance(Duration::from_secs(59));
    assert_eq!(folders.sweep(), 0, "not idle long enough");
    // Used again before the idle time: its idle time restarts.
    let a = folders.acquire("a").unwrap();
    assert!(a.path.join("kept").exists());
    let b = folders.acquire("b").unwrap();
    drop(b);
    let b_path = folders.root().join(
        std::fs::read_dir(folders.root())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .find(|n| n != a.path.file_name().unwrap())
            .unwrap(),
    );
    clock.advance(Duration::from_secs(60));
    // `a` is held by a call: not removed; `b` is idle: removed.
    assert_eq!(folders.sweep(), 1);
    assert!(a.path.exists());
    assert!(!b_path.exists());
    let a_path = a.path.clone();
    drop(a);
    assert_eq!(folders.sweep(), 1);
    assert!(!a_path.exists());
    // The next call of `a` gets a fresh, empty folder.
    let a = folders.acquire("a").unwrap();
    assert!(!a.path.join("kept").exists());
    // Every folder goes with the host.
    let root = folders.root().to_path_buf();
    drop(a);
    drop(folders);
    assert!(!root.exists());
}

#[test]
fn run_code_in_the_sandbox_computes_and_cannot_write_outside() {
    if !python() {
        return;
    }
    let root = skilldeck_testkit::Root::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped.txt");
    let host = host(&root, code_on(SandboxProfile::Auto));
    let result = run(
        &host,
        "a",
        json!({"language": "python", "code": format!(
            "print(6*7)\ntry:\n    open({:?},'w').write('x')\n    print('wrote')\nexcept OSError as e:\n    print('refused')",
            target.display().to_string()
        )}),
    );
    let run = match result {
        Err(err) if err.kind == ToolErrorKind::Unavailable => {
            // No sandbox here: the refusal names what is missing.
            assert!(err.message.contains("was not run"), "{err}");
            eprintln!("refusal path tested: {err}");
            return;
        }
        other => other.unwrap(),
    };
    let lines: Vec<&str> = run.text.lines().collect();
    assert_eq!(lines[..2], ["42", "refused"], "{}", run.text);
    assert!(!target.exists(), "the code wrote outside its folders");
    // Fail loudly: where the write was counted (the native profile,
    // which `auto` picks when the machine has it), the model reads it.
    let note = format!("[sandbox refused: 1 write outside ({})]", target.display());
    if matches!(
        skilldeck_exec::best_profile(),
        Ok(skilldeck_exec::Profile::Native)
    ) {
        assert_eq!(lines[2..], ["", note.as_str()], "{}", run.text);
    } else {
        // bwrap refuses the write but does not count it.
        assert_eq!(lines.len(), 2, "{}", run.text);
    }
}

#[test]
fn run_code_with_a_skill_the_model_may_not_use_is_refused() {
    let root = skilldeck_testkit::Root::new();
    skilldeck_testkit::skill(&root, "private")
        .description("Private. Use when testing.")
        .field("disable-model-invocation", "true")
        .write();
    let host = host(&root, code_on(SandboxProfile::None));
    let err = run(
        &host,
        "a",
        json!({"language": "bash", "code": "echo hi", "skill": "private"}),
    )
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::NotModelInvocable, "{err}");
}

#[test]
fn run_code_refuses_bad_arguments_before_anything_runs() {
    let root = skilldeck_testkit::Root::new();
    let host = host(&root, code_on(SandboxProfile::None));
    for (call, field) in [
        (json!({"language": "cobol", "code": "x"}), "language"),
        (json!({"language": "python"}), "code"),
        (
            json!({"language": "python", "code": "x", "timeout": -1}),
            "timeout",
        ),
        (
            json!({"language": "python", "code": "x", "extra": 1}),
            "extra",
        ),
    ] {
        let err = run(&host, "a", call).unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::InvalidArguments, "{err}");
        assert!(err.message.contains(field), "{err}");
    }
    assert!(
        host.execution().unwrap().work_folders().unwrap().is_empty(),
        "no folder is made for a refused call"
    );
}

#[test]
fn a_conversation_that_ends_loses_its_work_folder() {
    if !python() {
        return;
    }
    let root = skilldeck_testkit::Root::new();
    let host = host(&root, code_on(SandboxProfile::None));
    run(
        &host,
        "a",
        json!({"language": "python", "code": "open('f','w').write('x')"}),
    )
    .unwrap();
    let folders = host.execution().unwrap().work_folders().unwrap();
    assert_eq!(folders.len(), 1);
    host.end_conversation("a");
    assert!(folders.is_empty());
    let again = run(
        &host,
        "a",
        json!({"language": "python", "code": "import os; print(os.path.exists('f'))"}),
    )
    .unwrap();
    assert_eq!(again.text.trim(), "False");
}
