//! `skilldeck validate`.

use std::io::Write;
use std::path::PathBuf;

use clap::ArgAction;
use rayon::prelude::*;
use skilldeck::{
    Code, Config, Diagnostic, Mode, NameCharset, SkillReport, ValidationOptions, WalkLimits,
};

use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Skill folders or SKILL.md files (with -r: trees to search).
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<PathBuf>,
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
        options
    }
}

pub fn run(args: &Args, config: &Config) -> Result<u8, CliError> {
    let options = args.options(config);
    // Expand the arguments into skill paths (walking trees with -r), then
    // validate them all in parallel; reports keep the argument order.
    let mut jobs: Vec<PathBuf> = Vec::new();
    let mut tree_problems: Vec<Diagnostic> = Vec::new();
    for path in &args.paths {
        if args.recursive && path.is_dir() {
            let found = skilldeck::find_skill_dirs(path, WalkLimits::default());
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
            tree_problems.extend(found.diagnostics);
            jobs.extend(found.skills.into_iter().map(|f| f.dir));
        } else {
            jobs.push(path.clone());
        }
    }
    let reports: Vec<SkillReport> = jobs
        .par_iter()
        .map(|path| skilldeck::validate_path(path, &options))
        .collect();
    let usage_error = reports.iter().any(|r| {
        r.diagnostics
            .iter()
            .any(|d| matches!(d.code, Code::PathNotFound | Code::ReadError))
    });

    let mut out = render::colored_stdout();
    match args.format {
        Format::Json => {
            for d in &tree_problems {
                eprintln!("{d}");
            }
            render::json(&mut out, &reports)?;
        }
        // The parser admits only json and human.
        _ => {
            render::human(
                &mut out,
                &reports,
                &tree_problems,
                options.max_skill_md_bytes,
            )?;
        }
    }
    out.flush()?;
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
