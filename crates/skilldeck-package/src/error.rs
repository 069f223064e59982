//! The package crate's error type.

use std::path::PathBuf;

use skilldeck::Diagnostic;

use crate::signer::{NAMESPACE, SignerFingerprint};

/// Everything that can fail while packing, unpacking, installing or
/// verifying.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The package or skill was refused: each diagnostic has a stable code
    /// and names the entry (file) it is about.
    #[error("{}", render(.0))]
    Refused(Vec<Diagnostic>),
    /// A file system operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The lockfile is malformed.
    #[error("{}: {message}", path.display())]
    Lock {
        /// The lockfile.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A package's signature does not verify: the package or the signature
    /// was changed, it signs another package, or it is not a signature.
    #[error("{}: {reason}", path.display())]
    BadSignature {
        /// The signature file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A signature made for another purpose (its `sshsig` namespace is not
    /// [`NAMESPACE`]).
    #[error(
        "{}: the signature is for namespace '{found}', not '{NAMESPACE}': it was made for \
         another purpose and does not sign a skill package",
        path.display()
    )]
    WrongNamespace {
        /// The signature file.
        path: PathBuf,
        /// The namespace it names.
        found: String,
    },
    /// The signature verifies, but its key is not allowed to sign.
    #[error("{}: signed by {signer}, which {reason}", path.display())]
    UnknownSigner {
        /// The signature file.
        path: PathBuf,
        /// The signing key.
        signer: SignerFingerprint,
        /// Why it is not allowed (not listed, expired, another namespace).
        reason: String,
    },
    /// A signature is required and there is none.
    #[error("{}: not signed ({}), and a signature is required", path.display(), expected.display())]
    Unsigned {
        /// The package or folder.
        path: PathBuf,
        /// Where its signature would be.
        expected: PathBuf,
    },
    /// A skill's signer differs from the one the lock pinned (an unsigned
    /// version of a signed skill included).
    #[error(
        "skill '{skill}' ({}) is {}, but {} pinned signer {recorded}",
        path.display(),
        found.as_ref().map_or_else(|| "not signed".to_owned(), |f| format!("signed by {f}")),
        lockfile.display()
    )]
    SignerChanged {
        /// The skill.
        skill: String,
        /// The package (or folder) it comes from.
        path: PathBuf,
        /// The lockfile.
        lockfile: PathBuf,
        /// The signer the lock records.
        recorded: SignerFingerprint,
        /// The signer found (`None`: unsigned).
        found: Option<SignerFingerprint>,
    },
    /// An allowed-signers file is malformed.
    #[error("{}:{line}: {message}", path.display())]
    AllowedSigners {
        /// The file.
        path: PathBuf,
        /// The 1-based line (0: the whole file).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A signing key cannot be used.
    #[error("{}: {message}", path.display())]
    SigningKey {
        /// The key file.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
    /// A well-known discovery index could not be read or has no usable
    /// entry of the name asked for.
    #[error("{url}: {message}")]
    Discovery {
        /// The index's URL.
        url: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// A downloaded artifact is not what the index's digest says: nothing
    /// of it was unpacked.
    #[error(
        "skill '{name}' ({url}): the index says {expected}, the download is {actual}: it was \
         corrupted or tampered with, and was refused (nothing was installed); ask the index's \
         publisher"
    )]
    DigestMismatch {
        /// The entry's name.
        name: String,
        /// The artifact's URL.
        url: String,
        /// The index's digest.
        expected: skilldeck::Digest,
        /// The download's.
        actual: skilldeck::Digest,
    },
}

fn render(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

impl Error {
    /// A refusal of one diagnostic.
    pub fn refused(diagnostic: Diagnostic) -> Error {
        Error::Refused(vec![diagnostic])
    }

    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// The stable code of a signature error (`signature-invalid`...), for
    /// scripts; `None` for other errors.
    pub fn signature_code(&self) -> Option<&'static str> {
        Some(match self {
            Error::BadSignature { .. } => "signature-invalid",
            Error::WrongNamespace { .. } => "signature-namespace",
            Error::UnknownSigner { .. } => "signature-unknown-signer",
            Error::Unsigned { .. } => "signature-missing",
            Error::SignerChanged { .. } => "signature-signer-changed",
            Error::AllowedSigners { .. } => "allowed-signers-invalid",
            Error::SigningKey { .. } => "signing-key-invalid",
            _ => return None,
        })
    }

    /// What to do next about a signature error.
    pub fn signature_help(&self) -> Option<&'static str> {
        Some(match self {
            Error::BadSignature { .. } => {
                "do not install this package: get it and its .sig again from its publisher \
                 (nothing was installed)"
            }
            Error::WrongNamespace { .. } => {
                "sign the package's fingerprint with `ssh-keygen -Y sign -n skilldeck` or \
                 `skilldeck pack --sign KEY`"
            }
            Error::UnknownSigner { .. } => {
                "if you trust this key, add it to the allowed-signers file (`PRINCIPAL \
                 namespaces=\"skilldeck\" ssh-ed25519 AAAA...`); else do not install the package"
            }
            Error::Unsigned { .. } => {
                "ask the publisher for PACKAGE.sig (`skilldeck pack --sign KEY`), or install \
                 without --require-signature"
            }
            Error::SignerChanged { .. } => {
                "a new key signed this skill: confirm the change with its publisher, then pass \
                 --allow-signer-change (install records the new signer in the lock)"
            }
            Error::AllowedSigners { .. } => {
                "each line is `principals [options] keytype base64-key [comment]`, as for \
                 `ssh-keygen -Y verify` (see ssh-keygen(1), ALLOWED SIGNERS)"
            }
            Error::SigningKey { .. } => {
                "give an OpenSSH private key file, e.g. one made with `ssh-keygen -t ed25519`"
            }
            _ => return None,
        })
    }

    /// The diagnostics of a refusal (empty for other errors).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            Error::Refused(d) => d,
            _ => &[],
        }
    }
}
