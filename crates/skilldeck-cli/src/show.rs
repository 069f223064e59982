//! `skilldeck show NAME`: one skill's metadata, instructions and files.

use std::io::Write;

use clap::ValueEnum;

use crate::EXIT_OK;
use crate::context::Context;
use crate::error::CliError;
use crate::list::SkillRow;
use crate::render;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Markdown: a metadata header, the SKILL.md body, the file list.
    Md,
    /// The `list` fields plus `frontmatter`, `body` and `files`.
    Json,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The skill's name.
    name: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Md)]
    format: Format,
}

#[derive(serde::Serialize)]
struct Shown<'a> {
    #[serde(flatten)]
    skill: SkillRow<'a>,
    frontmatter: &'a skilldeck::Frontmatter,
    body: &'a str,
    files: &'a [skilldeck::resources::ResourceEntry],
    files_omitted: usize,
}

pub fn run(args: &Args, ctx: &Context) -> Result<u8, CliError> {
    let deck = ctx.deck();
    let skill = skilldeck::search::require(deck, &args.name)?;
    let text = skilldeck::fs::read_skill_md(&skill.skill_md)
        .map_err(|d| CliError::Skill(d.to_string()))?;
    let body = skilldeck::spec::split_frontmatter(text.trim_start_matches('\u{feff}'))
        .map(|s| s.body)
        .unwrap_or_default();
    // The deck keeps only the host fields; the rest is read on demand. Name
    // and description are the top-level fields, not repeated here.
    let mut frontmatter = skill
        .frontmatter()
        .map_err(|e| CliError::Skill(e.to_string()))?;
    frontmatter.name = None;
    frontmatter.description = None;
    let files = skilldeck::list_resources(skill)?;
    let mut out = render::stdout();
    match args.format {
        Format::Json => render::write_json(
            &mut out,
            &Shown {
                skill: SkillRow::new(skill),
                frontmatter: &frontmatter,
                body,
                files: &files.files,
                files_omitted: files.omitted,
            },
        )?,
        Format::Md => {
            let fm = &frontmatter;
            writeln!(out, "# {}\n", skill.name)?;
            writeln!(out, "{}\n", skill.description.trim())?;
            writeln!(out, "| | |\n|---|---|")?;
            writeln!(out, "| scope | {} |", skill.scope)?;
            writeln!(out, "| mode | {} |", skill.mode.as_str())?;
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
    Ok(EXIT_OK)
}
