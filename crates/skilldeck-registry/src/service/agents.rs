//! Agents and their assignments.

use crate::error::RegistryError;
use crate::names::LATEST;
use crate::names::{AgentId, SkillRef};
use crate::service::config::{
    MAX_AGENT_CAPABILITIES, MAX_AGENT_PATTERNS, MAX_GRANT_ENV, MAX_LISTED_VERSIONS, MAX_TEXT_LEN,
};
use crate::service::cursor;
use crate::service::fresh::Scope as CacheScope;
use crate::service::principal::Principal;
use crate::service::publish::{parse_capabilities, parse_version};
use crate::service::registry::Registry;
use crate::service::resolve::{PENDING_LABEL, PENDING_REVIEW};
use crate::storage::db::now;
use crate::storage::{agents, labels, skills, versions};
use crate::wire::{
    ASSIGNMENT_ACTIVE, ASSIGNMENT_EXCLUDED, ASSIGNMENT_PENDING, Agent, AgentSpec, Assignment,
    AssignmentView, Page, ReviewState,
};

fn invalid(detail: impl Into<String>) -> RegistryError {
    RegistryError::bad_request("registry-invalid-agent", detail)
}

/// Checks an agent's settings (lengths, capability words, patterns).
fn check_spec(spec: &mut AgentSpec) -> Result<(), RegistryError> {
    if spec.name.trim().is_empty() || spec.name.len() > MAX_TEXT_LEN {
        return Err(invalid("name must be 1 to 1024 bytes"));
    }
    RegistryError::check_text("name", &spec.name)?;
    if skilldeck::spec::lookalike_key(&spec.name).is_empty() {
        return Err(invalid("name must hold a visible character"));
    }
    // Stored as the core normalises names (trimmed, NFKC), so names that
    // differ only in Unicode form are stored as the same bytes. A display
    // name is not an identity (two agents may share one; the UI shows the
    // ASCII id beside it), so it is normalised, not made unique.
    spec.name = skilldeck::spec::normalize_name(&spec.name);
    if spec.capabilities.len() > MAX_AGENT_CAPABILITIES {
        return Err(invalid(format!(
            "at most {MAX_AGENT_CAPABILITIES} capabilities"
        )));
    }
    spec.capabilities = parse_capabilities(&spec.capabilities.join(" ")).map_err(invalid)?;
    if spec.allowed_patterns.len() + spec.denied_patterns.len() > MAX_AGENT_PATTERNS {
        return Err(invalid(format!("at most {MAX_AGENT_PATTERNS} patterns")));
    }
    for p in spec.allowed_patterns.iter().chain(&spec.denied_patterns) {
        if p.is_empty() || p.len() > MAX_TEXT_LEN || skilldeck::spec::has_control(p, true) {
            return Err(invalid(format!(
                "pattern '{}' is empty, too long or has a control character",
                p.escape_debug()
            )));
        }
    }
    Ok(())
}

fn check_env_name(name: &str) -> bool {
    name.len() <= MAX_TEXT_LEN && skilldeck::deck::is_env_name(name)
}

impl Registry {
    /// Creates an agent (admin); an existing id is 409.
    pub async fn create_agent(
        &self,
        p: &Principal,
        mut spec: AgentSpec,
    ) -> Result<Agent, RegistryError> {
        p.require_admin()?;
        check_spec(&mut spec)?;
        let mut w = self.begin_write().await?;
        if agents::exists_in(&mut w, &spec.id).await? {
            return Err(RegistryError::conflict(
                "registry-agent-exists",
                format!("agent '{}' already exists", spec.id),
            ));
        }
        let at = now();
        agents::insert(&mut w, &spec, &at).await?;
        Registry::audit_in(
            &mut w,
            p,
            "agent.create",
            &format!("agent:{}", spec.id),
            serde_json::to_value(&spec)?,
        )
        .await?;
        self.commit_scoped(w, &[CacheScope::Agent(spec.id.as_str().to_owned())])
            .await?;
        Ok(Agent {
            spec,
            created_at: at.clone(),
            updated_at: at,
        })
    }

    /// Replaces an agent's settings (admin); the id in the body must match.
    pub async fn update_agent(
        &self,
        p: &Principal,
        id: &AgentId,
        mut spec: AgentSpec,
    ) -> Result<Agent, RegistryError> {
        p.require_admin()?;
        if spec.id != *id {
            return Err(invalid(format!(
                "the body's id '{}' is not '{id}'",
                spec.id
            )));
        }
        check_spec(&mut spec)?;
        let mut w = self.begin_write().await?;
        if !agents::update(&mut w, id, &spec, &now()).await? {
            return Err(RegistryError::NotFound(format!("agent {id}")));
        }
        Registry::audit_in(
            &mut w,
            p,
            "agent.update",
            &format!("agent:{id}"),
            serde_json::to_value(&spec)?,
        )
        .await?;
        self.commit_scoped(w, &[CacheScope::Agent(id.as_str().to_owned())])
            .await?;
        self.agent(p, id).await
    }

    /// Deletes an agent and its assignments, and revokes every token with
    /// a scope for it (admin).
    pub async fn delete_agent(&self, p: &Principal, id: &AgentId) -> Result<(), RegistryError> {
        p.require_admin()?;
        let mut w = self.begin_write().await?;
        if !agents::delete(&mut w, id).await? {
            return Err(RegistryError::NotFound(format!("agent {id}")));
        }
        let revoked = Registry::revoke_agent_tokens_in(&mut w, id).await?;
        Registry::audit_in(
            &mut w,
            p,
            "agent.delete",
            &format!("agent:{id}"),
            serde_json::json!({"tokens_revoked": revoked}),
        )
        .await?;
        // Its tokens are revoked in the same write: every replica refuses
        // them, and its cached resolution, within the consistency bound.
        self.commit_scoped(
            w,
            &[
                CacheScope::Agent(id.as_str().to_owned()),
                CacheScope::Tokens,
            ],
        )
        .await?;
        Ok(())
    }

    /// One agent (admin or that agent's token).
    pub async fn agent(&self, p: &Principal, id: &AgentId) -> Result<Agent, RegistryError> {
        p.require_agent(id)?;
        agents::get(&self.inner.db, id)
            .await?
            .ok_or_else(|| RegistryError::NotFound(format!("agent {id}")))
    }

    /// Agents by id (admin).
    pub async fn list_agents(
        &self,
        p: &Principal,
        cursor_text: Option<&str>,
        limit: Option<u32>,
    ) -> Result<Page<Agent>, RegistryError> {
        p.require_admin()?;
        let limits = &self.inner.limits;
        let limit = cursor::page_limit(limit, limits.default_page_limit, limits.max_page_limit)?;
        let after = cursor_text
            .map(cursor::decode)
            .transpose()?
            .unwrap_or_default();
        let mut items = agents::page(&self.inner.db, &after, i64::from(limit) + 1).await?;
        let next_cursor = if items.len() > limit as usize {
            items.truncate(limit as usize);
            items.last().map(|a| cursor::encode(a.spec.id.as_str()))
        } else {
            None
        };
        Ok(Page { items, next_cursor })
    }

    /// Assigns a skill to an agent, or replaces the assignment (admin).
    pub async fn assign(
        &self,
        p: &Principal,
        id: &AgentId,
        skill: &SkillRef,
        mut assignment: Assignment,
    ) -> Result<AssignmentView, RegistryError> {
        p.require_admin()?;
        if assignment.version.is_some() && assignment.label.is_some() {
            return Err(RegistryError::bad_request(
                "registry-assignment-conflict",
                "give a version or a label, not both",
            ));
        }
        if let Some(v) = &assignment.version {
            assignment.version = Some(parse_version(v)?.to_string());
        }
        if assignment.grants.env.len() > MAX_GRANT_ENV {
            return Err(invalid(format!(
                "at most {MAX_GRANT_ENV} environment names"
            )));
        }
        if let Some(bad) = assignment.grants.env.iter().find(|n| !check_env_name(n)) {
            return Err(invalid(format!(
                "'{}' is not an environment variable name",
                bad.escape_debug()
            )));
        }
        // Defence in depth: hosts refuse these anyway (the rule is the
        // host's, `[exec] registry-env`), but an admin should learn at once
        // that such a grant can never work.
        if let Some(bad) = assignment
            .grants
            .env
            .iter()
            .find(|n| skilldeck::deck::is_reserved_env_name(n))
        {
            return Err(RegistryError::bad_request(
                "registry-reserved-env",
                format!(
                    "'{bad}' is reserved (the sandbox sets it, or it steers a loader or an interpreter, like PATH and LD_*); no host passes it from a registry grant"
                ),
            ));
        }
        self.agent(p, id).await?;
        if skills::created_at(&self.inner.db, skill).await?.is_none() {
            return Err(RegistryError::NotFound(format!("skill {skill}")));
        }
        self.check_target(skill, &assignment).await?;
        let mut w = self.begin_write().await?;
        let at = now();
        agents::assign(&mut w, id, skill, &assignment, &at).await?;
        Registry::audit_in(
            &mut w,
            p,
            "assign",
            &format!("agent:{id} {skill}"),
            serde_json::to_value(&assignment)?,
        )
        .await?;
        self.commit_scoped(w, &[CacheScope::Agent(id.as_str().to_owned())])
            .await?;
        let view = AssignmentView {
            agent: id.clone(),
            namespace: skill.namespace().clone(),
            name: skill.name().to_owned(),
            assignment,
            updated_at: at,
            status: String::new(),
            status_detail: None,
        };
        self.with_status(id, vec![view])
            .await?
            .pop()
            .ok_or_else(|| RegistryError::Internal("an assignment view went missing".into()))
    }

    /// Refuses an assignment that could never serve anything, so a typo
    /// never silently drops a skill from an agent: a version that does
    /// not exist (`registry-unknown-version`), one that is yanked,
    /// blocked or rejected (`registry-version-unavailable`; one waiting
    /// for review is accepted: it is served once approved), a label that
    /// points to no version (`registry-unknown-label`) unless
    /// `allow_pending` says it will be set later. Each detail says what
    /// exists and what to do. A disabled assignment serves nothing
    /// whatever it names (it only keeps the skill out, even of
    /// auto-discovery), so it is not checked; enabling it is.
    async fn check_target(
        &self,
        skill: &SkillRef,
        assignment: &Assignment,
    ) -> Result<(), RegistryError> {
        if !assignment.enabled {
            return Ok(());
        }
        let db = &self.inner.db;
        let known = labels::of_skill(db, skill).await?;
        let labels_text = if known.is_empty() {
            "it has no labels".to_owned()
        } else {
            let list: Vec<String> = known.iter().map(|(l, v)| format!("{l} -> {v}")).collect();
            format!("its labels: {}", list.join(", "))
        };
        if let Some(version) = &assignment.version {
            if assignment.allow_pending {
                return Err(RegistryError::bad_request(
                    "registry-assignment-conflict",
                    "allow_pending applies to a label that will be set later; a pinned version must exist (publish it first, or follow a label)",
                ));
            }
            let versions_text = || async {
                let mut rows: Vec<semver::Version> = versions::of_skill(db, skill)
                    .await?
                    .into_iter()
                    .filter(|(v, _)| {
                        v.yanked.is_none()
                            && v.blocked.is_none()
                            && v.review != ReviewState::Rejected
                    })
                    .filter_map(|(v, _)| semver::Version::parse(&v.version).ok())
                    .collect();
                rows.sort_by(|a, b| b.cmp(a));
                let shown: Vec<String> = rows
                    .iter()
                    .take(MAX_LISTED_VERSIONS)
                    .map(ToString::to_string)
                    .collect();
                Ok::<String, RegistryError>(if shown.is_empty() {
                    "it has no version an agent can use".to_owned()
                } else {
                    format!(
                        "versions an agent can use: {}{}",
                        shown.join(", "),
                        if rows.len() > shown.len() {
                            ", ..."
                        } else {
                            ""
                        }
                    )
                })
            };
            match versions::state_of(db, skill, version).await? {
                None => {
                    return Err(RegistryError::conflict(
                        "registry-unknown-version",
                        format!(
                            "{skill} has no version {version} ({}; {labels_text}); pin one of those, follow a label, or publish {version} first. Nothing was changed",
                            versions_text().await?
                        ),
                    ));
                }
                Some(state) => {
                    // Waiting for review is accepted: it is served once
                    // approved (and shown pending until then).
                    if let Some((reason, detail)) = state.unavailable(version)
                        && reason != PENDING_REVIEW
                    {
                        return Err(RegistryError::conflict(
                            "registry-version-unavailable",
                            format!(
                                "{skill}@{version} cannot be served ({reason}: {detail}); pin another version ({}) or follow a label. Nothing was changed",
                                versions_text().await?
                            ),
                        ));
                    }
                }
            }
            return Ok(());
        }
        let label = assignment
            .label
            .as_ref()
            .map(|l| l.as_str())
            .unwrap_or(LATEST);
        if known.contains_key(label) || assignment.allow_pending {
            return Ok(());
        }
        let how = if label == LATEST {
            "publish a release (latest follows the highest one)".to_owned()
        } else {
            format!(
                "set it first (skilldeck registry label set {skill} {label} VERSION), or pass allow_pending (--allow-pending) to store the assignment as pending until it is set"
            )
        };
        Err(RegistryError::conflict(
            "registry-unknown-label",
            format!("{skill} has no label '{label}' ({labels_text}); {how}. Nothing was changed"),
        ))
    }

    /// `views` with what agent `id`'s resolution made of each: `active`,
    /// `pending` or `excluded` (with the reason).
    pub(crate) async fn with_status(
        &self,
        id: &AgentId,
        mut views: Vec<AssignmentView>,
    ) -> Result<Vec<AssignmentView>, RegistryError> {
        let resolved = self.resolved_cached(id).await?;
        for view in &mut views {
            let same = |ns: &crate::names::Namespace, name: &str| {
                *ns == view.namespace && name == view.name
            };
            if resolved
                .resolved
                .skills
                .iter()
                .any(|s| same(&s.namespace, &s.name))
            {
                view.status = ASSIGNMENT_ACTIVE.to_owned();
                view.status_detail = None;
                continue;
            }
            let found = resolved
                .resolved
                .excluded
                .iter()
                .find(|e| same(&e.namespace, &e.name));
            let (status, detail) = match found {
                Some(e) if matches!(e.reason.as_str(), PENDING_LABEL | PENDING_REVIEW) => {
                    (ASSIGNMENT_PENDING, format!("{}: {}", e.reason, e.detail))
                }
                Some(e) => (ASSIGNMENT_EXCLUDED, format!("{}: {}", e.reason, e.detail)),
                None => (
                    ASSIGNMENT_EXCLUDED,
                    "not in the agent's resolution".to_owned(),
                ),
            };
            view.status = status.to_owned();
            view.status_detail = Some(detail);
        }
        Ok(views)
    }

    /// Removes an assignment (admin); 404 when there is none.
    pub async fn unassign(
        &self,
        p: &Principal,
        id: &AgentId,
        skill: &SkillRef,
    ) -> Result<(), RegistryError> {
        p.require_admin()?;
        let mut w = self.begin_write().await?;
        if !agents::unassign(&mut w, id, skill).await? {
            return Err(RegistryError::NotFound(format!(
                "assignment of {skill} to agent {id}"
            )));
        }
        Registry::audit_in(
            &mut w,
            p,
            "unassign",
            &format!("agent:{id} {skill}"),
            serde_json::json!({}),
        )
        .await?;
        self.commit_scoped(w, &[CacheScope::Agent(id.as_str().to_owned())])
            .await?;
        Ok(())
    }

    /// An agent's assignments, by namespace/name (admin or that agent).
    pub async fn assignments(
        &self,
        p: &Principal,
        id: &AgentId,
    ) -> Result<Vec<AssignmentView>, RegistryError> {
        self.agent(p, id).await?;
        let views = agents::assignments(&self.inner.db, id).await?;
        self.with_status(id, views).await
    }
}
