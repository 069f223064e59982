//! `skilldeck registry test-run NS/NAME[@VERSION] ...`: run one tool or
//! script of a published version in the registry host's sandbox (the
//! registry's strict test-run policy), through its API; or `--list` what
//! can run. The rules (who may, the policy, the audit, the rate limit)
//! live in the registry.

use std::io::Write;

use skilldeck_registry::wire::{TestRunRequest, TestRunResult, TestRunTargets};

use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::registry_client::{ClientArgs, failed, parse_spec};
use crate::render;

/// `test-run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The version: `NS/NAME[@VERSION|@LABEL]` (default: latest).
    skill: String,
    /// Run this tool the version declares (its name or full name).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["script", "list"])]
    tool: Option<String>,
    /// The tool's arguments, a JSON object (default `{}`).
    #[arg(long, value_name = "JSON", requires = "tool")]
    arguments: Option<String>,
    /// Run this file under the version's `scripts/` folder; arguments
    /// follow `--`.
    #[arg(long, value_name = "PATH", conflicts_with = "list")]
    script: Option<String>,
    /// List the tools and scripts a test run can run, and its policy.
    #[arg(long)]
    list: bool,
    /// The script's arguments (after `--`).
    #[arg(last = true, value_name = "ARGS", requires = "script")]
    args: Vec<String>,
    #[command(flatten)]
    client: ClientArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

/// The request the flags describe.
fn request(args: &Args) -> Result<TestRunRequest, CliError> {
    let arguments = match &args.arguments {
        None => None,
        Some(text) => {
            let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
                CliError::Usage(format!(
                    "--arguments: not JSON ({e}); pass an object, e.g. --arguments '{{\"query\": \"x\"}}'"
                ))
            })?;
            if !value.is_object() {
                return Err(CliError::Usage(
                    "--arguments: expected a JSON object, e.g. --arguments '{\"query\": \"x\"}'"
                        .to_owned(),
                ));
            }
            Some(value)
        }
    };
    match (&args.tool, &args.script) {
        (Some(tool), None) => Ok(TestRunRequest {
            tool: Some(tool.clone()),
            arguments,
            script: None,
            args: Vec::new(),
        }),
        (None, Some(script)) => Ok(TestRunRequest {
            tool: None,
            arguments: None,
            script: Some(script.clone()),
            args: args.args.clone(),
        }),
        _ => Err(CliError::Usage(format!(
            "say what to run: --tool NAME [--arguments JSON] or --script PATH [-- ARGS] \
             (see what {} offers with --list)",
            args.skill
        ))),
    }
}

/// Runs `test-run`: exits with the run's own status (124 on timeout, 128
/// + the signal), as `skilldeck run` does.
pub fn run(args: &Args) -> Result<u8, CliError> {
    let (skill, version) = parse_spec(&args.skill)?;
    let json = args.format == Format::Json;
    if args.list {
        let targets = match args.client.client()?.test_run_targets(&skill, &version) {
            Ok(t) => t,
            Err(e) => return failed(e),
        };
        let mut out = render::stdout_for(json);
        if json {
            render::write_json(&mut out, &targets)?;
        } else {
            write_targets(&mut out, &skill.to_string(), &targets)?;
        }
        out.flush()?;
        return Ok(exit::OK);
    }
    let request = request(args)?;
    let result = match args.client.client()?.test_run(&skill, &version, &request) {
        Ok(r) => r,
        Err(e) => return failed(e),
    };
    if json {
        let mut out = render::stdout_for(true);
        render::write_json(&mut out, &result)?;
        out.flush()?;
    } else {
        write_result(&result)?;
    }
    let o = &result.outcome;
    Ok(crate::run::exit_status_of(
        o.timed_out,
        o.exit_code,
        o.signal,
    ))
}

fn write_targets(out: &mut dyn Write, skill: &str, t: &TestRunTargets) -> std::io::Result<()> {
    writeln!(out, "{skill}@{}", t.version)?;
    if t.tools.is_empty() {
        writeln!(out, "tools: none")?;
    } else {
        writeln!(out, "tools:")?;
        for tool in &t.tools {
            writeln!(
                out,
                "  {}  {}",
                render::safe(&tool.name),
                render::safe(&tool.description)
            )?;
        }
    }
    if t.scripts.is_empty() {
        writeln!(out, "scripts: none")?;
    } else {
        writeln!(out, "scripts:")?;
        for script in &t.scripts {
            writeln!(out, "  {}", render::safe(script))?;
        }
    }
    let p = &t.policy;
    writeln!(
        out,
        "policy: {} ({}), network {}, timeout {} s, memory {} MiB, {} processes",
        p.profile,
        p.layers.join(", "),
        if p.network { "on" } else { "off" },
        p.timeout_secs,
        p.memory_bytes / (1024 * 1024),
        p.max_processes
    )
}

/// The run's output on stdout and stderr, then one line on stderr saying
/// what ran, under which policy, and how it ended.
fn write_result(r: &TestRunResult) -> std::io::Result<()> {
    let o = &r.outcome;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(render::safe(&o.stdout).as_bytes())?;
    stdout.flush()?;
    let mut err = std::io::stderr().lock();
    err.write_all(render::safe(&o.stderr).as_bytes())?;
    let what = r
        .tool
        .as_deref()
        .or(r.script.as_deref())
        .unwrap_or("(nothing)");
    let ended = if o.timed_out {
        format!("timed out after {} s", o.policy.timeout_secs)
    } else {
        match (o.exit_code, o.signal) {
            (Some(code), _) => format!("exit {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            (None, None) => "no exit status".to_owned(),
        }
    };
    writeln!(
        err,
        "skilldeck: test run of {}/{}@{} {}: {ended} in {} ms ({} sandbox, network off)",
        r.namespace,
        r.name,
        r.version,
        render::safe(what),
        o.duration_ms,
        o.policy.profile
    )?;
    if o.stdout_truncated || o.stderr_truncated {
        writeln!(
            err,
            "skilldeck: output truncated at {} bytes per stream",
            o.policy.output_cap_bytes
        )?;
    }
    if let Some(summary) = &o.refusals_summary {
        writeln!(err, "skilldeck: sandbox refused: {}", render::safe(summary))?;
    }
    err.flush()
}
