//! `skilldeck list`.

use std::io::Write;

use serde_json::json;
use skilldeck::{Scope, Skill};

use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::render;

/// Width of the description column in table output.
const DESCRIPTION_COLUMN: usize = 72;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
    /// List the skills that lost to a same-named skill of higher precedence.
    #[arg(long)]
    shadowed: bool,
    /// Only skills of this scope (explicit, project, user, extra, bundled).
    #[arg(long, value_name = "SCOPE")]
    scope: Option<Scope>,
    /// Also list the skills this machine lacks something for (their
    /// `requires`), with the reason.
    #[arg(long)]
    all: bool,
}

/// One skill in `list --format json` (field order is the documented order).
#[derive(serde::Serialize)]
pub struct SkillRow<'a> {
    name: &'a str,
    description: &'a str,
    scope: Scope,
    mode: skilldeck::SkillMode,
    dir: &'a std::path::Path,
    skill_md: &'a std::path::Path,
    root: &'a std::path::Path,
    model_invocable: bool,
    user_invocable: bool,
    /// False when this machine lacks what the skill `requires`.
    eligible: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    ineligible_reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shadowed_by: Option<serde_json::Value>,
}

impl<'a> SkillRow<'a> {
    pub fn new(s: &'a Skill) -> Self {
        SkillRow {
            name: &s.name,
            description: &s.description,
            scope: s.scope,
            mode: s.mode,
            dir: s.dir(),
            skill_md: &s.skill_md,
            root: &s.root,
            model_invocable: s.model_invocable(),
            user_invocable: s.user_invocable(),
            eligible: s.is_eligible(),
            ineligible_reason: s.ineligible_reason(),
            shadowed_by: None,
        }
    }
}

/// The rows of `list --format json`, made one at a time as they are
/// written (a 100,000-skill listing holds no array of rows).
struct Rows<'a>(&'a [&'a Skill]);

impl serde::Serialize for Rows<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|s| SkillRow::new(s)))
    }
}

pub fn run(args: &Args, ctx: &Context) -> Result<u8, CliError> {
    let deck = ctx.deck();
    let keep = |s: &Skill| args.scope.is_none_or(|scope| s.scope == scope);
    let mut out = render::stdout_for(args.format == Format::Json);
    if args.shadowed {
        let rows: Vec<_> = deck.shadowed().iter().filter(|s| keep(&s.skill)).collect();
        match args.format {
            Format::Json => {
                let v: Vec<_> = rows
                    .iter()
                    .map(|s| SkillRow {
                        shadowed_by: Some(json!({"scope": s.winner_scope, "dir": s.winner_dir})),
                        ..SkillRow::new(&s.skill)
                    })
                    .collect();
                render::write_json(&mut out, &v)?;
            }
            // The parser admits only json and table.
            _ => {
                for s in rows {
                    writeln!(
                        out,
                        "{}  {}  {}  shadowed by {} {}",
                        s.skill.name,
                        s.skill.scope,
                        s.skill.dir().display(),
                        s.winner_scope,
                        s.winner_dir.display()
                    )?;
                }
            }
        }
        return Ok(exit::OK);
    }
    let in_scope: Vec<&Skill> = deck.skills().iter().filter(|s| keep(s)).collect();
    // Skills this machine cannot run are listed only with `--all`.
    let hidden = in_scope.iter().filter(|s| !s.is_eligible()).count();
    let skills: Vec<&Skill> = in_scope
        .into_iter()
        .filter(|s| args.all || s.is_eligible())
        .collect();
    match args.format {
        Format::Json => render::write_json(&mut out, &Rows(&skills))?,
        // The parser admits only json and table.
        _ => {
            let name_w = skills
                .iter()
                .map(|s| s.name.chars().count())
                .max()
                .unwrap_or(4)
                .max(4);
            writeln!(
                out,
                "{:name_w$}  {:8}  {:9}  DESCRIPTION",
                "NAME", "SCOPE", "MODE"
            )?;
            for s in &skills {
                let description = match s.ineligible_reason() {
                    Some(reason) => format!("[not eligible: {reason}] {}", s.description),
                    None => s.description.clone(),
                };
                writeln!(
                    out,
                    "{:name_w$}  {:8}  {:9}  {}",
                    s.name,
                    s.scope.as_str(),
                    s.mode.as_str(),
                    truncate(&description, DESCRIPTION_COLUMN)
                )?;
            }
        }
    }
    if hidden > 0 && !args.all {
        let mut err = std::io::stderr().lock();
        writeln!(
            err,
            "{hidden} skill(s) not eligible on this machine are not listed; `skilldeck list --all` shows them and why"
        )?;
    }
    Ok(exit::OK)
}

/// First line of `text`, cut to `max` characters with an ellipsis.
pub fn truncate(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    let mut cut: String = line.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}
