//! `skilldeck registry agent create|show|list|update|delete`: agents and
//! their settings, through the registry's API.

use std::io::Write;

use skilldeck_registry::names::AgentId;
use skilldeck_registry::wire::{Agent, AgentSpec};

use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::registry_client::{ClientArgs, failed};
use crate::render;

/// `registry agent ...`.
#[derive(Debug, clap::Subcommand)]
pub enum AgentCommand {
    /// Create an agent.
    Create(SpecArgs),
    /// Show one agent: its settings, its assignments (each active,
    /// pending or excluded), the skills it serves and every skill left out
    /// with the reason.
    #[command(
        after_help = "Examples:\n  skilldeck registry agent show bot-1 --registry http://127.0.0.1:7878 --token-file admin-token\n  \
                      skilldeck registry agent show bot-1 --format json | jq '.excluded'"
    )]
    Show(IdArgs),
    /// List agents.
    List(ListArgs),
    /// Change an agent: the settings given replace its current ones, the
    /// others stay.
    Update(SpecArgs),
    /// Delete an agent (its assignments and tokens go with it).
    Delete(IdArgs),
}

/// An agent's id and the output format.
#[derive(Debug, clap::Args)]
pub struct IdArgs {
    /// The agent's id.
    id: String,
    #[command(flatten)]
    client: ClientArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

/// `list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Most agents per page.
    #[arg(long, value_name = "N")]
    limit: Option<u32>,
    /// The cursor of the page (from a previous list's `next_cursor`).
    #[arg(long, value_name = "CURSOR")]
    cursor: Option<String>,
    #[command(flatten)]
    client: ClientArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

/// An agent's settings (create: all of them, defaults for those not
/// given; update: the ones given).
#[derive(Debug, clap::Args)]
pub struct SpecArgs {
    /// The agent's id.
    id: String,
    /// A display name (create: default the id).
    #[arg(long)]
    name: Option<String>,
    /// A capability it has (repeatable; update: replaces the list).
    #[arg(long = "capability", value_name = "WORD")]
    capabilities: Vec<String>,
    /// Offer every skill whose required capabilities it has.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    auto_discover: Option<bool>,
    /// Auto-discover only skills matching this glob over namespace/name
    /// (repeatable; update: replaces the list).
    #[arg(long = "allow", value_name = "GLOB")]
    allowed: Vec<String>,
    /// Never offer skills matching this glob (repeatable; update: replaces
    /// the list).
    #[arg(long = "deny", value_name = "GLOB")]
    denied: Vec<String>,
    /// Its sandbox's concurrency cap.
    #[arg(long, value_name = "N")]
    max_concurrent: Option<u32>,
    /// Its sandbox's timeout per run, in seconds.
    #[arg(long, value_name = "SECS")]
    timeout_secs: Option<u32>,
    /// Its catalog budget in tokens.
    #[arg(long, value_name = "N")]
    budget_tokens: Option<u32>,
    /// Offer it the `run_code` tool (code the model writes, run in its
    /// host's sandbox under the same policy as skill scripts); delivered
    /// in its lock to `serve --registry` hosts. Off by default.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    run_code: Option<bool>,
    #[command(flatten)]
    client: ClientArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

fn agent_id(text: &str) -> Result<AgentId, CliError> {
    AgentId::new(text).map_err(|e| CliError::Usage(e.to_string()))
}

impl SpecArgs {
    /// `base` with the settings given here applied.
    fn apply(&self, mut spec: AgentSpec) -> AgentSpec {
        if let Some(n) = &self.name {
            spec.name = n.clone();
        }
        if !self.capabilities.is_empty() {
            spec.capabilities = self.capabilities.clone();
        }
        if let Some(a) = self.auto_discover {
            spec.auto_discover = a;
        }
        if !self.allowed.is_empty() {
            spec.allowed_patterns = self.allowed.clone();
        }
        if !self.denied.is_empty() {
            spec.denied_patterns = self.denied.clone();
        }
        if self.max_concurrent.is_some() {
            spec.max_concurrent_executions = self.max_concurrent;
        }
        if self.timeout_secs.is_some() {
            spec.execution_timeout_secs = self.timeout_secs;
        }
        if self.budget_tokens.is_some() {
            spec.budget_tokens = self.budget_tokens;
        }
        if let Some(r) = self.run_code {
            spec.run_code = r;
        }
        spec
    }
}

/// Runs an agent subcommand.
pub fn run(command: &AgentCommand) -> Result<u8, CliError> {
    match command {
        AgentCommand::Create(args) => {
            let id = agent_id(&args.id)?;
            let spec = args.apply(AgentSpec {
                name: id.as_str().to_owned(),
                id,
                capabilities: Vec::new(),
                auto_discover: false,
                allowed_patterns: Vec::new(),
                denied_patterns: Vec::new(),
                max_concurrent_executions: None,
                execution_timeout_secs: None,
                budget_tokens: None,
                run_code: false,
            });
            match args.client.client()?.create_agent(&spec) {
                Ok(agent) => print_agents(&[agent], args.format, "created"),
                Err(e) => failed(e),
            }
        }
        AgentCommand::Update(args) => {
            let id = agent_id(&args.id)?;
            let client = args.client.client()?;
            let current = match client.agent(&id) {
                Ok(a) => a,
                Err(e) => return failed(e),
            };
            match client.update_agent(&args.apply(current.spec)) {
                Ok(agent) => print_agents(&[agent], args.format, "updated"),
                Err(e) => failed(e),
            }
        }
        AgentCommand::Show(args) => show(args),
        AgentCommand::List(args) => {
            match args
                .client
                .client()?
                .list_agents(args.cursor.as_deref(), args.limit)
            {
                Ok(page) if args.format == Format::Json => {
                    let mut out = render::stdout_for(true);
                    render::write_json(&mut out, &page)?;
                    out.flush()?;
                    Ok(exit::OK)
                }
                Ok(page) => {
                    let code = print_agents(&page.items, args.format, "")?;
                    if let Some(next) = page.next_cursor {
                        eprintln!("more: --cursor {}", render::safe(&next));
                    }
                    Ok(code)
                }
                Err(e) => failed(e),
            }
        }
        AgentCommand::Delete(args) => {
            let id = agent_id(&args.id)?;
            match args.client.client()?.delete_agent(&id) {
                Ok(()) => {
                    let mut out = render::stdout_for(args.format == Format::Json);
                    if args.format == Format::Json {
                        render::write_json(&mut out, &serde_json::json!({"deleted": id}))?;
                    } else {
                        writeln!(out, "deleted agent {id}")?;
                    }
                    out.flush()?;
                    Ok(exit::OK)
                }
                Err(e) => failed(e),
            }
        }
    }
}

/// `agent show`: the agent, its assignments with their status, what it
/// serves and what is left out (JSON: the agent's fields plus
/// `assignments`, `skills` and `excluded`).
fn show(args: &IdArgs) -> Result<u8, CliError> {
    let id = agent_id(&args.id)?;
    let client = args.client.client()?;
    let (agent, assignments, resolved) = match client
        .agent(&id)
        .and_then(|a| Ok((a, client.assignments(&id)?, client.resolved(&id)?)))
    {
        Ok(all) => all,
        Err(e) => return failed(e),
    };
    if args.format == Format::Json {
        let mut value = serde_json::to_value(&agent)
            .map_err(|e| CliError::Usage(format!("cannot encode the agent: {e}")))?;
        if let Some(map) = value.as_object_mut() {
            map.insert("assignments".into(), serde_json::json!(assignments));
            map.insert("skills".into(), serde_json::json!(resolved.skills));
            map.insert("excluded".into(), serde_json::json!(resolved.excluded));
        }
        let mut out = render::stdout_for(true);
        render::write_json(&mut out, &value)?;
        out.flush()?;
        return Ok(exit::OK);
    }
    print_agents(&[agent], args.format, "")?;
    let mut out = render::stdout_for(false);
    writeln!(out, "assignments: {}", assignments.len())?;
    for view in &assignments {
        let a = &view.assignment;
        writeln!(
            out,
            "  {}/{} {} priority {} {}{}",
            view.namespace,
            view.name,
            crate::registry::assign::follows(a),
            a.priority,
            if view.status.is_empty() {
                "-"
            } else {
                view.status.as_str()
            },
            view.status_detail
                .as_deref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        )?;
    }
    writeln!(out, "serving: {}", resolved.skills.len())?;
    for s in &resolved.skills {
        writeln!(
            out,
            "  {}/{}@{} ({}, {})",
            s.namespace, s.name, s.version, s.source, s.via
        )?;
    }
    writeln!(out, "excluded: {}", resolved.excluded.len())?;
    for e in &resolved.excluded {
        writeln!(
            out,
            "  {}/{}: {}: {}",
            e.namespace, e.name, e.reason, e.detail
        )?;
    }
    out.flush()?;
    Ok(exit::OK)
}

fn print_agents(agents: &[Agent], format: Format, verb: &str) -> Result<u8, CliError> {
    let mut out = render::stdout_for(format == Format::Json);
    if format == Format::Json {
        // One agent (create, show, update): the object; else the array.
        match agents {
            [one] => render::write_json(&mut out, one)?,
            many => render::write_json(&mut out, many)?,
        }
    } else {
        for a in agents {
            let s = &a.spec;
            let opt = |v: Option<u32>| v.map_or_else(|| "-".to_owned(), |n| n.to_string());
            writeln!(
                out,
                "{}{} name={} capabilities=[{}] auto_discover={} allow=[{}] deny=[{}] \
                 max_concurrent={} timeout_secs={} budget_tokens={} run_code={}",
                if verb.is_empty() {
                    String::new()
                } else {
                    format!("{verb} agent ")
                },
                s.id,
                s.name,
                s.capabilities.join(","),
                s.auto_discover,
                s.allowed_patterns.join(","),
                s.denied_patterns.join(","),
                opt(s.max_concurrent_executions),
                opt(s.execution_timeout_secs),
                opt(s.budget_tokens),
                s.run_code,
            )?;
        }
    }
    out.flush()?;
    Ok(exit::OK)
}
