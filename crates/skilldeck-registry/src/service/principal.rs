//! [`Principal`]: who is calling, and the [`Scope`]s of its token; its
//! [`PrincipalKind`], which the request log line and `/metrics` name
//! (never the token): authentication reports it ([`report_caller`]) into
//! the slot the HTTP layer opened for the request ([`with_caller_slot`]).

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::RegistryError;
use crate::names::{AgentId, Namespace};

/// What a token may do.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Everything.
    Admin,
    /// Publish into one namespace (and read skills).
    Publish(Namespace),
    /// Read as one agent: its record, catalog, lock and the versions of
    /// its resolved set.
    Agent(AgentId),
    /// Review one namespace's pending versions (approve or reject; read
    /// them and their skills).
    Review(Namespace),
    /// Read one namespace: list its skills, read their versions and
    /// download them (a developer's install token). Nothing else: no
    /// publish, assign, label, yank or test-run, and another namespace's
    /// skills answer as missing ones.
    Read(Namespace),
}

impl Scope {
    /// Parses `admin`, `publish:<namespace>`, `review:<namespace>`,
    /// `read:<namespace>` or `agent:<id>`.
    pub fn parse(text: &str) -> Result<Scope, RegistryError> {
        if text == "admin" {
            return Ok(Scope::Admin);
        }
        if let Some(ns) = text.strip_prefix("publish:") {
            return Ok(Scope::Publish(Namespace::new(ns)?));
        }
        if let Some(id) = text.strip_prefix("agent:") {
            return Ok(Scope::Agent(AgentId::new(id)?));
        }
        if let Some(ns) = text.strip_prefix("review:") {
            return Ok(Scope::Review(Namespace::new(ns)?));
        }
        if let Some(ns) = text.strip_prefix("read:") {
            return Ok(Scope::Read(Namespace::new(ns)?));
        }
        Err(RegistryError::bad_request(
            "registry-invalid-scope",
            format!(
                "scope '{text}' is not admin, publish:<namespace>, review:<namespace>, read:<namespace> or agent:<id>"
            ),
        ))
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Admin => f.write_str("admin"),
            Scope::Publish(ns) => write!(f, "publish:{ns}"),
            Scope::Agent(id) => write!(f, "agent:{id}"),
            Scope::Review(ns) => write!(f, "review:{ns}"),
            Scope::Read(ns) => write!(f, "read:{ns}"),
        }
    }
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The token's id (audit lines name it, never the token).
    pub token_id: String,
    /// The token's name.
    pub name: String,
    /// What it may do.
    pub scopes: Vec<Scope>,
}

impl Principal {
    /// True for an admin token.
    pub fn is_admin(&self) -> bool {
        self.scopes.contains(&Scope::Admin)
    }

    /// Admin, or 403.
    pub fn require_admin(&self) -> Result<(), RegistryError> {
        if self.is_admin() {
            Ok(())
        } else {
            Err(RegistryError::Forbidden(
                "this needs an admin token".to_owned(),
            ))
        }
    }

    /// May publish into `ns`.
    pub fn can_publish(&self, ns: &Namespace) -> bool {
        self.scopes
            .iter()
            .any(|s| matches!(s, Scope::Admin) || matches!(s, Scope::Publish(n) if n == ns))
    }

    /// Publish into `ns`, or 403 (checked from the request head, before a
    /// package body is read, and again by the publish itself).
    pub fn require_publish(&self, ns: &Namespace) -> Result<(), RegistryError> {
        if self.can_publish(ns) {
            Ok(())
        } else {
            Err(RegistryError::Forbidden(format!(
                "this token may not publish into namespace '{ns}'"
            )))
        }
    }

    /// May test-run `ns`'s versions in this registry's sandbox (admin, or
    /// `publish:<ns>`: whoever may publish a version may try it).
    pub fn can_test_run(&self, ns: &Namespace) -> bool {
        self.can_publish(ns)
    }

    /// Test-run `ns`, or 403.
    pub fn require_test_run(&self, ns: &Namespace) -> Result<(), RegistryError> {
        if self.can_test_run(ns) {
            Ok(())
        } else {
            Err(RegistryError::Forbidden(format!(
                "this token may not test-run namespace '{ns}' (it needs admin or publish:{ns})"
            )))
        }
    }

    /// May read the skill list and any version (admin, a publisher or a
    /// reviewer).
    pub fn can_read_all(&self) -> bool {
        self.scopes
            .iter()
            .any(|s| matches!(s, Scope::Admin | Scope::Publish(_) | Scope::Review(_)))
    }

    /// May read `ns`'s skills and versions: whoever reads all, or a
    /// `read:<ns>` token. The one rule every read of a namespace's
    /// content asks (list, skill, version, archive, file).
    pub fn can_read_namespace(&self, ns: &Namespace) -> bool {
        self.can_read_all()
            || self
                .scopes
                .iter()
                .any(|s| matches!(s, Scope::Read(n) if n == ns))
    }

    /// The namespaces this principal reads through `read:<ns>` scopes
    /// (empty for one that reads all).
    pub fn read_namespaces(&self) -> Vec<&Namespace> {
        self.scopes
            .iter()
            .filter_map(|s| match s {
                Scope::Read(n) => Some(n),
                _ => None,
            })
            .collect()
    }

    /// May review `ns`'s pending versions (admin or `review:<ns>`).
    pub fn can_review(&self, ns: &Namespace) -> bool {
        self.scopes
            .iter()
            .any(|s| matches!(s, Scope::Admin) || matches!(s, Scope::Review(n) if n == ns))
    }

    /// Review `ns`, or 403.
    pub fn require_review(&self, ns: &Namespace) -> Result<(), RegistryError> {
        if self.can_review(ns) {
            Ok(())
        } else {
            Err(RegistryError::Forbidden(format!(
                "this token may not review namespace '{ns}' (it needs the scope review:{ns})"
            )))
        }
    }

    /// May act as agent `id` (admin, or that agent's token).
    pub fn can_read_agent(&self, id: &AgentId) -> bool {
        self.scopes
            .iter()
            .any(|s| matches!(s, Scope::Admin) || matches!(s, Scope::Agent(a) if a == id))
    }

    /// The agents this principal reads as (agent tokens).
    pub fn agents(&self) -> impl Iterator<Item = &AgentId> {
        self.scopes.iter().filter_map(|s| match s {
            Scope::Agent(a) => Some(a),
            _ => None,
        })
    }

    /// Agent `id`, or 403.
    pub fn require_agent(&self, id: &AgentId) -> Result<(), RegistryError> {
        if self.can_read_agent(id) {
            Ok(())
        } else {
            Err(RegistryError::Forbidden(format!(
                "this token may not read agent '{id}'"
            )))
        }
    }

    /// The audit actor: the token's name and id.
    pub fn actor(&self) -> String {
        format!("{} ({})", self.name, self.token_id)
    }
}

/// What kind of caller made a request, for the request log line and the
/// request span (never the token, its id or its name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PrincipalKind {
    /// No token was checked (none sent, or a route that needs none).
    #[default]
    Anonymous,
    /// A token was sent and refused (unknown, expired, revoked,
    /// malformed, or throttled).
    Invalid,
    /// An admin token.
    Admin,
    /// A token that may publish into a namespace.
    Publisher,
    /// A token that may review a namespace.
    Reviewer,
    /// An agent's token.
    Agent,
    /// A read-only token of a namespace (a developer's install token).
    Reader,
}

impl PrincipalKind {
    /// `anonymous`, `invalid`, `admin`, `publisher`, `reviewer`, `reader`
    /// or `agent`.
    pub fn as_str(self) -> &'static str {
        match self {
            PrincipalKind::Anonymous => "anonymous",
            PrincipalKind::Invalid => "invalid",
            PrincipalKind::Admin => "admin",
            PrincipalKind::Publisher => "publisher",
            PrincipalKind::Reviewer => "reviewer",
            PrincipalKind::Agent => "agent",
            PrincipalKind::Reader => "reader",
        }
    }

    /// The rank of a kind among a token's scopes: a token with several is
    /// named after its most powerful one.
    fn rank(self) -> u8 {
        match self {
            PrincipalKind::Anonymous | PrincipalKind::Invalid => 0,
            PrincipalKind::Agent => 1,
            PrincipalKind::Reader => 2,
            PrincipalKind::Reviewer => 3,
            PrincipalKind::Publisher => 4,
            PrincipalKind::Admin => 5,
        }
    }
}

impl fmt::Display for PrincipalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Principal {
    /// The kind of this caller: admin, else publisher, else reviewer,
    /// else reader, else agent (a token with several scopes is named after its most
    /// powerful one).
    pub fn kind(&self) -> PrincipalKind {
        self.scopes
            .iter()
            .map(|s| match s {
                Scope::Admin => PrincipalKind::Admin,
                Scope::Publish(_) => PrincipalKind::Publisher,
                Scope::Review(_) => PrincipalKind::Reviewer,
                Scope::Agent(_) => PrincipalKind::Agent,
                Scope::Read(_) => PrincipalKind::Reader,
            })
            .max_by_key(|k| k.rank())
            .unwrap_or(PrincipalKind::Invalid)
    }
}

/// Where authentication reports the caller's kind for one request.
#[derive(Debug, Clone, Default)]
pub struct CallerSlot(Arc<Mutex<PrincipalKind>>);

impl CallerSlot {
    /// The kind reported so far (anonymous when none was).
    pub fn kind(&self) -> PrincipalKind {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

tokio::task_local! {
    static CALLER: CallerSlot;
}

/// Runs `work` (one request) with `slot` open: every authentication
/// inside it ([`Registry::authenticate`](crate::Registry::authenticate),
/// [`Registry::still_valid`](crate::Registry::still_valid)), whichever
/// face calls it, reports the caller's kind there.
pub async fn with_caller_slot<F: std::future::Future>(slot: CallerSlot, work: F) -> F::Output {
    CALLER.scope(slot, work).await
}

/// Reports the kind of the caller of the request being served (nothing
/// outside [`with_caller_slot`]).
pub(crate) fn report_caller(kind: PrincipalKind) {
    let _ = CALLER.try_with(|slot| {
        *slot.0.lock().unwrap_or_else(PoisonError::into_inner) = kind;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principal(scopes: &[&str]) -> Principal {
        Principal {
            token_id: "t".into(),
            name: "n".into(),
            scopes: scopes.iter().map(|s| Scope::parse(s).unwrap()).collect(),
        }
    }

    #[test]
    fn a_token_is_named_after_its_most_powerful_scope() {
        assert_eq!(principal(&["admin"]).kind(), PrincipalKind::Admin);
        assert_eq!(
            principal(&["agent:bot", "publish:acme"]).kind(),
            PrincipalKind::Publisher
        );
        assert_eq!(
            principal(&["review:acme", "agent:bot"]).kind(),
            PrincipalKind::Reviewer
        );
        assert_eq!(principal(&["agent:bot"]).kind(), PrincipalKind::Agent);
        assert_eq!(
            principal(&["read:acme", "agent:bot"]).kind(),
            PrincipalKind::Reader
        );
    }
}
