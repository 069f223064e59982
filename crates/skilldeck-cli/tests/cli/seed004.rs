//! Seed 004's skills as written, run safely: the `weather_forecast` agent
//! skill's two entry points and a `langchain_tool` package's tools, listed
//! over MCP and by `skilldeck call`, each run in the bwrap sandbox (the
//! sandbox's uid, no network), the package never imported by skilldeck
//! itself.
//!
//! The sandbox: profile `bwrap`. Without it these tests say so and pass,
//! unless `SKILLDECK_TEST_REQUIRE_BWRAP=1` (CI), which makes them fail.
//! LangChain: `SKILLDECK_TEST_LANGCHAIN_PYTHON` names a Python with
//! `langchain-core` (scripts/test-langchain-tools.sh prepares a venv);
//! without it the LangChain tests say so and pass, unless
//! `SKILLDECK_TEST_REQUIRE_LANGCHAIN=1`, which makes them fail.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use skilldeck_exec::SANDBOX_UID;
use skilldeck_testkit::mcp::{StdioClient, text};
use skilldeck_testkit::seeds::copy_seed_004;

/// Profile bwrap runs here; with `SKILLDECK_TEST_REQUIRE_BWRAP=1`, a
/// failure when it does not.
fn bwrap_ready() -> bool {
    let layer = &skilldeck_exec::probe().bwrap_layer;
    if std::env::var_os("SKILLDECK_TEST_REQUIRE_BWRAP").is_some_and(|v| v == "1") {
        assert!(
            layer.available,
            "SKILLDECK_TEST_REQUIRE_BWRAP=1 but {}",
            layer.detail
        );
    }
    if !layer.available {
        eprintln!(
            "bwrap unavailable, sandboxed runs not tested: {}",
            layer.detail
        );
    }
    layer.available
}

/// The Python with langchain-core the tests point `[exec] python` at;
/// with `SKILLDECK_TEST_REQUIRE_LANGCHAIN=1`, a failure when there is none.
fn langchain_python() -> Option<PathBuf> {
    let python = std::env::var_os("SKILLDECK_TEST_LANGCHAIN_PYTHON").map(PathBuf::from);
    if std::env::var_os("SKILLDECK_TEST_REQUIRE_LANGCHAIN").is_some_and(|v| v == "1") {
        let p = python.as_ref().expect(
            "SKILLDECK_TEST_REQUIRE_LANGCHAIN=1 but SKILLDECK_TEST_LANGCHAIN_PYTHON is not set \
             (run scripts/test-langchain-tools.sh)",
        );
        assert!(p.is_file(), "{} is not a file", p.display());
    }
    if python.is_none() {
        eprintln!(
            "SKILLDECK_TEST_LANGCHAIN_PYTHON not set: the LangChain package tests did not run \
             (scripts/test-langchain-tools.sh runs them)"
        );
    }
    python
}

/// A project folder: `skills/` with seed 004's `names` copied in, and a
/// `skilldeck.toml` turning execution on (bwrap, tools always offered)
/// with `extra` lines in `[exec]`.
fn project(names: &[&str], extra: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for name in names {
        copy_seed_004(name, &tmp.path().join("skills"));
    }
    std::fs::write(
        tmp.path().join("skilldeck.toml"),
        format!(
            "[exec]\nenabled = true\nsandbox = \"bwrap\"\ntools = \"always\"\ntimeout-secs = 60\n{extra}"
        ),
    )
    .unwrap();
    std::fs::create_dir_all(tmp.path().join("markers")).unwrap();
    tmp
}

fn command(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_skilldeck"));
    c.args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        // A package imported by skilldeck itself would leave its marker
        // here (the sandbox never sees this variable).
        .env("WEATHER_TOOL_MARKER_DIR", dir.join("markers"));
    c
}

fn serve(dir: &Path) -> StdioClient {
    StdioClient::start(command(dir, &["serve", "--no-watch", "--root", "skills"]))
}

fn cli(dir: &Path, args: &[&str]) -> Output {
    command(dir, args)
        .arg("--root")
        .arg("skills")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} not listed: {tools:#?}"))
}

fn list(client: &mut StdioClient) -> Vec<Value> {
    let answer = client.request("tools/list", json!({}));
    answer["result"]["tools"].as_array().unwrap().clone()
}

/// Nothing of the package was imported by skilldeck itself: no marker.
fn assert_no_marker(dir: &Path) {
    let markers: Vec<String> = std::fs::read_dir(dir.join("markers"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        markers.is_empty(),
        "the package was imported outside the sandbox: {markers:?}"
    );
}

#[test]
fn seed_004_weather_forecast_entry_points_run_in_the_sandbox_over_mcp() {
    if !bwrap_ready() {
        return;
    }
    let tmp = project(&["weather_forecast"], "");
    let mut client = serve(tmp.path());
    let tools = list(&mut client);
    let current = tool(&tools, "weather_forecast__get_current");
    assert_eq!(current["description"], "Get current weather");
    assert_eq!(
        current["inputSchema"]["properties"]["args"]["items"]["type"],
        "string"
    );
    assert_eq!(
        tool(&tools, "weather_forecast__get_forecast")["description"],
        "Get 7-day forecast"
    );

    // `args`: the command line.
    let result = client.call(
        "weather_forecast__get_current",
        json!({"args": ["New", "York"]}),
    );
    assert_ne!(result["isError"], true, "{result}");
    let out: Value = serde_json::from_str(&text(&result)).unwrap();
    assert_eq!(out["location"], "New York");
    assert_eq!(out["sky"], "sunny");
    assert_eq!(out["uid"], SANDBOX_UID);

    // `input`: a JSON object on stdin.
    let result = client.call(
        "weather_forecast__get_forecast",
        json!({"input": {"location": "Paris", "days": 3}}),
    );
    assert_ne!(result["isError"], true, "{result}");
    let out: Value = serde_json::from_str(&text(&result)).unwrap();
    assert_eq!(out["days"].as_array().unwrap().len(), 3);
    assert_eq!(out["uid"], SANDBOX_UID);

    // Checked against the entry point's schema before anything runs.
    let refused = client.call("weather_forecast__get_current", json!({"args": [7]}));
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text(&refused).contains("/args/0"), "{}", text(&refused));
}

#[test]
fn skilldeck_call_runs_an_entry_point_with_its_arguments() {
    if !bwrap_ready() {
        return;
    }
    let tmp = project(&["weather_forecast"], "");
    let o = cli(
        tmp.path(),
        &[
            "call",
            "weather_forecast",
            "get_current",
            "--args",
            r#"{"args": ["London"]}"#,
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(out["sky"], "cloudy");
    assert_eq!(out["uid"], SANDBOX_UID);
}

#[test]
fn a_langchain_tool_is_listed_over_mcp_with_its_pydantic_schema_and_runs_in_the_sandbox() {
    if !bwrap_ready() {
        return;
    }
    let Some(python) = langchain_python() else {
        return;
    };
    let tmp = project(
        &["weather-tool"],
        &format!("python = {:?}\n", python.display().to_string()),
    );
    let mut client = serve(tmp.path());
    let tools = list(&mut client);
    let weather = tool(&tools, "weather_tool__get_weather");
    assert_eq!(weather["description"], "Get the current weather of a city.");
    let schema = &weather["inputSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["city"]));
    assert_eq!(schema["properties"]["city"]["type"], "string");
    assert_eq!(
        schema["properties"]["units"]["enum"],
        json!(["metric", "imperial"])
    );
    tool(&tools, "weather_tool__sandbox_report");

    let result = client.call(
        "weather_tool__get_weather",
        json!({"city": "Paris", "units": "imperial"}),
    );
    assert_ne!(result["isError"], true, "{result}");
    assert_eq!(
        result["structuredContent"],
        json!({"city": "Paris", "sky": "sunny", "temperature": 63.5, "units": "imperial"})
    );

    // Checked against the pydantic model's schema before anything runs.
    let refused = client.call("weather_tool__get_weather", json!({"units": "kelvin"}));
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text(&refused).contains("city"), "{}", text(&refused));

    // The tool's own error reaches the caller as a tool error.
    let failed = client.call("weather_tool__forecast_archive", json!({"city": "Oslo"}));
    assert_eq!(failed["isError"], true, "{failed}");
    assert!(
        text(&failed).contains("the forecast archive for Oslo is offline"),
        "{}",
        text(&failed)
    );

    // The sandbox's uid, and no network: a port this test listens on on
    // loopback is out of reach, and nothing connects to it.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let result = client.call("weather_tool__sandbox_report", json!({"port": port}));
    assert_ne!(result["isError"], true, "{result}");
    let report = &result["structuredContent"];
    assert_eq!(report["uid"], SANDBOX_UID, "{report}");
    assert!(
        report["network"]
            .as_str()
            .unwrap()
            .starts_with("unreachable"),
        "{report}"
    );
    assert!(
        listener.accept().is_err(),
        "the sandboxed tool reached the host's loopback"
    );
    drop(client);
    assert_no_marker(tmp.path());
}

#[test]
fn skilldeck_call_runs_a_langchain_tool_and_never_imports_the_package() {
    if !bwrap_ready() {
        return;
    }
    let Some(python) = langchain_python() else {
        return;
    };
    let tmp = project(
        &["weather-tool"],
        &format!("python = {:?}\n", python.display().to_string()),
    );
    let o = cli(
        tmp.path(),
        &[
            "call",
            "weather-tool",
            "get_weather",
            "--args",
            r#"{"city": "London"}"#,
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(out["sky"], "cloudy");
    assert_eq!(out["units"], "metric");
    assert_no_marker(tmp.path());
}

#[test]
fn a_langchain_package_without_langchain_core_says_how_to_fix_it() {
    if !bwrap_ready() {
        return;
    }
    // The system Python has no langchain-core: the worker says so.
    let Some(system) = skilldeck_exec::on_sandbox_path("python3") else {
        eprintln!("no python3: not tested");
        return;
    };
    let has_langchain = Command::new(&system)
        .args(["-I", "-c", "import langchain_core"])
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success();
    if has_langchain {
        eprintln!("the system python3 has langchain-core: not tested");
        return;
    }
    let tmp = project(
        &["weather-tool"],
        &format!("python = {:?}\n", system.display().to_string()),
    );
    let o = cli(
        tmp.path(),
        &["call", "weather-tool", "get_weather", "--args", "{}"],
    );
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("langchain-core is not importable"),
        "{stderr}"
    );
    assert_no_marker(tmp.path());
}
