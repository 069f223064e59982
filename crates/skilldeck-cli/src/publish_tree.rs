//! `skilldeck publish -r ROOT --registry URL`: every skill folder under
//! ROOT published, one line each, skipping the unchanged ones (a version
//! with the same content fingerprint is already there) without uploading.
//! One skill's refusal does not stop the others; the exit status says
//! whether any was refused. A progress bar on a terminal for long runs.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use skilldeck_package::signature::SigningKey;
use skilldeck_package::{ArchiveFormat, PackOptions, UnpackOptions};
use skilldeck_registry::client::{Client, ClientError};
use skilldeck_registry::names::{Namespace, SkillRef};

use crate::error::CliError;
use crate::exit;
use crate::format::Format;
use crate::registry_client::refusal_lines;
use crate::render;

/// Fewest skills for which a progress bar is drawn.
const PROGRESS_MIN_SKILLS: usize = 32;

/// What `publish -r` needs besides the root.
pub struct TreeArgs<'a> {
    /// Where to publish.
    pub namespace: &'a Namespace,
    /// The version of skills without `metadata.version`.
    pub version: Option<&'a str>,
    /// Sign every version with this key.
    pub key: Option<&'a SigningKey>,
    /// The risk audit gate, per skill.
    pub audit: &'a crate::audit::Gate,
    /// How each skill's dependencies are resolved (`None`:
    /// --no-environments).
    pub environments: Option<skilldeck_package::environment::EnvironmentOptions>,
    /// The registry client.
    pub client: Client,
    /// text or json.
    pub format: Format,
}

/// How one skill went.
#[derive(Debug, Serialize)]
#[serde(rename_all = "snake_case", tag = "status")]
enum Outcome {
    /// Uploaded and stored.
    Published {
        skill: String,
        version: String,
        fingerprint: String,
        warnings: usize,
    },
    /// A version with this content is already there: not uploaded.
    Unchanged {
        skill: String,
        version: String,
        fingerprint: String,
    },
    /// Not published, and why (one line each).
    Refused { folder: PathBuf, why: Vec<String> },
}

impl Outcome {
    fn refused(folder: &Path, why: Vec<String>) -> Outcome {
        Outcome::Refused {
            folder: folder.to_path_buf(),
            why,
        }
    }

    fn line(&self) -> String {
        match self {
            Outcome::Published {
                skill,
                version,
                fingerprint,
                warnings,
            } => format!(
                "published {skill}@{version} {fingerprint}{}",
                match warnings {
                    0 => String::new(),
                    1 => " (1 warning)".to_owned(),
                    n => format!(" ({n} warnings)"),
                }
            ),
            Outcome::Unchanged {
                skill,
                version,
                fingerprint,
            } => format!("unchanged {skill}@{version} {fingerprint} (already published)"),
            Outcome::Refused { folder, why } => {
                let mut text = format!("refused {}", folder.display());
                for line in why {
                    text.push_str("\n  ");
                    text.push_str(line);
                }
                text
            }
        }
    }
}

/// Runs `publish -r ROOT`.
pub fn run(root: &Path, args: &TreeArgs<'_>) -> Result<u8, CliError> {
    let started = Instant::now();
    let found = skilldeck::find_skill_dirs(root, skilldeck::WalkLimits::default());
    for d in &found.diagnostics {
        eprintln!("{}", render::safe(&d.to_string()));
    }
    if found.skills.is_empty() {
        return Err(CliError::Usage(format!(
            "no SKILL.md found under {}: pass a folder holding skill folders",
            root.display()
        )));
    }
    let dirs: Vec<PathBuf> = found.skills.iter().map(|s| s.dir().to_path_buf()).collect();
    let progress =
        (dirs.len() >= PROGRESS_MIN_SKILLS && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(dirs.len() as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} publishing {pos}/{len} skills [{bar:30}] {elapsed}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar
        });
    let json = args.format == Format::Json;
    let mut outcomes = Vec::with_capacity(dirs.len());
    for dir in &dirs {
        let outcome = publish_dir(dir, args)?;
        if !json {
            let line = render::safe(&outcome.line()).into_owned();
            match &progress {
                Some(bar) => bar.suspend(|| println!("{line}")),
                None => println!("{line}"),
            }
        }
        if let Some(bar) = &progress {
            bar.inc(1);
        }
        outcomes.push(outcome);
    }
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let count = |f: fn(&Outcome) -> bool| outcomes.iter().filter(|o| f(o)).count();
    let published = count(|o| matches!(o, Outcome::Published { .. }));
    let unchanged = count(|o| matches!(o, Outcome::Unchanged { .. }));
    let refused = count(|o| matches!(o, Outcome::Refused { .. }));
    if json {
        let mut out = render::stdout_for(true);
        render::write_json(&mut out, &outcomes)?;
        out.flush()?;
    }
    eprintln!(
        "publish -r {}: {published} published, {unchanged} unchanged, {refused} refused in {:.1} s",
        root.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(if refused > 0 { exit::INVALID } else { exit::OK })
}

/// Publishes the skill folder `dir`, unless its content is already there.
/// A refusal of this skill is an [`Outcome::Refused`]; only a failure
/// that would stop every other skill too (the registry unreachable, the
/// token refused) is an error.
fn publish_dir(dir: &Path, args: &TreeArgs<'_>) -> Result<Outcome, CliError> {
    if args.audit.check(&[dir], "publish")?.is_some() {
        return Ok(Outcome::refused(
            dir,
            vec!["the risk audit refused it (its findings are printed above)".to_owned()],
        ));
    }
    // Packed and validated as the registry validates (lenient, no lints),
    // as a single `publish DIR` does.
    let options = PackOptions {
        format: ArchiveFormat::TarGz,
        validation: UnpackOptions::default().validation,
        ..PackOptions::default()
    };
    let packed = match skilldeck_package::pack(dir, &options) {
        Ok(p) => p,
        Err(skilldeck_package::Error::Refused(diagnostics)) => {
            let mut why = Vec::new();
            for d in diagnostics {
                why.push(d.to_string());
                if let Some(help) = &d.help {
                    why.push(format!("= help: {help}"));
                }
            }
            return Ok(Outcome::refused(dir, why));
        }
        Err(e) => return Ok(Outcome::refused(dir, vec![e.to_string()])),
    };
    let Some(version) = packed.version.clone().or(args.version.map(str::to_owned)) else {
        return Ok(Outcome::refused(
            dir,
            vec![
                "no version: give it `metadata.version` in SKILL.md, or pass --version for the \
                 skills that have none"
                    .to_owned(),
            ],
        ));
    };
    let fingerprint = packed.fingerprint();
    let shown = fingerprint.to_string();
    let skill = match SkillRef::new(args.namespace.as_str(), &packed.name) {
        Ok(s) => s,
        Err(e) => return Ok(Outcome::refused(dir, vec![e.to_string()])),
    };
    match args.client.skill(&skill) {
        Ok(detail) => {
            if let Some(v) = detail.versions.iter().find(|v| v.fingerprint == shown) {
                return Ok(Outcome::Unchanged {
                    skill: skill.to_string(),
                    version: v.version.clone(),
                    fingerprint: shown,
                });
            }
        }
        Err(e) if e.status() == Some(404) => {}
        Err(e) => return stop_or_refuse(dir, e),
    }
    // Resolved before the upload: a requirement that does not resolve
    // refuses this skill.
    let environments = match &args.environments {
        Some(o) => match resolve(&packed.name, dir, o) {
            Ok(envs) => envs,
            Err(skilldeck_package::Error::Refused(diagnostics)) => {
                let mut why = Vec::new();
                for d in diagnostics {
                    why.push(d.to_string());
                    if let Some(help) = &d.help {
                        why.push(format!("= help: {help}"));
                    }
                }
                return Ok(Outcome::refused(dir, why));
            }
            Err(e) => return Ok(Outcome::refused(dir, vec![e.to_string()])),
        },
        None => Vec::new(),
    };
    let signature = match args.key {
        Some(key) => match skilldeck_package::signature::sign(&fingerprint, key) {
            Ok(s) => Some(s.to_armored().into_bytes()),
            Err(e) => return Ok(Outcome::refused(dir, vec![e.to_string()])),
        },
        None => None,
    };
    for w in packed
        .warnings
        .iter()
        .filter(|w| w.code == skilldeck::Code::PackageLink)
    {
        eprintln!("{}", render::safe(&w.to_string()));
    }
    match args.client.publish_with(
        args.namespace,
        Some(&version),
        packed.bytes,
        signature.as_deref(),
        &environments,
    ) {
        Ok(p) if p.created => Ok(Outcome::Published {
            skill: skill.to_string(),
            version: p.version,
            fingerprint: p.fingerprint,
            warnings: p.report.len(),
        }),
        Ok(p) => Ok(Outcome::Unchanged {
            skill: skill.to_string(),
            version: p.version,
            fingerprint: p.fingerprint,
        }),
        Err(e) => stop_or_refuse(dir, e),
    }
}

/// A registry error for one skill: its refusal (422, 409, 403 on this
/// skill, ...) is that skill's outcome; the registry unreachable or the
/// token refused (401) stops the whole run.
fn stop_or_refuse(dir: &Path, e: ClientError) -> Result<Outcome, CliError> {
    if e.is_unavailable() || e.status() == Some(401) {
        return Err(e.into());
    }
    let why = refusal_lines(&e).unwrap_or_else(|| vec![e.to_string()]);
    Ok(Outcome::refused(dir, why))
}

/// The resolution of what the skill in `dir` declares (empty when it
/// declares nothing), for `publish` and `publish -r`.
pub(crate) fn resolve(
    skill: &str,
    dir: &std::path::Path,
    options: &skilldeck_package::environment::EnvironmentOptions,
) -> Result<Vec<skilldeck::environment::LockedEnvironment>, skilldeck_package::Error> {
    if !skilldeck::environment::may_declare_dependencies(dir) {
        return Ok(Vec::new());
    }
    skilldeck_package::environment::resolve_for_publish(skill, dir, options)
}
