//! `skilldeck new`.

use std::path::PathBuf;

use skilldeck::{Error, NameCharset};

use crate::context::Context;
use crate::error::CliError;
use crate::exit;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The skill's name (lowercase letters, digits and '-').
    name: String,
    /// Folder to create the skill in (default: the project root
    /// `.agents/skills` of the current folder, created if missing).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Restrict the name to a-z, 0-9 and '-'.
    #[arg(long)]
    ascii_names: bool,
}

pub fn run(args: &Args, ctx: &Context) -> Result<u8, CliError> {
    let mut charset = ctx.config.validation_options().charset;
    if args.ascii_names {
        charset = NameCharset::Ascii;
    }
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| ctx.cwd.join(skilldeck::deck::PROJECT_ROOT_NAMES[0]));
    Ok(match skilldeck::new_skill(&dir, &args.name, charset) {
        Ok(path) => {
            println!("created {}", path.join("SKILL.md").display());
            if !ctx.discovery_options().searches(&dir) {
                eprintln!(
                    "warning: {} is not a folder skilldeck searches, so `skilldeck show {}` will not find it",
                    dir.display(),
                    args.name
                );
                eprintln!(
                    "  = help: pass `--root {}` to the commands, or add `roots = [\"{}\"]` to skilldeck.toml",
                    dir.display(),
                    dir.display()
                );
            }
            println!(
                "next: replace every `{}` in it, then run `skilldeck validate {}`",
                skilldeck::SCAFFOLD_PLACEHOLDER,
                path.display()
            );
            exit::OK
        }
        Err(Error::InvalidName { name, problems }) => {
            for p in problems {
                eprintln!("error[{}]: {}", p.code, p.message);
            }
            eprintln!("refusing to create a skill named '{name}'");
            exit::INVALID
        }
        Err(e) => return Err(e.into()),
    })
}
