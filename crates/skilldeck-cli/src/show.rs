//! `skilldeck show NAME`: one skill's metadata, instructions and files.

use std::io::Write;

use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::list::SkillRow;
use crate::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The skill's name.
    #[arg(add = crate::context::skill_names())]
    name: String,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::SHOW), default_value = "markdown")]
    format: Format,
}

/// One declared tool in `show --format json`.
#[derive(serde::Serialize)]
struct ToolRow<'a> {
    name: &'a str,
    full_name: String,
    description: &'a str,
    /// `None`: the host implements the tool (no script).
    run: Option<&'a str>,
    input_schema: &'a serde_json::Value,
    /// How the arguments reach the script (`json`, `entry-point`).
    call: &'a skilldeck::ToolCall,
}

#[derive(serde::Serialize)]
struct Shown<'a> {
    #[serde(flatten)]
    skill: SkillRow<'a>,
    tools: Vec<ToolRow<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    environment: Option<EnvRow>,
    frontmatter: &'a skilldeck::Frontmatter,
    body: &'a str,
    files: &'a [skilldeck::ResourceEntry],
    files_omitted: usize,
}

/// The skill's environment, when it declares dependencies.
#[derive(serde::Serialize)]
struct EnvRow {
    /// `ready`, `operator-python` or the problem's code.
    status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<std::path::PathBuf>,
    /// Every ready environment's folder (Python, Node) when there are two.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    paths: Vec<std::path::PathBuf>,
    packages: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
}

fn environment_row(ctx: &Context, skill: &skilldeck::Skill) -> Option<EnvRow> {
    if !skilldeck::environment::may_declare_dependencies(skill.real_dir()) {
        return None;
    }
    match skilldeck_host::environment::for_skill(&ctx.config.exec, skill) {
        Ok(envs) if !envs.is_empty() => Some(EnvRow {
            status: "ready".into(),
            path: Some(envs[0].dir.clone()),
            paths: if envs.len() > 1 {
                envs.iter().map(|e| e.dir.clone()).collect()
            } else {
                Vec::new()
            },
            packages: envs.iter().flat_map(|e| e.locked.package_names()).collect(),
            problem: None,
        }),
        Ok(_) => ctx.config.exec.python_for(&skill.name).map(|p| EnvRow {
            status: "operator-python".into(),
            path: Some(p.to_path_buf()),
            paths: Vec::new(),
            packages: Vec::new(),
            problem: None,
        }),
        Err(problem) => Some(EnvRow {
            status: problem.code().as_str().to_owned(),
            path: None,
            paths: Vec::new(),
            packages: Vec::new(),
            problem: Some(skilldeck_host::environment::describe(&problem)),
        }),
    }
}

pub fn run(args: &Args, ctx: &Context) -> Result<u8, CliError> {
    let deck = ctx.deck();
    // Any skill in the deck, turned off or not (an inspection command);
    // the core's error says why a name is unknown.
    let skill = skilldeck::require(deck, &args.name)?;
    let text =
        skilldeck::fs::read_skill_md(&skill.skill_md).map_err(|d| CliError::Skill(Box::new(d)))?;
    let body = skilldeck::spec::split_frontmatter(text.trim_start_matches('\u{feff}'))
        .map(|s| s.body)
        .unwrap_or_default();
    // The deck keeps only the host fields; the rest is read on demand. The
    // frontmatter is shown as the file has it (its `name` and `description`
    // included); the top-level `name` is the one the deck resolved.
    let frontmatter = skill.frontmatter()?;
    let files = skilldeck::list_resources(skill)?;
    let tools: Vec<ToolRow<'_>> = skill
        .tools()
        .iter()
        .map(|t| ToolRow {
            name: t.name.as_str(),
            full_name: t.full_name(&skill.name),
            description: &t.description,
            run: t.run.as_deref(),
            input_schema: &t.input_schema,
            call: &t.call,
        })
        .collect();
    let environment = environment_row(ctx, skill);
    let mut out = render::stdout_for(args.format == Format::Json);
    match args.format {
        Format::Json => render::write_json(
            &mut out,
            &Shown {
                skill: SkillRow::new(skill),
                tools,
                environment,
                frontmatter: &frontmatter,
                body,
                files: &files.files,
                files_omitted: files.omitted,
            },
        )?,
        // The parser admits only json and md.
        _ => {
            let fm = &frontmatter;
            writeln!(out, "# {}\n", skill.name)?;
            writeln!(out, "{}\n", skill.description.trim())?;
            writeln!(out, "| | |\n|---|---|")?;
            writeln!(out, "| scope | {} |", skill.scope)?;
            writeln!(out, "| mode | {} |", skill.mode.as_str())?;
            if let Some(reason) = skill.ineligible_reason() {
                writeln!(out, "| eligible | no: {reason} |")?;
            }
            writeln!(out, "| path | `{}` |", skill.skill_md.display())?;
            if let Some(l) = &fm.license {
                writeln!(out, "| license | {l} |")?;
            }
            if let Some(c) = &fm.compatibility {
                writeln!(out, "| compatibility | {c} |")?;
            }
            if !fm.allowed_tools.is_empty() {
                writeln!(out, "| allowed-tools | `{}` |", fm.allowed_tools.join(" "))?;
            }
            for (k, v) in &fm.metadata {
                writeln!(out, "| metadata.{k} | {v} |")?;
            }
            if let Some(hint) = skill.argument_hint() {
                writeln!(out, "| argument-hint | {hint} |")?;
            }
            if let Some(kind) = fm.skill_type {
                writeln!(out, "| skill_type | {kind} |")?;
            }
            if let Some(env) = &environment {
                match (&env.problem, &env.path) {
                    (Some(problem), _) => writeln!(
                        out,
                        "| environment | {}: {} |",
                        env.status,
                        problem.replace('|', "\\|")
                    )?,
                    (None, Some(path)) if env.status == "ready" => writeln!(
                        out,
                        "| environment | ready: {} ({}) |",
                        env.packages.join(" "),
                        if env.paths.is_empty() {
                            std::slice::from_ref(path)
                        } else {
                            env.paths.as_slice()
                        }
                        .iter()
                        .map(|p| format!("`{}`", p.display()))
                        .collect::<Vec<_>>()
                        .join(", ")
                    )?,
                    (None, path) => writeln!(
                        out,
                        "| environment | the operator's interpreter{} |",
                        path.as_ref()
                            .map(|p| format!(" `{}`", p.display()))
                            .unwrap_or_default()
                    )?,
                }
            }
            if !fm.capabilities.is_empty() {
                writeln!(
                    out,
                    "| required capabilities | {} |",
                    fm.capabilities.join(", ")
                )?;
            }
            if !tools.is_empty() {
                writeln!(out, "\n## Tools\n")?;
                for t in &tools {
                    let how = match (t.run, t.call) {
                        (Some(run), skilldeck::ToolCall::EntryPoint) => format!(
                            "entry point: runs `{run}`, `args` on its command line, `input` \
                             as JSON on stdin"
                        ),
                        (Some(run), _) => format!("runs `{run}`"),
                        (None, _) => "implemented by the host: offered once an application \
                                      registers its handler"
                            .to_owned(),
                    };
                    writeln!(
                        out,
                        "- `{}` (`{}`, {how}): {}",
                        t.name, t.full_name, t.description
                    )?;
                }
            }
            if fm.skill_type == Some(skilldeck::SkillType::LangchainTool) {
                writeln!(
                    out,
                    "\nA LangChain tool package: its tools are found by importing it inside \
                     the sandbox, never here (`skilldeck serve --exec` lists them, `skilldeck \
                     call {} TOOL` runs one).",
                    skill.name
                )?;
            }
            writeln!(out, "\n---\n")?;
            writeln!(out, "{}", body.trim_start_matches(['\r', '\n']).trim_end())?;
            writeln!(out, "\n---\n\n## Files\n")?;
            for f in &files.files {
                writeln!(out, "- `{}` ({} bytes)", f.path, f.size)?;
            }
            if files.omitted > 0 {
                writeln!(out, "- ... and {} more", files.omitted)?;
            }
        }
    }
    out.flush()?;
    Ok(exit::OK)
}
