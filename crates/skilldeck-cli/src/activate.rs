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
    /// A conversation id: activating the same skill with the same
    /// arguments again in the same conversation prints a short "already
    /// active" notice instead of the body (other arguments print the body;
    /// remembered across calls in $XDG_STATE_HOME/skilldeck).
    #[arg(long, value_name = "ID")]
    conversation: Option<String>,
    /// Print the body even if the conversation already received it (it
    /// was compacted away).
    #[arg(long, requires = "conversation")]
    reload: bool,
}

pub fn run(args: &Args, ctx: &Context) -> Result<u8, CliError> {
    let deck = ctx.deck();
    // Served skills only: the host's rule and the core's messages.
    let skill = skilldeck_host::require_served(deck, &args.name)?;
    let mut store = ConversationStore::default();
    let mut out = render::stdout_for(args.format == skilldeck::ActivationFormat::Json);
    let arguments = skilldeck::activation::join_arguments(&args.args);
    let key = skilldeck_host::content_key(&arguments);
    if let Some(id) = &args.conversation
        && !args.reload
        && store.was_delivered(id, &skill.name, key)
    {
        writeln!(
            out,
            "{}",
            skilldeck_host::already_active_notice(&skill.name)
        )?;
        return Ok(exit::OK);
    }
    let activation = skilldeck::activate(skill, &arguments)?;
    let text = activation.render(args.format);
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        writeln!(out)?;
    }
    out.flush()?;
    // Recorded once the body is out, so a failed write sends it again.
    if let Some(id) = &args.conversation {
        ActivationLog::record(&mut store, id, &skill.name, key)?;
    }
    Ok(exit::OK)
}
