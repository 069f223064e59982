//! `skilldeck validate`.

use std::io::Write;
use std::path::PathBuf;

use clap::ArgAction;
use rayon::prelude::*;
use skilldeck::{
    Code, Config, Diagnostic, Mode, NameCharset, SkillReport, ValidationOptions, WalkLimits,
};

use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::render;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  skilldeck validate skills/pdf-tools\n  skilldeck validate -r skills --deny broken-link --allow description-no-trigger\n  skilldeck validate            # every skill the other commands discover"
)]
pub struct Args {
    /// Skill folders or SKILL.md files (with -r: trees to search). Without
    /// PATH: every skill discovered in the roots `list` searches.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Do not report CODE (repeatable; also `[validate] allow`). Codes that
    /// make a skill unusable cannot be allowed.
    #[arg(long, value_name = "CODE", value_parser = parse_allowable, action = ArgAction::Append)]
    allow: Vec<Code>,
    /// Report CODE as an error (repeatable; also `[validate] deny`).
    #[arg(long, value_name = "CODE", value_parser = parse_code, action = ArgAction::Append)]
    deny: Vec<Code>,
    /// Report errors only.
    #[arg(short, long)]
    quiet: bool,
    /// The specification exactly (default).
    #[arg(long, conflicts_with = "lenient")]
    strict: bool,
    /// Load like a host: only unusable skills are errors.
    #[arg(long)]
    lenient: bool,
    /// Restrict names to a-z, 0-9 and '-'.
    #[arg(long)]
    ascii_names: bool,
    /// Admit an extra frontmatter field in strict mode (repeatable).
    #[arg(long = "allow-field", value_name = "FIELD", action = ArgAction::Append)]
    allow_fields: Vec<String>,
    /// Search each PATH recursively for skills.
    #[arg(short, long)]
    recursive: bool,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::VALIDATE), default_value = "text")]
    format: Format,
}

impl Args {
    fn options(&self, config: &Config) -> ValidationOptions {
        let mut options = config.validation_options();
        if self.strict {
            options.mode = Mode::Strict;
        }
        if self.lenient {
            options.mode = Mode::Lenient;
        }
        if self.ascii_names {
            options.charset = NameCharset::Ascii;
        }
        options
            .allowed_fields
            .extend(self.allow_fields.iter().cloned());
        // The command line overrides the config code by code.
        options.deny.retain(|c| !self.allow.contains(c));
        options.allow.retain(|c| !self.deny.contains(c));
        options.allow.extend(self.allow.iter().copied());
        options.deny.extend(self.deny.iter().copied());
        options.quiet |= self.quiet;
        options
    }
}

fn parse_code(text: &str) -> Result<Code, String> {
    Code::parse(text).ok_or_else(|| format!("unknown code; valid codes: {}", Code::valid_list()))
}

fn parse_allowable(text: &str) -> Result<Code, String> {
    let code = parse_code(text)?;
    if ValidationOptions::can_allow(code) {
        Ok(code)
    } else {
        Err(format!(
            "'{code}' makes a skill unusable; it cannot be allowed"
        ))
    }
}

/// One skill to validate (a path as given, or discovered), or the reports
/// of a tree already validated as it was walked (`-r`).
enum Job {
    Path(PathBuf),
    Tree(Vec<SkillReport>),
}

pub fn run(args: &Args, ctx: &Context) -> Result<u8, CliError> {
    let options = args.options(&ctx.config);
    // Expand the arguments into skill paths (walking trees with -r), then
    // validate them all in parallel; reports keep the argument order.
    // Without PATH: the roots discovery searches, each walked like -r.
    let mut jobs: Vec<Job> = Vec::new();
    let mut tree_problems: Vec<Diagnostic> = Vec::new();
    let grade = |d: Diagnostic| -> Option<Diagnostic> {
        let severity = options.severity(d.code)?;
        Some(Diagnostic { severity, ..d })
    };
    if args.paths.is_empty() {
        let (dirs, problems) = skilldeck::skill_folders(&ctx.discovery_options());
        if dirs.is_empty() {
            tree_problems.push(Diagnostic::new(
                Code::MissingSkillMd,
                skilldeck::Severity::Error,
                "no skills found in the roots searched (see `skilldeck list`; pass PATH or --root)",
            ));
        }
        tree_problems.extend(problems.into_iter().filter_map(grade));
        jobs = dirs.into_iter().map(Job::Path).collect();
    }
    for path in &args.paths {
        if args.recursive && path.is_dir() {
            // Each skill is validated by the walk thread that lists its
            // folder, relative to the open folder.
            let (found, reports) = skilldeck::validate_tree(path, WalkLimits::default(), &options);
            if found.skills.is_empty() {
                tree_problems.push(
                    Diagnostic::new(
                        Code::MissingSkillMd,
                        skilldeck::Severity::Error,
                        format!("no SKILL.md found under {}", path.display()),
                    )
                    .in_file(path),
                );
            }
            tree_problems.extend(found.diagnostics.into_iter().filter_map(grade));
            jobs.push(Job::Tree(reports));
        } else {
            jobs.push(Job::Path(path.clone()));
        }
    }
    let reports: Vec<SkillReport> = match jobs.as_slice() {
        // One tree (`validate -r DIR`): its reports as they are.
        [Job::Tree(_)] => match jobs.pop() {
            Some(Job::Tree(reports)) => reports,
            _ => Vec::new(),
        },
        _ => jobs
            .into_par_iter()
            .map(|job| match job {
                Job::Path(path) => vec![skilldeck::validate_path(&path, &options)],
                Job::Tree(reports) => reports,
            })
            .collect::<Vec<_>>()
            .into_iter()
            .flatten()
            .collect(),
    };
    let usage_error = reports.iter().any(|r| {
        r.diagnostics
            .iter()
            .any(|d| matches!(d.code, Code::PathNotFound | Code::ReadError))
    });

    match args.format {
        Format::Json => {
            for d in &tree_problems {
                eprintln!("{}", render::safe(&d.to_string()));
            }
            // No colour to strip: the JSON writer escapes every control
            // character, so the bytes go to stdout as they are.
            let mut out = render::stdout();
            render::json(&mut out, &reports)?;
            out.flush()?;
        }
        // The parser admits only json and human.
        _ => {
            let mut out = render::colored_stdout();
            render::human(
                &mut out,
                &reports,
                &tree_problems,
                options.max_skill_md_bytes,
            )?;
            out.flush()?;
        }
    }
    let invalid =
        reports.iter().any(|r| !r.valid) || tree_problems.iter().any(Diagnostic::is_error);
    Ok(if usage_error {
        exit::USAGE
    } else if invalid {
        exit::INVALID
    } else {
        exit::OK
    })
}
