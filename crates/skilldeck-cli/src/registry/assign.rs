//! `skilldeck registry assign AGENT NS/NAME ...` and `unassign`: an
//! agent's skills, through the registry's API.

use std::io::Write;

use skilldeck_registry::names::{AgentId, Label, SkillRef};
use skilldeck_registry::wire::{ASSIGNMENT_ACTIVE, Assignment, AssignmentView, Grants};

use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::registry_client::{ClientArgs, failed};
use crate::render;

/// `assign`.
#[derive(Debug, clap::Args)]
pub struct AssignArgs {
    /// The agent's id.
    agent: String,
    /// The skill, [NS/]NAME (no NS/: the default namespace).
    skill: String,
    /// Pin this version (it must exist and be neither yanked, blocked
    /// nor rejected).
    #[arg(long, value_name = "SEMVER", conflicts_with = "label")]
    version: Option<String>,
    /// Follow this label (default: latest). A label that points to no
    /// version is refused, unless --allow-pending.
    #[arg(long, value_name = "LABEL")]
    label: Option<String>,
    /// Store the assignment even though its label is not set yet: it is
    /// shown as pending (assign, agent show, the agent's resolution) and
    /// served once the label is set (`registry label set`).
    #[arg(long, conflicts_with = "version")]
    allow_pending: bool,
    /// Higher comes first.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    priority: i32,
    /// Assign it disabled (the skill is then excluded, even from
    /// auto-discovery).
    #[arg(long)]
    disabled: bool,
    /// Grant network access to its code in the agent's sandbox.
    #[arg(long)]
    grant_network: bool,
    /// Pass this environment variable to its code (repeatable).
    #[arg(long = "grant-env", value_name = "NAME")]
    grant_env: Vec<String>,
    #[command(flatten)]
    client: ClientArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

/// `unassign`.
#[derive(Debug, clap::Args)]
pub struct UnassignArgs {
    /// The agent's id.
    agent: String,
    /// The skill, [NS/]NAME.
    skill: String,
    #[command(flatten)]
    client: ClientArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

fn names(agent: &str, skill: &str) -> Result<(AgentId, SkillRef), CliError> {
    let usage = |e: skilldeck_registry::names::NameError| CliError::Usage(e.to_string());
    Ok((
        AgentId::new(agent).map_err(usage)?,
        SkillRef::parse_or_default(skill).map_err(usage)?,
    ))
}

/// Runs `assign`.
pub fn run_assign(args: &AssignArgs) -> Result<u8, CliError> {
    let (agent, skill) = names(&args.agent, &args.skill)?;
    let label = args
        .label
        .as_deref()
        .map(Label::new)
        .transpose()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let assignment = Assignment {
        version: args.version.clone(),
        label,
        enabled: !args.disabled,
        priority: args.priority,
        grants: Grants {
            network: args.grant_network,
            env: args.grant_env.clone(),
        },
        allow_pending: args.allow_pending,
    };
    let view = match args.client.client()?.assign(&agent, &skill, &assignment) {
        Ok(v) => v,
        Err(e) => return failed(e),
    };
    let mut out = render::stdout_for(args.format == Format::Json);
    if args.format == Format::Json {
        render::write_json(&mut out, &view)?;
    } else {
        let a = &view.assignment;
        let follows = follows(a);
        writeln!(
            out,
            "assigned {}/{} to {} ({follows}, priority {}, {}{}{})",
            view.namespace,
            view.name,
            view.agent,
            a.priority,
            if a.enabled { "enabled" } else { "disabled" },
            if a.grants.network { ", network" } else { "" },
            if a.grants.env.is_empty() {
                String::new()
            } else {
                format!(", env {}", a.grants.env.join(","))
            }
        )?;
        if let Some(line) = status_line(&view) {
            writeln!(out, "  {line}")?;
        }
    }
    out.flush()?;
    Ok(exit::OK)
}

/// `pending: ...` or `excluded: ...` for an assignment the agent does not
/// serve (with the resolution's reason); `None` when it is served.
pub fn status_line(view: &AssignmentView) -> Option<String> {
    if view.status.is_empty() || view.status == ASSIGNMENT_ACTIVE {
        return None;
    }
    Some(format!(
        "{}: {}",
        view.status,
        view.status_detail.as_deref().unwrap_or("-")
    ))
}

/// How an assignment picks its version: `version V` or `label L`.
pub fn follows(a: &Assignment) -> String {
    match (&a.version, &a.label) {
        (Some(v), _) => format!("version {v}"),
        (None, Some(l)) => format!("label {l}"),
        (None, None) => "label latest".to_owned(),
    }
}

/// Runs `unassign`.
pub fn run_unassign(args: &UnassignArgs) -> Result<u8, CliError> {
    let (agent, skill) = names(&args.agent, &args.skill)?;
    if let Err(e) = args.client.client()?.unassign(&agent, &skill) {
        return failed(e);
    }
    let mut out = render::stdout_for(args.format == Format::Json);
    if args.format == Format::Json {
        render::write_json(
            &mut out,
            &serde_json::json!({"agent": agent, "skill": skill, "unassigned": true}),
        )?;
    } else {
        writeln!(out, "unassigned {skill} from {agent}")?;
    }
    out.flush()?;
    Ok(exit::OK)
}
