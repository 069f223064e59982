//! `skilldeck activate NAME [ARGS...]`: the skill's instructions, ready for
//! a model's context.

use std::io::Write;

use skilldeck::ActivationFormat;
use skilldeck_host::{ActivationLog, ConversationStore};

use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The skill's name.
    #[arg(add = crate::context::skill_names())]
    name: String,
    /// Arguments: `$ARGUMENTS` is all of them, `$0`, `$1`, ... each one.
    /// Words are joined shell-quoted, so `a "b c"` gives `$1` = `b c`.
    /// Put arguments that start with `-` after `--`.
    args: Vec<String>,
    /// Output format: the client guide's `<skill_content>` envelope (xml),
    /// the "Base directory for this skill:" form (text), or json.
    #[arg(long, default_value = "xml")]
    format: ActivationFormat,
    /// A conversation id: a second activation of the same skill in the same
    /// conversation prints a short "already active" notice instead of the
    /// body again (remembered across calls in $XDG_STATE_HOME/skilldeck).
    #[arg(long, value_name = "ID")]
    conversation: Option<String>,
}

pub fn run(args: &Args, ctx: &Context) -> Result<u8, CliError> {
    let deck = ctx.deck();
    // Served skills only: the host's rule and the core's messages.
    let skill = skilldeck_host::require_served(deck, &args.name)?;
    let mut store = ConversationStore::default();
    let mut out = render::stdout_for(args.format == skilldeck::ActivationFormat::Json);
    if let Some(id) = &args.conversation
        && store.is_active(id, &skill.name)
    {
        writeln!(
            out,
            "{}",
            skilldeck_host::already_active_notice(&skill.name)
        )?;
        return Ok(exit::OK);
    }
    let arguments = skilldeck::activation::join_arguments(&args.args);
    let activation = skilldeck::activate(skill, &arguments)?;
    let text = activation.render(args.format);
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        writeln!(out)?;
    }
    out.flush()?;
    // Recorded once the body is out, so a failed write sends it again.
    if let Some(id) = &args.conversation {
        ActivationLog::record(&mut store, id, &skill.name)?;
    }
    Ok(exit::OK)
}
