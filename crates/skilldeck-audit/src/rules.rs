//! The catalog of rules: every finding code once, with its class, its
//! base severity, a one-line title and what to do. Scanners name rules by
//! these codes; a test checks each code they use is here.

use crate::finding::{Class, Severity};

/// One rule of the audit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The stable code (`exec.pipe-to-shell`): never renamed, never reused.
    pub code: &'static str,
    /// The kind of risk.
    pub class: Class,
    /// The severity where nothing lowers or raises it (some rules grade
    /// by the host named or by where the text is; see the rule's title).
    pub severity: Severity,
    /// What it finds, in one line.
    pub title: &'static str,
    /// What to do about a finding.
    pub help: &'static str,
}

use Class::*;
use Severity::*;

const fn rule(
    code: &'static str,
    class: Class,
    severity: Severity,
    title: &'static str,
    help: &'static str,
) -> Rule {
    Rule {
        code,
        class,
        severity,
        title,
        help,
    }
}

/// Every rule, by class.
pub static RULES: &[Rule] = &[
    rule(
        "exec.pipe-to-shell",
        DownloadExecute,
        High,
        "code downloaded and piped into a shell or interpreter (low from a well-known installer host, medium from a code host, high from an unknown host, critical from a raw IP, URL shortener or paste site)",
        "download the script, read it, pin it by checksum, and run the reviewed copy; or install through a package manager",
    ),
    rule(
        "exec.download-then-run",
        DownloadExecute,
        High,
        "a file downloaded, made executable and run (graded by host like exec.pipe-to-shell)",
        "ship what the skill needs inside it, or check the download against a pinned checksum before running it",
    ),
    rule(
        "exec.remote-code-eval",
        DownloadExecute,
        Critical,
        "code fetched over the network and evaluated in-process (exec(requests.get(...).text), iex (iwr ...))",
        "never evaluate downloaded text; ship the code in the skill",
    ),
    rule(
        "prereq.download-installer",
        FakePrerequisite,
        High,
        "documentation sends the reader to download an installer or archive (graded by host)",
        "name the official package or release page instead of a direct binary link, and give its checksum",
    ),
    rule(
        "prereq.password-archive",
        FakePrerequisite,
        Critical,
        "a password-protected archive or installer to download (archives are encrypted to get past scanners)",
        "do not download it; legitimate tools are not shipped in password-protected archives",
    ),
    rule(
        "prereq.quarantine-bypass",
        FakePrerequisite,
        High,
        "removes macOS quarantine or turns off Gatekeeper (xattr -d com.apple.quarantine, spctl --master-disable)",
        "install signed software through its official channel instead of bypassing the OS check",
    ),
    rule(
        "obfuscation.decode-exec",
        Obfuscation,
        Critical,
        "encoded data (base64, hex, zlib, char codes) decoded and executed",
        "replace the encoded blob by the readable code it hides, so it can be reviewed",
    ),
    rule(
        "obfuscation.eval-dynamic",
        Obfuscation,
        Medium,
        "eval/exec of a string built at run time",
        "call the code directly instead of evaluating a built string",
    ),
    rule(
        "obfuscation.encoded-blob",
        Obfuscation,
        Low,
        "a long base64, hex or char-code blob in code",
        "ship the data as a file with a clear name, or the code in readable form",
    ),
    rule(
        "exfil.secret-send",
        Exfiltration,
        Critical,
        "secrets read (keys, cloud credentials, browser data, keychain, wallets, the whole environment) and a network send in the same file",
        "a skill has no reason to read these; remove the read or the send",
    ),
    rule(
        "exfil.secret-read",
        Exfiltration,
        Medium,
        "reads secrets (keys, cloud credentials, browser data, keychain, wallets, the whole environment)",
        "read only the one setting the skill needs, from a variable the user names",
    ),
    rule(
        "exfil.webhook",
        Exfiltration,
        High,
        "posts to a chat webhook or bot API commonly used to collect stolen data (Discord webhooks, Telegram bots)",
        "send nothing to third-party chat endpoints from a skill",
    ),
    rule(
        "shell.reverse",
        ReverseShell,
        Critical,
        "a reverse shell (/dev/tcp, nc -e, socat exec, a socket wired to a shell)",
        "remove it: a skill never hands a shell to a remote host",
    ),
    rule(
        "persist.cron",
        ReverseShell,
        High,
        "installs a cron job",
        "a skill runs when asked; scheduled jobs belong to the user's own setup",
    ),
    rule(
        "persist.startup-file",
        ReverseShell,
        Medium,
        "appends to a shell start-up file (~/.bashrc, ~/.zshrc, ~/.profile); critical when the line fetches or decodes code",
        "print the line for the user to add instead of editing their start-up files",
    ),
    rule(
        "persist.launch-agent",
        ReverseShell,
        High,
        "installs a macOS launch agent or daemon",
        "do not install background services from a skill",
    ),
    rule(
        "persist.ssh-key",
        ReverseShell,
        Critical,
        "adds a key to authorized_keys (remote access)",
        "remove it: a skill never grants SSH access",
    ),
    rule(
        "persist.windows-run",
        ReverseShell,
        High,
        "a Windows Run key or scheduled task",
        "do not install start-up entries from a skill",
    ),
    rule(
        "persist.service",
        ReverseShell,
        Medium,
        "enables a systemd service",
        "let the user enable services themselves",
    ),
    rule(
        "mining.miner",
        Mining,
        Critical,
        "a cryptocurrency miner or mining pool",
        "remove it",
    ),
    rule(
        "injection.override",
        PromptInjection,
        High,
        "text telling the model to ignore or override its instructions, the system or the user",
        "remove the instruction; a skill adds to the user's instructions, it never replaces them",
    ),
    rule(
        "injection.conceal",
        PromptInjection,
        High,
        "text telling the model to hide what it does from the user",
        "remove it: the user must see what the skill does",
    ),
    rule(
        "injection.fake-role",
        PromptInjection,
        High,
        "text posing as a system or developer message (chat-template tokens, [SYSTEM] headers)",
        "remove role markers from skill text",
    ),
    rule(
        "injection.html-comment",
        PromptInjection,
        High,
        "instructions hidden in an HTML comment (invisible when rendered, read by the model)",
        "move the instruction into visible text, or remove it",
    ),
    rule(
        "injection.tag-characters",
        PromptInjection,
        Critical,
        "Unicode tag characters (U+E0000-U+E007F): invisible text a model still reads",
        "remove them; the evidence shows the hidden text",
    ),
    rule(
        "injection.bidi",
        PromptInjection,
        High,
        "bidirectional override or isolate characters: text that reads differently than it runs",
        "remove the bidi controls",
    ),
    rule(
        "injection.zero-width",
        PromptInjection,
        Medium,
        "zero-width characters inside text (hidden separators, smuggled words)",
        "remove them",
    ),
    rule(
        "injection.homoglyph",
        PromptInjection,
        High,
        "a word mixing Latin letters with look-alike Cyrillic or Greek ones (a command that is not what it looks like)",
        "retype the word in plain ASCII",
    ),
    rule(
        "safety.bypass-approvals",
        DisableSafety,
        High,
        "turns off the agent's approvals or sandbox (--dangerously-skip-permissions, bypassPermissions, approval never, danger-full-access)",
        "keep approvals and the sandbox on; ask the user to grant the one permission needed",
    ),
    rule(
        "safety.disable-protection",
        DisableSafety,
        High,
        "turns off an operating system protection (SELinux, the firewall, Defender, SIP, password-less sudo)",
        "do not weaken the machine's protections from a skill",
    ),
    rule(
        "creds.ask-seed-phrase",
        CredentialRequest,
        Critical,
        "asks for a wallet seed or recovery phrase",
        "remove it: no legitimate tool needs a seed phrase typed into a conversation",
    ),
    rule(
        "creds.ask-password",
        CredentialRequest,
        High,
        "asks the user for a password, passphrase or private key",
        "let the tool that needs the secret prompt for it itself, or read it from a keychain the user configures",
    ),
    rule(
        "creds.ask-token",
        CredentialRequest,
        Low,
        "asks the user to paste an API key or token into the conversation",
        "tell the user which environment variable to set instead",
    ),
    rule(
        "capability.undeclared-network",
        CapabilityMismatch,
        Medium,
        "scripts use the network but nothing in SKILL.md (description, compatibility, allowed tools, requirements, instructions) says so",
        "say in the description or `compatibility` which service the skill talks to",
    ),
    rule(
        "capability.contradicts-declaration",
        CapabilityMismatch,
        High,
        "scripts use the network although the skill says it works offline",
        "make the declaration true: remove the network use or correct the description",
    ),
    rule(
        "deps.shadows-well-known",
        FakePrerequisite,
        High,
        "a declared dependency (requirements.txt, pyproject.toml) one letter away from a well-known package's name (reqeusts for requests): a typosquat installs someone else's code",
        "check the name on the package's official page and depend on the well-known one",
    ),
    rule(
        "deps.source-override",
        FakePrerequisite,
        High,
        "a declared dependency names its own source (--extra-index-url, a URL, a path): packages from outside the operator's index (install refuses it)",
        "declare plain requirements; the operator chooses the index ([environments] index-url, find-links)",
    ),
    rule(
        "deps.not-on-index",
        FakePrerequisite,
        High,
        "a declared dependency the package index the audit was given does not have (checked only with --index-url, --find-links or --npm-registry): a name nobody owns there can be registered by anyone later, and the next install runs their code (dependency confusion)",
        "check the name: correct a typo, publish an internal package to the index it is installed from (or add it to the wheel folder), or register the name yourself so nobody else can",
    ),
    rule(
        "deps.index-lookup-failed",
        Unanalysable,
        Medium,
        "a declared dependency could not be looked up on the package index (a server error, a timeout, a redirect to another host, an unreadable wheel folder, or more names than one run checks): whether the index has it is unknown",
        "run the audit again when the index answers, or check the name on the index yourself",
    ),
    rule(
        "unanalysable.executable",
        Unanalysable,
        High,
        "a compiled executable or bytecode (ELF, PE, Mach-O, WebAssembly, Java, .pyc): nobody can review it",
        "ship source code instead, or install the tool through a package manager",
    ),
    rule(
        "unanalysable.archive",
        Unanalysable,
        Medium,
        "an archive inside the skill (its contents are not audited)",
        "ship the files unpacked so they can be audited",
    ),
    rule(
        "unanalysable.encrypted",
        Unanalysable,
        High,
        "encrypted content (an encrypted archive, PGP, OpenSSL or vault data)",
        "a skill has nothing to hide from its reviewer: ship it in clear",
    ),
    rule(
        "unanalysable.binary",
        Unanalysable,
        Medium,
        "binary data of an unknown kind",
        "ship data in a readable format, or explain it in SKILL.md and allow the finding",
    ),
    rule(
        "unanalysable.document",
        Unanalysable,
        Low,
        "a document format whose text is not audited (PDF, office files)",
        "ship the text as Markdown if the model is meant to read it",
    ),
    rule(
        "unanalysable.minified",
        Unanalysable,
        Medium,
        "minified or packed code (very long lines)",
        "ship the readable source",
    ),
    rule(
        "unanalysable.too-large",
        Unanalysable,
        Medium,
        "a file over the audit's size limit (not read)",
        "split or remove the file",
    ),
    rule(
        "unanalysable.too-many-files",
        Unanalysable,
        Medium,
        "more files than the audit reads (the rest are not audited)",
        "trim the skill to what it needs",
    ),
    rule(
        "unanalysable.not-utf8",
        Unanalysable,
        Low,
        "text that is not UTF-8 (audited as decoded with replacements)",
        "save the file as UTF-8",
    ),
];

/// The rule with this code.
pub fn rule_of(code: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.code == code)
}
