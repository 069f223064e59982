//! Approvals: whether a call that runs code (`run_skill_script`, a skill
//! tool `{skill}__{tool}`, `run_code`) needs the user's approval, what a
//! decision is bound to, and how long it is kept. The rule lives here
//! once; a face only implements [`Approver`] (MCP: elicitation; Python: a
//! callback).
//!
//! - `[exec] approval` ([`ApprovalMode`]): `never` runs every call (the
//!   default); `ask` asks the user about a call nothing pre-approves;
//!   `always-deny` refuses it.
//! - **Pre-approved**: a call is pre-approved when the `allowed-tools` of a
//!   skill active in the conversation covers it ([`AllowedTool`]): the
//!   names `run_skill_script`, `run_code` and a skill tool's full name;
//!   Claude Code's `Bash` (every command), `Bash(CMD)` (exactly `CMD`) and
//!   `Bash(PREFIX:*)` (commands starting with the words `PREFIX`). A call
//!   maps to the commands it stands for ([`ApprovalSubject::commands`]):
//!   a script `scripts/x.py` with arguments `a b` to `scripts/x.py a b`,
//!   `./scripts/x.py a b` and `python3 scripts/x.py a b` (the interpreter
//!   its extension picks, `python` too for Python); `run_code` in python to
//!   `python3 -c …` and `python -c …`, in bash to `bash -c …` and `sh -c …`,
//!   in node to `node -e …`. A skill tool has no command: only its name
//!   pre-approves it.
//! - **Binding**: a decision is bound to what was asked ([`ApprovalKey`]):
//!   the skill's fingerprint (the sha256 of its `SKILL.md` and of the file
//!   that runs) with the tool and the script's path, or the code's sha256
//!   and language (with the skill's fingerprint when one is mounted). A
//!   changed skill or different code is asked again. Decisions (accepted
//!   and declined) are kept per conversation, at most
//!   [`MAX_APPROVAL_CONVERSATIONS`] conversations of
//!   [`MAX_APPROVALS_PER_CONVERSATION`] decisions (the oldest go).
//! - **Fail closed**: a face that cannot ask ([`Decision::Unavailable`]) is
//!   a refusal, never a silent run; so is a `SKILL.md` whose
//!   `allowed-tools` cannot be read (nothing is pre-approved).

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::{Mutex, PoisonError};

use lru::LruCache;
pub use skilldeck::deck::ApprovalMode;

use crate::code::{Language, RUN_CODE};
use crate::tool_error::{ToolError, ToolErrorKind};
use crate::tool_names::RUN_SKILL_SCRIPT;

/// Most conversations whose decisions are kept.
pub const MAX_APPROVAL_CONVERSATIONS: usize = 4_096;

/// Most decisions kept per conversation.
pub const MAX_APPROVALS_PER_CONVERSATION: usize = 256;

/// Characters of code shown to the user when asking.
pub const MAX_CODE_PREVIEW_CHARS: usize = 2_000;

/// One entry of a skill's `allowed-tools`, as far as approvals read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowedTool {
    /// A tool name (`run_skill_script`, `run_code`, `{skill}__{tool}`, or
    /// any other name, which matches nothing here).
    Name(String),
    /// `Bash`: every command.
    AnyCommand,
    /// `Bash(CMD)`: exactly the command `CMD`.
    Command(String),
    /// `Bash(PREFIX:*)` (or `Bash(PREFIX *)`): commands whose words start
    /// with `PREFIX`'s.
    CommandPrefix(String),
}

impl AllowedTool {
    /// The entries of an `allowed-tools` list. The core splits the field on
    /// whitespace; an entry with a space inside its parentheses
    /// (`Bash(git add:*)`) is joined back here.
    pub fn parse_all(tokens: &[String]) -> Vec<AllowedTool> {
        let mut joined: Vec<String> = Vec::new();
        let mut open = false;
        for token in tokens {
            if open && let Some(last) = joined.last_mut() {
                last.push(' ');
                last.push_str(token);
            } else {
                joined.push(token.clone());
            }
            let last = joined.last().map(String::as_str).unwrap_or_default();
            open = last.matches('(').count() > last.matches(')').count();
        }
        joined.iter().map(|t| AllowedTool::parse(t)).collect()
    }

    /// One entry.
    pub fn parse(entry: &str) -> AllowedTool {
        let entry = entry.trim().trim_end_matches(',');
        if entry == "Bash" {
            return AllowedTool::AnyCommand;
        }
        let Some(inner) = entry
            .strip_prefix("Bash(")
            .and_then(|rest| rest.strip_suffix(')'))
        else {
            return AllowedTool::Name(entry.to_owned());
        };
        let inner = inner.trim();
        if inner == "*" || inner.is_empty() {
            return AllowedTool::AnyCommand;
        }
        if let Some(prefix) = inner
            .strip_suffix(":*")
            .or_else(|| inner.strip_suffix(" *"))
        {
            return AllowedTool::CommandPrefix(words(prefix));
        }
        AllowedTool::Command(words(inner))
    }

    /// True when this entry pre-approves `subject`.
    pub fn covers(&self, subject: &ApprovalSubject<'_>) -> bool {
        match self {
            AllowedTool::Name(name) => name == subject.tool(),
            AllowedTool::AnyCommand => subject.has_commands(),
            AllowedTool::Command(command) => subject.commands().iter().any(|c| c == command),
            AllowedTool::CommandPrefix(prefix) => subject.commands().iter().any(|c| {
                c == prefix
                    || c.strip_prefix(prefix.as_str())
                        .is_some_and(|rest| rest.starts_with(' '))
            }),
        }
    }
}

/// `text`'s words joined by single spaces.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A call that may need approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalSubject<'a> {
    /// `run_skill_script` of `path` in `skill` with `args`.
    Script {
        /// The skill.
        skill: &'a str,
        /// The file, relative to the skill folder.
        path: &'a str,
        /// Its arguments.
        args: &'a [String],
    },
    /// The skill tool `full_name` of `skill`.
    Tool {
        /// The skill.
        skill: &'a str,
        /// `{skill}__{tool}`.
        full_name: &'a str,
    },
    /// `run_code` in `language` (with `skill` mounted).
    Code {
        /// The language.
        language: Language,
        /// The code.
        code: &'a str,
        /// The skill whose folder is mounted, if any.
        skill: Option<&'a str>,
    },
}

impl ApprovalSubject<'_> {
    /// The tool called.
    pub fn tool(&self) -> &str {
        match self {
            ApprovalSubject::Script { .. } => RUN_SKILL_SCRIPT,
            ApprovalSubject::Tool { full_name, .. } => full_name,
            ApprovalSubject::Code { .. } => RUN_CODE,
        }
    }

    /// The skill whose file runs or is mounted.
    pub fn skill(&self) -> Option<&str> {
        match self {
            ApprovalSubject::Script { skill, .. } | ApprovalSubject::Tool { skill, .. } => {
                Some(skill)
            }
            ApprovalSubject::Code { skill, .. } => *skill,
        }
    }

    fn has_commands(&self) -> bool {
        !matches!(self, ApprovalSubject::Tool { .. })
    }

    /// The shell commands this call stands for (see the module
    /// documentation): what `Bash(...)` entries are matched against.
    pub fn commands(&self) -> Vec<String> {
        match self {
            ApprovalSubject::Tool { .. } => Vec::new(),
            ApprovalSubject::Script { path, args, .. } => {
                let tail: String = args.iter().map(|a| format!(" {a}")).collect();
                let mut out = vec![format!("{path}{tail}"), format!("./{path}{tail}")];
                for interpreter in script_interpreters(path) {
                    out.push(format!("{interpreter} {path}{tail}"));
                }
                out.iter().map(|c| words(c)).collect()
            }
            ApprovalSubject::Code { language, code, .. } => {
                let (programs, flag): (&[&str], &str) = match language {
                    Language::Python => (&["python3", "python"], "-c"),
                    Language::Bash => (&["bash", "sh"], "-c"),
                    Language::Node => (&["node"], "-e"),
                };
                programs
                    .iter()
                    .map(|p| words(&format!("{p} {flag} {code}")))
                    .collect()
            }
        }
    }
}

/// The interpreters a script's extension stands for in a command.
fn script_interpreters(path: &str) -> &'static [&'static str] {
    let ext = path
        .rsplit('/')
        .next()
        .and_then(|f| f.rsplit_once('.'))
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "py" => &["python3", "python"],
        "sh" => &["sh", "bash"],
        "bash" => &["bash"],
        "js" | "mjs" => &["node"],
        "rb" => &["ruby"],
        _ => &[],
    }
}

/// What a decision is bound to: the same key is the same decision.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ApprovalKey(String);

impl ApprovalKey {
    /// The key of `subject`, given the fingerprint of its skill (the sha256
    /// of its `SKILL.md` and of the file that runs; empty without a skill).
    pub fn new(subject: &ApprovalSubject<'_>, skill_fingerprint: &str) -> ApprovalKey {
        ApprovalKey(match subject {
            ApprovalSubject::Script { skill, path, .. } => {
                format!("script\0{skill}\0{skill_fingerprint}\0{path}")
            }
            ApprovalSubject::Tool {
                skill, full_name, ..
            } => format!("tool\0{skill}\0{skill_fingerprint}\0{full_name}"),
            ApprovalSubject::Code {
                language,
                code,
                skill,
            } => format!(
                "code\0{}\0{}\0{}\0{skill_fingerprint}",
                language.name(),
                skilldeck::Digest::of(code.as_bytes()).hex(),
                skill.unwrap_or_default()
            ),
        })
    }
}

/// What the user is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The tool called (`run_skill_script`, `{skill}__{tool}`, `run_code`).
    pub tool: String,
    /// The skill whose file runs or is mounted.
    pub skill: Option<String>,
    /// The question, for a person: what would run, where, with what.
    pub message: String,
    /// The code (`run_code` only).
    pub code: Option<String>,
    /// The code's language (`run_code` only).
    pub language: Option<String>,
    /// The code's lowercase hex sha256 (`run_code` only).
    pub code_sha256: Option<String>,
}

impl ApprovalRequest {
    /// The request for `subject`.
    pub fn new(subject: &ApprovalSubject<'_>) -> ApprovalRequest {
        let skill = subject.skill().map(str::to_owned);
        let (message, code, language, code_sha256) = match subject {
            ApprovalSubject::Script { skill, path, args } => (
                format!(
                    "Allow the model to run the script '{path}' of skill '{skill}'{} in the \
                     sandbox?",
                    if args.is_empty() {
                        String::new()
                    } else {
                        format!(" with arguments {args:?}")
                    }
                ),
                None,
                None,
                None,
            ),
            ApprovalSubject::Tool { skill, full_name } => (
                format!(
                    "Allow the model to call the tool '{full_name}' of skill '{skill}' (it runs \
                     the skill's script in the sandbox)?"
                ),
                None,
                None,
                None,
            ),
            ApprovalSubject::Code {
                language,
                code,
                skill,
            } => {
                let preview: String = code.chars().take(MAX_CODE_PREVIEW_CHARS).collect();
                let cut = if preview.len() < code.len() {
                    "\n[…]"
                } else {
                    ""
                };
                let with = skill
                    .map(|s| format!(" with skill '{s}' mounted"))
                    .unwrap_or_default();
                (
                    format!(
                        "Allow the model to run this {} code in the sandbox{with}?\n\n{preview}{cut}",
                        language.name()
                    ),
                    Some((*code).to_owned()),
                    Some(language.name().to_owned()),
                    Some(skilldeck::Digest::of(code.as_bytes()).hex()),
                )
            }
        };
        ApprovalRequest {
            tool: subject.tool().to_owned(),
            skill,
            message,
            code,
            language,
            code_sha256,
        }
    }
}

/// What the user answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it (and the same call again in this conversation).
    Accept,
    /// Do not run it (nor the same call again in this conversation).
    Decline,
    /// No answer (dismissed): not run, asked again next time.
    Cancel,
    /// The user cannot be asked here (why): not run.
    Unavailable(String),
}

/// How a face asks its user. Called on the thread that runs the call (a
/// blocking one); it may wait for the answer.
pub trait Approver {
    /// Asks about `request`.
    fn approve(&self, request: &ApprovalRequest) -> Decision;

    /// The mode a call asking this approver runs under, given the
    /// configured one: the configured mode, except for a
    /// [`CallerApprover`].
    fn mode(&self, configured: ApprovalMode) -> ApprovalMode {
        configured
    }
}

/// An approver the application hands to its calls (Python's and Node's
/// `approve` callback): it is asked even where `[exec] approval =
/// "never"` (an application that passes a callback wants to be asked);
/// `always-deny` stays, and `allowed-tools` still pre-approves.
#[derive(Debug, Clone)]
pub struct CallerApprover<A>(pub A);

impl<A: Approver> Approver for CallerApprover<A> {
    fn approve(&self, request: &ApprovalRequest) -> Decision {
        self.0.approve(request)
    }

    fn mode(&self, configured: ApprovalMode) -> ApprovalMode {
        match configured {
            ApprovalMode::Never => ApprovalMode::Ask,
            other => other,
        }
    }
}

/// A face that cannot ask anyone: every question is
/// [`Decision::Unavailable`] with `why`.
#[derive(Debug, Clone)]
pub struct NoApprover(pub String);

impl Approver for NoApprover {
    fn approve(&self, _request: &ApprovalRequest) -> Decision {
        Decision::Unavailable(self.0.clone())
    }
}

impl<F: Fn(&ApprovalRequest) -> Decision> Approver for F {
    fn approve(&self, request: &ApprovalRequest) -> Decision {
        self(request)
    }
}

/// The decisions kept per conversation, and the mode in force.
#[derive(Debug)]
pub struct Approvals {
    mode: ApprovalMode,
    decisions: Mutex<LruCache<String, HashMap<ApprovalKey, bool>>>,
}

impl Approvals {
    /// No decision yet, under `mode`.
    pub fn new(mode: ApprovalMode) -> Approvals {
        let capacity = NonZeroUsize::new(MAX_APPROVAL_CONVERSATIONS).unwrap_or(NonZeroUsize::MIN);
        Approvals {
            mode,
            decisions: Mutex::new(LruCache::new(capacity)),
        }
    }

    /// The mode in force.
    pub fn mode(&self) -> ApprovalMode {
        self.mode
    }

    fn remembered(&self, conversation: &str, key: &ApprovalKey) -> Option<bool> {
        let mut decisions = self
            .decisions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        decisions
            .get(conversation)
            .and_then(|d| d.get(key).copied())
    }

    fn remember(&self, conversation: &str, key: ApprovalKey, accepted: bool) {
        let mut decisions = self
            .decisions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let entry = decisions.get_or_insert_mut(conversation.to_owned(), HashMap::new);
        if entry.len() >= MAX_APPROVALS_PER_CONVERSATION && !entry.contains_key(&key) {
            entry.clear();
        }
        entry.insert(key, accepted);
    }

    /// Forgets `conversation`'s decisions (its session ended).
    pub fn forget(&self, conversation: &str) {
        let mut decisions = self
            .decisions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        decisions.pop(conversation);
    }

    /// Decides whether `subject` may run in `conversation`: `Ok` to run,
    /// else the refusal for the model (nothing ran). `allowed` is the
    /// parsed `allowed-tools` of the skills active in the conversation;
    /// `skill_fingerprint` binds the decision ([`ApprovalKey::new`]);
    /// `approver` asks the user when the mode is `ask`.
    pub fn check(
        &self,
        conversation: &str,
        subject: &ApprovalSubject<'_>,
        allowed: &[AllowedTool],
        skill_fingerprint: &str,
        approver: &dyn Approver,
    ) -> Result<(), ToolError> {
        self.check_in(
            self.mode,
            conversation,
            subject,
            allowed,
            skill_fingerprint,
            approver,
        )
    }

    /// [`Approvals::check`] under `mode` instead of the configured one (a
    /// face whose caller chose, e.g. Python's `approve` callback turning
    /// `never` into `ask`).
    pub fn check_in(
        &self,
        mode: ApprovalMode,
        conversation: &str,
        subject: &ApprovalSubject<'_>,
        allowed: &[AllowedTool],
        skill_fingerprint: &str,
        approver: &dyn Approver,
    ) -> Result<(), ToolError> {
        if mode == ApprovalMode::Never || allowed.iter().any(|a| a.covers(subject)) {
            return Ok(());
        }
        let what = describe(subject);
        let pre_approve = pre_approve_hint(subject);
        let key = ApprovalKey::new(subject, skill_fingerprint);
        match self.remembered(conversation, &key) {
            Some(true) => return Ok(()),
            Some(false) => {
                return Err(ToolError::new(
                    ToolErrorKind::Denied,
                    format!(
                        "{what} was not run: the user declined it earlier in this conversation. \
                         Do not retry it; ask the user what to do instead."
                    ),
                ));
            }
            None => {}
        }
        if mode == ApprovalMode::AlwaysDeny {
            return Err(ToolError::new(
                ToolErrorKind::Denied,
                format!(
                    "{what} was not run: the operator set [exec] approval = \"always-deny\" and \
                     no active skill's allowed-tools pre-approves it. To allow it, {pre_approve} \
                     and activate that skill, or ask the operator to set [exec] approval = \
                     \"ask\"."
                ),
            ));
        }
        match approver.approve(&ApprovalRequest::new(subject)) {
            Decision::Accept => {
                self.remember(conversation, key, true);
                Ok(())
            }
            Decision::Decline => {
                self.remember(conversation, key, false);
                Err(ToolError::new(
                    ToolErrorKind::Denied,
                    format!(
                        "{what} was not run: the user declined it. Do not retry it; ask the \
                         user what to do instead."
                    ),
                ))
            }
            Decision::Cancel => Err(ToolError::new(
                ToolErrorKind::Denied,
                format!(
                    "{what} was not run: the user did not answer the approval request. Ask \
                     the user before trying again."
                ),
            )),
            Decision::Unavailable(why) => Err(ToolError::new(
                ToolErrorKind::Denied,
                format!(
                    "{what} was not run: it needs the user's approval ([exec] approval = \
                     \"ask\") and the user cannot be asked: {why}. Use a client that supports \
                     approval requests (MCP elicitation), {pre_approve}, or ask the operator \
                     to set [exec] approval = \"never\"."
                ),
            )),
        }
    }
}

/// How refusals name the call.
fn describe(subject: &ApprovalSubject<'_>) -> String {
    match subject {
        ApprovalSubject::Script { skill, path, .. } => {
            format!("script '{path}' of skill '{skill}'")
        }
        ApprovalSubject::Tool { full_name, .. } => format!("skill tool '{full_name}'"),
        ApprovalSubject::Code { language, .. } => format!("{RUN_CODE} ({})", language.name()),
    }
}

/// What a skill author adds to `allowed-tools` to pre-approve `subject`.
fn pre_approve_hint(subject: &ApprovalSubject<'_>) -> String {
    match subject {
        ApprovalSubject::Script { path, .. } => format!(
            "add `{RUN_SKILL_SCRIPT}` or `Bash({path}:*)` to the allowed-tools of the skill"
        ),
        ApprovalSubject::Tool { full_name, .. } => {
            format!("add `{full_name}` to the allowed-tools of the skill")
        }
        ApprovalSubject::Code { language, .. } => {
            let program = match language {
                Language::Python => "python3",
                Language::Bash => "bash",
                Language::Node => "node",
            };
            format!("add `{RUN_CODE}` or `Bash({program}:*)` to the allowed-tools of a skill")
        }
    }
}
