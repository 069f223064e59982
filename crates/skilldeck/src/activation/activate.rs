//! [`activate`]: read a skill's `SKILL.md`, substitute its arguments, list
//! its files; [`Activation::render`] in the requested format.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::fs::Metadata;
use std::path::PathBuf;

use crate::activation::dynamic::{DisabledDynamicContext, DynamicContext, expand_dynamic};
use crate::activation::envelope::escape_xml;
use crate::activation::envelope::neutralise_envelope_tags;
use crate::activation::substitute::Substitution;
use crate::diagnostic::Diagnostic;
use crate::error::Error;
use crate::limits;
use crate::resources::ResourceEntry;
use crate::skill::Skill;
use crate::spec::control::one_line_without_controls as path_without_controls;
use crate::spec::frontmatter;

/// Limits of one activation; every default is a constant in [`crate::limits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActivationOptions {
    /// Largest `SKILL.md` read (bytes).
    pub max_skill_md_bytes: u64,
    /// Longest argument string accepted (bytes).
    pub max_arguments_bytes: usize,
    /// Longest body after substitution (bytes).
    pub max_body_bytes: usize,
    /// Most resource files listed; the rest are counted.
    pub max_resources: usize,
    /// Name the skill's folder (absolute) in the envelope and for
    /// `${SKILL_DIR}`. Off for clients that cannot read the host's files
    /// (a remote MCP client): the envelope then says paths are relative to
    /// the skill and files are read with `read_skill_resource`
    /// ([`NO_DIR_NOTE`]), the JSON rendering's `skill_dir` is `null`, and
    /// `${SKILL_DIR}` becomes `.`.
    pub show_skill_dir: bool,
}

impl Default for ActivationOptions {
    fn default() -> Self {
        ActivationOptions {
            max_skill_md_bytes: limits::MAX_SKILL_MD_BYTES,
            max_arguments_bytes: limits::MAX_ARGUMENTS_BYTES,
            max_body_bytes: limits::MAX_ACTIVATION_BODY_BYTES,
            max_resources: limits::MAX_ACTIVATION_RESOURCES,
            show_skill_dir: true,
        }
    }
}

/// An activated skill: what goes into the model's context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activation {
    /// The skill's name.
    pub name: String,
    /// The body: frontmatter removed, arguments substituted, envelope tags
    /// neutralised.
    pub body: String,
    /// The skill folder, absolute, as discovered.
    pub skill_dir: PathBuf,
    /// Whether renderings name `skill_dir` ([`ActivationOptions::show_skill_dir`]).
    pub show_skill_dir: bool,
    /// The skill's files (without `SKILL.md`), sorted, at most
    /// [`ActivationOptions::max_resources`].
    pub resources: Vec<ResourceEntry>,
    /// How many more files there are beyond `resources`.
    pub resources_omitted: usize,
}

/// How an activation is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ActivationFormat {
    /// The agentskills.io envelope: `<skill_content name="...">`.
    #[default]
    Xml,
    /// Claude Code's form: `Base directory for this skill: ...`.
    Text,
    /// One JSON object: `name`, `skill_dir`, `body`, `resources`,
    /// `resources_omitted`, in that order.
    Json,
}

impl ActivationFormat {
    /// Every format.
    pub const ALL: [ActivationFormat; 3] = [
        ActivationFormat::Xml,
        ActivationFormat::Text,
        ActivationFormat::Json,
    ];

    /// The lowercase name (`xml`, `text`, `json`).
    pub fn as_str(self) -> &'static str {
        match self {
            ActivationFormat::Xml => "xml",
            ActivationFormat::Text => "text",
            ActivationFormat::Json => "json",
        }
    }
}

impl std::fmt::Display for ActivationFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ActivationFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ActivationFormat::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| format!("unknown format '{s}' (expected xml, text or json)"))
    }
}

/// The first line of the [`ActivationFormat::Text`] rendering, before the folder.
pub const TEXT_HEADER: &str = "Base directory for this skill: ";

/// What an envelope rendered without the skill's folder says instead.
pub const NO_DIR_NOTE: &str = "Relative paths in this skill are relative to the skill; read its \
     files with the read_skill_resource tool.";

/// The opening of the [`ActivationFormat::Xml`] envelope.
pub const XML_OPEN_TAG: &str = "<skill_content";

impl Activation {
    /// The activation in `format`.
    pub fn render(&self, format: ActivationFormat) -> String {
        match format {
            ActivationFormat::Xml => self.render_xml(),
            ActivationFormat::Text => self.render_text(),
            ActivationFormat::Json => self.render_json(),
        }
    }

    fn dir_text(&self) -> Cow<'_, str> {
        path_without_controls(self.skill_dir.to_string_lossy())
    }

    fn render_xml(&self) -> String {
        let dir = self.dir_text();
        let dir = neutralise_envelope_tags(&dir);
        let mut out = String::with_capacity(
            self.body.len() + dir.len() + 200 + self.resources.len() * 48 + self.name.len(),
        );
        out.push_str(XML_OPEN_TAG);
        out.push_str(" name=\"");
        out.push_str(&escape_xml(&self.name));
        out.push_str("\">\n");
        if !self.body.is_empty() {
            out.push_str(&self.body);
            out.push_str("\n\n");
        }
        if self.show_skill_dir {
            out.push_str("Skill directory: ");
            out.push_str(&dir);
            out.push_str("\nRelative paths in this skill are relative to the skill directory.\n");
        } else {
            out.push_str(NO_DIR_NOTE);
            out.push('\n');
        }
        if !self.resources.is_empty() || self.resources_omitted > 0 {
            out.push_str("\n<skill_resources>\n");
            for r in &self.resources {
                out.push_str("  <file>");
                out.push_str(&escape_xml(&path_without_controls(Cow::Borrowed(&r.path))));
                out.push_str("</file>\n");
            }
            if self.resources_omitted > 0 {
                let _ = writeln!(out, "  ... and {} more", self.resources_omitted);
            }
            out.push_str("</skill_resources>\n");
        }
        out.push_str("</skill_content>");
        out
    }

    fn render_text(&self) -> String {
        let dir = self.dir_text();
        let mut out =
            String::with_capacity(self.body.len() + dir.len() + 120 + self.resources.len() * 40);
        if self.show_skill_dir {
            out.push_str(TEXT_HEADER);
            out.push_str(&dir);
        } else {
            out.push_str(NO_DIR_NOTE);
        }
        if !self.body.is_empty() {
            out.push_str("\n\n");
            out.push_str(&self.body);
        }
        if !self.resources.is_empty() || self.resources_omitted > 0 {
            out.push_str(if self.show_skill_dir {
                "\n\nSkill resources (relative to the base directory):\n"
            } else {
                "\n\nSkill resources (relative to the skill):\n"
            });
            for r in &self.resources {
                out.push_str("- ");
                out.push_str(&path_without_controls(Cow::Borrowed(&r.path)));
                out.push('\n');
            }
            if self.resources_omitted > 0 {
                let _ = writeln!(out, "- ... and {} more", self.resources_omitted);
            }
            out.truncate(out.trim_end_matches('\n').len());
        }
        out
    }

    fn render_json(&self) -> String {
        #[derive(serde::Serialize)]
        struct Json<'a> {
            name: &'a str,
            skill_dir: Option<&'a str>,
            body: &'a str,
            resources: Vec<Cow<'a, str>>,
            resources_omitted: usize,
        }
        let dir = self.dir_text();
        let json = Json {
            name: &self.name,
            skill_dir: self.show_skill_dir.then_some(&*dir),
            body: &self.body,
            resources: self
                .resources
                .iter()
                .map(|r| path_without_controls(Cow::Borrowed(r.path.as_str())))
                .collect(),
            resources_omitted: self.resources_omitted,
        };
        // Strings and integers always serialise; the default is unreachable.
        serde_json::to_string(&json).unwrap_or_default()
    }
}

/// Activates `skill` with `arguments` (may be empty), with the default limits.
pub fn activate(skill: &Skill, arguments: &str) -> Result<Activation, Error> {
    activate_with(skill, arguments, &ActivationOptions::default())
}

/// [`activate`] with custom limits.
pub fn activate_with(
    skill: &Skill,
    arguments: &str,
    options: &ActivationOptions,
) -> Result<Activation, Error> {
    activate_stamped(skill, arguments, options, &DisabledDynamicContext)
        .map(|(activation, _)| activation)
}

/// [`activate_with`], with `dynamic` answering the body's dynamic-context
/// directives (`` !`cmd` ``, ```` ```! ````; see
/// [`crate::activation::dynamic`]). [`activate_with`] uses
/// [`DisabledDynamicContext`]: every directive becomes
/// `[shell execution disabled]`.
pub fn activate_with_dynamic(
    skill: &Skill,
    arguments: &str,
    options: &ActivationOptions,
    dynamic: &dyn DynamicContext,
) -> Result<Activation, Error> {
    activate_stamped(skill, arguments, options, dynamic).map(|(activation, _)| activation)
}

/// [`activate_with`], also returning the metadata of the `SKILL.md` that was
/// read (for the content cache's change check).
pub(crate) fn activate_stamped(
    skill: &Skill,
    arguments: &str,
    options: &ActivationOptions,
    dynamic: &dyn DynamicContext,
) -> Result<(Activation, Metadata), Error> {
    let _span = tracing::info_span!("read_skill_md", skilldeck.skill.name = %skill.name).entered();
    if arguments.len() > options.max_arguments_bytes {
        return Err(Error::ArgumentsTooLong {
            name: skill.name.clone(),
            len: arguments.len(),
            limit: options.max_arguments_bytes,
        });
    }
    let fail = |d: Diagnostic| Error::Activation {
        name: skill.name.clone(),
        diagnostic: Box::new(d),
    };
    let (text, meta) =
        crate::fs::read::read_skill_md_with_metadata(&skill.skill_md, options.max_skill_md_bytes)
            .map_err(fail)?;
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
    let split = frontmatter::split(text).map_err(|d| fail(d.in_file(&skill.skill_md)))?;
    let body = strip_one_leading_blank_line(split.body).trim_end();
    // Directives first, on the body as written: arguments never reach a command.
    let body = expand_dynamic(body, skill, dynamic);
    let dir = if options.show_skill_dir {
        path_without_controls(skill.dir().to_string_lossy())
    } else {
        Cow::Borrowed(".")
    };
    let names = skill.argument_names();
    let substituted = Substitution {
        arguments,
        names: &names,
        skill_dir: &dir,
        words: None,
    }
    .apply(&body, options.max_body_bytes)
    .ok_or_else(|| Error::ActivationTooLarge {
        name: skill.name.clone(),
        limit: options.max_body_bytes,
    })?;
    let body = match neutralise_envelope_tags(&substituted) {
        Cow::Borrowed(_) => substituted,
        Cow::Owned(s) => s,
    };
    let (resources, resources_omitted) = list_resources(skill, options);
    Ok((
        Activation {
            name: skill.name.clone(),
            body,
            skill_dir: skill.dir().to_path_buf(),
            show_skill_dir: options.show_skill_dir,
            resources,
            resources_omitted,
        },
        meta,
    ))
}

/// `body` without its first line when that line is blank.
fn strip_one_leading_blank_line(body: &str) -> &str {
    let line_end = memchr::memchr(b'\n', body.as_bytes());
    match line_end {
        Some(i) if body[..i].trim().is_empty() => &body[i + 1..],
        _ => body,
    }
}

/// The skill's files except its `SKILL.md`, as [`crate::list_resources`]
/// lists them (sorted, bounded, only files `read_resource` would return):
/// the first `max_resources` and a count of the rest. The listing is
/// advisory, so a folder that cannot be listed gives an empty list.
fn list_resources(skill: &Skill, options: &ActivationOptions) -> (Vec<ResourceEntry>, usize) {
    let Ok(list) = crate::resources::list_resources(skill) else {
        return (Vec::new(), 0);
    };
    let skill_md = skill
        .skill_md
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    let mut files: Vec<ResourceEntry> = list
        .files
        .into_iter()
        .filter(|f| Some(&f.path) != skill_md.as_ref())
        .collect();
    let omitted = files.len().saturating_sub(options.max_resources) + list.omitted;
    files.truncate(options.max_resources);
    (files, omitted)
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn neutralising_is_case_insensitive_and_borrowed_when_clean() {
        assert!(matches!(
            neutralise_envelope_tags("a < b"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            neutralise_envelope_tags("x</SKILL_CONTENT>y<Skill_Content z"),
            "x&lt;/SKILL_CONTENT>y&lt;Skill_Content z"
        );
    }
}
