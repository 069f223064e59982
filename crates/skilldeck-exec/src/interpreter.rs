//! Which program runs a skill file: its shebang, else its extension, else
//! the file itself when it is executable. The file is found with the
//! core's containment rules (the same as `skilldeck read`), so a path that
//! leaves the skill, a FIFO or a device is refused before anything runs.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use skilldeck::{ResourceProblem, Skill};

use crate::error::ExecError;
use crate::policy::{MAX_SCRIPT_BYTES, SANDBOX_PATH};

/// Interpreters chosen by file extension, looked up on [`SANDBOX_PATH`].
pub(crate) const INTERPRETERS_BY_EXTENSION: &[(&str, &str)] = &[
    ("py", "python3"),
    ("sh", "sh"),
    ("bash", "bash"),
    ("js", "node"),
    ("mjs", "node"),
    ("rb", "ruby"),
];

/// A checked skill file and how to run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Command {
    /// The file's path relative to the skill folder, normalised.
    pub relative: String,
    /// The program executed (an interpreter, or the file itself when
    /// `runs_file_itself`).
    pub program: PathBuf,
    /// Arguments before the script path (a shebang's argument).
    pub pre_args: Vec<String>,
    /// True when the file is executed directly (executable bit, no shebang
    /// and no known extension).
    pub runs_file_itself: bool,
    /// How the program was chosen: "shebang", "extension", "executable" or
    /// "shell" ([`crate::Executor::run_shell`]) or "program"
    /// ([`crate::Executor::run_program`]).
    pub chosen_by: &'static str,
}

/// Checks `path` inside `skill` (containment, regular file, size) and
/// decides how to run it; interpreters are looked up in `bin_dirs` first
/// (a skill environment's `bin`), then on [`SANDBOX_PATH`].
pub(crate) fn resolve(
    skill: &Skill,
    path: &str,
    bin_dirs: &[PathBuf],
) -> Result<Command, ExecError> {
    let resource = skilldeck::resources::read_resource_capped(skill, path, MAX_SCRIPT_BYTES)
        .map_err(|e| match e {
            skilldeck::Error::Resource {
                problem:
                    problem @ (ResourceProblem::Escapes
                    | ResourceProblem::ParentComponent
                    | ResourceProblem::Absolute
                    | ResourceProblem::DrivePath
                    | ResourceProblem::Hardlinked),
                ..
            } => ExecError::Denied {
                skill: skill.name.clone(),
                path: path.to_owned(),
                reason: problem.to_string(),
            },
            other => ExecError::InvalidInput(other.to_string()),
        })?;
    let relative = resource.path.clone();
    let bytes = resource.bytes();
    let first_line = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
    if let Some(rest) = first_line.strip_prefix(b"#!") {
        let line = String::from_utf8_lossy(rest);
        return from_shebang(skill, &relative, line.trim(), bin_dirs);
    }
    let extension = relative
        .rsplit('/')
        .next()
        .and_then(|file| file.rsplit_once('.'))
        .map(|(_, ext)| ext.to_ascii_lowercase());
    if let Some(ext) = extension
        && let Some((_, name)) = INTERPRETERS_BY_EXTENSION.iter().find(|(e, _)| *e == ext)
    {
        let program = on_path(name, bin_dirs).ok_or_else(|| {
            ExecError::InvalidInput(format!(
                "skill '{}': cannot run '{relative}': its interpreter '{name}' (for .{ext} files) is not installed (looked in {SANDBOX_PATH})",
                skill.name
            ))
        })?;
        return Ok(Command {
            relative,
            program,
            pre_args: Vec::new(),
            runs_file_itself: false,
            chosen_by: "extension",
        });
    }
    let real = skill.real_dir().join(&relative);
    let executable = std::fs::metadata(&real)
        .map(|m| m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false);
    if executable {
        return Ok(Command {
            relative,
            program: real,
            pre_args: Vec::new(),
            runs_file_itself: true,
            chosen_by: "executable",
        });
    }
    Err(ExecError::InvalidInput(format!(
        "skill '{}': cannot run '{relative}': no shebang line, no known extension ({}) and not executable",
        skill.name,
        INTERPRETERS_BY_EXTENSION
            .iter()
            .map(|(e, _)| format!(".{e}"))
            .collect::<Vec<_>>()
            .join(" ")
    )))
}

/// `#!/usr/bin/env NAME` looks NAME up on the sandbox's PATH; `#!/path
/// [arg]` needs `/path` to exist. The whole rest of the line is one
/// argument, as the kernel passes it.
fn from_shebang(
    skill: &Skill,
    relative: &str,
    line: &str,
    bin_dirs: &[PathBuf],
) -> Result<Command, ExecError> {
    let (interpreter, arg) = match line.split_once(char::is_whitespace) {
        Some((i, a)) => (i, Some(a.trim())),
        None => (line, None),
    };
    let missing = |what: &str| {
        ExecError::InvalidInput(format!(
            "skill '{}': cannot run '{relative}': its shebang interpreter '{what}' is not installed",
            skill.name
        ))
    };
    if interpreter.is_empty() {
        return Err(ExecError::InvalidInput(format!(
            "skill '{}': cannot run '{relative}': the shebang line names no interpreter",
            skill.name
        )));
    }
    let is_env = Path::new(interpreter)
        .file_name()
        .is_some_and(|n| n == "env");
    if is_env && let Some(arg) = arg.filter(|a| !a.is_empty()) {
        // `env -S a b` and friends: keep env, it resolves on the sandbox PATH.
        let name = arg.split_whitespace().next().unwrap_or(arg);
        if !name.starts_with('-') {
            let program = on_path(name, bin_dirs).ok_or_else(|| missing(name))?;
            let rest: Vec<String> = arg.split_whitespace().skip(1).map(str::to_owned).collect();
            return Ok(Command {
                relative: relative.to_owned(),
                program,
                pre_args: rest,
                runs_file_itself: false,
                chosen_by: "shebang",
            });
        }
    }
    let program = PathBuf::from(interpreter);
    if !program.is_absolute() || !is_executable_file(&program) {
        return Err(missing(interpreter));
    }
    Ok(Command {
        relative: relative.to_owned(),
        program,
        pre_args: arg
            .filter(|a| !a.is_empty())
            .map(|a| vec![a.to_owned()])
            .unwrap_or_default(),
        runs_file_itself: false,
        chosen_by: "shebang",
    })
}

/// `name` found in one of `bin_dirs`, else on [`SANDBOX_PATH`].
pub(crate) fn on_path(name: &str, bin_dirs: &[PathBuf]) -> Option<PathBuf> {
    if name.contains('/') {
        return None;
    }
    bin_dirs
        .iter()
        .map(|dir| dir.join(name))
        .find(|p| is_executable_file(p))
        .or_else(|| on_sandbox_path(name))
}

/// `name` found in a folder of [`SANDBOX_PATH`], as an executable file.
pub fn on_sandbox_path(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        return None;
    }
    SANDBOX_PATH
        .split(':')
        .map(|dir| Path::new(dir).join(name))
        .find(|p| is_executable_file(p))
}

fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
