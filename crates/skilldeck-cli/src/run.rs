//! `skilldeck run NAME PATH [-- ARGS...]`: one file of a skill, run in the
//! sandbox. The host's [`Execution`] does it all: finds the skill (served
//! skills only), keeps the path in the skill folder
//! ([`ScriptScope::SkillFolder`], the rules of `read`), applies the
//! `[exec]` policy with the flags as explicit [`Overrides`]. This module
//! only maps flags and renders.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use skilldeck_exec::{CallContext, Input, Outcome, Profile};
use skilldeck_host::execution::{Execution, Overrides, ScriptScope};
use skilldeck_host::{HostOptions, ToolError};

use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The skill's name.
    #[arg(add = crate::context::skill_names())]
    name: String,
    /// The file to run, relative to the skill folder (e.g. scripts/extract.py).
    path: String,
    /// Arguments passed to the script (after `--`).
    #[arg(last = true)]
    args: Vec<String>,
    /// Wall-clock timeout in seconds (default 30, at most 600); the whole
    /// process tree is killed when it passes.
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    timeout: Option<Duration>,
    /// Isolation profile: `native` (Landlock + seccomp + namespaces; refuses
    /// when a layer is missing), `bwrap` (bubblewrap + seccomp; refuses
    /// when bwrap is not installed) or `none` (no isolation: the
    /// operator's explicit choice).
    /// (Default: `[exec] sandbox` in the config, `auto`: native when every
    /// layer is there, else bwrap.)
    #[arg(long, value_name = "PROFILE", value_parser = parse_profile)]
    sandbox: Option<Profile>,
    /// Output format: text (the script's stdout and stderr as they are) or
    /// json (one object: exit_code, signal, timed_out, stdout, stderr, ...).
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

pub fn parse_timeout(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    skilldeck_exec::timeout_from_secs(secs)
}

pub fn parse_profile(s: &str) -> Result<Profile, String> {
    Profile::parse(s)
        .ok_or_else(|| format!("'{s}': the sandbox profile is `native`, `bwrap` or `none`"))
}

/// The exit status of a run: the script's code, 124 on timeout, 128 + the
/// signal when killed.
pub fn exit_status(outcome: &Outcome) -> u8 {
    exit_status_of(outcome.timed_out, outcome.exit_code, outcome.signal)
}

/// [`exit_status`] from its parts (a run reported by a registry's test
/// run has no [`Outcome`]).
pub fn exit_status_of(timed_out: bool, exit_code: Option<i32>, signal: Option<i32>) -> u8 {
    if timed_out {
        return exit::TIMED_OUT;
    }
    match (exit_code, signal) {
        (Some(code), _) => u8::try_from(code & 0xff).unwrap_or(exit::EXEC_REFUSED),
        (None, Some(sig)) => u8::try_from((128 + sig).min(255)).unwrap_or(255),
        (None, None) => exit::EXEC_REFUSED,
    }
}

/// The host's execution service under the config's `[exec]` section
/// (grant paths resolved against the config file's folder).
pub fn execution(ctx: &Context) -> Result<Execution, CliError> {
    let options = HostOptions::from_config(&ctx.config, ctx.discovery_options())?;
    Ok(Execution::new(options.exec))
}

/// Who calls, for the trace and the script's `SKILLDECK_*` variables.
pub fn call_context() -> CallContext {
    CallContext::local("cli")
}

/// A call the host refused before anything ran (unknown skill or tool,
/// invalid arguments): a usage error.
pub fn not_run(e: ToolError) -> CliError {
    CliError::Usage(e.message)
}

pub fn run(args: &Args, ctx: &Context) -> Result<u8, CliError> {
    let execution = execution(ctx)?;
    let prepared = Execution::prepare_script(
        ctx.deck(),
        &args.name,
        &args.path,
        ScriptScope::SkillFolder,
        args.args.clone(),
        Input::Inherit,
        CallContext {
            tool: args.path.clone(),
            ..call_context()
        },
    )
    .map_err(not_run)?;
    let overrides = Overrides {
        timeout: args.timeout,
        profile: args.sandbox,
    };
    let outcome = execution.execute(prepared, &overrides)?;
    if args.format == Format::Json {
        let mut out = render::stdout();
        render::write_json(&mut out, &outcome)?;
        out.flush()?;
    } else {
        write_stream(
            &outcome.stdout,
            std::io::stdout().is_terminal(),
            &mut std::io::stdout(),
        )?;
        write_stream(
            &outcome.stderr,
            std::io::stderr().is_terminal(),
            &mut std::io::stderr(),
        )?;
        let cap = outcome.policy.limits.output_cap;
        if outcome.stdout_truncated {
            eprintln!("skilldeck: stdout truncated at {cap} bytes");
        }
        if outcome.stderr_truncated {
            eprintln!("skilldeck: stderr truncated at {cap} bytes");
        }
        if outcome.timed_out {
            eprintln!(
                "skilldeck: timed out after {} ms; the script's process tree was killed",
                outcome.policy.limits.timeout.as_millis()
            );
        } else if let Some(sig) = outcome.signal {
            eprintln!("skilldeck: the script was killed by signal {sig}");
        }
    }
    Ok(exit_status(&outcome))
}

/// The script's bytes as they are, except to a terminal (control
/// characters replaced, as for all skill text).
fn write_stream(bytes: &[u8], terminal: bool, out: &mut dyn Write) -> std::io::Result<()> {
    if terminal {
        out.write_all(render::safe(&String::from_utf8_lossy(bytes)).as_bytes())?;
    } else {
        out.write_all(bytes)?;
    }
    out.flush()
}
