//! Signed versions: the SSH keys an admin registers for a namespace, and
//! the check of a publish's signature against them (`skilldeck-package`'s
//! `signature` rules: an `sshsig` in namespace `skilldeck` over the
//! version's fingerprint text). A signature by a key not registered for
//! the namespace is refused, never stored; a namespace that requires
//! signatures refuses unsigned versions. The version keeps the signature
//! and its signer, and every agent's lock carries both, so a host
//! verifies them again before it serves the skill.

use std::path::Path;

use skilldeck_package::SignerFingerprint;
use skilldeck_package::signature::{self, AllowedSigners, Trust};

use crate::error::RegistryError;
use crate::names::Namespace;
use crate::service::principal::Principal;
use crate::service::registry::Registry;
use crate::storage::db::{Write, now};
use crate::storage::{policies, signers};
use crate::wire::{SignerInfo, SignerKey};

/// The largest signature accepted (an armored ed25519 or ECDSA `sshsig`
/// is under 1 KiB).
pub const MAX_SIGNATURE_BYTES: usize = 8 * 1024;

/// A publish's signature that verified: what the version records.
pub(crate) struct Signed {
    /// The armored signature.
    pub signature: String,
    /// The signer's key fingerprint.
    pub signer: String,
}

fn refused(code: &'static str, detail: String) -> RegistryError {
    RegistryError::unprocessable(code, detail)
}

/// Checks a publish into `ns` of the content `fingerprint` with
/// `signature` (inside the publish's write, so the keys and the policy
/// are the ones in force when the version appears).
pub(crate) async fn check_publish(
    w: &mut Write,
    ns: &Namespace,
    fingerprint: &str,
    signature: Option<&[u8]>,
) -> Result<Option<Signed>, RegistryError> {
    let required = policies::get_in(w, ns).await?.require_signature;
    let Some(bytes) = signature else {
        if required {
            return Err(refused(
                "registry-signature-required",
                format!(
                    "namespace '{ns}' requires signed versions: publish with --sign KEY \
                     (a key registered for the namespace)"
                ),
            ));
        }
        return Ok(None);
    };
    let keys = signers::list_in(w, ns).await?;
    // One allowed-signers line per registered key, principal = the
    // namespace, so only this namespace's keys are admitted.
    let text: String = keys
        .iter()
        .map(|k| {
            format!(
                "{ns} namespaces=\"{}\" {}\n",
                signature::NAMESPACE,
                k.public_key
            )
        })
        .collect();
    let allowed = AllowedSigners::parse(&text, Path::new("namespace-signers"))
        .map_err(|e| RegistryError::Internal(format!("registered keys of '{ns}': {e}")))?;
    let digest = skilldeck::Digest::parse(fingerprint)
        .map_err(|e| RegistryError::Internal(format!("fingerprint {fingerprint}: {e}")))?;
    let trust = Trust {
        allowed: Some(&allowed),
        identity: Some(ns.as_str()),
        at: std::time::SystemTime::now(),
    };
    let name = Path::new("signature");
    let parsed = signature::PackageSignature::parse(bytes, name)
        .map_err(|e| refused("registry-signature-invalid", format!("the signature: {e}")))?;
    match signature::verify_parsed(&digest, &parsed, name, &trust) {
        Ok(verified) => Ok(Some(Signed {
            signature: parsed.to_armored(),
            signer: verified.signer.to_string(),
        })),
        Err(skilldeck_package::Error::UnknownSigner { signer, .. }) => Err(refused(
            "registry-signature-unknown-signer",
            format!(
                "the version is signed by {signer}, which is not registered for namespace \
                 '{ns}': an admin registers it with POST /api/v1/namespaces/{ns}/signers"
            ),
        )),
        Err(e) => Err(refused("registry-signature-invalid", e.to_string())),
    }
}

impl Registry {
    /// The keys registered for `ns` (admin, or a publisher or reviewer of
    /// `ns`).
    pub async fn signers(
        &self,
        p: &Principal,
        ns: &Namespace,
    ) -> Result<Vec<SignerInfo>, RegistryError> {
        if !(p.is_admin() || p.can_publish(ns) || p.can_review(ns)) {
            return Err(RegistryError::Forbidden(format!(
                "this token may not read the signers of namespace '{ns}'"
            )));
        }
        signers::list(&self.inner.db, ns).await
    }

    /// Registers a key allowed to sign `ns`'s versions (admin).
    pub async fn add_signer(
        &self,
        p: &Principal,
        ns: &Namespace,
        key: &SignerKey,
    ) -> Result<(SignerInfo, bool), RegistryError> {
        p.require_admin()?;
        let line = key.public_key.trim();
        let fingerprint = SignerFingerprint::of_openssh(line).map_err(|why| {
            RegistryError::bad_request(
                "registry-invalid-key",
                format!("public_key: {why}; give the line of a .pub file (ssh-ed25519 AAAA...)"),
            )
        })?;
        // The key as the registry keeps it: type and base64, no comment
        // (a comment could hold anything).
        let mut parts = line.split_whitespace();
        let public_key = match (parts.next(), parts.next()) {
            (Some(kind), Some(data)) => format!("{kind} {data}"),
            _ => {
                return Err(RegistryError::bad_request(
                    "registry-invalid-key",
                    "public_key: expected `TYPE BASE64 [comment]`",
                ));
            }
        };
        let info = SignerInfo {
            namespace: ns.clone(),
            fingerprint: fingerprint.to_string(),
            public_key,
            added_by: p.name.clone(),
            added_at: now(),
        };
        let mut w = self.begin_write().await?;
        let added = signers::add(&mut w, &info).await?;
        if added {
            Registry::audit_in(
                &mut w,
                p,
                "namespace.signer.add",
                &format!("namespace:{ns}"),
                serde_json::json!({"fingerprint": info.fingerprint}),
            )
            .await?;
        }
        self.commit_scoped(w, &[crate::service::fresh::Scope::Skills])
            .await?;
        Ok((info, added))
    }

    /// Removes a key from `ns` (admin): versions it signed keep their
    /// record, new publishes signed by it are refused.
    pub async fn remove_signer(
        &self,
        p: &Principal,
        ns: &Namespace,
        fingerprint: &str,
    ) -> Result<(), RegistryError> {
        p.require_admin()?;
        let mut w = self.begin_write().await?;
        if !signers::remove(&mut w, ns, fingerprint).await? {
            return Err(RegistryError::NotFound(format!(
                "signer {fingerprint} of namespace {ns}"
            )));
        }
        Registry::audit_in(
            &mut w,
            p,
            "namespace.signer.remove",
            &format!("namespace:{ns}"),
            serde_json::json!({"fingerprint": fingerprint}),
        )
        .await?;
        self.commit_scoped(w, &[crate::service::fresh::Scope::Skills])
            .await
    }
}
