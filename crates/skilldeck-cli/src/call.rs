//! `skilldeck call NAME TOOL --args JSON`: a tool a skill declares
//! (`tools:`, seed 004's `entry_points`) or a LangChain package's tool, its
//! arguments checked against its schema by the host before
//! anything runs, then its `run` script in the sandbox with the arguments
//! as JSON on stdin. Stdout is the result (structured when it is JSON).
//! The host's [`Execution`] finds the tool, checks the arguments and runs
//! it (the flags are explicit [`Overrides`]); this module maps flags and
//! renders.

use std::io::Write;
use std::time::Duration;

use skilldeck_exec::{CallContext, Profile};
use skilldeck_host::SkillTools;
use skilldeck_host::execution::{Execution, Overrides};

use crate::context::Context;
use crate::error::CliError;
use crate::format::{self, Format};
use crate::render;
use crate::run::{call_context, execution, exit_status, not_run, parse_profile, parse_timeout};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The skill's name.
    #[arg(add = crate::context::skill_names())]
    name: String,
    /// The tool's name as the skill declares it (or its full name,
    /// `{skill}__{tool}`).
    tool: String,
    /// The arguments, a JSON object checked against the tool's schema.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    args: String,
    /// Wall-clock timeout in seconds (default: `[exec] timeout-secs`).
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    timeout: Option<Duration>,
    /// Isolation profile (default: `[exec] sandbox`).
    #[arg(long, value_name = "PROFILE", value_parser = parse_profile)]
    sandbox: Option<Profile>,
    /// Output format: text (the tool's stdout) or json (`result`,
    /// `structured`, and the run's outcome).
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

pub fn run(args: &Args, ctx: &Context) -> Result<u8, CliError> {
    let deck = ctx.deck();
    let execution = execution(ctx)?;
    // A LangChain package's tools are found by its worker in the sandbox
    // (the explicit `call` may run skill code).
    let packages = execution.packages();
    let tools = SkillTools::build_with(deck, Some(&packages));
    let full_name =
        Execution::tool_full_name(deck, &tools, &args.name, &args.tool).map_err(not_run)?;
    let prepared = Execution::prepare_tool_json(
        deck,
        &tools,
        &full_name,
        &args.args,
        CallContext {
            tool: full_name.clone(),
            ..call_context()
        },
    )
    .map_err(not_run)?;
    let overrides = Overrides {
        timeout: args.timeout,
        profile: args.sandbox,
    };
    let outcome = execution.execute(prepared, &overrides)?;
    let structured: Option<serde_json::Value> = serde_json::from_slice(&outcome.stdout).ok();
    if args.format == Format::Json {
        let mut out = render::stdout();
        render::write_json(
            &mut out,
            &serde_json::json!({
                "tool": full_name,
                "result": structured.clone().unwrap_or_else(|| String::from_utf8_lossy(&outcome.stdout).into_owned().into()),
                "structured": structured.is_some(),
                "outcome": outcome,
            }),
        )?;
        out.flush()?;
    } else {
        let mut out = render::text_stdout();
        out.write_all(&outcome.stdout)?;
        out.flush()?;
        if !outcome.stderr.is_empty() {
            eprint!(
                "{}",
                render::safe(&String::from_utf8_lossy(&outcome.stderr))
            );
        }
        if outcome.timed_out {
            eprintln!(
                "skilldeck: '{}' timed out; its process tree was killed",
                full_name
            );
        }
    }
    Ok(exit_status(&outcome))
}
