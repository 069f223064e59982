//! `skilldeck activate NAME [ARGS...]`: the skill's instructions, ready for
//! a model's context.

use std::io::Write;

use skilldeck::ActivationFormat;
use skilldeck_host::{ActivationLog, ConversationStore, Delivery, DeliveryError, deliver};

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
    let mut out = render::stdout_for(args.format == skilldeck::ActivationFormat::Json);
    let arguments = skilldeck::activation::join_arguments(&args.args);
    let render = || skilldeck::activate(skill, &arguments).map(|a| a.render(args.format));
    let Some(conversation) = &args.conversation else {
        write_body(&mut out, &render()?)?;
        return Ok(exit::OK);
    };
    // The host's conversation rule, over the file-backed store (one
    // process per call).
    let mut store = ConversationStore::default();
    let delivered = deliver(
        &mut store,
        conversation,
        &skill.name,
        &arguments,
        args.reload,
        render,
    )
    .map_err(|e| match e {
        DeliveryError::Log(e) => CliError::from(e),
        DeliveryError::Render(e) => CliError::from(e),
    })?;
    match delivered {
        Delivery::AlreadyActive(notice) => writeln!(out, "{notice}")?,
        Delivery::Content(text) => {
            // Not delivered when it could not be written: the next call
            // sends it again.
            if let Err(e) = write_body(&mut out, &text) {
                let _ = store.forget(conversation, &skill.name);
                return Err(e.into());
            }
        }
    }
    Ok(exit::OK)
}

fn write_body(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        writeln!(out)?;
    }
    out.flush()
}
