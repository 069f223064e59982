//! Review before release and blocking: what a namespace requires of its
//! versions ([`NamespacePolicy`]), the reviewer's decision on a pending
//! version, the list of versions waiting, and an admin's block of a
//! released version. Only a released version that is neither yanked nor
//! blocked resolves for an agent, carries a label or becomes `latest`
//! (the storage layer's `live_in`, resolution's `State::unavailable`).

use crate::error::RegistryError;
use crate::names::{Namespace, SkillRef};
use crate::service::principal::Principal;
use crate::service::publish::recompute_latest;
use crate::service::registry::Registry;
use crate::storage::db::now;
use crate::storage::versions::MarkerKind;
use crate::storage::{policies, versions};
use crate::wire::{
    Decision, NamespacePolicy, PendingVersion, Review, ReviewDecision, ReviewState, VersionDetail,
};

impl Registry {
    /// What `ns` requires (admin, or a publisher or reviewer of `ns`).
    pub async fn namespace_policy(
        &self,
        p: &Principal,
        ns: &Namespace,
    ) -> Result<NamespacePolicy, RegistryError> {
        if !(p.is_admin() || p.can_publish(ns) || p.can_review(ns)) {
            return Err(RegistryError::Forbidden(format!(
                "this token may not read the policy of namespace '{ns}'"
            )));
        }
        policies::get(&self.inner.db, ns).await
    }

    /// Replaces what `ns` requires (admin). Versions already published
    /// keep their state: requiring review later holds no released
    /// version back.
    pub async fn set_namespace_policy(
        &self,
        p: &Principal,
        ns: &Namespace,
        policy: NamespacePolicy,
    ) -> Result<NamespacePolicy, RegistryError> {
        p.require_admin()?;
        let mut w = self.begin_write().await?;
        let previous = policies::get_in(&mut w, ns).await?;
        policies::set(&mut w, ns, policy, &now()).await?;
        Registry::audit_in(
            &mut w,
            p,
            "namespace.policy",
            &format!("namespace:{ns}"),
            serde_json::json!({"policy": policy, "previous": previous}),
        )
        .await?;
        self.commit_scoped(w, &[crate::service::fresh::Scope::Skills])
            .await?;
        Ok(policy)
    }

    /// A reviewer's decision on a pending version: `approve` releases it
    /// (`latest` follows), `reject` (with a reason) refuses it for good.
    /// The publisher of a version cannot decide its review; another
    /// reviewer must.
    pub async fn review(
        &self,
        p: &Principal,
        skill: &SkillRef,
        version: &str,
        decision: &ReviewDecision,
    ) -> Result<VersionDetail, RegistryError> {
        p.require_review(skill.namespace())?;
        let reason = decision
            .reason
            .as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty());
        if let Some(r) = reason {
            RegistryError::check_text("the reason", r)?;
        }
        if decision.decision == Decision::Reject && reason.is_none() {
            return Err(RegistryError::bad_request(
                "registry-review-reason-missing",
                "a rejection needs a reason (the publisher reads it): pass \"reason\"",
            ));
        }
        let version = crate::service::publish::parse_version(version)?.to_string();
        let row = versions::get(&self.inner.db, skill, &version)
            .await?
            .ok_or_else(|| RegistryError::NotFound(format!("version {skill}@{version}")))?;
        if row.review != ReviewState::Pending {
            return Err(RegistryError::conflict(
                "registry-review-not-pending",
                format!(
                    "{skill}@{version} is {}, not pending review",
                    row.review.as_str()
                ),
            ));
        }
        if row.published_by == p.name {
            return Err(RegistryError::Forbidden(format!(
                "{skill}@{version} was published by '{}': its publisher cannot review it; \
                 ask another reviewer (scope review:{})",
                row.published_by,
                skill.namespace()
            )));
        }
        let (state, action) = match decision.decision {
            Decision::Approve => (ReviewState::Released, "review.approve"),
            Decision::Reject => (ReviewState::Rejected, "review.reject"),
        };
        let review = Review {
            by: p.name.clone(),
            at: now(),
            reason: reason.map(str::to_owned),
        };
        let mut w = self.begin_write().await?;
        versions::set_review(&mut w, skill, &version, state, &review).await?;
        let latest = recompute_latest(&mut w, skill).await?;
        Registry::audit_in(
            &mut w,
            p,
            action,
            &format!("{skill}@{version}"),
            serde_json::json!({"reason": review.reason, "latest": latest}),
        )
        .await?;
        self.commit_scoped(w, &[crate::service::fresh::Scope::Skills])
            .await?;
        self.version_detail(skill, &version).await
    }

    /// The versions waiting for review that `p` may review, oldest first,
    /// each with the released version before it.
    pub async fn pending_reviews(
        &self,
        p: &Principal,
    ) -> Result<Vec<PendingVersion>, RegistryError> {
        let mut out = Vec::new();
        for row in versions::pending(&self.inner.db).await? {
            if !p.can_review(row.skill.namespace()) {
                continue;
            }
            let previous = self.previous_release(&row.skill, &row.version).await?;
            out.push(PendingVersion {
                namespace: row.skill.namespace().clone(),
                name: row.skill.name().to_owned(),
                version: row.version,
                published_by: row.published_by,
                published_at: row.published_at,
                previous,
            });
        }
        if out.is_empty()
            && !p.is_admin()
            && !p
                .scopes
                .iter()
                .any(|s| matches!(s, crate::service::principal::Scope::Review(_)))
        {
            return Err(RegistryError::Forbidden(
                "listing pending reviews needs an admin or review:<namespace> token".to_owned(),
            ));
        }
        Ok(out)
    }

    /// The highest released version of `skill` below `version` (what a
    /// review compares against), if any.
    pub async fn previous_release(
        &self,
        skill: &SkillRef,
        version: &str,
    ) -> Result<Option<String>, RegistryError> {
        let Ok(this) = semver::Version::parse(version) else {
            return Ok(None);
        };
        let versions = versions::of_skill(&self.inner.db, skill).await?;
        Ok(versions
            .into_iter()
            .filter(|(v, _)| v.review == ReviewState::Released && v.blocked.is_none())
            .filter_map(|(v, _)| semver::Version::parse(&v.version).ok())
            .filter(|v| *v < this)
            .max()
            .map(|v| v.to_string()))
    }

    /// Blocks a version (`Some(reason)`: agents no longer resolve or
    /// download it, `latest` moves away) or lifts the block (`None`);
    /// admin.
    pub async fn set_blocked(
        &self,
        p: &Principal,
        skill: &SkillRef,
        v: &str,
        reason: Option<String>,
    ) -> Result<VersionDetail, RegistryError> {
        self.set_marker(p, skill, v, reason, MarkerKind::Blocked)
            .await
    }
}
