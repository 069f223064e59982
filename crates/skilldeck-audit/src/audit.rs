//! Auditing a skill: from a folder ([`audit_skill`]) or from files already
//! in memory ([`audit_files`]: an upload, an unpacked package).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::allow::AllowList;
use crate::content::{Content, classify};
use crate::error::Error;
use crate::finding::{Finding, Severity, SkillAudit, Verdict};
use crate::limits::{MAX_DEPTH, MAX_FILE_BYTES, MAX_FILES};
use crate::patterns::COMPILED;
use crate::rules::rule_of;
use crate::scan::{FileFacts, SkillContext, TextFile, scan};

/// One file of a skill, in memory.
#[derive(Debug, Clone, Copy)]
pub struct SkillFile<'a> {
    /// The path relative to the skill folder, `/`-separated
    /// (`scripts/run.sh`).
    pub path: &'a str,
    /// Its bytes.
    pub bytes: &'a [u8],
}

/// How to audit.
#[derive(Debug, Clone, Default)]
pub struct AuditOptions {
    /// Findings accepted, with their reasons (`[audit.allow]`).
    pub allow: AllowList,
    /// The package index declared dependencies are looked up on
    /// (`deps.not-on-index`); `None` (the default): no lookups, no network.
    pub index: Option<crate::index::IndexCheck>,
}

/// Audits the skill whose files are `files` (relative paths; the skill's
/// `SKILL.md` among them). `shown` is where the skill is, for the report
/// (a folder, a package, an upload's name). Never fails: what cannot be
/// read is a finding.
pub fn audit_files(shown: &Path, files: &[SkillFile<'_>], options: &AuditOptions) -> SkillAudit {
    let mut findings: Vec<Finding> = Vec::new();
    let skill_md = files.iter().find(|f| f.path == "SKILL.md").or_else(|| {
        files
            .iter()
            .find(|f| f.path.eq_ignore_ascii_case("skill.md"))
    });
    let skill_text = skill_md.map(|f| String::from_utf8_lossy(f.bytes));
    let checked = skill_text.as_deref().map(|t| {
        skilldeck::check_text(
            t,
            None,
            &skilldeck::ValidationOptions {
                lints: false,
                ..skilldeck::ValidationOptions::lenient()
            },
        )
    });
    let frontmatter = checked.as_ref().and_then(|c| c.frontmatter.as_ref());
    let name = frontmatter
        .and_then(|f| f.name.clone())
        .or_else(|| shown.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let description = frontmatter
        .and_then(|f| f.description.clone())
        .unwrap_or_default();
    let context = SkillContext {
        security_topic: COMPILED
            .security_topic
            .is_match(format!("{name} {description}").as_bytes()),
    };

    let mut network: Option<(String, u32, u32, String)> = None;
    for (i, file) in files.iter().enumerate() {
        if i >= MAX_FILES {
            findings.push(whole_file(
                "unanalysable.too-many-files",
                file.path,
                format!(
                    "{} files; the audit reads the first {MAX_FILES} (the rest are not audited)",
                    files.len()
                ),
            ));
            break;
        }
        if file.bytes.len() as u64 > MAX_FILE_BYTES {
            findings.push(whole_file(
                "unanalysable.too-large",
                file.path,
                format!(
                    "{} bytes, over the audit's limit of {MAX_FILE_BYTES} bytes: not read",
                    file.bytes.len()
                ),
            ));
            continue;
        }
        match classify(file.path, file.bytes) {
            Content::Inert => {}
            Content::Unanalysable(code, what) => {
                let title = rule_of(code).map_or("", |r| r.title);
                findings.push(whole_file(code, file.path, format!("{what}: {title}")));
            }
            Content::Text {
                prose,
                markdown,
                text,
                lossy,
            } => {
                if lossy {
                    findings.push(whole_file(
                        "unanalysable.not-utf8",
                        file.path,
                        "not UTF-8: audited as decoded with replacement characters".into(),
                    ));
                }
                let mut facts = FileFacts::default();
                findings.extend(scan(
                    &TextFile {
                        path: file.path,
                        text: &text,
                        prose,
                        markdown,
                    },
                    &context,
                    &mut facts,
                ));
                if let (None, Some((line, col, evidence))) = (&network, facts.network_use) {
                    network = Some((file.path.to_owned(), line, col, evidence));
                }
            }
        }
    }
    if let Some((file, line, column, evidence)) = network
        && let Some(f) = capability(
            skill_text.as_deref().unwrap_or(""),
            checked.as_ref().map_or(0, |c| c.body_line),
            frontmatter,
            &description,
            file,
            line,
            column,
            evidence,
        )
    {
        findings.push(f);
    }
    let dependency_files: Vec<(&str, String)> = files
        .iter()
        .filter(|f| match f.path {
            skilldeck::environment::REQUIREMENTS_TXT | skilldeck::environment::PYPROJECT_TOML => {
                f.bytes.len() as u64 <= skilldeck::environment::MAX_REQUIREMENTS_BYTES
            }
            skilldeck::environment::PACKAGE_JSON => {
                f.bytes.len() as u64 <= skilldeck::environment::MAX_PACKAGE_JSON_BYTES
            }
            _ => false,
        })
        .map(|f| (f.path, String::from_utf8_lossy(f.bytes).into_owned()))
        .collect();
    let texts: Vec<(&str, &str)> = dependency_files
        .iter()
        .map(|(p, t)| (*p, t.as_str()))
        .collect();
    findings.extend(crate::deps::findings(&texts, options.index.as_ref()));
    findings.sort_by(|a, b| {
        (a.file.as_bytes(), a.line, a.column, &a.code).cmp(&(
            b.file.as_bytes(),
            b.line,
            b.column,
            &b.code,
        ))
    });
    options.allow.apply(&name, &mut findings);
    let worst = findings
        .iter()
        .filter(|f| f.allowed.is_none())
        .map(|f| f.severity)
        .max();
    SkillAudit {
        name,
        path: shown.to_path_buf(),
        verdict: Verdict::of(worst),
        findings,
    }
}

/// A finding about a whole file.
fn whole_file(code: &'static str, path: &str, message: String) -> Finding {
    let rule = rule_of(code);
    Finding {
        code: code.to_owned(),
        severity: rule.map_or(Severity::Medium, |r| r.severity),
        class: rule.map_or(crate::finding::Class::Unanalysable, |r| r.class),
        file: path.to_owned(),
        line: None,
        column: None,
        evidence: String::new(),
        message,
        help: rule.map(|r| r.help.to_owned()),
        allowed: None,
    }
}

/// Scripts that use the network against a skill that says nothing of it,
/// or promises to work offline.
#[allow(clippy::too_many_arguments)] // one finding's parts
fn capability(
    skill_md: &str,
    body_line: u32,
    frontmatter: Option<&skilldeck::Frontmatter>,
    description: &str,
    file: String,
    line: u32,
    column: u32,
    evidence: String,
) -> Option<Finding> {
    let compatibility = frontmatter
        .and_then(|f| f.compatibility.clone())
        .unwrap_or_default();
    let claims = format!("{description}\n{compatibility}");
    let (code, message) = if COMPILED.offline_claim.is_match(claims.as_bytes()) {
        (
            "capability.contradicts-declaration",
            "this script uses the network, but the skill's description or compatibility says it works offline".to_owned(),
        )
    } else {
        let tools = frontmatter
            .map(|f| f.allowed_tools.join(" "))
            .unwrap_or_default();
        let bins = frontmatter
            .map(|f| {
                f.requires
                    .iter()
                    .flat_map(|r| r.bins.iter().chain(r.any_bins.iter()))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        // The body after the frontmatter (not the name: a skill named
        // "network-x" declares nothing by its name).
        let body: String = skill_md
            .lines()
            .skip(usize::try_from(body_line.saturating_sub(1)).unwrap_or(0))
            .collect::<Vec<_>>()
            .join("\n");
        let declared = format!("{description}\n{compatibility}\n{body}\n{tools}\n{bins}");
        if COMPILED.network_declared.is_match(declared.as_bytes()) {
            return None;
        }
        (
            "capability.undeclared-network",
            "this script uses the network, but nothing in SKILL.md (description, compatibility, allowed tools, requirements, instructions) mentions a network service".to_owned(),
        )
    };
    let rule = rule_of(code)?;
    Some(Finding {
        code: code.to_owned(),
        severity: rule.severity,
        class: rule.class,
        file,
        line: Some(line),
        column: Some(column),
        evidence,
        message,
        help: Some(rule.help.to_owned()),
        allowed: None,
    })
}

/// Audits the skill folder `folder`: reads every regular file below it
/// (hidden ones too; symlinks are not followed and are reported), at most
/// [`MAX_FILES`] files of at most [`MAX_FILE_BYTES`] bytes each.
pub fn audit_skill(folder: &Path, options: &AuditOptions) -> Result<SkillAudit, Error> {
    let meta = std::fs::metadata(folder).map_err(|e| Error::io(folder, e))?;
    if !meta.is_dir() || !folder.join("SKILL.md").is_file() && !folder.join("skill.md").is_file() {
        return Err(Error::NotASkill {
            path: folder.to_path_buf(),
        });
    }
    let mut listed: Vec<(String, PathBuf, u64)> = Vec::new();
    let mut odd: Vec<Finding> = Vec::new();
    list(folder, "", 0, &mut listed, &mut odd)?;
    listed.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    // Read what will be audited; a file over the limit is not read (an
    // empty stand-in of the right kind tells audit_files its size).
    let mut contents: BTreeMap<usize, Vec<u8>> = BTreeMap::new();
    let mut too_large: Vec<Finding> = Vec::new();
    for (i, (rel, full, size)) in listed.iter().enumerate().take(MAX_FILES) {
        if *size > MAX_FILE_BYTES {
            too_large.push(whole_file(
                "unanalysable.too-large",
                rel,
                format!("{size} bytes, over the audit's limit of {MAX_FILE_BYTES} bytes: not read"),
            ));
            continue;
        }
        let bytes = read_capped(full)?;
        contents.insert(i, bytes);
    }
    let files: Vec<SkillFile<'_>> = listed
        .iter()
        .enumerate()
        .filter_map(|(i, (rel, _, _))| {
            contents.get(&i).map(|b| SkillFile {
                path: rel.as_str(),
                bytes: b.as_slice(),
            })
        })
        .collect();
    // The allow list is applied once, below, to every finding.
    let mut audit = audit_files(
        folder,
        &files,
        &AuditOptions {
            allow: AllowList::default(),
            index: options.index.clone(),
        },
    );
    if listed.len() > MAX_FILES {
        audit.findings.push(whole_file(
            "unanalysable.too-many-files",
            &listed[MAX_FILES].0,
            format!(
                "{} files; the audit reads the first {MAX_FILES} (the rest are not audited)",
                listed.len()
            ),
        ));
    }
    audit.findings.extend(too_large);
    audit.findings.extend(odd);
    audit.findings.sort_by(|a, b| {
        (a.file.as_bytes(), a.line, a.column, &a.code).cmp(&(
            b.file.as_bytes(),
            b.line,
            b.column,
            &b.code,
        ))
    });
    options.allow.apply(&audit.name, &mut audit.findings);
    audit.verdict = Verdict::of(
        audit
            .findings
            .iter()
            .filter(|f| f.allowed.is_none())
            .map(|f| f.severity)
            .max(),
    );
    Ok(audit)
}

/// Reads at most [`MAX_FILE_BYTES`] + 1 bytes (a file that grew is cut,
/// and then reported by size on the next run).
fn read_capped(path: &Path) -> Result<Vec<u8>, Error> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    Ok(bytes)
}

/// Lists the regular files below `dir`; symlinks and special files become
/// findings (not followed, not read).
fn list(
    dir: &Path,
    prefix: &str,
    depth: usize,
    out: &mut Vec<(String, PathBuf, u64)>,
    odd: &mut Vec<Finding>,
) -> Result<(), Error> {
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let rel = format!("{prefix}{}", entry.file_name().to_string_lossy());
        let kind = entry.file_type().map_err(|e| Error::io(entry.path(), e))?;
        if kind.is_dir() {
            if depth + 1 >= MAX_DEPTH {
                odd.push(whole_file(
                    "unanalysable.too-many-files",
                    &rel,
                    format!("a folder nested deeper than {MAX_DEPTH} levels: not audited"),
                ));
                continue;
            }
            list(&entry.path(), &format!("{rel}/"), depth + 1, out, odd)?;
        } else if kind.is_file() {
            let size = entry
                .metadata()
                .map_err(|e| Error::io(entry.path(), e))?
                .len();
            out.push((rel, entry.path(), size));
        } else {
            odd.push(whole_file(
                "unanalysable.binary",
                &rel,
                if kind.is_symlink() {
                    "a symbolic link: not followed (packages refuse links)".to_owned()
                } else {
                    "a special file (device, FIFO or socket): not read".to_owned()
                },
            ));
        }
    }
    Ok(())
}
