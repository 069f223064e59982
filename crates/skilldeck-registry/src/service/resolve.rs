//! Resolution: an agent's skills (its enabled assignments plus, with
//! `auto_discover`, every skill whose required capabilities it has, minus
//! denied patterns), and what is served from it: the lock and the catalog
//! in the core's formats. One skill per name: explicit assignments first
//! (priority, then `namespace/name`), then auto-discovered skills
//! (`namespace/name`); a name any assignment holds is never taken by an
//! auto-discovered skill of another namespace (`shadowed-by-assignment`),
//! and every clash is reported, naming the winner, in the resolution and
//! the lock. Both are cached per agent, tagged with the database
//! generation they were computed from (`service::fresh`: never served
//! after a write known to touch them, on any replica within the
//! consistency bound), and rebuilt once for every concurrent miss; their
//! ETags are digests of what they hold, and answers carry the generation
//! they are valid at (`Skilldeck-Generation`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, PoisonError};

use bytes::Bytes;

use crate::error::RegistryError;
use crate::names::{AgentId, LATEST, Namespace, SkillRef};
use crate::service::cache::Computed;
use crate::service::config::{MAX_COMPUTE_ATTEMPTS, MAX_PARSED_SKILLS};
use crate::service::glob;
use crate::service::principal::Principal;
use crate::service::registry::Registry;
use crate::service::skills::virtual_skill;
use crate::service::state::{CachedAgent, Rendered};
use crate::storage::{agents, labels, versions};
use crate::wire::{
    AgentLock, AgentSpec, Assignment, Excluded, Grants, LockedSkill, Resolved, ResolvedSkill,
};

/// A catalog preview for the web UI: the text and what the budget did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CatalogPreview {
    /// The catalog text (xml).
    pub text: String,
    /// Its size in tokens (`o200k_base`).
    pub tokens: usize,
    /// The budget in tokens, when there is one.
    pub budget: Option<u32>,
    /// Skills in the text.
    pub included: Vec<String>,
    /// Skills left out, and why.
    pub omitted: Vec<Omitted>,
}

/// A skill a catalog left out.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Omitted {
    /// Its name.
    pub name: String,
    /// Why (`budget`, `disable-model-invocation`, ...).
    pub reason: String,
}

/// A strong ETag of bytes: the quoted hex SHA-256.
pub fn etag_of(bytes: &[u8]) -> String {
    skilldeck::Digest::of(bytes).etag()
}

/// The strong ETag of a stored `sha256:<hex>` digest: the quoted hex
/// ([`skilldeck::Digest::etag`]); a malformed digest is a server fault.
pub fn etag_of_digest(digest: &str) -> Result<String, RegistryError> {
    Ok(crate::service::store::digest_of(digest)?.etag())
}

/// True when an `If-None-Match` header value matches `etag`.
pub fn etag_matches(if_none_match: &str, etag: &str) -> bool {
    if_none_match
        .split(',')
        .map(str::trim)
        .any(|t| t == "*" || t.strip_prefix("W/").unwrap_or(t) == etag)
}

/// A candidate of the resolution.
struct Candidate {
    skill: SkillRef,
    version: String,
    via: String,
    source: &'static str,
    priority: i32,
    grants: Grants,
}

fn excluded(skill: &SkillRef, reason: &str, detail: String) -> Excluded {
    Excluded {
        namespace: skill.namespace().clone(),
        name: skill.name().to_owned(),
        reason: reason.to_owned(),
        detail,
        shadowed_by: None,
    }
}

/// A skill left out because `winner` holds its name.
fn shadowed(skill: &SkillRef, reason: &str, detail: String, winner: &SkillRef) -> Excluded {
    Excluded {
        shadowed_by: Some(winner.to_string()),
        ..excluded(skill, reason, detail)
    }
}

/// Why an excluded skill is a name clash (reported in the lock too).
pub const SHADOWED: &str = "shadowed";
/// An auto-discovered skill whose name an explicit assignment holds.
pub const SHADOWED_BY_ASSIGNMENT: &str = "shadowed-by-assignment";
/// An assignment (made with `allow_pending`) whose label is not set yet.
pub const PENDING_LABEL: &str = "pending-label";
/// An assignment whose pinned version waits for review (defined where the
/// review states are stored).
pub use crate::storage::versions::PENDING_REVIEW;

/// Keeps the first candidate of each skill name, in the order given;
/// every later one is excluded as `shadowed`, naming the winner. Returns
/// the winners.
fn first_of_each_name(
    candidates: Vec<Candidate>,
    what: &str,
    out_excluded: &mut Vec<Excluded>,
) -> Vec<Candidate> {
    let mut seen: HashMap<String, SkillRef> = HashMap::new();
    let mut winners = Vec::new();
    for c in candidates {
        if let Some(winner) = seen.get(c.skill.name()) {
            out_excluded.push(shadowed(
                &c.skill,
                SHADOWED,
                format!(
                    "{winner} serves the name '{}' ({what}: higher priority, then namespace/name order)",
                    c.skill.name()
                ),
                winner,
            ));
            continue;
        }
        seen.insert(c.skill.name().to_owned(), c.skill.clone());
        winners.push(c);
    }
    winners
}

impl Registry {
    /// Resolves agent `id` (admin or that agent).
    pub async fn resolve(&self, p: &Principal, id: &AgentId) -> Result<Resolved, RegistryError> {
        p.require_agent(id)?;
        Ok(self.resolved_cached(id).await?.resolved.clone())
    }

    /// The agent's lock and its ETag (admin or that agent).
    pub async fn lock(
        &self,
        p: &Principal,
        id: &AgentId,
    ) -> Result<(AgentLock, String), RegistryError> {
        p.require_agent(id)?;
        let c = self.resolved_cached(id).await?;
        Ok((c.lock.clone(), c.resolved.generation.clone()))
    }

    /// The agent's lock as served (its JSON, serialised once per cache
    /// entry), its ETag and the database generation it is valid at (admin
    /// or that agent): what the HTTP API sends.
    pub async fn lock_json(
        &self,
        p: &Principal,
        id: &AgentId,
    ) -> Result<(Bytes, String, i64), RegistryError> {
        p.require_agent(id)?;
        let (c, generation) = self.resolved_at(id).await?;
        Ok((
            c.lock_json.clone(),
            c.resolved.generation.clone(),
            generation,
        ))
    }

    /// The resolution of `id` from the cache, or computed (once for every
    /// concurrent miss) and cached.
    pub(crate) async fn resolved_cached(
        &self,
        id: &AgentId,
    ) -> Result<Arc<CachedAgent>, RegistryError> {
        Ok(self.resolved_at(id).await?.0)
    }

    /// The resolution of `id` and the generation it is valid at: every
    /// write up to it that touched the agent is reflected, none after it
    /// that this replica knew of when the computation ended (see
    /// [`Registry::compute_tagged`]).
    pub(crate) async fn resolved_at(
        &self,
        id: &AgentId,
    ) -> Result<(Arc<CachedAgent>, i64), RegistryError> {
        self.ensure_fresh().await?;
        let fresh = &self.inner.fresh;
        // The watermark first, then the floor: every write up to the
        // watermark is in the floor.
        let served = fresh.served();
        let floor = fresh.agent_floor(id.as_str());
        let (tag, c) = self
            .inner
            .agents
            .get_or_compute(id.as_str(), floor, || self.compute_tagged(id))
            .await?;
        Ok((c, tag.max(served)))
    }

    /// [`Registry::compute`] tagged with the database generation read
    /// before it; computed again (up to [`MAX_COMPUTE_ATTEMPTS`] times)
    /// while a write known to touch the agent (its floor) landed during
    /// the computation, so the tag is exact as far as this replica knows:
    /// the answer holds no write after it. A write of another replica
    /// not yet notified only makes the entry invalid sooner (its floor
    /// rises above the tag).
    async fn compute_tagged(&self, id: &AgentId) -> Result<Computed<CachedAgent>, RegistryError> {
        let mut attempt = 1;
        loop {
            let before = self.generation().await?;
            let value = self.compute(id).await?;
            let moved = self.inner.fresh.agent_floor(id.as_str()) > before;
            if !moved || attempt >= MAX_COMPUTE_ATTEMPTS {
                return Ok(Computed {
                    tag: before,
                    at: value.computed_at,
                    value: Arc::new(value),
                });
            }
            attempt += 1;
        }
    }

    async fn compute(&self, id: &AgentId) -> Result<CachedAgent, RegistryError> {
        let db = &self.inner.db;
        let spec: AgentSpec = agents::get(db, id)
            .await?
            .ok_or_else(|| RegistryError::NotFound(format!("agent {id}")))?
            .spec;
        let denied = |s: &SkillRef| {
            let text = s.to_string();
            spec.denied_patterns
                .iter()
                .find(|p| glob::matches(p, &text))
                .cloned()
        };
        let mut out_excluded = Vec::new();
        let mut candidates: Vec<Candidate> = Vec::new();
        let mut decided: BTreeSet<SkillRef> = BTreeSet::new();
        // Every name an explicit assignment holds (enabled or not): an
        // auto-discovered skill of another namespace never takes it.
        let mut reserved: BTreeMap<String, SkillRef> = BTreeMap::new();
        // Explicit assignments.
        for view in agents::assignments(db, id).await? {
            let a: Assignment = view.assignment;
            let skill = SkillRef::new(view.namespace.as_str(), &view.name)
                .map_err(|e| RegistryError::Internal(e.to_string()))?;
            decided.insert(skill.clone());
            reserved
                .entry(skill.name().to_owned())
                .or_insert_with(|| skill.clone());
            if !a.enabled {
                out_excluded.push(excluded(
                    &skill,
                    "disabled",
                    "the assignment is disabled".to_owned(),
                ));
                continue;
            }
            if let Some(p) = denied(&skill) {
                out_excluded.push(excluded(
                    &skill,
                    "denied",
                    format!("matches denied pattern '{p}'"),
                ));
                continue;
            }
            let (version, via) = match (&a.version, &a.label) {
                (Some(v), _) => (Some(v.clone()), "version".to_owned()),
                (None, label) => {
                    let label = label.as_ref().map(|l| l.as_str()).unwrap_or(LATEST);
                    let v = labels::get(db, &skill, label).await?;
                    if v.is_none() {
                        let e = if a.allow_pending {
                            excluded(
                                &skill,
                                PENDING_LABEL,
                                format!(
                                    "label '{label}' is not set yet (assigned with allow_pending); it is served once the label is set (skilldeck registry label set {skill} {label} VERSION)"
                                ),
                            )
                        } else {
                            excluded(
                                &skill,
                                "missing-label",
                                format!("label '{label}' points to no version"),
                            )
                        };
                        out_excluded.push(e);
                        continue;
                    }
                    (v, format!("label:{label}"))
                }
            };
            let Some(version) = version else { continue };
            match versions::state_of(db, &skill, &version).await? {
                None => {
                    out_excluded.push(excluded(
                        &skill,
                        "missing-version",
                        format!("version {version} does not exist"),
                    ));
                    continue;
                }
                Some(state) => {
                    // Blocked, waiting for review, rejected or yanked:
                    // never in an agent's set.
                    if let Some((reason, detail)) = state.unavailable(&version) {
                        out_excluded.push(excluded(&skill, reason, detail));
                        continue;
                    }
                }
            }
            candidates.push(Candidate {
                skill,
                version,
                via,
                source: "assigned",
                priority: a.priority,
                grants: a.grants,
            });
        }
        // Among assignments: higher priority first, then namespace/name.
        candidates.sort_by(|a, b| {
            b.priority
                .cmp(&a.priority)
                .then_with(|| a.skill.cmp(&b.skill))
        });
        let mut winners = first_of_each_name(candidates, "both assigned", &mut out_excluded);
        for w in &winners {
            reserved.insert(w.skill.name().to_owned(), w.skill.clone());
        }
        let mut auto: Vec<Candidate> = Vec::new();
        // Auto-discovery over every skill's latest version.
        if spec.auto_discover {
            let caps: BTreeSet<&str> = spec.capabilities.iter().map(String::as_str).collect();
            for release in versions::latest_releases(db).await? {
                let skill = release.skill;
                if decided.contains(&skill) {
                    continue;
                }
                if !release
                    .capabilities
                    .iter()
                    .all(|c| caps.contains(c.as_str()))
                {
                    continue;
                }
                let text = skill.to_string();
                if !spec.allowed_patterns.is_empty()
                    && !spec
                        .allowed_patterns
                        .iter()
                        .any(|p| glob::matches(p, &text))
                {
                    continue;
                }
                if let Some(p) = denied(&skill) {
                    out_excluded.push(excluded(
                        &skill,
                        "denied",
                        format!("matches denied pattern '{p}'"),
                    ));
                    continue;
                }
                // An explicit assignment always beats an auto-discovered
                // skill of the same name, whatever the priorities: a
                // publisher of another namespace cannot take it over.
                if let Some(holder) = reserved.get(skill.name()) {
                    out_excluded.push(shadowed(
                        &skill,
                        SHADOWED_BY_ASSIGNMENT,
                        format!(
                            "the name '{}' is assigned to this agent as {holder}; an auto-discovered skill never replaces an assignment (assign {skill} explicitly to serve it instead)",
                            skill.name()
                        ),
                        holder,
                    ));
                    continue;
                }
                auto.push(Candidate {
                    skill,
                    version: release.version,
                    via: format!("label:{LATEST}"),
                    source: "auto",
                    priority: 0,
                    grants: Grants::default(),
                });
            }
        }
        // Among auto-discovered skills (all priority 0): namespace/name.
        auto.sort_by(|a, b| a.skill.cmp(&b.skill));
        winners.extend(first_of_each_name(
            auto,
            "both auto-discovered",
            &mut out_excluded,
        ));
        // Served in priority order, then namespace/name.
        winners.sort_by(|a, b| {
            b.priority
                .cmp(&a.priority)
                .then_with(|| a.skill.cmp(&b.skill))
        });
        let mut skills = Vec::new();
        let mut locked = Vec::new();
        for c in winners {
            let facts = versions::lock_facts(db, &c.skill, &c.version)
                .await?
                .ok_or_else(|| {
                    RegistryError::NotFound(format!("version {}@{}", c.skill, c.version))
                })?;
            let fingerprint = facts.fingerprint;
            let files = self.files_of(&c.skill, &c.version).await?;
            locked.push(LockedSkill {
                namespace: c.skill.namespace().clone(),
                name: c.skill.name().to_owned(),
                version: c.version.clone(),
                fingerprint: fingerprint.clone(),
                grants: c.grants.clone(),
                files,
                signer: facts.signer,
                signature: facts.signature,
                verdict: facts.verdict,
                environments: facts.environments,
            });
            skills.push(ResolvedSkill {
                namespace: c.skill.namespace().clone(),
                name: c.skill.name().to_owned(),
                version: c.version,
                fingerprint,
                source: c.source.to_owned(),
                via: c.via,
                priority: c.priority,
                grants: c.grants,
            });
        }
        out_excluded.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        let lock = AgentLock {
            agent: id.clone(),
            max_concurrent_executions: spec.max_concurrent_executions,
            execution_timeout_secs: spec.execution_timeout_secs,
            run_code: spec.run_code,
            skills: locked,
            excluded: out_excluded
                .iter()
                .filter(|e| e.shadowed_by.is_none())
                .cloned()
                .collect(),
            shadowed: out_excluded
                .iter()
                .filter(|e| e.shadowed_by.is_some())
                .cloned()
                .collect(),
        };
        let lock_json = Bytes::from(serde_json::to_vec(&lock)?);
        let etag = etag_of(&lock_json);
        Ok(CachedAgent {
            resolved: Resolved {
                agent: id.clone(),
                generation: etag,
                skills,
                excluded: out_excluded,
            },
            lock,
            lock_json,
            spec,
            computed_at: std::time::Instant::now(),
        })
    }

    /// The core `Skill` of a stored version (parsed once; versions are
    /// immutable).
    pub(crate) async fn parsed_skill(
        &self,
        ns: &Namespace,
        name: &str,
        version: &str,
    ) -> Result<Arc<skilldeck::Skill>, RegistryError> {
        let key = format!("{ns}/{name}@{version}");
        if let Some(s) = self
            .inner
            .parsed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return Ok(Arc::clone(s));
        }
        let skill = SkillRef::new(ns.as_str(), name)?;
        let text = versions::skill_md(&self.inner.db, &skill, version)
            .await?
            .ok_or_else(|| RegistryError::NotFound(format!("version {ns}/{name}@{version}")))?;
        let checked = skilldeck::check_text(
            &text,
            None,
            &skilldeck_package::UnpackOptions::default().validation,
        );
        let fm = checked.frontmatter.unwrap_or_default();
        let skill = Arc::new(virtual_skill(
            name.to_owned(),
            fm.description.clone().unwrap_or_default(),
            &key,
            skilldeck::HostFields::from_frontmatter(&fm),
        ));
        let mut parsed = self
            .inner
            .parsed
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if parsed.len() >= MAX_PARSED_SKILLS {
            parsed.clear();
        }
        parsed.insert(key, Arc::clone(&skill));
        Ok(skill)
    }

    async fn render(
        &self,
        cached: &CachedAgent,
        format: skilldeck::CatalogFormat,
        budget_tokens: Option<u32>,
    ) -> Result<skilldeck::OwnedCatalog, RegistryError> {
        let mut skills = Vec::with_capacity(cached.resolved.skills.len());
        let mut priorities = BTreeMap::new();
        for s in &cached.resolved.skills {
            let parsed = self.parsed_skill(&s.namespace, &s.name, &s.version).await?;
            priorities.insert(s.name.clone(), i64::from(s.priority));
            skills.push((*parsed).clone());
        }
        let budget =
            budget_tokens
                .or(cached.spec.budget_tokens)
                .map(|limit| skilldeck::Budget::Tokens {
                    limit: limit as usize,
                    encoding: skilldeck::Encoding::default(),
                });
        let options = skilldeck::CatalogOptions {
            format,
            budget,
            locations: false,
            priorities,
            ..skilldeck::CatalogOptions::default()
        };
        tokio::task::spawn_blocking(move || {
            skilldeck::render_catalog(skills.iter(), &options, None)
                .map(skilldeck::Catalog::into_owned)
                .map_err(|e| RegistryError::Internal(format!("catalog: {e}")))
        })
        .await
        .map_err(|e| RegistryError::Internal(format!("catalog task: {e}")))?
    }

    /// The agent's catalog in one of the core's formats, within the budget
    /// (the query's, else the agent's), with a strong ETag.
    pub async fn catalog(
        &self,
        p: &Principal,
        id: &AgentId,
        format: skilldeck::CatalogFormat,
        budget_tokens: Option<u32>,
    ) -> Result<Rendered, RegistryError> {
        p.require_agent(id)?;
        self.ensure_fresh().await?;
        let fresh = &self.inner.fresh;
        let served = fresh.served();
        let floor = fresh.agent_floor(id.as_str());
        let key = format!("{id}\n{format}\n{budget_tokens:?}");
        let (tag, rendered) = self
            .inner
            .catalogs
            .get_or_compute(&key, floor, || async {
                let (cached, generation) = self.resolved_at(id).await?;
                let catalog = self.render(&cached, format, budget_tokens).await?;
                let body = Bytes::from(catalog.text);
                let rendered = Rendered {
                    etag: etag_of(&body),
                    body,
                    content_type: match format {
                        skilldeck::CatalogFormat::Json => "application/json",
                        skilldeck::CatalogFormat::Markdown => "text/markdown; charset=utf-8",
                        skilldeck::CatalogFormat::Xml => "application/xml; charset=utf-8",
                        skilldeck::CatalogFormat::SkillsRef => "text/plain; charset=utf-8",
                    },
                    generation,
                };
                // Tagged like the resolution it was rendered from, and
                // expiring with it: TTLs never add up.
                Ok(Computed {
                    tag: generation,
                    at: cached.computed_at,
                    value: Arc::new(rendered),
                })
            })
            .await?;
        let mut rendered = (*rendered).clone();
        rendered.generation = tag.max(served);
        Ok(rendered)
    }

    /// What the catalog would hold and what the budget left out (web UI).
    pub async fn catalog_preview(
        &self,
        p: &Principal,
        id: &AgentId,
        budget_tokens: Option<u32>,
    ) -> Result<CatalogPreview, RegistryError> {
        p.require_agent(id)?;
        let cached = self.resolved_cached(id).await?;
        let budget = budget_tokens.or(cached.spec.budget_tokens);
        let catalog = self
            .render(&cached, skilldeck::CatalogFormat::Xml, budget)
            .await?;
        let tokens = skilldeck::count_tokens(&catalog.text, skilldeck::Encoding::default())
            .map_err(|e| RegistryError::Internal(format!("tokens: {e}")))?;
        let mut included = Vec::new();
        let mut omitted = Vec::new();
        for s in catalog.explanation.skills() {
            match s.outcome {
                skilldeck::catalog::Outcome::Dropped | skilldeck::catalog::Outcome::Excluded => {
                    omitted.push(Omitted {
                        name: s.name.to_string(),
                        reason: serde_json::to_value(s.reason)?
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                    })
                }
                _ => included.push(s.name.to_string()),
            }
        }
        Ok(CatalogPreview {
            text: catalog.text,
            tokens,
            budget,
            included,
            omitted,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{etag_matches, etag_of};

    #[test]
    fn if_none_match_matches_the_strong_etag_a_weak_copy_a_list_or_a_star() {
        let etag = etag_of(b"body");
        assert!(etag.starts_with('"') && etag.ends_with('"'));
        assert!(etag_matches(&etag, &etag));
        assert!(etag_matches(&format!("W/{etag}"), &etag));
        assert!(etag_matches(&format!("\"other\", {etag}"), &etag));
        assert!(etag_matches("*", &etag));
        assert!(!etag_matches("\"other\"", &etag));
        assert_ne!(etag_of(b"body"), etag_of(b"other body"));
    }
}
