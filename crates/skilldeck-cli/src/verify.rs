//! `skilldeck verify`: re-hash the installed skills against the lock.

use std::io::Write;
use std::path::PathBuf;

use skilldeck_package::{PackageLimits, SignatureState, Status};

use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::pack::{refused, skills_root};
use crate::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The skills root (default: .agents/skills of the current folder).
    #[arg(long, value_name = "ROOT")]
    dir: Option<PathBuf>,
    /// The lockfile (default: skilldeck.lock next to the root).
    #[arg(long, value_name = "FILE")]
    lock: Option<PathBuf>,
    /// Do not ask git repositories whether the tags of git skills still
    /// name the locked commits (by default a moved tag fails verify).
    #[arg(long)]
    offline: bool,
    #[command(flatten)]
    trust: crate::signing::TrustArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

pub fn run(args: &Args) -> Result<u8, CliError> {
    let root = skills_root(args.dir.as_deref())?;
    let policy = match args.trust.policy() {
        Ok(p) => p,
        Err(e) => return refused(e),
    };
    let mut report = match skilldeck_package::verify_with(
        &root,
        args.lock.as_deref(),
        &PackageLimits::default(),
        &policy,
    ) {
        Ok(r) => r,
        Err(e) => return refused(e),
    };
    if let Err(e) =
        skilldeck_package::verify_environments(&mut report, &skilldeck_host::environment::store())
    {
        return refused(e);
    }
    // A git skill's tag must still name the locked commit.
    let moved = match (
        args.offline,
        skilldeck_package::Lockfile::load(&report.lockfile),
    ) {
        (false, Ok(Some(lock))) => crate::git_source::moved_tags(&lock),
        _ => Vec::new(),
    };
    let mut out = render::stdout_for(args.format == Format::Json);
    if args.format == Format::Json {
        render::write_json(&mut out, &report)?;
        for (name, problem) in &moved {
            eprintln!("{}", render::safe(&format!("moved tag {name}: {problem}")));
        }
    } else {
        for s in &report.skills {
            writeln!(out, "{:<10} {}", s.status.as_str(), s.name)?;
            match &s.signature {
                SignatureState::Verified(v) => writeln!(
                    out,
                    "  signed by {}{}",
                    v.signer,
                    crate::install::principals(&v.principals)
                )?,
                SignatureState::Unchecked { reason } if s.signer.is_some() => {
                    writeln!(out, "  signature not checked again: {reason}")?;
                }
                _ => {}
            }
            for f in &s.diff.modified {
                writeln!(out, "  modified {f}")?;
            }
            for f in &s.diff.added {
                writeln!(out, "  added    {f}")?;
            }
            if s.status != Status::Missing {
                for f in &s.diff.missing {
                    writeln!(out, "  missing  {f}")?;
                }
            }
            if let Some(p) = &s.problem {
                writeln!(out, "  {p}")?;
            }
            match s.status {
                Status::SignerChanged => writeln!(
                    out,
                    "  = help: confirm the new signer with the publisher, then run \
                     `skilldeck install SOURCE --allow-signer-change` to pin it"
                )?,
                Status::BadSignature => writeln!(
                    out,
                    "  = help: get the package and its .sig again from the publisher; \
                     do not trust this source until it verifies"
                )?,
                _ => {}
            }
        }
        for (name, problem) in &moved {
            writeln!(out, "{:<10} {name}", "tag-moved")?;
            writeln!(out, "  {}", render::safe(problem))?;
        }
        for e in &report.environments {
            if e.status == "ok" {
                writeln!(
                    out,
                    "{:<10} {} environment ({})",
                    "ok",
                    e.skill,
                    e.packages.join(" ")
                )?;
            } else {
                writeln!(out, "{:<10} {} environment", e.status, e.skill)?;
            }
            if let Some(p) = &e.problem {
                writeln!(out, "  {}", render::safe(p))?;
            }
        }
        for u in &report.untracked {
            writeln!(out, "untracked  {u} (not in {})", report.lockfile.display())?;
        }
        for i in &report.interrupted {
            writeln!(
                out,
                "interrupted install of {i}: run `skilldeck install` to finish it"
            )?;
        }
        let bad = report
            .skills
            .iter()
            .filter(|s| s.status != Status::Ok)
            .count()
            + report.untracked.len()
            + report
                .environments
                .iter()
                .filter(|e| e.status != "ok")
                .count()
            + moved.len();
        writeln!(
            out,
            "{} skill{} checked, {bad} differ{}",
            report.skills.len(),
            if report.skills.len() == 1 { "" } else { "s" },
            if bad == 1 { "s" } else { "" }
        )?;
    }
    out.flush()?;
    Ok(if report.is_clean() && moved.is_empty() {
        exit::OK
    } else {
        exit::INVALID
    })
}
