//! `skilldeck audit PATH...`: the static risk audit (`skilldeck-audit`)
//! of skill folders, trees (`-r`) and packages, as rustc-style text, JSON
//! or SARIF 2.1.0; `--fail-on` sets the exit status. Also the audit
//! `pack`, `publish` and `install` run before they act ([`Gate`]).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anstyle::{AnsiColor, Style};
use clap::ArgAction;
use rayon::prelude::*;
use skilldeck_audit::{
    AllowList, AuditOptions, IndexCheck, IndexSources, PythonIndex, Severity, SkillAudit,
    SkillFile, Verdict,
};

use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::render;

/// Skills audited before a progress bar is shown (on a terminal only).
const PROGRESS_MIN_SKILLS: usize = 32;

/// The severity at which `pack`, `publish` and `install` refuse.
pub const REFUSE_AT: Severity = Severity::Critical;

const BOLD: Style = Style::new().bold();
const RED: Style = AnsiColor::Red.on_default().bold();
const YELLOW: Style = AnsiColor::Yellow.on_default().bold();
const BLUE: Style = AnsiColor::Blue.on_default().bold();
const GREEN: Style = AnsiColor::Green.on_default().bold();
const DIM: Style = Style::new().dimmed();

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 no skill at or above --fail-on, 1 some skill is, 2 usage or I/O error.\n\n\
Allow a reviewed finding for one skill in skilldeck.toml:\n  [audit.allow.rust-setup]\n  \"exec.pipe-to-shell\" = \"rustup's official installer, reviewed 2026-11\"\n\n\
Examples:\n  skilldeck audit .agents/skills/pdf-tools\n  skilldeck audit -r .agents/skills --fail-on medium\n  \
skilldeck audit dist/pdf-tools-1.2.0.tar.gz --format sarif > audit.sarif\n  \
skilldeck audit ./skills/dates --index-url https://pypi.internal/simple\n  \
skilldeck audit -r ./skills --check-index\n  skilldeck audit --list-rules"
)]
pub struct Args {
    /// Skill folders or packages (.tar.gz, .tgz, .zip, .skill); with -r,
    /// trees to search for skill folders.
    #[arg(value_name = "PATH", required_unless_present = "list_rules")]
    paths: Vec<PathBuf>,
    /// Search each PATH recursively for skills.
    #[arg(short, long)]
    recursive: bool,
    /// Output format: text (rustc style), json (one object per skill), or
    /// sarif (SARIF 2.1.0, for code-scanning UIs).
    #[arg(long, value_parser = Format::parser(format::AUDIT), default_value = "text")]
    format: Format,
    /// Exit 1 when a skill's verdict is this severity or worse (low,
    /// medium, high, critical).
    #[arg(long, value_name = "SEVERITY", value_parser = parse_severity, default_value = "high")]
    fail_on: Severity,
    /// Allow CODE in every skill audited, with the reason it is accepted
    /// (repeatable). Per skill: `[audit.allow.NAME]` in skilldeck.toml.
    #[arg(long, value_name = "CODE=REASON", action = ArgAction::Append)]
    allow: Vec<String>,
    /// Config file (default: ./skilldeck.toml, then the user's).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Print every rule (code, class, severity, what it finds) and exit.
    #[arg(long)]
    list_rules: bool,
    /// Look each declared Python package up on this PEP 503/691 simple
    /// index: one it does not have is `deps.not-on-index` (the audit is
    /// offline otherwise).
    #[arg(long, value_name = "URL", help_heading = "Package index check")]
    index_url: Option<String>,
    /// Look each declared Python package up in this folder of wheels and
    /// sdists (repeatable; checked before --index-url).
    #[arg(long, value_name = "DIR", help_heading = "Package index check")]
    find_links: Vec<PathBuf>,
    /// Look each declared Node package up on this npm registry.
    #[arg(long, value_name = "URL", help_heading = "Package index check")]
    npm_registry: Option<String>,
    /// Look declared packages up where `install` gets them: the config's
    /// `[environments]` index-url (else PyPI), find-links and npm-registry
    /// (else the npm registry); with `offline`, the find-links folders
    /// only. The flags above win over the config.
    #[arg(long, help_heading = "Package index check")]
    check_index: bool,
}

/// Where `install` gets packages, as the audit's index check: `None` for
/// an offline install (uv's and npm's caches may hold what the folders do
/// not, so a lookup there could not be trusted) or one that builds no
/// environments.
pub fn install_index(
    environments: Option<&skilldeck_package::environment::EnvironmentOptions>,
) -> Option<IndexCheck> {
    let env = environments.filter(|e| !e.offline)?;
    Some(IndexCheck::new(IndexSources {
        python: Some(PythonIndex {
            find_links: env.find_links.clone(),
            simple: Some(
                env.index_url
                    .clone()
                    .unwrap_or_else(|| skilldeck_audit::index::PYPI_SIMPLE.to_owned()),
            ),
        }),
        npm: Some(
            env.npm_registry
                .clone()
                .unwrap_or_else(|| skilldeck_audit::index::NPM_REGISTRY.to_owned()),
        ),
    }))
}

/// The index check `skilldeck audit` was asked for: `None` (offline)
/// unless a flag names an index or `--check-index` is given.
fn audit_index(args: &Args) -> Result<Option<IndexCheck>, CliError> {
    let flags =
        args.index_url.is_some() || !args.find_links.is_empty() || args.npm_registry.is_some();
    if !flags && !args.check_index {
        return Ok(None);
    }
    let absolute = |p: &PathBuf| std::path::absolute(p).unwrap_or_else(|_| p.clone());
    let find_links: Vec<PathBuf> = args.find_links.iter().map(absolute).collect();
    if !args.check_index {
        let python = (args.index_url.is_some() || !find_links.is_empty()).then(|| PythonIndex {
            find_links,
            simple: args.index_url.clone(),
        });
        return Ok(Some(IndexCheck::new(IndexSources {
            python,
            npm: args.npm_registry.clone(),
        })));
    }
    // Relative find-links are already resolved against the config file
    // (as `install` reads them).
    let config = skilldeck::Config::discover(args.config.as_deref())?
        .map(|(_, c)| c.environments)
        .unwrap_or_default();
    let offline = config.offline.unwrap_or(false);
    let find_links = if find_links.is_empty() {
        config.find_links
    } else {
        find_links
    };
    let simple = args
        .index_url
        .clone()
        .or(config.index_url)
        .or_else(|| (!offline).then(|| skilldeck_audit::index::PYPI_SIMPLE.to_owned()))
        .filter(|_| !offline || args.index_url.is_some());
    let npm = args
        .npm_registry
        .clone()
        .or(config.npm_registry)
        .or_else(|| (!offline).then(|| skilldeck_audit::index::NPM_REGISTRY.to_owned()))
        .filter(|_| !offline || args.npm_registry.is_some());
    let python =
        (simple.is_some() || !find_links.is_empty()).then_some(PythonIndex { find_links, simple });
    Ok(Some(IndexCheck::new(IndexSources { python, npm })))
}

fn parse_severity(text: &str) -> Result<Severity, String> {
    Severity::parse(text).ok_or_else(|| "one of: low, medium, high, critical".to_owned())
}

/// The audit options in force: the config's `[audit.allow]` plus
/// `--allow` entries.
pub fn options(config: Option<&Path>, extra: &[String]) -> Result<AuditOptions, CliError> {
    let mut allow = match skilldeck::Config::discover(config)? {
        Some((_, config)) => AllowList::from_config(&config.audit).map_err(usage)?,
        None => AllowList::default(),
    };
    for entry in extra {
        let (code, reason) = AllowList::parse_entry(entry).map_err(usage)?;
        allow.allow(None, &code, &reason).map_err(usage)?;
    }
    Ok(AuditOptions { allow, index: None })
}

fn usage(e: skilldeck_audit::Error) -> CliError {
    CliError::Usage(e.to_string())
}

/// What one PATH turned into.
enum Job {
    Folder(PathBuf),
    Package(PathBuf),
}

/// Audits one folder or package; an error is a path the audit could not
/// read (a usage problem, exit 2).
fn audit_one(job: &Job, options: &AuditOptions) -> Result<SkillAudit, String> {
    match job {
        Job::Folder(dir) => skilldeck_audit::audit_skill(dir, options).map_err(|e| e.to_string()),
        Job::Package(file) => audit_package(file, options),
    }
}

/// Unpacks a package with the package crate's safe unpack (its limits
/// and refusals) into a temporary folder and audits the bytes it read.
pub fn audit_package(file: &Path, options: &AuditOptions) -> Result<SkillAudit, String> {
    let body = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let tmp = tempfile::tempdir().map_err(|e| format!("a temporary folder: {e}"))?;
    let staging = tmp.path().join("stage");
    let unpacked = skilldeck_package::unpack_bytes(
        &body,
        file,
        &staging,
        &skilldeck_package::UnpackOptions::default(),
    )
    .map_err(|e| match e {
        skilldeck_package::Error::Refused(diagnostics) => diagnostics
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    })?;
    let files: Vec<SkillFile<'_>> = unpacked
        .unpacked
        .manifest
        .files()
        .iter()
        .zip(&unpacked.contents)
        .map(|(f, bytes)| SkillFile {
            path: f.path.as_str(),
            bytes,
        })
        .collect();
    Ok(skilldeck_audit::audit_files(file, &files, options))
}

fn is_package(path: &Path) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    [".tar.gz", ".tgz", ".zip", ".skill"]
        .iter()
        .any(|e| name.ends_with(e))
        || path.is_file()
}

pub fn run(args: &Args) -> Result<u8, CliError> {
    if args.list_rules {
        return list_rules(args.format == Format::Json);
    }
    let mut options = options(args.config.as_deref(), &args.allow)?;
    options.index = audit_index(args)?;
    let mut jobs: Vec<Job> = Vec::new();
    for path in &args.paths {
        if !path.exists() {
            return Err(CliError::Io {
                path: path.clone(),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            });
        }
        if path.is_dir() && args.recursive {
            let found = skilldeck::find_skill_dirs(path, skilldeck::WalkLimits::default());
            for d in &found.diagnostics {
                eprintln!("{}", render::safe(&d.to_string()));
            }
            if found.skills.is_empty() {
                return Err(CliError::Usage(format!(
                    "no SKILL.md found under {}",
                    path.display()
                )));
            }
            jobs.extend(
                found
                    .skills
                    .into_iter()
                    .map(|s| Job::Folder(s.dir().to_path_buf())),
            );
        } else if path.is_dir() {
            jobs.push(Job::Folder(path.clone()));
        } else if path
            .file_name()
            .is_some_and(|n| n.eq_ignore_ascii_case("SKILL.md"))
        {
            jobs.push(Job::Folder(
                path.parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(Path::new("."))
                    .to_path_buf(),
            ));
        } else if is_package(path) {
            jobs.push(Job::Package(path.clone()));
        }
    }
    let progress =
        (jobs.len() >= PROGRESS_MIN_SKILLS && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(jobs.len() as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} auditing {pos}/{len} skills [{bar:30}] {elapsed}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar
        });
    let results: Vec<Result<SkillAudit, String>> = jobs
        .par_iter()
        .map(|job| {
            let r = audit_one(job, &options);
            if let Some(bar) = &progress {
                bar.inc(1);
            }
            r
        })
        .collect();
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let mut audits = Vec::with_capacity(results.len());
    let mut unreadable = false;
    for r in results {
        match r {
            Ok(a) => audits.push(a),
            Err(message) => {
                unreadable = true;
                eprintln!("error: {}", render::safe(&message));
            }
        }
    }
    match args.format {
        Format::Json => {
            let mut out = render::stdout();
            render::write_json(&mut out, &audits)?;
            out.flush()?;
        }
        Format::Sarif => {
            let sarif =
                skilldeck_audit::sarif::to_sarif(&audits, "skilldeck", env!("CARGO_PKG_VERSION"));
            let mut out = render::stdout();
            render::write_json(&mut out, &sarif)?;
            out.flush()?;
        }
        _ => {
            let mut out = render::colored_stdout();
            text(&mut out, &audits, args.fail_on)?;
            out.flush()?;
        }
    }
    Ok(if unreadable {
        exit::USAGE
    } else if audits.iter().any(|a| a.verdict.at_least(args.fail_on)) {
        exit::INVALID
    } else {
        exit::OK
    })
}

fn style_of(severity: Severity) -> Style {
    match severity {
        Severity::Critical | Severity::High => RED,
        Severity::Medium => YELLOW,
        Severity::Low => BLUE,
    }
}

/// Every finding like rustc (`high[code]: message`, `--> file:line:col`,
/// the evidence, `= help`), each skill's verdict, then the totals.
pub fn text(out: &mut dyn Write, audits: &[SkillAudit], fail_on: Severity) -> std::io::Result<()> {
    for audit in audits {
        for f in &audit.findings {
            let level = style_of(f.severity);
            let (label, level) = match &f.allowed {
                Some(_) => (format!("allowed {}", f.severity), DIM),
                None => (f.severity.to_string(), level),
            };
            writeln!(
                out,
                "{level}{label}[{}]{level:#}{BOLD}: {}{BOLD:#}",
                f.code,
                render::safe(&f.message)
            )?;
            let location = audit.path.join(&f.file);
            let location = match (f.line, f.column) {
                (Some(l), Some(c)) => format!("{}:{l}:{c}", location.display()),
                (Some(l), None) => format!("{}:{l}", location.display()),
                _ => location.display().to_string(),
            };
            writeln!(out, "  {BLUE}-->{BLUE:#} {}", render::safe(&location))?;
            let gutter = f.line.map_or(1, |l| l.to_string().len());
            let pad = " ".repeat(gutter);
            if let (Some(line), false) = (f.line, f.evidence.is_empty()) {
                writeln!(out, "{pad} {BLUE}|{BLUE:#}")?;
                writeln!(
                    out,
                    "{BLUE}{line}{BLUE:#} {BLUE}|{BLUE:#} {}",
                    render::safe(&f.evidence)
                )?;
                writeln!(out, "{pad} {BLUE}|{BLUE:#}")?;
            }
            if let Some(reason) = &f.allowed {
                writeln!(
                    out,
                    "{pad} {BLUE}={BLUE:#} {BOLD}allowed{BOLD:#}: {}",
                    render::safe(reason)
                )?;
            } else if let Some(help) = &f.help {
                writeln!(
                    out,
                    "{pad} {BLUE}={BLUE:#} {BOLD}help{BOLD:#}: {}",
                    render::safe(help)
                )?;
            }
            writeln!(out)?;
        }
        let style = match audit.verdict.severity() {
            None => GREEN,
            Some(s) => style_of(s),
        };
        let counted = audit.counted().count();
        let allowed = audit.findings.len() - counted;
        writeln!(
            out,
            "{}: {style}{}{style:#} ({counted} finding{}{})",
            render::safe(&audit.name),
            audit.verdict,
            if counted == 1 { "" } else { "s" },
            if allowed > 0 {
                format!(", {allowed} allowed")
            } else {
                String::new()
            }
        )?;
    }
    let count = |v: Verdict| audits.iter().filter(|a| a.verdict == v).count();
    let failing = audits
        .iter()
        .filter(|a| a.verdict.at_least(fail_on))
        .count();
    let style = if failing == 0 { GREEN } else { RED };
    writeln!(
        out,
        "{style}{} skill{} audited{style:#}: {} clean, {} low, {} medium, {} high, {} critical; {failing} at or above {fail_on}",
        audits.len(),
        if audits.len() == 1 { "" } else { "s" },
        count(Verdict::Clean),
        count(Verdict::Low),
        count(Verdict::Medium),
        count(Verdict::High),
        count(Verdict::Critical),
    )
}

fn list_rules(json: bool) -> Result<u8, CliError> {
    let mut out = render::stdout_for(json);
    if json {
        let rules: Vec<serde_json::Value> = skilldeck_audit::RULES
            .iter()
            .map(|r| {
                serde_json::json!({
                    "code": r.code, "class": r.class, "severity": r.severity,
                    "title": r.title, "help": r.help,
                })
            })
            .collect();
        render::write_json(&mut out, &rules)?;
    } else {
        for r in skilldeck_audit::RULES {
            writeln!(
                out,
                "{:<36} {:<9} {:<20} {}",
                r.code,
                r.severity.as_str(),
                r.class.as_str(),
                r.title
            )?;
        }
    }
    out.flush()?;
    Ok(exit::OK)
}

/// The audit `pack`, `publish` and `install` run: `--no-audit` turns it
/// off (with a warning on standard error).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Gate {
    /// Do not run the risk audit before acting (a warning says so). By
    /// default a skill rated critical is refused, with its findings.
    #[arg(long)]
    pub no_audit: bool,
}

impl Gate {
    /// Audits each of `paths` (skill folders or packages) and refuses
    /// (`Some(exit code)`, the findings on standard error) when one is
    /// rated [`REFUSE_AT`] or worse; `None` to go on. `what` names the
    /// command in messages.
    pub fn check(&self, paths: &[&Path], what: &str) -> Result<Option<u8>, CliError> {
        self.check_with_index(paths, what, None)
    }

    /// [`Gate::check`], with declared packages looked up on `index`
    /// (`install`: where it gets them).
    pub fn check_with_index(
        &self,
        paths: &[&Path],
        what: &str,
        index: Option<IndexCheck>,
    ) -> Result<Option<u8>, CliError> {
        if self.no_audit {
            eprintln!(
                "warning: --no-audit: {what} runs without the risk audit (run `skilldeck audit` to see what it would have found)"
            );
            return Ok(None);
        }
        let mut options = options(None, &[])?;
        options.index = index;
        let mut refused = false;
        for path in paths {
            let audit = if path.is_dir() {
                skilldeck_audit::audit_skill(path, &options).map_err(|e| e.to_string())
            } else {
                audit_package(path, &options)
            };
            // What cannot be read here the command itself reports.
            let Ok(audit) = audit else { continue };
            if audit.verdict.at_least(REFUSE_AT) {
                refused = true;
                let blocking: Vec<SkillAudit> = vec![SkillAudit {
                    findings: audit.at_least(REFUSE_AT).cloned().collect(),
                    ..audit.clone()
                }];
                let mut err = anstream::stderr();
                text(&mut err, &blocking, REFUSE_AT)?;
                eprintln!(
                    "error: {what} refused: {} is rated {} by the risk audit.\n  \
                     Read the findings above (all of them: `skilldeck audit {}`).\n  \
                     A finding you reviewed and accept: allow it with a reason in skilldeck.toml:\n    \
                     [audit.allow.{}]\n    \"CODE\" = \"why it is safe\"\n  \
                     To skip the audit altogether: --no-audit (not recommended).",
                    render::safe(&audit.name),
                    audit.verdict,
                    path.display(),
                    render::safe(&audit.name),
                );
            } else if audit.verdict != Verdict::Clean {
                eprintln!(
                    "audit: {} is rated {} ({} finding{}; `skilldeck audit {}` shows them)",
                    render::safe(&audit.name),
                    audit.verdict,
                    audit.counted().count(),
                    if audit.counted().count() == 1 {
                        ""
                    } else {
                        "s"
                    },
                    path.display()
                );
            }
        }
        Ok(refused.then_some(exit::INVALID))
    }
}
