//! `skilldeck activate NAME [ARGS...]`: the skill's instructions, ready for
//! a model's context.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use skilldeck::{ActivationFormat, SkillMode};

use crate::EXIT_OK;
use crate::context::Context;
use crate::error::CliError;
use crate::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The skill's name.
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
    let skill = skilldeck::search::require(deck, &args.name)?;
    if skill.mode == SkillMode::Off {
        return Err(CliError::Skill(format!(
            "skill '{}' is turned off (mode \"off\" in the config)",
            skill.name
        )));
    }
    let mut conversation = match &args.conversation {
        Some(id) => Some(ConversationState::load(id)?),
        None => None,
    };
    let mut out = render::stdout();
    if let Some(state) = &conversation
        && state.is_active(&skill.name)
    {
        writeln!(
            out,
            "{}",
            skilldeck::tracker::already_active_notice(&skill.name)
        )?;
        return Ok(EXIT_OK);
    }
    let arguments = skilldeck::activation::join_arguments(&args.args);
    let activation = skilldeck::activate(skill, &arguments)?;
    let text = activation.render(args.format);
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        writeln!(out)?;
    }
    out.flush()?;
    if let Some(state) = &mut conversation {
        state.record(&skill.name);
        state.save()?;
    }
    Ok(EXIT_OK)
}

/// What one conversation has activated, kept in a small JSON file so the
/// notice works across separate `skilldeck` calls. Entries expire after
/// [`skilldeck::limits::TRACKER_TTL`], as in the in-process tracker.
struct ConversationState {
    path: PathBuf,
    /// Skill name → activation time (seconds since the epoch).
    active: BTreeMap<String, u64>,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn state_dir() -> PathBuf {
    std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .unwrap_or_else(std::env::temp_dir)
        .join("skilldeck/conversations")
}

impl ConversationState {
    fn load(id: &str) -> Result<Self, CliError> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        id.hash(&mut h);
        let path = state_dir().join(format!("{:016x}.json", h.finish()));
        // A missing or corrupt file is an empty conversation.
        let mut active: BTreeMap<String, u64> = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let ttl = skilldeck::limits::TRACKER_TTL.as_secs();
        let t = now();
        active.retain(|_, at| t.saturating_sub(*at) < ttl);
        Ok(ConversationState { path, active })
    }

    fn is_active(&self, name: &str) -> bool {
        self.active.contains_key(name)
    }

    fn record(&mut self, name: &str) {
        self.active.insert(name.to_owned(), now());
    }

    /// Written to a temporary file and renamed: never half-written.
    fn save(&self) -> Result<(), CliError> {
        let io = |path: &Path, e| CliError::Io {
            path: path.to_path_buf(),
            source: e,
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let tmp = self
            .path
            .with_extension(format!("tmp{}", std::process::id()));
        let bytes = serde_json::to_vec(&self.active).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, bytes).map_err(|e| io(&tmp, e))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| io(&self.path, e))
    }
}
