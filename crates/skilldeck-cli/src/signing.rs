//! The signature flags shared by `install` and `verify`, `pack --sign`,
//! and the rendering of signature errors. The rules live in
//! `skilldeck_package::signature`; this only wires flags to them.

use std::path::{Path, PathBuf};

use skilldeck_package::signature::{self, SignaturePolicy, SigningKey, Trust};
use skilldeck_package::{AllowedSigners, Error, write_atomic};

use crate::exit;
use crate::render;

/// Which signatures to accept.
#[derive(Debug, Clone, clap::Args)]
pub struct TrustArgs {
    /// Only keys listed in this file (ssh-keygen's allowed-signers format,
    /// namespace "skilldeck") may sign; a package signed by another key is
    /// refused.
    #[arg(long, value_name = "FILE", env = "SKILLDECK_ALLOWED_SIGNERS")]
    allowed_signers: Option<PathBuf>,
    /// Refuse packages without a signature (PACKAGE.sig beside them).
    #[arg(long)]
    require_signature: bool,
    /// Accept a skill signed by another key than the one skilldeck.lock
    /// pinned (or no longer signed); install records the new signer.
    #[arg(long)]
    allow_signer_change: bool,
}

impl TrustArgs {
    /// The policy these flags ask for (the allowed-signers file read and
    /// checked).
    pub fn policy(&self) -> Result<SignaturePolicy, Error> {
        Ok(SignaturePolicy {
            allowed_signers: self
                .allowed_signers
                .as_deref()
                .map(AllowedSigners::load)
                .transpose()?,
            require: self.require_signature,
            allow_signer_change: self.allow_signer_change,
        })
    }
}

/// Loads the signing key of `pack --sign` (before anything is written).
pub fn load_key(path: &Path) -> Result<SigningKey, Error> {
    SigningKey::load(path)
}

/// After `pack`: writes `OUTPUT.sig` signed with `key`, or, unsigned,
/// removes a stale `OUTPUT.sig` that no longer signs this package.
pub fn finish_pack(
    output: &Path,
    fingerprint: &skilldeck::Digest,
    key: Option<&SigningKey>,
) -> Result<(), Error> {
    let sig_path = signature::signature_path(output);
    match key {
        Some(key) => {
            let sig = signature::sign(fingerprint, key)?;
            write_atomic(&sig_path, sig.to_armored().as_bytes())?;
            eprintln!(
                "signed {fingerprint} with {} into {}",
                key.signer(),
                sig_path.display()
            );
        }
        None => {
            if let Some((path, bytes)) = signature::read_signature(output)?
                && signature::verify(fingerprint, &bytes, &path, &Trust::any_key()).is_err()
            {
                std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
                eprintln!(
                    "removed {}: it signed an earlier package (sign this one with --sign KEY)",
                    path.display()
                );
            }
        }
    }
    Ok(())
}

/// A signature error's exit code and rendering, or `None` for other
/// errors.
pub fn render_error(e: &Error) -> Option<u8> {
    let code = e.signature_code()?;
    eprintln!("error[{code}]: {}", render::safe(&e.to_string()));
    if let Some(help) = e.signature_help() {
        eprintln!("  = help: {}", render::safe(help));
    }
    Some(match e {
        Error::AllowedSigners { .. } | Error::SigningKey { .. } => exit::USAGE,
        _ => exit::INVALID,
    })
}
