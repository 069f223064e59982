//! `skilldeck new`.

use std::path::PathBuf;

use skilldeck::{Config, Error, NameCharset};

use crate::error::CliError;
use crate::exit;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The skill's name (lowercase letters, digits and '-').
    name: String,
    /// Folder to create the skill in.
    #[arg(long, default_value = ".")]
    dir: PathBuf,
    /// Restrict the name to a-z, 0-9 and '-'.
    #[arg(long)]
    ascii_names: bool,
}

pub fn run(args: &Args, config: &Config) -> Result<u8, CliError> {
    let mut charset = config.validation_options().charset;
    if args.ascii_names {
        charset = NameCharset::Ascii;
    }
    Ok(match skilldeck::new_skill(&args.dir, &args.name, charset) {
        Ok(path) => {
            println!("created {}", path.join("SKILL.md").display());
            println!(
                "next: edit its description, then run `skilldeck validate {}`",
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
