//! The pattern rules: one regular expression per way a rule shows in text,
//! each named by its rule's code and compiled once. A file is first
//! scanned once for the patterns' key words (one Aho-Corasick automaton,
//! any case); only the patterns whose words it holds are searched, each
//! with its own small regex. Byte regexes with ASCII classes
//! (`unicode(false)`): the patterns are ASCII, and the lazy DFA never falls
//! back on non-ASCII text. (One `RegexSet` of every pattern was tried
//! first: building its lazy DFA's states took half of the corpus run.)

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind};
use regex::bytes::{Regex, RegexBuilder};

/// Which files a pattern applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Every text file (scripts, data and documentation).
    Any,
    /// Documentation only (Markdown and plain text): instructions to the
    /// model or the user.
    Prose,
    /// Code only (not documentation).
    Code,
}

/// One pattern of a rule.
pub(crate) struct Pattern {
    pub(crate) code: &'static str,
    pub(crate) scope: Scope,
    /// Words of which every match holds at least one (any case): a file
    /// holding none of them is not searched with this pattern. Empty:
    /// always searched.
    pub(crate) keys: &'static [&'static str],
    pub(crate) regex: &'static str,
}

const fn p(
    code: &'static str,
    scope: Scope,
    keys: &'static [&'static str],
    regex: &'static str,
) -> Pattern {
    Pattern {
        code,
        scope,
        keys,
        regex,
    }
}

use Scope::*;

/// Every pattern. `(?i)` where case does not matter; `[ \t]` (never `\s`)
/// keeps a match on one line.
pub(crate) static PATTERNS: &[Pattern] = &[
    // Download and execute.
    p(
        "exec.pipe-to-shell",
        Any,
        &[
            "curl",
            "wget",
            "fetch",
            "iwr",
            "irm",
            "invoke-webrequest",
            "invoke-restmethod",
        ],
        r"(?i)\b(curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n|]*\|[ \t]*(sudo[ \t]+(-[a-z]+[ \t]+)*)?(env[ \t]+[^\n|]*)?((ba|z|da|k|c|tc|fi)?sh|python[0-9.]*|perl|ruby|node|php|iex|invoke-expression|pwsh|powershell)\b",
    ),
    p(
        "exec.pipe-to-shell",
        Any,
        &["<("],
        r"(?i)(\b(ba|z|k)?sh|\bsource|(^|[ \t;&])\.)[ \t]+<\([ \t]*(curl|wget)\b",
    ),
    p(
        "exec.pipe-to-shell",
        Any,
        &["$("],
        r#"(?i)\b(ba|z|k)?sh[ \t]+-c[ \t]+["']?\$\([ \t]*(curl|wget)\b"#,
    ),
    p(
        "exec.pipe-to-shell",
        Any,
        &["iex", "invoke-expression"],
        r"(?i)\b(iex|invoke-expression)\b[^\n]*\b(iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|net\.webclient)",
    ),
    p(
        "exec.remote-code-eval",
        Any,
        &["exec", "eval"],
        r"(?i)(^|[^.\w])(exec|eval)[ \t]*\([^\n]*\b(requests\.get|urlopen|urllib\.request|httpx\.get|fetch[ \t]*\(|axios\.get|open-uri|uri\.open|net::http)",
    ),
    // Fake prerequisites.
    p(
        "prereq.download-installer",
        Prose,
        &["://"],
        r#"(?im)\b(https?|ftp)://[^\s)'"<>\]]+?\.(zip|exe|msi|dmg|pkg|7z|rar|appimage|deb|rpm|jar|scr|bat|cmd|ps1|vbs|apk|iso)([?#][^\s)'"<>\]]*)?($|[\s)'"<>\]`,;])"#,
    ),
    p(
        "prereq.password-archive",
        Any,
        &["pass"],
        r"(?i)\b(archive|zip|rar|7z|installer|package|download|extract|unzip)[^\n]{0,80}\b(password|passcode|passwd|pass)\b[ \t]*(is|:|=)",
    ),
    p(
        "prereq.password-archive",
        Any,
        &["pass"],
        r"(?i)\b(password|passcode|pass)\b[ \t]*(is|:|=)[^\n]{0,60}\b(zip|rar|7z|archive|extract|unzip|installer)\b",
    ),
    p(
        "prereq.password-archive",
        Any,
        &["unzip", "7z"],
        r"(?i)\bunzip[ \t]+(-[a-z]+[ \t]+)*-P[ \t]+\S|\b7z[a]?[ \t]+[xe]\b[^\n]*[ \t]-p\S",
    ),
    p(
        "prereq.quarantine-bypass",
        Any,
        &["xattr", "spctl"],
        r"(?i)\bxattr\b[^\n]*com\.apple\.quarantine|\bxattr[ \t]+-(c|cr|rc)\b|\bspctl[ \t]+--master-disable",
    ),
    // Obfuscation.
    p(
        "obfuscation.decode-exec",
        Any,
        &["base64"],
        r"(?i)\bbase64[ \t]+(-[a-z]*d[a-z]*|--decode)\b[^\n|]*\|[ \t]*(sudo[ \t]+)?((ba|z|da|k)?sh|python[0-9.]*|perl|ruby|node|php)\b",
    ),
    p(
        "obfuscation.decode-exec",
        Any,
        &["base64"],
        r#"(?i)(\beval|\bexec|\b(ba|z)?sh[ \t]+-c|\bsource)[ \t]*[("']*\$\([^\n]*\bbase64[ \t]+(-[a-z]*d|--decode)"#,
    ),
    p(
        "obfuscation.decode-exec",
        Any,
        &["xxd", "openssl", "gunzip", "zcat"],
        r"(?i)\b(xxd[ \t]+-r|openssl[ \t]+(enc[ \t]+)?-?base64[ \t]+-d|gunzip|zcat)[^\n|]*\|[ \t]*(ba|z|da)?sh\b",
    ),
    p(
        "obfuscation.decode-exec",
        Any,
        &["exec", "eval"],
        r"(^|[^.\w])(exec|eval)[ \t]*\([^\n]*(b64decode|b32decode|b16decode|a85decode|b85decode|decodebytes|fromhex|unhexlify|decompress|marshal\.loads|codecs\.decode|rot_?13|\bchr[ \t]*\()",
    ),
    p(
        "obfuscation.decode-exec",
        Any,
        &["eval", "function"],
        r"(?i)(^|[^.\w])(eval|new[ \t]+function)[ \t]*\([^\n]*(\batob[ \t]*\(|buffer\.from[ \t]*\([^\n]*base64|fromcharcode|\bunescape[ \t]*\()",
    ),
    p(
        "obfuscation.decode-exec",
        Any,
        &["powershell", "pwsh", "frombase64string"],
        r"(?i)\b(powershell|pwsh)(\.exe)?\b[^\n]*[ \t]-e(nc|ncodedcommand|ncoded)?[ \t]+[a-z0-9+/=]{16,}|frombase64string[^\n]*\b(iex|invoke-expression)\b|\b(iex|invoke-expression)\b[^\n]*frombase64string",
    ),
    p(
        "obfuscation.decode-exec",
        Any,
        &["eval"],
        r"(?i)\beval[ \t]*\(?[ \t]*(decode_base64|pack[ \t]*\(|unpack[ \t]*\(|base64\.decode64|zlib::inflate)",
    ),
    p(
        "obfuscation.eval-dynamic",
        Code,
        &["eval", "exec", "function"],
        r#"(^|[^.\w$])(eval|exec)[ \t]*\([ \t]*([a-z_][a-z0-9_]*[ \t]*[+)]|[^\n)]*["'][ \t]*\+)|(?i)\bnew[ \t]+function[ \t]*\([^\n)]*\+"#,
    ),
    p(
        "obfuscation.encoded-blob",
        Code,
        &[],
        r"[A-Za-z0-9+/]{400,}={0,2}|(?i)(\\x[0-9a-f]{2}){40,}|(?i)(0x[0-9a-f]{2},[ \t]*){40,}|(?i)(chr\([0-9]+\)[ \t]*\+[ \t]*){10,}|(?i)fromcharcode\(([0-9]+[ \t]*,[ \t]*){10,}",
    ),
    // Exfiltration (the secret-send pairing is in scan.rs).
    p(
        "exfil.webhook",
        Any,
        &["discord", "telegram"],
        r"(?i)\bdiscord(app)?\.com/api/webhooks/|\bapi\.telegram\.org/bot",
    ),
    // Reverse shells and persistence.
    p(
        "shell.reverse",
        Any,
        &["/dev/tcp", "/dev/udp", "nc", "mkfifo", "socat"],
        r"(?i)/dev/(tcp|udp)/[^\s/]+/[0-9]+|\b(nc|ncat|netcat)\b[^\n]*[ \t]-[a-z]*[ec][ \t]+([^\n]*\b(ba|z|da)?sh\b|/bin/|cmd)|\bmkfifo\b[^\n]*\b(nc|ncat|netcat|openssl[ \t]+s_client|telnet)\b|\bsocat\b[^\n]*\bexec:|\bsocat\b[^\n]*tcp[^\n]*\b(pty|stdio)\b",
    ),
    p(
        "shell.reverse",
        Any,
        &[
            "dup2",
            "pty.spawn",
            "tcpclient",
            "-i",
            "fsockopen",
            "tcpsocket",
            "socket.socket",
        ],
        r#"(?i)os\.dup2\([^\n]*fileno|pty\.spawn\([ \t]*["'][^"']*sh|system\.net\.sockets\.tcpclient|\b(ba)?sh[ \t]+-i[ \t]*[>&<]|fsockopen\([^\n]*(exec|system|shell_exec|proc_open)|tcpsocket\.(new|open)[^\n]*(exec|spawn|system)|socket\.socket\([^\n]*connect[^\n]*(subprocess|os\.system|pty)"#,
    ),
    p(
        "persist.cron",
        Any,
        &["crontab", "/etc/cron", "/var/spool/cron", "@reboot"],
        r"(?i)\|[ \t]*crontab[ \t]+-[ \t]*($|[;&|)])|\bcrontab[ \t]+-l\b[^\n]*\||(>|tee)[ \t]*(-a[ \t]+)?/etc/cron|/var/spool/cron|@reboot[ \t]",
    ),
    p(
        "persist.startup-file",
        Any,
        &[
            ".bashrc",
            ".bash_profile",
            ".zshrc",
            ".zprofile",
            ".zshenv",
            ".zlogin",
            ".profile",
            ".bash_login",
            "config.fish",
        ],
        r#"(?i)(>>|>|\btee[ \t]+-a)[ \t]*["']?(~|\$home|\$\{home\}|/root|/home/[a-z0-9_-]+)/\.(bashrc|bash_profile|zshrc|zprofile|zshenv|zlogin|profile|bash_login|config/fish/config\.fish)\b"#,
    ),
    p(
        "persist.launch-agent",
        Any,
        &["launchagents", "launchdaemons", "launchctl"],
        r"(?i)library/launch(agents|daemons)|\blaunchctl[ \t]+(load|bootstrap|submit|enable)\b",
    ),
    p(
        "persist.ssh-key",
        Any,
        &["authorized_keys"],
        r"(?i)(>>|\btee[ \t]+-a)[^\n]*authorized_keys",
    ),
    p(
        "persist.windows-run",
        Any,
        &["currentversion", "schtasks", "scheduledtask", "start menu"],
        r"(?i)currentversion\\+run\b|\bschtasks(\.exe)?[ \t]+/create|\b(new|register)-scheduledtask|\\start menu\\programs\\startup",
    ),
    p(
        "persist.service",
        Any,
        &["systemctl", "/etc/systemd/system/", "systemd/user"],
        r"(?i)\bsystemctl[ \t]+(--user[ \t]+)?enable[ \t]|(>|\btee[ \t]+(-a[ \t]+)?)[ \t]*/etc/systemd/system/|\.config/systemd/user/[^\n]*\.service",
    ),
    // Mining.
    p(
        "mining.miner",
        Any,
        &[
            "xmrig",
            "stratum+",
            "minerd",
            "cpuminer",
            "donate-level",
            "nicehash",
            "cryptonight",
            "moneroocean",
            "supportxmr",
            "minexmr",
            "nanopool",
            "2miners",
            "f2pool",
            "ethermine",
            "hashvault",
            "c3pool",
        ],
        r"(?i)\bxmrig\b|stratum\+(tcp|ssl|tls)://|\bminerd\b|\bcpuminer\b|--donate-level|\bnicehash\b|\bcryptonight\b|\bmoneroocean\b|\bsupportxmr\b|\bminexmr\b|\bnanopool\.org|\b2miners\.com|\bf2pool\b|\bethermine\b|\bhashvault\.pro|\bc3pool\b",
    ),
    // Prompt injection (the character rules are in unicode.rs, HTML
    // comments in scan.rs).
    p(
        "injection.override",
        Prose,
        &["ignore", "disregard", "forget", "override", "bypass"],
        r"(?i)\b(ignore|disregard|forget|override|bypass)[ \t]+(all[ \t]+|any[ \t]+)?(of[ \t]+)?(your|the|my|these|those)?[ \t]*(previous|prior|above|earlier|preceding|original|system|safety|existing|other)[ \t]+(instructions|prompts?|rules|directives|guidelines|messages|context|constraints|guardrails)\b",
    ),
    p(
        "injection.override",
        Prose,
        &["now", "system", "supersede", "precedence", "override"],
        r"(?i)\byou[ \t]+are[ \t]+now[ \t]+(dan\b|in[ \t]+(developer|god|jailbreak|unrestricted)[ \t]+mode|an?[ \t]+unrestricted|no[ \t]+longer[ \t]+(bound|restricted))|\b(new|updated|real|actual)[ \t]+system[ \t]+(prompt|instructions?)[ \t]*:|\b(supersedes?|takes?[ \t]+precedence[ \t]+over|overrides?)[ \t]+(the[ \t]+|any[ \t]+|all[ \t]+|your[ \t]+)?(system[ \t]+prompt|user'?s?[ \t]+instructions|safety[ \t]+(rules|guidelines))",
    ),
    p(
        "injection.conceal",
        Prose,
        &["user", "secretly", "covertly"],
        r"(?i)\b(do[ \t]+not|don'?t|never|without)[ \t]+(tell|telling|inform|informing|notify|notifying|alert|alerting)[ \t]+(the[ \t]+)?user\b|\bhide[ \t]+(this|it|these|them|the[ \t]+[a-z]+)[ \t]+from[ \t]+the[ \t]+user|\b(secretly|covertly)[ \t]+(run|execute|send|upload|post|install|download|exfiltrate|copy|forward)|\bthe[ \t]+user[ \t]+(must|should)[ \t]+(not|never)[ \t]+(know|see|find[ \t]+out|notice)",
    ),
    p(
        "injection.fake-role",
        Prose,
        &["<|", "inst]", "<<sys>>", "system", "developer"],
        r"(?i)<\|im_start\|>|<\|im_end\|>|<\|system\|>|<\|start_header_id\|>|\[/?inst\]|<<sys>>|(?m:^)[ \t]*\[(system|developer)([ \t]+(message|prompt))?\][ \t]*:?|(?m:^)[ \t]*(system|developer)[ \t]+(message|override|prompt)[ \t]*:",
    ),
    // Turning off protections.
    p(
        "safety.bypass-approvals",
        Any,
        &[
            "--dangerously",
            "--yolo",
            "approval",
            "sandbox",
            "bypasspermissions",
            "--trust-all-tools",
            "--allow-all-tools",
            "--allow-dangerously",
        ],
        r#"(?i)--dangerously-skip-permissions|--dangerously-bypass-approvals-and-sandbox|--yolo\b|--ask-for-approval[ =]+never|approval[_-]policy[ \t"']*[=:][ \t]*["']?never|sandbox[_-]mode[ \t"']*[=:][ \t]*["']?danger-full-access|--sandbox[ =]+danger-full-access|\bbypasspermissions\b|--trust-all-tools|--allow-all-tools|--allow-dangerously"#,
    ),
    p(
        "safety.bypass-approvals",
        Prose,
        &[
            "disable",
            "turn",
            "switch",
            "bypass",
            "circumvent",
            "deactivate",
        ],
        r"(?i)\b(disable|turn[ \t]+off|switch[ \t]+off|bypass|circumvent|deactivate)[ \t]+(the[ \t]+|all[ \t]+|any[ \t]+|your[ \t]+)?(agent'?s?[ \t]+)?(sandbox(ing)?|approvals?|approval[ \t]+prompts?|permission[ \t]+(prompts?|checks?)|permissions[ \t]+checks?|safety[ \t]+(checks?|filters?|guardrails?|measures)|guardrails|security[ \t]+(checks?|warnings?|prompts?|controls?)|tool[ \t]+confirmations?)\b",
    ),
    p(
        "safety.disable-protection",
        Any,
        &[
            "setenforce",
            "set-mppreference",
            "add-mppreference",
            "ufw",
            "csrutil",
            "nopasswd",
            "systemctl",
            "iptables",
        ],
        r"(?i)\bsetenforce[ \t]+0|set-mppreference[^\n]*-disable[a-z]*[ \t]+\$?true|add-mppreference[^\n]*-exclusionpath|\bufw[ \t]+disable|\bcsrutil[ \t]+disable|\bnopasswd[ \t]*:|\bsystemctl[ \t]+(stop|disable|mask)[ \t]+(apparmor|firewalld|auditd|ufw)\b|\biptables[ \t]+-F\b",
    ),
    // Asking for secrets.
    p(
        "creds.ask-seed-phrase",
        Prose,
        &["seed", "recovery", "mnemonic", "word"],
        r"(?i)\b(enter|paste|type|provide|share|send|give|input|submit|ask[^\n]{0,30}for|request)[^\n.]{0,40}\b(seed[ \t]+phrase|recovery[ \t]+phrase|mnemonic[ \t]+(phrase|words)|secret[ \t]+recovery|12[ -]word|24[ -]word)",
    ),
    p(
        "creds.ask-password",
        Prose,
        &["pass", "private"],
        r"(?i)\b(ask|prompt|request)(s|ing|ed)?[ \t]+(the[ \t]+)?(user|them|you)[ \t]+(for|to[ \t]+(enter|provide|type|paste|share|give|send))[ \t]+(their|your|the|a)?[ \t]*(sudo[ \t]+|admin[ \t]+|administrator[ \t]+|system[ \t]+|login[ \t]+|account[ \t]+|root[ \t]+|macos[ \t]+|keychain[ \t]+)?(password|passphrase|passcode|private[ \t]+key)\b|\b(enter|paste|type|provide|give|share|send|tell)[ \t]+(me[ \t]+|us[ \t]+)?(your|the[ \t]+user'?s)[ \t]+(sudo[ \t]+|admin[ \t]+|administrator[ \t]+|system[ \t]+|login[ \t]+|account[ \t]+|root[ \t]+|macos[ \t]+|keychain[ \t]+)?(password|passphrase|private[ \t]+key)\b",
    ),
    p(
        "creds.ask-token",
        Prose,
        &["api", "token", "key", "secret", "credential"],
        r"(?i)\b(ask|prompt|request)(s|ing)?[ \t]+(the[ \t]+)?user[ \t]+(for|to[ \t]+(provide|paste|enter|share|give))[ \t]+(their|your|an?|the)?[ \t]*([a-z]+[ \t]+)?(api[ \t_-]?key|token|access[ \t]+key|secret[ \t]+key|credentials)\b|\b(paste|send|give)[ \t]+(me|it)[^\n.]{0,30}\b(api[ \t_-]?key|token|secret)\b",
    ),
];

/// Reading secrets (keys, cloud credentials, browser data, keychains,
/// wallets, the whole environment): half of `exfil.secret-send`.
pub(crate) const SECRET_SOURCE: &str = r"(?i)\b(cat|cp|scp|rsync|tar|zip|7z|base64|xxd|gzip|open\(|read_text|read_bytes|readfile(sync)?|get-content|type|copy|shutil\.copy\w*|find)\b[^\n]*(\.ssh/|\bid_rsa\b|\bid_ed25519\b|\bid_ecdsa\b|\.aws/credentials|\.config/gcloud|\.kube/config|\.netrc\b|\.git-credentials|\.docker/config\.json|\.npmrc|\.pypirc|/etc/shadow|\.gnupg)|\blogin[ \t]data\b|\blocal[ \t]state\b|cookies\.sqlite|\bkey4\.db\b|\blogins\.json\b|chrome/user[ \t]data|application[ \t]support/google/chrome|\.mozilla/firefox|bravesoftware|library/cookies|library/keychains|login\.keychain|\bsecurity[ \t]+(find-generic-password|find-internet-password|dump-keychain)|\bwallet\.dat\b|exodus\.wallet|electrum/wallets|\.ethereum/keystore|solana/id\.json|dict\(os\.environ\)|json\.dumps\((dict\()?os\.environ|str\(os\.environ\)|json\.stringify\(process\.env\)|object\.(entries|keys|assign)\([^\n)]*process\.env\)|\benv[ \t]*\|[ \t]*(curl|nc|base64|gzip)|\bprintenv[ \t]*(\||>)|/proc/(self|[0-9]+|\$\$)/environ|get-childitem[ \t]+env:";

/// Key words of [`SECRET_SOURCE`] (every match holds one).
const SECRET_SOURCE_KEYS: &[&str] = &[
    ".ssh/",
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
    ".aws/credentials",
    ".config/gcloud",
    ".kube/config",
    ".netrc",
    ".git-credentials",
    ".docker/config.json",
    ".npmrc",
    ".pypirc",
    "/etc/shadow",
    ".gnupg",
    "login data",
    "login\tdata",
    "local state",
    "local\tstate",
    "cookies.sqlite",
    "key4.db",
    "logins.json",
    "chrome/user",
    "google/chrome",
    ".mozilla/firefox",
    "bravesoftware",
    "library/cookies",
    "library/keychains",
    "login.keychain",
    "security",
    "wallet.dat",
    "exodus.wallet",
    "electrum/wallets",
    ".ethereum/keystore",
    "solana/id.json",
    "os.environ",
    "process.env",
    "env",
    "printenv",
    "/environ",
    "env:",
];

/// Sending data out: the other half.
pub(crate) const NETWORK_SEND: &str = r#"(?i)\bcurl\b[^\n]*([ \t]-d\b|[ \t]--data|[ \t]-F\b|[ \t]--form|[ \t]-T\b|--upload-file|-X[ \t]*(post|put))|\bwget\b[^\n]*--post-(data|file)|\brequests\.(post|put|patch)\(|\bhttpx\.(post|put)|urllib\.request\.(urlopen|request)\([^\n]*data|\bfetch\([^\n]*method[ \t]*:[ \t]*["'](post|put)|\baxios\.(post|put)|\b(nc|ncat|netcat)[ \t]+[a-z0-9.-]+[ \t]+[0-9]{2,5}|\bsmtplib\b|\bsendmail\b|invoke-(restmethod|webrequest)[^\n]*-method[ \t]+(post|put)|discord(app)?\.com/api/webhooks|api\.telegram\.org/bot|\bscp[ \t]+[^\n]*[a-z0-9_.-]+@[a-z0-9.-]+:|\bftp://|socket\.(send|sendall)\(|\.(post|put)\([ \t]*["']https?://|\b(send|upload|post|email|forward|paste|exfiltrate)[ \t]+(it|them|the[ \t]+(contents?|files?|output|keys?|results?)|its[ \t]+contents?|their[ \t]+contents?)[ \t]+(to|into)\b"#;

/// Scripts using the network at all (for `capability.*`).
pub(crate) const NETWORK_USE: &str = r#"(?i)\b(curl|wget)\b|\brequests\.(get|post|put|delete|patch|head|session|request)\b|urllib\.request|\burlopen\(|\bhttp\.client\b|\bhttpx\b|\baiohttp\b|socket\.(socket|create_connection)\(|\bfetch\([ \t]*[`'"]?(https?:|\$\{|[a-z_])|\baxios\b|xmlhttprequest|node-fetch|\bhttps?\.(get|request)\(|invoke-(webrequest|restmethod)|net\.webclient|\bnet/http\b|\breqwest::"#;

/// Key words of [`NETWORK_USE`].
const NETWORK_USE_KEYS: &[&str] = &[
    "curl",
    "wget",
    "requests.",
    "urllib.request",
    "urlopen(",
    "http.client",
    "httpx",
    "aiohttp",
    "socket.",
    "fetch(",
    "axios",
    "xmlhttprequest",
    "node-fetch",
    "http.get(",
    "https.get(",
    "http.request(",
    "https.request(",
    "invoke-webrequest",
    "invoke-restmethod",
    "net.webclient",
    "net/http",
    "reqwest::",
];

/// A download to a file (the first half of `exec.download-then-run`).
pub(crate) const DOWNLOAD_TO_FILE: &str = r"(?i)\b(curl\b[^\n]*([ \t]-[a-z]*o\b|[ \t]--output\b|>)|wget\b|invoke-webrequest\b[^\n]*-outfile|iwr\b[^\n]*-outfile|urlretrieve\()";

/// Making a file executable or running a downloaded one (the second half).
pub(crate) const MAKE_EXECUTABLE: &str = r"(?i)\bchmod[ \t]+(-[a-z]+[ \t]+)*([ugoa]*\+[rw]*x|[0-7]?[0-7]*[157][0-7]*)\b|\bstart-process\b";

/// Key words of [`MAKE_EXECUTABLE`].
const MAKE_EXECUTABLE_KEYS: &[&str] = &["chmod", "start-process"];

/// Words near a match that mark it as an example or a warning rather than
/// an instruction.
pub(crate) const EXAMPLE_MARKER: &str = r"(?i)\b(example|examples|e\.g\.|for[ \t]+instance|such[ \t]+as|attackers?|malicious|malware|adversar\w*|detect\w*|look[ \t]+for|looks[ \t]+for|indicators?|iocs?|red[ \t]+flags?|suspicious|patterns?|signatures?|never[ \t]+run|do[ \t]+not[ \t]+(run|use|do)|don'?t[ \t]+(run|use|do)|avoid|dangerous|phishing|threats?|exploits?|payloads?|vulnerab\w*|test[ \t]+cases?|fixtures?|samples?|unsafe|insecure|warn\w*|attacks?|attempts?|refus\w*|reject\w*|resist\w*|caution|responsibl\w*|risks?|risky)\b";

/// Words that make an archive link an installer ("download and run").
pub(crate) const INSTALLER_WORDS: &str = r"(?i)\b(install\w*|setup|set[ \t]+up|prerequisites?|required|requires|run|launch|execute|open[ \t]+it|double-click)\b";

/// A skill about security (name or description): its documentation quotes
/// attacks to teach or detect them.
pub(crate) const SECURITY_TOPIC: &str = r"(?i)\b(security|secure|malware|threats?|attacks?|detect\w*|forensics?|incidents?|red[ -]?team\w*|blue[ -]?team\w*|pentest\w*|penetration|vulnerab\w*|exploits?|ctf|phishing|audit\w*|scan\w*|siem|yara|sigma|soc|injection|hardening|defen[cs]es?|awareness|guardrails?|threat[ -]model\w*)\b";

/// A negation before a request for a secret ("never share your seed
/// phrase"): a warning, not a request.
pub(crate) const NEGATION: &str = r"(?i)\b(never|not|don'?t|do[ \t]+not|no[ \t]+one|nobody|won'?t|will[ \t]+never|should[ \t]+not|must[ \t]+not|beware|scam\w*|phish\w*)\b";

/// The operating system asking for a password (sudo, a keychain dialog),
/// not the skill.
pub(crate) const OS_PROMPT: &str =
    r"(?i)\bwhen[ \t]+prompted\b|\bprompted[ \t]+by\b|\bsudo[ \t]+(will|may)[ \t]+ask\b";

/// Words in an HTML comment that make it an instruction to a model.
pub(crate) const COMMENT_INSTRUCTION: &str = r"(?i)\b(ignore|disregard)[ \t]+(all|any|the|previous|prior|above|your)\b|^\s*(note[ \t]+to[ \t]+(the[ \t]+)?)?(ai|assistant|agent|model|llm|claude)([ \t]+agent)?[ \t]*[:,]|\bsystem[ \t]+prompt\b|\b(do[ \t]+not|don'?t|never)[ \t]+(tell|mention|reveal|inform)\b|\bwithout[ \t]+(telling|informing)\b|\b(curl|wget)[ \t]+[^\n]*https?://|\bbase64[ \t]+-d|\bexfiltrat\w*|\b(secretly|covertly)\b|\byou[ \t]+must[ \t]+(run|execute|send|upload|download|install)\b|\balways[ \t]+(run|execute|send|include)\b";

/// What the skill says that implies network use (any of these in
/// SKILL.md counts as declared).
pub(crate) const NETWORK_DECLARED: &str = r"(?i)https?://|\b(apis?|http|https|urls?|web|websites?|online|internet|network\w*|download\w*|upload\w*|fetch\w*|remote|cloud|servers?|services?|endpoints?|webhooks?|oauth|rest|graphql|github|gitlab|slack|jira|linear|notion|google|aws|azure|gcp|s3|e-?mail|smtp|deploy\w*|publish\w*|sync\w*|brows\w*|scrap\w*|crawl\w*|search\w*|requests?|curl|wget|mcp|tokens?|saas|platforms?|accounts?|login|sign[ \t]?in|hosted|hosting|cdn|dns|domains?|registry|package|install\w*)\b";

/// What the skill says that promises no network use.
pub(crate) const OFFLINE_CLAIM: &str = r"(?i)\b(offline|no[ \t]+network|no[ \t]+internet|without[ \t]+(a[ \t]+)?(network|internet)|(does[ \t]+not|doesn'?t|never|won'?t|will[ \t]+not)[ \t]+(access|use|need|require|touch|contact|connect[ \t]+to|call)[ \t]+(the[ \t]+)?(network|internet|any[ \t]+(server|service|network|external))|local[ \t]+only|locally[ \t]+only|air-?gapped|no[ \t]+data[ \t]+leaves)\b";

/// The signals (facts other rules pair), numbered after [`PATTERNS`] in
/// [`Compiled::active`].
pub(crate) const SECRET_SOURCE_SIGNAL: usize = 0;
/// See [`SECRET_SOURCE_SIGNAL`].
pub(crate) const NETWORK_USE_SIGNAL: usize = 1;
/// See [`SECRET_SOURCE_SIGNAL`].
pub(crate) const MAKE_EXECUTABLE_SIGNAL: usize = 2;
const SIGNAL_KEYS: [&[&str]; 3] = [SECRET_SOURCE_KEYS, NETWORK_USE_KEYS, MAKE_EXECUTABLE_KEYS];

/// All compiled patterns.
pub(crate) struct Compiled {
    /// Every key word of every pattern and signal, any case.
    keys: AhoCorasick,
    /// For each key word (by pattern id of `keys`): the patterns (index
    /// into [`PATTERNS`]) and signals (`PATTERNS.len() + signal`) it opens.
    owners: Vec<Vec<usize>>,
    /// Patterns searched whatever the file holds (no key words).
    always: Vec<usize>,
    /// Each pattern alone (by index into [`PATTERNS`]).
    pub(crate) each: Vec<Regex>,
    pub(crate) secret_source: Regex,
    pub(crate) network_send: Regex,
    pub(crate) network_use: Regex,
    pub(crate) download_to_file: Regex,
    pub(crate) make_executable: Regex,
    pub(crate) example_marker: Regex,
    pub(crate) security_topic: Regex,
    pub(crate) negation: Regex,
    pub(crate) os_prompt: Regex,
    pub(crate) installer_words: Regex,
    pub(crate) comment_instruction: Regex,
    pub(crate) html_comment: Regex,
    pub(crate) network_declared: Regex,
    pub(crate) offline_claim: Regex,
}

impl Compiled {
    /// Which patterns (by index into [`PATTERNS`]) and signals (at
    /// `PATTERNS.len() + signal`) `text` may match: those whose key words
    /// it holds, and those without key words.
    pub(crate) fn active(&self, text: &[u8]) -> Vec<bool> {
        let mut active = vec![false; PATTERNS.len() + SIGNAL_KEYS.len()];
        for &i in &self.always {
            active[i] = true;
        }
        for m in self.keys.find_overlapping_iter(text) {
            for &owner in &self.owners[m.pattern().as_usize()] {
                active[owner] = true;
            }
        }
        active
    }
}

fn one(pattern: &str) -> Regex {
    // The patterns are constants; `every_pattern_compiles` tests them.
    #[allow(clippy::expect_used)]
    RegexBuilder::new(pattern)
        .unicode(false)
        .multi_line(false)
        .size_limit(64 << 20)
        .build()
        .expect("audit pattern compiles")
}

/// The patterns, compiled on first use.
pub(crate) static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let mut words: Vec<String> = Vec::new();
    let mut owners: Vec<Vec<usize>> = Vec::new();
    let mut add = |word: &str, owner: usize| {
        let word = word.to_ascii_lowercase();
        match words.iter().position(|w| *w == word) {
            Some(at) => owners[at].push(owner),
            None => {
                words.push(word);
                owners.push(vec![owner]);
            }
        }
    };
    for (i, p) in PATTERNS.iter().enumerate() {
        for key in p.keys {
            add(key, i);
        }
    }
    for (s, keys) in SIGNAL_KEYS.iter().enumerate() {
        for key in *keys {
            add(key, PATTERNS.len() + s);
        }
    }
    // The key words are constants; the test below builds them.
    #[allow(clippy::expect_used)]
    let keys = AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .build(&words)
        .expect("audit key words build");
    Compiled {
        keys,
        owners,
        always: (0..PATTERNS.len())
            .filter(|&i| PATTERNS[i].keys.is_empty())
            .collect(),
        each: PATTERNS.iter().map(|p| one(p.regex)).collect(),
        secret_source: one(SECRET_SOURCE),
        network_send: one(NETWORK_SEND),
        network_use: one(NETWORK_USE),
        download_to_file: one(DOWNLOAD_TO_FILE),
        make_executable: one(MAKE_EXECUTABLE),
        example_marker: one(EXAMPLE_MARKER),
        security_topic: one(SECURITY_TOPIC),
        negation: one(NEGATION),
        os_prompt: one(OS_PROMPT),
        installer_words: one(INSTALLER_WORDS),
        comment_instruction: one(COMMENT_INSTRUCTION),
        html_comment: one(r"(?s)<!--(.*?)-->"),
        network_declared: one(NETWORK_DECLARED),
        offline_claim: one(OFFLINE_CLAIM),
    }
});

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of the labelled set that a pattern matches holds one of
    /// its key words: the prefilter never hides a match.
    #[test]
    fn a_pattern_matches_only_text_holding_one_of_its_key_words() {
        let c = &*COMPILED;
        let mut lines: Vec<Vec<u8>> = Vec::new();
        let mut stack =
            vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/labelled/skills")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if let Ok(bytes) = std::fs::read(&path) {
                    lines.extend(bytes.split(|b| *b == b'\n').map(<[u8]>::to_vec));
                }
            }
        }
        assert!(lines.len() > 200, "the labelled set was read");
        let mut checked = 0;
        for line in &lines {
            let lower = line.to_ascii_lowercase();
            for (p, regex) in PATTERNS.iter().zip(&c.each) {
                if p.keys.is_empty() || !regex.is_match(line) {
                    continue;
                }
                checked += 1;
                assert!(
                    p.keys.iter().any(|k| memchr::memmem::find(
                        &lower,
                        k.to_ascii_lowercase().as_bytes()
                    )
                    .is_some()),
                    "{} matches {:?} but holds none of its key words",
                    p.code,
                    String::from_utf8_lossy(line)
                );
            }
        }
        assert!(checked > 40, "{checked}");
    }

    #[test]
    fn every_pattern_compiles_and_names_a_rule() {
        let c = &*COMPILED;
        assert_eq!(c.each.len(), PATTERNS.len());
        for p in PATTERNS {
            assert!(crate::rules::rule_of(p.code).is_some(), "{}", p.code);
        }
    }
}
