//! The gateway's transport: `skilldeck serve --upstream ...` connects, as
//! an MCP client (rmcp's client side), to other servers speaking the
//! Skills extension, takes each one's catalog from `skills/list`, and
//! reads a skill's files with `resources/read` when the host asks
//! ([`skilldeck_host::remote::Upstream`]). Every rule (names, limits,
//! verification, the cache) is the host's ([`skilldeck_host::remote`]).
//!
//! An upstream is written `[NAME=]URL` (`http://` or `https://`: streamable
//! HTTP) or `[NAME=]stdio:COMMAND ARGS...` (a process spawned with that
//! command line, split like a shell does, speaking MCP on its stdin and
//! stdout). Without a `NAME`, it is made from the URL's host or the
//! command's program name.
//!
//! The gateway follows its upstreams: when one says its resource list
//! changed (`notifications/resources/list_changed`, pushed on a session
//! opened with `initialize`, or on a `subscriptions/listen` stream on
//! 2026-07-28), that upstream is listed again, the catalog rebuilt and
//! re-served, and the gateway's own clients told their lists changed.
//! What is served from each upstream (names, URIs, fingerprints, every
//! file's digest and size, what was refused) is written to
//! `CACHE/.upstreams/NAME.json` after each listing
//! ([`skilldeck_host::remote::RemoteSkills::write_record`]).

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ReadResourceRequestParams, ResourceContents, ServerNotification, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use skilldeck_host::remote::{FINGERPRINT_META_KEY, Listing, RemoteSkills, Upstream, UpstreamName};
use tokio::sync::Notify;

use crate::error::Error;

/// How an upstream is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A streamable HTTP endpoint.
    Http(String),
    /// A command line whose process speaks MCP on stdio.
    Stdio(Vec<String>),
}

/// One `--upstream`: its name and how to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamSpec {
    /// The namespace of its skills.
    pub name: UpstreamName,
    /// Where it is.
    pub endpoint: Endpoint,
}

/// The prefix of a stdio upstream.
pub const STDIO_PREFIX: &str = "stdio:";

impl UpstreamSpec {
    /// Parses `[NAME=]URL` or `[NAME=]stdio:COMMAND ARGS...`.
    pub fn parse(text: &str) -> Result<UpstreamSpec, String> {
        let (name, rest) = match text.split_once('=') {
            Some((name, rest)) if !name.contains([':', '/', ' ']) && !name.is_empty() => {
                (Some(UpstreamName::new(name)?), rest)
            }
            _ => (None, text),
        };
        let (endpoint, hint) = if let Some(command) = rest.strip_prefix(STDIO_PREFIX) {
            let argv = shlex::split(command)
                .filter(|argv| !argv.is_empty())
                .ok_or_else(|| {
                    format!(
                        "'{text}': give the command after 'stdio:', quoted like a shell \
                         command line (stdio:skilldeck serve --root DIR)"
                    )
                })?;
            let program = std::path::Path::new(&argv[0])
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            (Endpoint::Stdio(argv), program)
        } else if rest.starts_with("http://") || rest.starts_with("https://") {
            let host = rest
                .split_once("://")
                .map(|(_, after)| after.split(['/', '?', '#']).next().unwrap_or(""))
                .unwrap_or("");
            let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
            (Endpoint::Http(rest.to_owned()), host.to_owned())
        } else {
            return Err(format!(
                "'{text}' is not an upstream: give an http(s):// MCP endpoint URL or \
                 stdio:COMMAND, optionally named (docs=https://example.com/mcp)"
            ));
        };
        Ok(UpstreamSpec {
            name: name.unwrap_or_else(|| UpstreamName::from_hint(&hint)),
            endpoint,
        })
    }
}

/// The client side of an upstream session: it wakes the gateway when the
/// upstream's resource list changed.
#[derive(Debug, Clone, Default)]
pub struct Listener {
    changed: Arc<Notify>,
}

impl ClientHandler for Listener {
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        // Several before the gateway wakes are one re-listing.
        self.changed.notify_one();
    }
}

/// A connected upstream: its client session, and the runtime its reads
/// run on (the host calls [`Upstream::read`] from a blocking thread).
pub struct Connected {
    name: UpstreamName,
    service: RunningService<RoleClient, Listener>,
    changed: Arc<Notify>,
    runtime: tokio::runtime::Handle,
    /// The spawned process of a stdio upstream (killed when this goes).
    _child: Option<tokio::process::Child>,
}

impl std::fmt::Debug for Connected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connected")
            .field("name", &self.name)
            .finish()
    }
}

fn upstream_error(name: &UpstreamName, what: impl std::fmt::Display) -> Error {
    Error::Upstream(format!("upstream '{name}': {what}"))
}

/// Connects to `spec` (initializes the MCP session).
pub async fn connect(spec: &UpstreamSpec) -> Result<Connected, Error> {
    let name = &spec.name;
    let listener = Listener::default();
    let changed = Arc::clone(&listener.changed);
    let connected = match &spec.endpoint {
        Endpoint::Http(url) => {
            let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.as_str());
            let service = listener.serve(transport).await.map_err(|e| {
                upstream_error(
                    name,
                    format!("cannot connect to {url}: {e}; check the URL and that the server runs"),
                )
            })?;
            Connected {
                name: name.clone(),
                service,
                changed,
                runtime: tokio::runtime::Handle::current(),
                _child: None,
            }
        }
        Endpoint::Stdio(argv) => {
            let mut child = tokio::process::Command::new(&argv[0])
                .args(&argv[1..])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::inherit())
                .kill_on_drop(true)
                .spawn()
                .map_err(|e| upstream_error(name, format!("cannot start `{}`: {e}", argv[0])))?;
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err(upstream_error(name, "its stdio could not be opened"));
            };
            let service = listener.serve((stdout, stdin)).await.map_err(|e| {
                upstream_error(
                    name,
                    format!("`{}` did not start an MCP session: {e}", argv.join(" ")),
                )
            })?;
            Connected {
                name: name.clone(),
                service,
                changed,
                runtime: tokio::runtime::Handle::current(),
                _child: Some(child),
            }
        }
    };
    connected.listen_for_changes();
    Ok(connected)
}

impl Connected {
    /// On a 2026-07-28 session the upstream sends list changes only on a
    /// `subscriptions/listen` stream: one is opened, and its
    /// `resources/list_changed` wake the gateway as the pushed ones do. An
    /// upstream of an earlier protocol refuses it; its pushed
    /// notifications reach [`Listener`].
    fn listen_for_changes(&self) {
        let peer = self.service.peer().clone();
        let changed = Arc::clone(&self.changed);
        let name = self.name.clone();
        tokio::spawn(async move {
            let filter = SubscriptionFilter::builder()
                .resources_list_changed()
                .build();
            match peer.listen(filter).await {
                Ok(mut subscription) => {
                    while let Ok(Some(note)) = subscription.next().await {
                        if matches!(note, ServerNotification::ResourceListChangedNotification(_)) {
                            changed.notify_one();
                        }
                    }
                }
                Err(e) => {
                    tracing::debug!(upstream = %name, error = %e, "no subscriptions/listen: following pushed list_changed");
                }
            }
        });
    }

    /// Its catalog: every `skills/list` page, as [`Listing`]s (nothing
    /// else is read).
    pub async fn list(&self) -> Result<Vec<Listing>, Error> {
        let skills = self.service.peer().list_all_skills().await.map_err(|e| {
            upstream_error(
                &self.name,
                format!("skills/list failed: {e}; does it serve the Skills extension?"),
            )
        })?;
        Ok(skills.into_iter().map(listing).collect())
    }
}

/// A protocol entry as the host's [`Listing`].
fn listing(skill: rmcp::model::Skill) -> Listing {
    let mut frontmatter = skill.frontmatter.extra.clone();
    frontmatter.insert(
        "name".into(),
        serde_json::Value::String(skill.frontmatter.name.clone()),
    );
    frontmatter.insert(
        "description".into(),
        serde_json::Value::String(skill.frontmatter.description.clone()),
    );
    let files = match skill.resources {
        rmcp::model::SkillResources::Files(files) => files
            .into_iter()
            .map(|f| (f.uri, f.digest, f.size))
            .collect(),
        // A skill without a manifest cannot be verified: listed with none,
        // it is refused for lacking SKILL.md.
        _ => Vec::new(),
    };
    let fingerprint = skill
        .meta
        .as_ref()
        .and_then(|m| m.get(FINGERPRINT_META_KEY))
        .and_then(|v| v.as_str())
        .map(str::to_owned);
    Listing {
        uri: skill.uri,
        frontmatter,
        files,
        fingerprint,
    }
}

impl Upstream for Connected {
    fn name(&self) -> &UpstreamName {
        &self.name
    }

    fn read(&self, uri: &str, limit: u64) -> Result<Vec<u8>, String> {
        let peer = self.service.peer().clone();
        let params = ReadResourceRequestParams::new(uri);
        let result = self
            .runtime
            .block_on(async move { peer.read_resource(params).await })
            .map_err(|e| format!("resources/read failed: {e}"))?;
        let mut contents = result.contents.into_iter();
        let (Some(content), None) = (contents.next(), contents.next()) else {
            return Err("resources/read did not answer exactly one content".into());
        };
        let bytes = match content {
            ResourceContents::TextResourceContents { text, .. } => text.into_bytes(),
            ResourceContents::BlobResourceContents { blob, .. } => {
                use base64::Engine as _;
                base64::engine::general_purpose::STANDARD
                    .decode(blob.as_bytes())
                    .map_err(|e| format!("its blob is not base64: {e}"))?
            }
            _ => return Err("resources/read answered a content of an unknown kind".into()),
        };
        // rmcp hands a response over whole: more than `limit` bytes is
        // the listed-size mismatch the host names.
        let _ = limit;
        Ok(bytes)
    }
}

/// What the gateway serves from its upstreams: each one's session and last
/// listing, from which the host's [`RemoteSkills`] is rebuilt when one
/// changes.
struct Followed {
    cache: std::path::PathBuf,
    validation: skilldeck::ValidationOptions,
    upstreams: Mutex<Vec<(Arc<Connected>, Vec<Listing>)>>,
}

impl Followed {
    /// The host's remote skills from the listings now; each upstream's
    /// record written, refusals logged.
    fn remote(&self) -> RemoteSkills {
        let upstreams = self
            .upstreams
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let remote = RemoteSkills::new(
            self.cache.clone(),
            self.validation.clone(),
            upstreams
                .iter()
                .map(|(c, l)| (Arc::clone(c) as Arc<dyn Upstream>, l.clone()))
                .collect(),
        );
        for refused in remote.refused() {
            tracing::warn!(error = %refused, "upstream skill refused");
        }
        for (c, _) in upstreams.iter() {
            if let Err(e) = remote.write_record(&c.name) {
                tracing::warn!(upstream = %c.name, error = %e, "the upstream record could not be written");
            }
        }
        remote
    }
}

/// Serves `remote` and re-serves the catalog (the target reloads; its
/// clients hear about a change).
async fn serve_remote<T: skilldeck_source::Target + 'static>(
    engine: &Arc<T>,
    remote: RemoteSkills,
) -> Result<bool, Error> {
    engine.host().set_remote(remote);
    let engine = Arc::clone(engine);
    tokio::task::spawn_blocking(move || engine.reload())
        .await
        .map_err(|e| Error::Upstream(format!("merging the upstream skills: {e}")))?
        .map_err(|e| Error::Upstream(format!("merging the upstream skills: {e}")))
}

/// Waits for upstream `index` to say its list changed, lists it again and,
/// when the listing differs, re-serves the catalog; until the session
/// ends.
async fn follow<T: skilldeck_source::Target + 'static>(
    engine: Arc<T>,
    followed: Arc<Followed>,
    index: usize,
) {
    let connected = {
        let upstreams = followed
            .upstreams
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Arc::clone(&upstreams[index].0)
    };
    loop {
        connected.changed.notified().await;
        if connected.service.is_closed() {
            tracing::warn!(upstream = %connected.name, "the upstream's session ended; its skills stay as last listed");
            return;
        }
        let listings = match connected.list().await {
            Ok(l) => l,
            Err(e) => {
                // The last listing stays served (its skills still verify
                // against the digests listed before).
                tracing::warn!(upstream = %connected.name, error = %e, "the upstream said its list changed but could not be listed again; serving its last listing");
                continue;
            }
        };
        {
            let mut upstreams = followed
                .upstreams
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if upstreams[index].1 == listings {
                tracing::debug!(upstream = %connected.name, "upstream listed again: unchanged");
                continue;
            }
            upstreams[index].1 = listings;
        }
        let remote = {
            let followed = Arc::clone(&followed);
            match tokio::task::spawn_blocking(move || followed.remote()).await {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!(error = %e, "rebuilding the upstream catalog failed");
                    continue;
                }
            }
        };
        match serve_remote(&engine, remote).await {
            Ok(changed) => {
                tracing::info!(upstream = %connected.name, catalog_changed = changed, "upstream listed again and re-served")
            }
            Err(e) => {
                tracing::warn!(upstream = %connected.name, error = %e, "re-serving the upstream failed")
            }
        }
    }
}

/// Connects to every upstream, lists each one's skills and hands them to
/// the target's host (cached under `cache`); the target (the server's
/// engine) reloads, so clients see one merged catalog. Listings that do
/// not verify are logged with their upstream and reason, and the others
/// are served. From then on each upstream is followed: a list change it
/// announces is listed again and re-served (`follow`).
pub async fn attach<T: skilldeck_source::Target + 'static>(
    engine: &Arc<T>,
    specs: &[UpstreamSpec],
    cache: std::path::PathBuf,
) -> Result<(), Error> {
    let mut seen = std::collections::HashSet::new();
    for spec in specs {
        if !seen.insert(spec.name.clone()) {
            return Err(Error::Upstream(format!(
                "two upstreams are named '{}'; name them apart (--upstream NAME=URL)",
                spec.name
            )));
        }
    }
    let mut upstreams: Vec<(Arc<Connected>, Vec<Listing>)> = Vec::new();
    for spec in specs {
        let connected = connect(spec).await?;
        let listings = connected.list().await?;
        tracing::info!(upstream = %spec.name, skills = listings.len(), "upstream listed");
        upstreams.push((Arc::new(connected), listings));
    }
    let count = upstreams.len();
    let followed = Arc::new(Followed {
        cache,
        validation: engine.host().options().discovery.validation.clone(),
        upstreams: Mutex::new(upstreams),
    });
    let remote = {
        let followed = Arc::clone(&followed);
        tokio::task::spawn_blocking(move || followed.remote())
            .await
            .map_err(|e| Error::Upstream(format!("listing the upstream skills: {e}")))?
    };
    serve_remote(engine, remote).await?;
    for index in 0..count {
        tokio::spawn(follow(Arc::clone(engine), Arc::clone(&followed), index));
    }
    Ok(())
}
