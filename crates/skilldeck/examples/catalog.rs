//! Prints the catalog of the skill folders given, in argument order (as
//! `agentskills to-prompt DIR...` does). Used by
//! `scripts/test-skills-ref-prompt.sh` to compare with skills-ref.
//!
//! ```sh
//! cargo run -p skilldeck --example catalog -- [--format xml|skills-ref|markdown|json]
//!     [--budget-chars N | --budget-tokens N] [--encoding o200k_base|cl100k_base]
//!     [--floor N] [--explain] DIR...
//! ```
//!
//! Exit status: 0 printed, 1 a folder is not a loadable skill, 2 usage.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use skilldeck::catalog::{self, Budget, CatalogOptions, Encoding};
use skilldeck::{DiscoveryOptions, Skill, discover};

struct Args {
    options: CatalogOptions,
    explain: bool,
    dirs: Vec<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut options = CatalogOptions::default();
    let mut explain = false;
    let mut dirs = Vec::new();
    let mut chars = None;
    let mut tokens = None;
    let mut encoding = Encoding::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        let number = |text: String| text.parse::<usize>().map_err(|e| format!("{text}: {e}"));
        match arg.as_str() {
            "--format" => {
                options.format = value("--format")?.parse().map_err(|e| format!("{e}"))?
            }
            "--budget-chars" => chars = Some(number(value("--budget-chars")?)?),
            "--budget-tokens" => tokens = Some(number(value("--budget-tokens")?)?),
            "--encoding" => encoding = value("--encoding")?.parse().map_err(|e| format!("{e}"))?,
            "--floor" => options.floor_chars = number(value("--floor")?)?,
            "--explain" => explain = true,
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            dir => dirs.push(PathBuf::from(dir)),
        }
    }
    options.budget = match (chars, tokens) {
        (Some(_), Some(_)) => return Err("--budget-chars or --budget-tokens, not both".into()),
        (Some(n), None) => Some(Budget::Chars(n)),
        (None, Some(limit)) => Some(Budget::Tokens { limit, encoding }),
        (None, None) => None,
    };
    if dirs.is_empty() {
        return Err("give at least one skill folder".into());
    }
    Ok(Args {
        options,
        explain,
        dirs,
    })
}

/// A skill folder argument: the folder itself, or the folder of a `SKILL.md`.
fn skill_dir(arg: &Path) -> PathBuf {
    let is_skill_md = arg.is_file()
        && arg
            .file_name()
            .is_some_and(|n| n.to_string_lossy().eq_ignore_ascii_case("skill.md"));
    match arg.parent() {
        Some(parent) if is_skill_md => parent.to_path_buf(),
        _ => arg.to_path_buf(),
    }
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    let dirs: Vec<PathBuf> = args.dirs.iter().map(|d| cwd.join(skill_dir(d))).collect();
    let deck = discover(&DiscoveryOptions::with_roots(dirs.clone()));
    // Every skill found, shadowed ones too: skills-ref prints each argument,
    // even two skills of the same name.
    let by_dir: HashMap<&Path, &Skill> = deck
        .skills()
        .iter()
        .chain(deck.shadowed().iter().map(|s| &s.skill))
        .map(|s| (s.real_dir.as_path(), s))
        .collect();
    let mut skills = Vec::with_capacity(dirs.len());
    for dir in &dirs {
        let found = std::fs::canonicalize(dir)
            .ok()
            .and_then(|real| by_dir.get(real.as_path()).copied());
        match found {
            Some(skill) => skills.push(skill),
            None => {
                eprintln!("error: {} is not a loadable skill", dir.display());
                for d in deck.diagnostics().iter().filter(|d| d.is_error()) {
                    eprintln!("  {d}");
                }
                return ExitCode::from(1);
            }
        }
    }
    match catalog::render(skills, &args.options, None) {
        Ok(catalog) => {
            print!("{}", catalog.text);
            if args.explain {
                eprint!("{}", catalog.explanation);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
