//! The names a signature is checked under: the `sshsig` namespace and the
//! signer's key fingerprint (what the lock records). No dependency on the
//! rest of the crate, so the error type can name them.

use std::fmt;
use std::str::FromStr;

use ssh_key::{HashAlg, public::KeyData};

/// The `sshsig` namespace of every skilldeck signature (`ssh-keygen -Y
/// sign -n skilldeck`): a signature made for git commits or files cannot
/// pass as a package signature.
pub const NAMESPACE: &str = "skilldeck";

/// The SHA-256 fingerprint of a signer's public key, as `ssh-keygen -l`
/// prints it: `SHA256:` and 43 characters of unpadded base64. This is what
/// the lock records per skill; it serializes as that text and parses only
/// from it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SignerFingerprint(String);

/// The prefix of a [`SignerFingerprint`].
pub const SIGNER_FINGERPRINT_PREFIX: &str = "SHA256:";

/// Characters of base64 after the prefix (32 bytes, unpadded).
const SIGNER_FINGERPRINT_B64_LEN: usize = 43;

impl SignerFingerprint {
    /// The fingerprint of a public key.
    pub fn of_key(key: &KeyData) -> SignerFingerprint {
        SignerFingerprint(key.fingerprint(HashAlg::Sha256).to_string())
    }

    /// The fingerprint of an OpenSSH public key line (`ssh-ed25519 AAAA...
    /// [comment]`, as in a `.pub` file): for a registry registering a
    /// signing key, or a user comparing one with `ssh-keygen -l`.
    pub fn of_openssh(line: &str) -> Result<SignerFingerprint, String> {
        let key = ssh_key::PublicKey::from_openssh(line.trim())
            .map_err(|e| format!("not an OpenSSH public key line ({e})"))?;
        Ok(SignerFingerprint::of_key(key.key_data()))
    }

    /// The text, `SHA256:...`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SignerFingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for SignerFingerprint {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let shown: String = text.chars().take(80).collect();
        let Some(b64) = text.strip_prefix(SIGNER_FINGERPRINT_PREFIX) else {
            return Err(format!(
                "'{shown}' is not a key fingerprint: it must start with '{SIGNER_FINGERPRINT_PREFIX}' (as `ssh-keygen -l` prints it)"
            ));
        };
        if b64.len() != SIGNER_FINGERPRINT_B64_LEN
            || !b64
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
        {
            return Err(format!(
                "'{shown}' is not a key fingerprint: it needs {SIGNER_FINGERPRINT_B64_LEN} base64 characters after '{SIGNER_FINGERPRINT_PREFIX}'"
            ));
        }
        Ok(SignerFingerprint(text.to_owned()))
    }
}

impl serde::Serialize for SignerFingerprint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for SignerFingerprint {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
