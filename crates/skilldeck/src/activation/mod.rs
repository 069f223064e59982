//! Activation: a skill's instructions, ready for a model's context.
//!
//! [`activate`] reads the skill's `SKILL.md` (the safe, size-capped reader of
//! `fs/read.rs`: regular files only, never a blocking read on a FIFO),
//! drops the frontmatter, substitutes the arguments and lists the skill's
//! files. [`Activation::render`] wraps the result in the envelope the
//! agentskills.io client guide describes (or Claude Code's text form, or
//! JSON).
//!
//! # Substitution
//!
//! Claude Code's documented placeholders, in the body only:
//!
//! | placeholder | becomes |
//! |---|---|
//! | `$ARGUMENTS` | the whole argument string, as given |
//! | `$ARGUMENTS[N]`, `$N` | the N-th argument (0-based); `$` and *all* the digits that follow are the index (`$10` is the eleventh); out of range → empty |
//! | `$name` | the argument at `name`'s position in the `arguments` frontmatter field; out of range → empty |
//! | `${SKILL_DIR}`, `${CLAUDE_SKILL_DIR}` | the skill folder (absolute) |
//! | `\$` before any of the above | the placeholder's text, literally (the `\` is dropped) |
//!
//! Arguments are split shell-style: whitespace separates, `'…'` and `"…"`
//! group (quotes removed), a `\` escapes a quote, a `\` or a blank. `#` is
//! not a comment and other backslashes are kept (`#123`, `C:\dir` survive).
//! Unbalanced quotes fall back to a plain whitespace split; splitting never
//! fails. Everything else with a `$` stays as written: `$HOME`, `$PATH`,
//! `${HOME}` in shell snippets are untouched, as is `\$HOME`. A name matches
//! only as a whole word (`$file` does not match inside `$filename`).
//!
//! When arguments were given (not blank) and no argument placeholder appears,
//! `ARGUMENTS: <arguments>` is appended after a blank line, as Claude Code does.
//!
//! # Body
//!
//! The body is the text after the closing `---` line, with one leading blank
//! line and all trailing whitespace removed. Frontmatter fields (the
//! `arguments` names) come from the [`Skill`](crate::Skill) (discovery's snapshot); the body
//! is read fresh on every activation. After substitution, every
//! `<skill_content` and `</skill_content` (any case) has its `<` replaced by
//! `&lt;`, so neither the body nor an argument can close the envelope or fake
//! a new one.

pub(crate) mod activate;
pub(crate) mod arguments;
pub mod dynamic;
pub(crate) mod envelope;
pub(crate) mod substitute;

pub use activate::{
    Activation, ActivationFormat, ActivationOptions, NO_DIR_NOTE, TEXT_HEADER, XML_OPEN_TAG,
    activate, activate_with, activate_with_dynamic,
};
pub use arguments::{join_arguments, split_arguments};
pub use dynamic::{
    DYNAMIC_DISABLED_TEXT, Directive, DirectiveKind, DisabledDynamicContext, DynamicContext,
    expand_dynamic, find_directives,
};
pub use envelope::escape_xml;
