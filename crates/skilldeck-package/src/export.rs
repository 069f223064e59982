//! `export`: the skills of a root written as a Claude Code or Codex plugin,
//! with a marketplace that lists it and the fingerprint of every skill.
//!
//! The output folder is a marketplace root holding one plugin:
//!
//! ```text
//! OUT/.claude-plugin/marketplace.json        (Codex: OUT/.agents/plugins/marketplace.json)
//! OUT/plugins/NAME/.claude-plugin/plugin.json (Codex: .codex-plugin/plugin.json)
//! OUT/plugins/NAME/skills/SKILL/...          every skill, as install would copy it
//! OUT/plugins/NAME/skilldeck.lock            each skill's fingerprint and files
//! ```
//!
//! The plugin is in `plugins/NAME`, not at the root, because Codex does
//! not accept a local source naming the marketplace root itself. The
//! sidecar `skilldeck.lock` is an ordinary lock of the root
//! `plugins/NAME/skills`: `skilldeck verify --dir OUT/plugins/NAME/skills`
//! checks a copy, and an install of an entry prints the same fingerprints.
//! Each skill is copied through install's own staging (the same path,
//! link, size and validation rules); a skill whose lock entry (in the
//! root's `skilldeck.lock`) has another fingerprint has local edits and is
//! refused. Everything is written to a temporary folder beside the output
//! and renamed into place: the output is the old one or the whole new one,
//! never half of it. A non-empty output folder is replaced only with
//! `force`.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skilldeck::plugin::{DEFAULT_SKILLS_DIR, PluginKind, is_plugin_name, qualified_name};
use skilldeck::{Code, Diagnostic, Digest, Severity};

use crate::error::Error;
use crate::install::Source;
use crate::lock::{LockEntry, Lockfile, lock_path};
use crate::unpack::UnpackOptions;

/// The folder, inside the output, that holds the plugin's folder.
pub const EXPORT_PLUGINS_DIR: &str = "plugins";

/// The version a plugin gets when none is given.
pub const DEFAULT_EXPORT_VERSION: &str = "0.1.0";

/// What to export.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// Which tool's plugin to write.
    pub kind: PluginKind,
    /// The plugin's name (a slug): its skills are `NAME:SKILL`.
    pub name: String,
    /// The plugin's version (default [`DEFAULT_EXPORT_VERSION`]).
    pub version: Option<String>,
    /// The plugin's description (default: its skills, listed).
    pub description: Option<String>,
    /// The author and marketplace owner (default: the plugin's name).
    pub author: Option<String>,
    /// Replace a non-empty output folder.
    pub force: bool,
    /// Copy limits and validation (install's).
    pub unpack: UnpackOptions,
    /// The root's lockfile (default: [`lock_path`] of the root).
    pub lockfile: Option<PathBuf>,
}

/// One exported skill.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ExportedSkill {
    /// Its name inside the plugin.
    pub name: String,
    /// Its name as the tools show it: `PLUGIN:SKILL`.
    pub qualified: String,
    /// Its `metadata.version`.
    pub version: Option<String>,
    /// Its content fingerprint.
    pub fingerprint: Digest,
}

/// What was exported.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Exported {
    /// The kind of plugin.
    pub kind: PluginKind,
    /// The plugin's name.
    pub plugin: String,
    /// Its version.
    pub version: String,
    /// The output folder.
    pub out: PathBuf,
    /// The skills, sorted by name.
    pub skills: Vec<ExportedSkill>,
}

fn refused(code: Code, message: String, file: &Path) -> Error {
    Error::refused(Diagnostic::new(code, Severity::Error, message).in_file(file))
}

/// Exports the skills under `root` to `out` as a plugin (see the module).
pub fn export_plugin(root: &Path, out: &Path, options: &ExportOptions) -> Result<Exported, Error> {
    if !is_plugin_name(&options.name) {
        return Err(refused(
            Code::PluginNameInvalid,
            format!(
                "'{}' is not a plugin name: 1 to 64 lowercase letters a-z, digits and single \
                 inner hyphens (pass --name)",
                options.name
            ),
            root,
        ));
    }
    let out_nonempty = match fs::read_dir(out) {
        Ok(mut entries) => entries.next().is_some(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(Error::io(out, e)),
    };
    if out_nonempty && !options.force {
        return Err(refused(
            Code::ExportNotEmpty,
            format!(
                "{} is not empty: nothing was written (pass --force to replace it, or choose \
                 another folder)",
                out.display()
            ),
            out,
        ));
    }
    let found = skilldeck::find_skill_dirs(root, skilldeck::WalkLimits::default());
    if let Some(d) = found.diagnostics.iter().find(|d| d.is_error()) {
        return Err(Error::refused(d.clone()));
    }
    let dirs = found.skill_dirs();
    if dirs.is_empty() {
        return Err(refused(
            Code::ExportNoSkills,
            format!(
                "{} holds no skill (no folder with a SKILL.md)",
                root.display()
            ),
            root,
        ));
    }
    let lockfile = options.lockfile.clone().unwrap_or_else(|| lock_path(root));
    let lock = Lockfile::load(&lockfile)?;

    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent).map_err(|e| Error::io(&parent, e))?;
    let tmp = TempDir::new(&parent, out)?;
    let plugin_dir = tmp.path.join(EXPORT_PLUGINS_DIR).join(&options.name);
    let skills_dir = plugin_dir.join(DEFAULT_SKILLS_DIR);
    fs::create_dir_all(&skills_dir).map_err(|e| Error::io(&skills_dir, e))?;
    let mut sidecar = Lockfile::new(DEFAULT_SKILLS_DIR);
    let mut skills = Vec::with_capacity(dirs.len());
    for (i, dir) in dirs.iter().enumerate() {
        let staging = tmp.path.join(format!(".stage-{i}"));
        let unpacked = Source::Folder(dir.clone()).stage(&staging, &options.unpack)?;
        let fingerprint = unpacked.manifest.fingerprint();
        if let Some(entry) = lock.as_ref().and_then(|l| l.skill.get(&unpacked.name))
            && entry.fingerprint != fingerprint
        {
            return Err(refused(
                Code::LockMismatch,
                format!(
                    "skill '{}' has local edits: its fingerprint is {fingerprint}, the lock says \
                     {} (see `skilldeck verify`); nothing was written",
                    unpacked.name, entry.fingerprint
                ),
                &lockfile,
            ));
        }
        let dest = skills_dir.join(&unpacked.name);
        if fs::symlink_metadata(&dest).is_ok() {
            return Err(refused(
                Code::PackageDuplicate,
                format!(
                    "two skills are named '{}' under {}; nothing was written",
                    unpacked.name,
                    root.display()
                ),
                dir,
            ));
        }
        fs::rename(&unpacked.dir, &dest).map_err(|e| Error::io(&dest, e))?;
        fs::remove_dir_all(&staging).map_err(|e| Error::io(&staging, e))?;
        sidecar.skill.insert(
            unpacked.name.clone(),
            LockEntry {
                version: unpacked.version.clone(),
                source: format!("{DEFAULT_SKILLS_DIR}/{}", unpacked.name),
                fingerprint,
                commit: None,
                signer: None,
                files: unpacked.manifest.files().to_vec(),
                environment: None,
                node_environment: None,
            },
        );
        skills.push(ExportedSkill {
            qualified: qualified_name(&options.name, &unpacked.name),
            name: unpacked.name,
            version: unpacked.version,
            fingerprint,
        });
    }
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    let version = options
        .version
        .clone()
        .unwrap_or_else(|| DEFAULT_EXPORT_VERSION.to_owned());
    let description = options.description.clone().unwrap_or_else(|| {
        let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
        format!("Skills: {}", names.join(", "))
    });
    let author = options
        .author
        .clone()
        .unwrap_or_else(|| options.name.clone());
    let mut manifest = json!({
        "name": options.name,
        "version": version,
        "description": description,
        "author": { "name": author },
    });
    if options.kind == PluginKind::CodexPlugin {
        manifest["skills"] = json!(format!("./{DEFAULT_SKILLS_DIR}/"));
    }
    write_json(&plugin_dir.join(options.kind.manifest_path()), &manifest)?;
    let source_path = format!("./{EXPORT_PLUGINS_DIR}/{}", options.name);
    let marketplace = match options.kind {
        PluginKind::ClaudePlugin => json!({
            "name": options.name,
            "owner": { "name": author },
            "plugins": [{
                "name": options.name,
                "source": source_path,
                "description": description,
                "version": version,
            }],
        }),
        PluginKind::CodexPlugin => json!({
            "name": options.name,
            "plugins": [{
                "name": options.name,
                "source": { "source": "local", "path": source_path },
                "policy": { "installation": "AVAILABLE", "authentication": "ON_INSTALL" },
            }],
        }),
    };
    write_json(
        &tmp.path.join(options.kind.marketplace_path()),
        &marketplace,
    )?;
    sidecar.save(&lock_path(&skills_dir))?;
    tmp.publish(out, out_nonempty || out.exists())?;
    Ok(Exported {
        kind: options.kind,
        plugin: options.name.clone(),
        version,
        out: out.to_path_buf(),
        skills,
    })
}

fn write_json(path: &Path, value: &Value) -> Result<(), Error> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let mut text = serde_json::to_string_pretty(value).map_err(|e| {
        Error::io(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        )
    })?;
    text.push('\n');
    fs::write(path, text).map_err(|e| Error::io(path, e))
}

/// The folder an export is written to, beside the output; removed unless
/// published.
struct TempDir {
    path: PathBuf,
    published: bool,
}

impl TempDir {
    fn new(parent: &Path, out: &Path) -> Result<TempDir, Error> {
        let base = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "export".to_owned());
        for n in 0u32..1000 {
            let path = parent.join(format!(
                "{}export-{base}-{}-{n}",
                crate::install::LEFTOVER_PREFIX,
                std::process::id()
            ));
            match fs::create_dir(&path) {
                Ok(()) => {
                    return Ok(TempDir {
                        path,
                        published: false,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::io(&path, e)),
            }
        }
        Err(Error::io(
            parent,
            std::io::Error::other("no free temporary export folder name"),
        ))
    }

    /// Renames the folder to `out`; an existing `out` (`replace`) is
    /// renamed aside first and removed after, or put back if the rename
    /// fails.
    fn publish(mut self, out: &Path, replace: bool) -> Result<(), Error> {
        if !replace {
            fs::rename(&self.path, out).map_err(|e| Error::io(out, e))?;
            self.published = true;
            return Ok(());
        }
        let aside = self.path.with_extension("old");
        fs::rename(out, &aside).map_err(|e| Error::io(out, e))?;
        if let Err(e) = fs::rename(&self.path, out) {
            let _ = fs::rename(&aside, out);
            return Err(Error::io(out, e));
        }
        self.published = true;
        fs::remove_dir_all(&aside).map_err(|e| Error::io(&aside, e))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.published {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}
