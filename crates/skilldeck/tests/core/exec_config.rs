//! `[exec]` in `skilldeck.toml`: defaults from the named constants, every
//! key, caps and unknown keys refused with the file and line.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use skilldeck::Error;
use skilldeck::deck::{
    ExecConfig, SandboxProfile, SkillGrant, ToolExposure, TreeLimitsMode, is_env_name,
};
use skilldeck::limits::{
    DEFAULT_EXEC_TIMEOUT_SECS, DEFAULT_EXEC_WORKDIR_BYTES, MAX_EXEC_TIMEOUT_SECS,
};

use crate::common::parse;

fn config_error(text: &str) -> (u32, String) {
    match parse(text) {
        Err(Error::Config {
            path,
            line,
            message,
            ..
        }) => {
            assert_eq!(path, Path::new("/cfg/skilldeck.toml"));
            (line, message)
        }
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[test]
fn exec_defaults_are_off_with_the_named_limits() {
    let exec = parse("").unwrap().exec;
    assert!(!exec.enabled && !exec.dynamic_context);
    assert_eq!(exec.sandbox, SandboxProfile::Auto);
    assert_eq!(exec.tools, ToolExposure::OnActivate);
    assert_eq!(exec.timeout_secs, DEFAULT_EXEC_TIMEOUT_SECS);
    assert_eq!(exec.output_cap_bytes, 1024 * 1024);
    assert_eq!(exec.concurrency, 3);
    assert_eq!(exec.tree_limits, TreeLimitsMode::Auto);
    assert_eq!(exec.workdir_bytes, DEFAULT_EXEC_WORKDIR_BYTES);
    assert_eq!(exec, ExecConfig::default());
    assert_eq!(exec.grant("anything"), SkillGrant::default());
}

#[test]
fn exec_section_parses_every_key_and_per_skill_grants() {
    let exec = parse(
        "[exec]\nenabled = true\nsandbox = \"bwrap\"\ntimeout-secs = 5\noutput-cap-bytes = 4096\n\
         memory-bytes = 1000000\nmax-processes = 8\nfile-size-bytes = 100\ncpu-secs = 2\n\
         workdir-bytes = 4096\ntree-limits = \"require\"\n\
         concurrency = 2\nqueue = 0\nenv = [\"LANG_X\"]\ntools = \"always\"\ndynamic-context = true\n\
         [exec.skills.web-fetch]\nnetwork = true\nread = [\"data\"]\nenv = [\"API_TOKEN\"]\n",
    )
    .unwrap()
    .exec;
    assert!(exec.enabled && exec.dynamic_context);
    assert_eq!(exec.sandbox, SandboxProfile::Bwrap);
    assert_eq!(exec.tools, ToolExposure::Always);
    assert_eq!((exec.timeout_secs, exec.output_cap_bytes), (5, 4096));
    assert_eq!((exec.memory_bytes, exec.max_processes), (1_000_000, 8));
    assert_eq!((exec.file_size_bytes, exec.cpu_secs), (100, 2));
    assert_eq!(exec.workdir_bytes, 4096);
    assert_eq!(exec.tree_limits, TreeLimitsMode::Require);
    assert_eq!((exec.concurrency, exec.queue), (2, 0));
    assert_eq!(exec.env, vec!["LANG_X".to_owned()]);
    let grant = exec.grant("web-fetch");
    assert!(grant.network.is_all());
    assert_eq!(grant.read, vec![PathBuf::from("data")]);
    assert_eq!(grant.env, vec!["API_TOKEN".to_owned()]);
    assert!(!exec.grant("other").network.is_granted());
}

#[test]
fn a_timeout_over_the_cap_is_refused_with_its_line() {
    let (line, message) = config_error(&format!(
        "[exec]\nenabled = true\ntimeout-secs = {}\n",
        MAX_EXEC_TIMEOUT_SECS + 1
    ));
    assert_eq!(line, 3);
    assert!(
        message.contains("timeout-secs must be between 1 and"),
        "{message}"
    );
    let (line, _) = config_error("[exec]\ntimeout-secs = 0\n");
    assert_eq!(line, 2);
}

#[test]
fn exec_limits_are_capped_and_positive() {
    assert_eq!(config_error("[exec]\nconcurrency = 0\n").0, 2);
    assert_eq!(config_error("[exec]\nconcurrency = 1000\n").0, 2);
    assert_eq!(config_error("[exec]\nqueue = 100000\n").0, 2);
    assert_eq!(config_error("[exec]\nmemory-bytes = 0\n").0, 2);
    assert_eq!(
        config_error("[exec]\n\noutput-cap-bytes = 999999999999\n").0,
        3
    );
}

#[test]
fn unknown_exec_keys_and_bad_values_are_errors_with_their_line() {
    let (line, message) = config_error("[exec]\nenabled = true\nnetwork = true\n");
    assert_eq!(line, 3);
    assert!(message.contains("network"), "{message}");
    assert_eq!(config_error("[exec]\nsandbox = \"docker\"\n").0, 2);
    assert_eq!(config_error("[exec]\ntools = \"sometimes\"\n").0, 2);
    assert_eq!(config_error("[exec]\ntree-limits = \"maybe\"\n").0, 2);
    assert_eq!(config_error("[exec]\n\nworkdir-bytes = 0\n").0, 3);
    assert_eq!(
        config_error("[exec.skills.x]\nnetwork = true\nwrite = [\"/\"]\n").0,
        3
    );
    let (line, message) = config_error("[exec]\nenv = [\"OK\", \"BAD=1\"]\n");
    assert_eq!(line, 2);
    assert!(message.contains("BAD=1"), "{message}");
}

#[test]
fn the_sample_config_has_an_exec_section_with_the_defaults() {
    let text = include_str!("../../../../examples/skilldeck.toml");
    let exec = parse(text).unwrap().exec;
    assert_eq!(exec.timeout_secs, DEFAULT_EXEC_TIMEOUT_SECS);
    assert!(!exec.enabled);
    assert!(exec.skills.contains_key("pdf"));
}

#[test]
fn env_names_are_portable_identifiers() {
    assert!(is_env_name("PATH") && is_env_name("_x1"));
    assert!(!is_env_name("") && !is_env_name("1A") && !is_env_name("A-B") && !is_env_name("A=B"));
}

#[test]
fn registry_env_lists_the_names_a_registry_may_grant_and_refuses_reserved_ones() {
    let exec = parse("[exec]\nregistry-env = [\"API_TOKEN\", \"GITHUB_TOKEN\"]\n")
        .unwrap()
        .exec;
    assert_eq!(exec.registry_env, ["API_TOKEN", "GITHUB_TOKEN"]);
    assert!(ExecConfig::default().registry_env.is_empty());
    for reserved in [
        "PATH",
        "LD_PRELOAD",
        "PYTHONPATH",
        "NODE_OPTIONS",
        "BASH_ENV",
        "path",
    ] {
        let (line, message) = config_error(&format!(
            "[exec]\ntimeout-secs = 5\nregistry-env = [\"{reserved}\"]\n"
        ));
        assert_eq!(line, 3, "{message}");
        assert!(
            message.contains(reserved) && message.contains("reserved"),
            "{message}"
        );
    }
}

#[test]
fn loader_and_interpreter_variables_are_reserved_and_ordinary_secrets_are_not() {
    use skilldeck::deck::is_reserved_env_name;
    for name in [
        "PATH",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "DYLD_INSERT_LIBRARIES",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "NODE_OPTIONS",
        "BASH_ENV",
        "ENV",
        "IFS",
        "HOME",
        "SKILLDECK_WORKDIR",
        "GLIBC_TUNABLES",
        "PERL5OPT",
        "RUBYOPT",
        "JAVA_TOOL_OPTIONS",
    ] {
        assert!(is_reserved_env_name(name), "{name}");
    }
    for name in [
        "API_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "GITHUB_TOKEN",
        "ENVIRONMENT",
        "PATHS_FILE",
    ] {
        assert!(!is_reserved_env_name(name), "{name}");
    }
}

#[test]
fn a_network_grant_is_a_boolean_or_a_list_of_host_names() {
    let exec = parse(
        "[exec]\nnetwork-allow-ranges = [\"10.1.0.0/16\", \"fd12:3456::/48\"]\n\
         [exec.skills.gh]\nnetwork = [\"API.github.com\", \"*.pypi.org\", \"api.github.com\"]\n\
         [exec.skills.all]\nnetwork = true\n[exec.skills.empty]\nnetwork = []\n",
    )
    .unwrap()
    .exec;
    let gh = exec.grant("gh").network;
    let names: Vec<&str> = gh.hosts().iter().map(|p| p.as_str()).collect();
    assert_eq!(
        names,
        ["api.github.com", "*.pypi.org"],
        "lowercased, once each"
    );
    assert!(gh.allows_host("files.pypi.org") && !gh.allows_host("pypi.org"));
    assert!(!gh.allows_host("evil.com"));
    assert!(exec.grant("all").network.is_all());
    assert!(!exec.grant("empty").network.is_granted());
    assert_eq!(exec.network_allow_ranges.len(), 2);
    assert!(ExecConfig::default().network_allow_ranges.is_empty());
}

#[test]
fn a_bad_host_pattern_or_range_is_a_config_error_with_its_line_and_the_fix() {
    for (bad, says) in [
        ("\"*\"", "network = true"),
        ("\"*.com\"", "at least two labels"),
        ("\"10.0.0.1\"", "network-allow-ranges"),
        ("\"bücher.de\"", "xn--"),
        ("\"a.com:443\"", "letters, digits"),
    ] {
        let (line, message) =
            config_error(&format!("[exec.skills.x]\nread = []\nnetwork = [{bad}]\n"));
        assert_eq!(line, 3, "{bad}: {message}");
        assert!(message.contains(says), "{bad}: {message}");
    }
    let (line, message) = config_error("[exec.skills.x]\nnetwork = \"yes\"\n");
    assert_eq!(line, 2);
    assert!(message.contains("true, false or a list"), "{message}");
    let (line, message) = config_error("[exec]\n\nnetwork-allow-ranges = [\"10.1.2.3/16\"]\n");
    assert_eq!(line, 3);
    assert!(message.contains("10.1.0.0/16"), "{message}");
}
