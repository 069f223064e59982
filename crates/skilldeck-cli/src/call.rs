//! `skilldeck call NAME TOOL --args JSON`: a tool a skill declares
//! (`tools:`), its arguments checked against its schema by the host before
//! anything runs, then its `run` script in the sandbox with the arguments
//! as JSON on stdin. Stdout is the result (structured when it is JSON).

use std::io::Write;
use std::time::Duration;

use skilldeck_exec::{CallContext, Executor, Input, Profile, Request};
use skilldeck_host::SkillTools;

use crate::context::Context;
use crate::error::CliError;
use crate::format::{self, Format};
use crate::render;
use crate::run::{exit_status, parse_profile, parse_timeout};

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
    let tools = SkillTools::build(deck);
    let declared = tools.of_skill(deck, &args.name)?;
    let Some(tool) = declared
        .iter()
        .find(|t| t.tool.name.to_string() == args.tool || t.full_name == args.tool)
    else {
        let names: Vec<String> = declared.iter().map(|t| t.tool.name.to_string()).collect();
        return Err(CliError::Usage(format!(
            "skill '{}' declares no tool '{}'; {}",
            args.name,
            args.tool,
            if names.is_empty() {
                "it declares none".to_owned()
            } else {
                format!("its tools: {}", names.join(", "))
            }
        )));
    };
    let arguments: serde_json::Value = serde_json::from_str(&args.args).map_err(|e| {
        CliError::Host(skilldeck_host::Error::ToolArgumentsNotJson {
            tool: tool.full_name.to_owned(),
            message: e.to_string(),
        })
    })?;
    tools.check_arguments(deck, tool.full_name, &arguments)?;
    let mut policy = skilldeck_exec::policy_from_config(&ctx.config, &tool.skill.name)?;
    if let Some(profile) = args.sandbox {
        policy.profile = profile;
    }
    if let Some(t) = args.timeout {
        policy.limits.timeout = t;
    }
    let stdin = serde_json::to_vec(&arguments).map_err(std::io::Error::other)?;
    let request = Request {
        skill: tool.skill,
        path: &tool.tool.run,
        args: Vec::new(),
        stdin: Input::Bytes(stdin),
        context: CallContext {
            agent_id: "cli".to_owned(),
            user_id: std::env::var("USER").unwrap_or_default(),
            session_id: format!("cli-{}", std::process::id()),
            call_id: String::new(),
            tool: tool.full_name.to_owned(),
        },
    };
    let executor = Executor::new(skilldeck_exec::executor_config(&ctx.config));
    let outcome = executor.run(request, &policy)?;
    let structured: Option<serde_json::Value> = serde_json::from_slice(&outcome.stdout).ok();
    if args.format == Format::Json {
        let mut out = render::stdout();
        render::write_json(
            &mut out,
            &serde_json::json!({
                "tool": tool.full_name,
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
                tool.full_name
            );
        }
    }
    Ok(exit_status(&outcome))
}
