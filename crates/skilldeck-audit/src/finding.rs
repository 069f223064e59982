//! What an audit reports: a [`Finding`] per match (stable code, severity,
//! class, file, line, column, redacted evidence, message), and a skill's
//! [`SkillAudit`] with its [`Verdict`].

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How bad a finding is, ordered: `Low < Medium < High < Critical`.
///
/// - `Critical`: the pattern of a known attack with no benign reading
///   (a reverse shell, decoded code run, secrets sent out, a password
///   protected "prerequisite"); refused by `pack`, `publish` and `install`.
/// - `High`: very likely harmful or hiding something (code piped to a
///   shell from an unknown host, instructions to override the user,
///   hidden characters, an executable nobody can read).
/// - `Medium`: worth a review (a shell start-up file changed, a minified
///   file, scripts using the network while the skill does not say so).
/// - `Low`: common and usually benign, shown so a reviewer knows (an
///   installer piped to a shell from a well-known host).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Usually benign; shown for review.
    Low,
    /// Worth a review.
    Medium,
    /// Very likely harmful or hiding something.
    High,
    /// A known attack pattern.
    Critical,
}

impl Severity {
    /// Every severity, lowest first.
    pub const ALL: [Severity; 4] = [
        Severity::Low,
        Severity::Medium,
        Severity::High,
        Severity::Critical,
    ];

    /// The lowercase name (`high`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }

    /// Parses a lowercase name.
    pub fn parse(text: &str) -> Option<Severity> {
        Severity::ALL
            .into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(text.trim()))
    }

    /// `steps` levels lower, never below `Low`.
    pub fn lowered(self, steps: u8) -> Severity {
        let at = Severity::ALL.iter().position(|s| *s == self).unwrap_or(0);
        Severity::ALL[at.saturating_sub(usize::from(steps))]
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A skill's overall rating: its worst finding that is not allowed, or
/// `Clean` when there is none. Ordered like [`Severity`], `Clean` first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// No finding (content that could not be analysed is a finding).
    Clean,
    /// The worst finding is low.
    Low,
    /// The worst finding is medium.
    Medium,
    /// The worst finding is high.
    High,
    /// The worst finding is critical.
    Critical,
}

impl Verdict {
    /// The verdict of a worst severity.
    pub fn of(worst: Option<Severity>) -> Verdict {
        match worst {
            None => Verdict::Clean,
            Some(Severity::Low) => Verdict::Low,
            Some(Severity::Medium) => Verdict::Medium,
            Some(Severity::High) => Verdict::High,
            Some(Severity::Critical) => Verdict::Critical,
        }
    }

    /// The worst severity (`None` when clean).
    pub fn severity(self) -> Option<Severity> {
        match self {
            Verdict::Clean => None,
            Verdict::Low => Some(Severity::Low),
            Verdict::Medium => Some(Severity::Medium),
            Verdict::High => Some(Severity::High),
            Verdict::Critical => Some(Severity::Critical),
        }
    }

    /// True when the verdict is `threshold` or worse.
    pub fn at_least(self, threshold: Severity) -> bool {
        self.severity().is_some_and(|s| s >= threshold)
    }

    /// The lowercase name (`clean`, `high`).
    pub fn as_str(self) -> &'static str {
        self.severity().map_or("clean", Severity::as_str)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind of risk a rule looks for (one per class of the labelled set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Code fetched from the network and run (`curl ... | sh`, fetch then
    /// `chmod +x`).
    DownloadExecute,
    /// "Prerequisites" that make the user or agent fetch and run an
    /// installer or archive (the ClawHavoc pattern).
    FakePrerequisite,
    /// Code decoded or built at run time and executed (base64, hex, zlib,
    /// char codes; `eval` of built strings).
    Obfuscation,
    /// Secrets read (keys, cloud credentials, browser data, keychains, the
    /// environment) together with a network send.
    Exfiltration,
    /// Reverse shells and persistence (cron, start-up files, launch agents,
    /// authorized keys).
    ReverseShell,
    /// Crypto mining.
    Mining,
    /// Instructions that override the user or the system, hidden text
    /// (HTML comments, invisible, bidi or tag characters, homoglyphs).
    PromptInjection,
    /// Instructions to turn off approvals, sandboxes or protections.
    DisableSafety,
    /// Asking the user for secrets (passwords, seed phrases, keys).
    CredentialRequest,
    /// What the scripts do against what the skill declares.
    CapabilityMismatch,
    /// Content that cannot be analysed (binaries, archives, minified or
    /// encrypted files, files over the limits).
    Unanalysable,
}

impl Class {
    /// Every class, in report order.
    pub const ALL: [Class; 11] = [
        Class::DownloadExecute,
        Class::FakePrerequisite,
        Class::Obfuscation,
        Class::Exfiltration,
        Class::ReverseShell,
        Class::Mining,
        Class::PromptInjection,
        Class::DisableSafety,
        Class::CredentialRequest,
        Class::CapabilityMismatch,
        Class::Unanalysable,
    ];

    /// The kebab-case name (`download-execute`).
    pub fn as_str(self) -> &'static str {
        match self {
            Class::DownloadExecute => "download-execute",
            Class::FakePrerequisite => "fake-prerequisite",
            Class::Obfuscation => "obfuscation",
            Class::Exfiltration => "exfiltration",
            Class::ReverseShell => "reverse-shell",
            Class::Mining => "mining",
            Class::PromptInjection => "prompt-injection",
            Class::DisableSafety => "disable-safety",
            Class::CredentialRequest => "credential-request",
            Class::CapabilityMismatch => "capability-mismatch",
            Class::Unanalysable => "unanalysable",
        }
    }

    /// Parses a kebab-case name.
    pub fn parse(text: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing the audit found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The rule's stable code (`exec.pipe-to-shell`); see [`crate::rules`].
    pub code: String,
    /// How bad it is here (a rule's severity can depend on the host named,
    /// or be lowered where the text is an example).
    pub severity: Severity,
    /// The kind of risk.
    pub class: Class,
    /// The file, relative to the skill folder (`/`-separated).
    pub file: String,
    /// 1-based line (`None` for a finding about a whole file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based column in characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// The text that matched, cut to a window around the match, with
    /// secrets redacted and invisible characters shown as `<U+200B>`.
    pub evidence: String,
    /// What was found and why it matters.
    pub message: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    /// The reason this finding was allowed (`[audit.allow]`), when it
    /// was; an allowed finding does not count in the verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed: Option<String>,
}

impl Finding {
    /// `file:line:column` (as much as is known).
    pub fn location(&self) -> String {
        match (self.line, self.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}", self.file),
            (Some(l), None) => format!("{}:{l}", self.file),
            _ => self.file.clone(),
        }
    }
}

/// The audit of one skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillAudit {
    /// The skill's name (its frontmatter `name`, else its folder's).
    pub name: String,
    /// Where it is (the folder or package as given).
    pub path: PathBuf,
    /// The worst finding that is not allowed, or `clean`.
    pub verdict: Verdict,
    /// Every finding, by file, line and column; allowed ones included.
    pub findings: Vec<Finding>,
}

impl SkillAudit {
    /// The findings that count (not allowed).
    pub fn counted(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.allowed.is_none())
    }

    /// The findings at `threshold` or worse that count.
    pub fn at_least(&self, threshold: Severity) -> impl Iterator<Item = &Finding> {
        self.counted().filter(move |f| f.severity >= threshold)
    }
}
