//! Signed packages: an SSH signature (`ssh-keygen -Y sign`'s `sshsig`
//! format, namespace [`NAMESPACE`]) over a package's content fingerprint,
//! written beside the package as `PACKAGE.sig`.
//!
//! The signed message is the fingerprint's text, `sha256:<64 hex digits>`
//! ([`signed_message`]), with no newline. A signature over the same text
//! followed by one `\n` (what `skilldeck pack DIR | ssh-keygen -Y sign`
//! or `echo` produce) is accepted too: both state the same fingerprint.
//! So, with `fp.txt` holding the text,
//!
//! ```text
//! ssh-keygen -Y sign   -n skilldeck -f KEY fp.txt             # fp.txt.sig
//! ssh-keygen -Y verify -n skilldeck -f allowed_signers -I ID -s PACKAGE.sig < fp.txt
//! ```
//!
//! interoperate with [`sign`] and [`verify`] both ways.
//!
//! Everything works on bytes in memory ([`verify`] takes the signature's
//! bytes and an [`AllowedSigners`] parsed from text), so a registry checks
//! a signature it holds as a blob the same way `install` checks a file.
//!
//! Only SSH signatures exist today ([`SignatureKind::Ssh`]); the kind is
//! part of every verified signature so that Sigstore bundles (keyless,
//! OIDC identities) can be added as another kind without changing callers.
//! Nothing here accepts or imitates a Sigstore bundle.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use skilldeck::Digest;
use ssh_key::{Algorithm, HashAlg, LineEnding, PrivateKey, PublicKey, SshSig, public::KeyData};

use crate::error::Error;
use crate::limits::{MAX_ALLOWED_SIGNERS_BYTES, MAX_SIGNATURE_BYTES, MAX_SIGNING_KEY_BYTES};
pub use crate::signer::{NAMESPACE, SIGNER_FINGERPRINT_PREFIX, SignerFingerprint};

/// What a package's signature file adds to the package's file name
/// (`demo-1.0.tar.gz` → `demo-1.0.tar.gz.sig`).
pub const SIGNATURE_SUFFIX: &str = ".sig";

/// The environment variable holding the passphrase of an encrypted signing
/// key (there is no prompt and no ssh-agent support).
pub const PASSPHRASE_ENV: &str = "SKILLDECK_SIGNING_KEY_PASSPHRASE";

const PEM_BEGIN: &str = "-----BEGIN SSH SIGNATURE-----";

/// The kinds of signature skilldeck knows. Only SSH signatures are
/// implemented; Sigstore bundles (keyless signing with an OIDC identity,
/// checked against a transparency log) are the planned second kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum SignatureKind {
    /// An `sshsig` signature (`ssh-keygen -Y sign`), armored PEM.
    Ssh,
}

impl SignatureKind {
    /// The kind's name (`ssh`).
    pub fn as_str(self) -> &'static str {
        match self {
            SignatureKind::Ssh => "ssh",
        }
    }
}

/// The exact bytes a package signature signs: the fingerprint's text.
pub fn signed_message(fingerprint: &Digest) -> String {
    fingerprint.to_string()
}

/// The signature file of `package`: `PACKAGE.sig` beside it.
pub fn signature_path(package: &Path) -> PathBuf {
    let mut name = package.as_os_str().to_os_string();
    name.push(SIGNATURE_SUFFIX);
    PathBuf::from(name)
}

/// A parsed package signature.
#[derive(Debug, Clone)]
pub struct PackageSignature {
    sig: SshSig,
}

impl PackageSignature {
    /// Parses a signature file's bytes (`path` names it in errors).
    pub fn parse(bytes: &[u8], path: &Path) -> Result<PackageSignature, Error> {
        let bad = |reason: String| Error::BadSignature {
            path: path.to_path_buf(),
            reason,
        };
        if bytes.len() > MAX_SIGNATURE_BYTES {
            return Err(bad(format!(
                "{} bytes is larger than a signature can be ({MAX_SIGNATURE_BYTES} bytes at most)",
                bytes.len()
            )));
        }
        let text = std::str::from_utf8(bytes)
            .map_err(|_| bad("not an SSH signature (not UTF-8 text)".into()))?;
        let trimmed = text.trim_start();
        if !trimmed.starts_with(PEM_BEGIN) {
            let what = if trimmed.starts_with('{') {
                "this looks like a JSON document (a Sigstore bundle?): only SSH signatures \
                 (`ssh-keygen -Y sign`) are supported"
            } else {
                "not an SSH signature: it must start with '-----BEGIN SSH SIGNATURE-----'"
            };
            return Err(bad(what.into()));
        }
        let sig = SshSig::from_pem(trimmed.trim_end())
            .map_err(|e| bad(format!("a malformed SSH signature ({e})")))?;
        Ok(PackageSignature { sig })
    }

    /// The kind ([`SignatureKind::Ssh`]).
    pub fn kind(&self) -> SignatureKind {
        SignatureKind::Ssh
    }

    /// The fingerprint of the key the signature names.
    pub fn signer(&self) -> SignerFingerprint {
        SignerFingerprint::of_key(self.sig.public_key())
    }

    /// The signing key, as an OpenSSH public key line (`ssh-ed25519 AAAA...`).
    pub fn public_key(&self) -> String {
        PublicKey::from(self.sig.public_key().clone())
            .to_openssh()
            .unwrap_or_default()
    }

    /// The key's algorithm (`ssh-ed25519`, `ecdsa-sha2-nistp256`...).
    pub fn algorithm(&self) -> String {
        self.sig.public_key().algorithm().as_str().to_owned()
    }

    /// The namespace the signature was made for.
    pub fn namespace(&self) -> &str {
        self.sig.namespace()
    }

    /// The armored text (`-----BEGIN SSH SIGNATURE-----`...), as
    /// `ssh-keygen` writes it.
    pub fn to_armored(&self) -> String {
        let mut text = self.sig.to_pem(LineEnding::LF).unwrap_or_default();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text
    }
}

/// A private key to sign with: an OpenSSH private key file (`ssh-keygen
/// -t ed25519` or `-t ecdsa`), unencrypted or with its passphrase in
/// [`PASSPHRASE_ENV`].
#[derive(Clone)]
pub struct SigningKey {
    key: PrivateKey,
}

/// Shows the key's fingerprint only, never the secret.
impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("signer", &self.signer())
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// Reads the private key at `path`.
    pub fn load(path: &Path) -> Result<SigningKey, Error> {
        let bytes =
            read_capped(path, MAX_SIGNING_KEY_BYTES as u64).map_err(|e| Error::io(path, e))?;
        SigningKey::parse(&bytes, path, std::env::var(PASSPHRASE_ENV).ok().as_deref())
    }

    /// Parses a private key's bytes (`path` names it in errors); an
    /// encrypted key needs `passphrase`.
    pub fn parse(bytes: &[u8], path: &Path, passphrase: Option<&str>) -> Result<SigningKey, Error> {
        let fail = |message: String| Error::SigningKey {
            path: path.to_path_buf(),
            message,
        };
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim();
        if !text.starts_with("-----BEGIN OPENSSH PRIVATE KEY-----") {
            let hint = if text.starts_with("ssh-") || text.starts_with("ecdsa-") {
                "this is a public key: give the private key (the same path without `.pub`)"
            } else if text.starts_with("-----BEGIN") {
                "not an OpenSSH private key (a PEM or PKCS#8 key?): convert it with \
                 `ssh-keygen -p -f KEY` or make one with `ssh-keygen -t ed25519`"
            } else {
                "not an OpenSSH private key: make one with `ssh-keygen -t ed25519 -f KEY`"
            };
            return Err(fail(hint.into()));
        }
        let mut key = PrivateKey::from_openssh(text)
            .map_err(|e| fail(format!("a malformed OpenSSH private key ({e})")))?;
        if key.is_encrypted() {
            let Some(passphrase) = passphrase else {
                return Err(fail(format!(
                    "the key is encrypted: set {PASSPHRASE_ENV} to its passphrase, or use an \
                     unencrypted key (ssh-agent is not supported)"
                )));
            };
            key = key.decrypt(passphrase.as_bytes()).map_err(|e| {
                fail(format!(
                    "cannot decrypt the key with the passphrase in {PASSPHRASE_ENV} ({e})"
                ))
            })?;
        }
        match key.algorithm() {
            Algorithm::Ed25519 | Algorithm::Ecdsa { .. } => Ok(SigningKey { key }),
            Algorithm::SkEd25519 | Algorithm::SkEcdsaSha2NistP256 => Err(fail(
                "a security-key (FIDO) key signs only through its device: sign the \
                 fingerprint with `ssh-keygen -Y sign -n skilldeck` and put the signature \
                 beside the package"
                    .into(),
            )),
            other => Err(fail(format!(
                "{} keys are not supported for signing: use an ed25519 key \
                 (`ssh-keygen -t ed25519`) or an ECDSA key",
                other.as_str()
            ))),
        }
    }

    /// The public key's fingerprint.
    pub fn signer(&self) -> SignerFingerprint {
        SignerFingerprint::of_key(self.key.public_key().key_data())
    }

    /// The public key as an OpenSSH line (`ssh-ed25519 AAAA... comment`).
    pub fn public_key(&self) -> String {
        self.key.public_key().to_openssh().unwrap_or_default()
    }
}

/// Signs the fingerprint `fingerprint` with `key` (namespace
/// [`NAMESPACE`], SHA-512 as `ssh-keygen` does).
pub fn sign(fingerprint: &Digest, key: &SigningKey) -> Result<PackageSignature, Error> {
    let sig = key
        .key
        .sign(
            NAMESPACE,
            HashAlg::Sha512,
            signed_message(fingerprint).as_bytes(),
        )
        .map_err(|e| Error::SigningKey {
            path: PathBuf::new(),
            message: format!("signing failed ({e})"),
        })?;
    Ok(PackageSignature { sig })
}

/// What a signature is checked against.
#[derive(Debug, Clone, Copy)]
pub struct Trust<'a> {
    /// The keys allowed to sign; `None`: any key whose signature verifies
    /// (the signer is then pinned on first use by the lock).
    pub allowed: Option<&'a AllowedSigners>,
    /// The principal the signer must be listed for (`-I` of `ssh-keygen
    /// -Y verify`); `None`: any principal of a matching line.
    pub identity: Option<&'a str>,
    /// The time the allowed signers' `valid-after`/`valid-before` are
    /// checked at.
    pub at: SystemTime,
}

impl Trust<'_> {
    /// Any key, now.
    pub fn any_key() -> Trust<'static> {
        Trust {
            allowed: None,
            identity: None,
            at: SystemTime::now(),
        }
    }
}

/// How install and verify treat signatures. The default checks a
/// signature when there is one (a bad one is always refused), takes any
/// key and pins it in the lock on first use.
#[derive(Debug, Clone, Default)]
pub struct SignaturePolicy {
    /// Only keys listed here may sign (`--allowed-signers FILE`).
    pub allowed_signers: Option<AllowedSigners>,
    /// Refuse a package without a signature (`--require-signature`).
    pub require: bool,
    /// Accept a signer other than the one the lock pinned, an unsigned
    /// version of a signed skill included (`--allow-signer-change`);
    /// install then records the new signer.
    pub allow_signer_change: bool,
}

impl SignaturePolicy {
    /// The trust this policy gives, at `at`.
    pub fn trust(&self, at: SystemTime) -> Trust<'_> {
        Trust {
            allowed: self.allowed_signers.as_ref(),
            identity: None,
            at,
        }
    }

    /// Checks the signature of the package `package` (`PACKAGE.sig`
    /// beside it, when there is one; `None` for a folder, which cannot
    /// carry one) over `fingerprint`: `Ok(None)` when there is none and
    /// none is required.
    pub fn check_package(
        &self,
        package: Option<&Path>,
        shown: &Path,
        fingerprint: &Digest,
    ) -> Result<Option<Verified>, Error> {
        let found = match package {
            Some(p) => read_signature(p)?,
            None => None,
        };
        let expected = match package {
            Some(p) => signature_path(p),
            None => PathBuf::from("(a folder carries no signature: pack and sign it)"),
        };
        self.check(
            found.as_ref().map(|(p, b)| (p.as_path(), b.as_slice())),
            shown,
            &expected,
            fingerprint,
        )
    }

    /// Checks `found` (a signature's name and bytes; `None`: there is
    /// none, and it would be at `expected`) for the package `shown` over
    /// `fingerprint`: `Ok(None)` when there is none and none is required.
    pub fn check(
        &self,
        found: Option<(&Path, &[u8])>,
        shown: &Path,
        expected: &Path,
        fingerprint: &Digest,
    ) -> Result<Option<Verified>, Error> {
        match found {
            Some((path, bytes)) => {
                verify(fingerprint, bytes, path, &self.trust(SystemTime::now())).map(Some)
            }
            None if self.require => Err(Error::Unsigned {
                path: shown.to_path_buf(),
                expected: expected.to_path_buf(),
            }),
            None => Ok(None),
        }
    }

    /// Checks `found` (the signer of a new version of `skill`, `None`:
    /// unsigned) against `recorded` (the signer the lock pinned).
    pub fn check_pin(
        &self,
        skill: &str,
        path: &Path,
        lockfile: &Path,
        recorded: Option<&SignerFingerprint>,
        found: Option<&SignerFingerprint>,
    ) -> Result<(), Error> {
        match recorded {
            Some(r) if Some(r) != found && !self.allow_signer_change => Err(Error::SignerChanged {
                skill: skill.to_owned(),
                path: path.to_path_buf(),
                lockfile: lockfile.to_path_buf(),
                recorded: r.clone(),
                found: found.cloned(),
            }),
            _ => Ok(()),
        }
    }
}

/// A signature that verified.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Verified {
    /// The kind of signature.
    pub kind: SignatureKind,
    /// The signer's key fingerprint.
    pub signer: SignerFingerprint,
    /// The signer's key algorithm (`ssh-ed25519`...).
    pub algorithm: String,
    /// The principals of the allowed-signers lines that admitted the key
    /// (empty without an allowed-signers file).
    pub principals: Vec<String>,
}

/// Verifies `signature` (a signature file's bytes; `path` names it in
/// errors) over the fingerprint `fingerprint`, then checks the signer
/// against `trust`.
pub fn verify(
    fingerprint: &Digest,
    signature: &[u8],
    path: &Path,
    trust: &Trust<'_>,
) -> Result<Verified, Error> {
    let parsed = PackageSignature::parse(signature, path)?;
    verify_parsed(fingerprint, &parsed, path, trust)
}

/// [`verify`] of an already parsed signature.
pub fn verify_parsed(
    fingerprint: &Digest,
    signature: &PackageSignature,
    path: &Path,
    trust: &Trust<'_>,
) -> Result<Verified, Error> {
    let sig = &signature.sig;
    if sig.namespace() != NAMESPACE {
        return Err(Error::WrongNamespace {
            path: path.to_path_buf(),
            found: sig.namespace().to_owned(),
        });
    }
    let key = PublicKey::from(sig.public_key().clone());
    let message = signed_message(fingerprint);
    let with_newline = format!("{message}\n");
    let mut result = key.verify(NAMESPACE, message.as_bytes(), sig);
    if result.is_err() {
        result = key.verify(NAMESPACE, with_newline.as_bytes(), sig);
    }
    if let Err(e) = result {
        let reason = match sig.public_key().algorithm() {
            Algorithm::Rsa { .. } | Algorithm::Dsa => format!(
                "signed with a {} key, which skilldeck does not verify: sign with an \
                 ed25519 or ECDSA key",
                sig.public_key().algorithm().as_str()
            ),
            _ => format!(
                "the signature does not verify over {message} ({e}): the package or its \
                 signature was changed after signing, or it signs another package"
            ),
        };
        return Err(Error::BadSignature {
            path: path.to_path_buf(),
            reason,
        });
    }
    let signer = SignerFingerprint::of_key(sig.public_key());
    let principals = match trust.allowed {
        None => Vec::new(),
        Some(allowed) => allowed
            .admit(sig.public_key(), NAMESPACE, trust.identity, trust.at)
            .map_err(|reason| Error::UnknownSigner {
                path: path.to_path_buf(),
                signer: signer.clone(),
                reason,
            })?,
    };
    Ok(Verified {
        kind: signature.kind(),
        signer,
        algorithm: signature.algorithm(),
        principals,
    })
}

/// A signature's bytes and the name errors call it by (a file's path, or
/// `SOURCE.sig` for one a registry supplied).
pub type SignatureFile = (PathBuf, Vec<u8>);

/// Reads the signature beside `package` (`PACKAGE.sig`), if there is one.
pub fn read_signature(package: &Path) -> Result<Option<SignatureFile>, Error> {
    let path = signature_path(package);
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
        Ok(_) => {}
    }
    // One byte past the limit, so parse reports an oversized file.
    let bytes =
        read_capped(&path, MAX_SIGNATURE_BYTES as u64 + 1).map_err(|e| Error::io(&path, e))?;
    Ok(Some((path, bytes)))
}

/// Reads at most `cap` bytes of the regular file at `path` (a FIFO or
/// device is refused, never opened).
fn read_capped(path: &Path, cap: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(cap)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// One line of an allowed-signers file.
#[derive(Debug, Clone)]
struct AllowedSigner {
    line: usize,
    principals: String,
    namespaces: Option<String>,
    valid_after: Option<u64>,
    valid_before: Option<u64>,
    key: KeyData,
}

/// An allowed-signers file, in `ssh-keygen`'s format (ssh-keygen(1),
/// "ALLOWED SIGNERS"): one key per line,
///
/// ```text
/// principals [options] keytype base64-key [comment]
/// ```
///
/// where `principals` is a comma-separated list of patterns (`*`, `?`,
/// `!` to negate), and the options are `namespaces="..."` (a pattern
/// list the namespace `skilldeck` must match), `valid-after="..."` and
/// `valid-before="..."` (`YYYYMMDD[HHMM[SS]]`, optionally ending in `Z`;
/// skilldeck reads every time as UTC). `cert-authority` is refused:
/// certificates are not supported. Blank lines and lines starting with `#`
/// are ignored. Every error names the file and line.
#[derive(Debug, Clone)]
pub struct AllowedSigners {
    path: PathBuf,
    signers: Vec<AllowedSigner>,
}

impl AllowedSigners {
    /// Reads and parses the file at `path`.
    pub fn load(path: &Path) -> Result<AllowedSigners, Error> {
        let bytes = read_capped(path, MAX_ALLOWED_SIGNERS_BYTES as u64 + 1)
            .map_err(|e| Error::io(path, e))?;
        if bytes.len() > MAX_ALLOWED_SIGNERS_BYTES {
            return Err(Error::AllowedSigners {
                path: path.to_path_buf(),
                line: 0,
                message: format!(
                    "larger than {MAX_ALLOWED_SIGNERS_BYTES} bytes: is this an allowed-signers file?"
                ),
            });
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            let line = 1 + e.as_bytes()[..e.utf8_error().valid_up_to()]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            Error::AllowedSigners {
                path: path.to_path_buf(),
                line,
                message: "not UTF-8 text".into(),
            }
        })?;
        AllowedSigners::parse(&text, path)
    }

    /// Parses allowed-signers text (`path` names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<AllowedSigners, Error> {
        let mut signers = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let fail = |message: String| Error::AllowedSigners {
                path: path.to_path_buf(),
                line: i + 1,
                message,
            };
            let rest = line.trim_start_matches([' ', '\t']).trim_end_matches('\r');
            if rest.is_empty() || rest.starts_with('#') {
                continue;
            }
            signers.push(parse_line(rest, i + 1).map_err(fail)?);
        }
        Ok(AllowedSigners {
            path: path.to_path_buf(),
            signers,
        })
    }

    /// The file it was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many keys it lists.
    pub fn len(&self) -> usize {
        self.signers.len()
    }

    /// True when it lists no key.
    pub fn is_empty(&self) -> bool {
        self.signers.is_empty()
    }

    /// The principals of every line that lets `key` sign in `namespace`
    /// (for `identity`, when given) at time `at`; else why not, naming the
    /// lines that came closest.
    pub fn admit(
        &self,
        key: &KeyData,
        namespace: &str,
        identity: Option<&str>,
        at: SystemTime,
    ) -> Result<Vec<String>, String> {
        let now = at
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let file = self.path.display();
        let mut admitted = Vec::new();
        let mut why = Vec::new();
        for s in self.signers.iter().filter(|s| &s.key == key) {
            if let Some(id) = identity
                && !match_pattern_list(id, &s.principals)
            {
                why.push(format!(
                    "{file}:{} lists it for '{}', not '{id}'",
                    s.line, s.principals
                ));
            } else if let Some(ns) = &s.namespaces
                && !match_pattern_list(namespace, ns)
            {
                why.push(format!(
                    "{file}:{} allows it only for namespaces \"{ns}\", not \"{namespace}\"",
                    s.line
                ));
            } else if let Some(after) = s.valid_after
                && now < after
            {
                why.push(format!(
                    "{file}:{} makes it valid only after {} (it is {} now)",
                    s.line,
                    format_time(after),
                    format_time(now)
                ));
            } else if let Some(before) = s.valid_before
                && now > before
            {
                why.push(format!(
                    "{file}:{} made it valid only until {}: the key has expired (it is {} now)",
                    s.line,
                    format_time(before),
                    format_time(now)
                ));
            } else {
                admitted.push(s.principals.clone());
            }
        }
        if !admitted.is_empty() {
            return Ok(admitted);
        }
        if why.is_empty() {
            Err(format!("is not in the allowed signers ({file})"))
        } else {
            Err(format!("is not allowed: {}", why.join("; ")))
        }
    }
}

fn parse_line(line: &str, _number: usize) -> Result<AllowedSigner, String> {
    let (principals, rest) = take_token(line)?;
    if principals.is_empty() {
        return Err("an empty principals field".into());
    }
    let rest = rest.trim_start_matches([' ', '\t']);
    if rest.is_empty() {
        return Err(format!(
            "'{principals}' is followed by no key: a line is `principals [options] keytype base64-key [comment]`"
        ));
    }
    // As ssh-keygen: a key first; if that fails, options then a key.
    let mut options = Options::default();
    let key = match parse_key(rest) {
        Ok(key) => key,
        Err(first) => {
            let (opts, after) = take_token(rest)?;
            if !looks_like_options(&opts) {
                return Err(first);
            }
            options = parse_options(&opts)?;
            let after = after.trim_start_matches([' ', '\t']);
            if after.is_empty() {
                return Err("options are followed by no key".into());
            }
            parse_key(after)?
        }
    };
    Ok(AllowedSigner {
        line: _number,
        principals,
        namespaces: options.namespaces,
        valid_after: options.valid_after,
        valid_before: options.valid_before,
        key,
    })
}

/// An options field, not a key type (`ssh-ed25519`, `ecdsa-sha2-...`,
/// `sk-...`): a key type that failed to parse is reported as a bad key.
fn looks_like_options(token: &str) -> bool {
    !(token.starts_with("ssh-") || token.starts_with("ecdsa-") || token.starts_with("sk-"))
}

/// One whitespace-delimited token; a token may be in double quotes, and
/// quotes inside a token (`namespaces="a b"`) keep their spaces.
fn take_token(s: &str) -> Result<(String, &str), String> {
    if let Some(inner) = s.strip_prefix('"') {
        let end = inner
            .find('"')
            .ok_or_else(|| "a quoted principals field without its closing quote".to_owned())?;
        return Ok((inner[..end].to_owned(), &inner[end + 1..]));
    }
    let mut in_quotes = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_quotes => escaped = true,
            '"' => in_quotes = !in_quotes,
            ' ' | '\t' if !in_quotes => return Ok((s[..i].to_owned(), &s[i..])),
            _ => {}
        }
    }
    if in_quotes {
        return Err("a quote is not closed".into());
    }
    Ok((s.to_owned(), ""))
}

fn parse_key(s: &str) -> Result<KeyData, String> {
    let mut parts = s.split([' ', '\t']).filter(|p| !p.is_empty());
    let (Some(kind), Some(b64)) = (parts.next(), parts.next()) else {
        return Err(format!(
            "'{}' is not a public key: expected `keytype base64-key` (as in a .pub file)",
            cut(s)
        ));
    };
    let key = PublicKey::from_openssh(&format!("{kind} {b64}")).map_err(|e| {
        format!(
            "'{}' is not a public key of a known type ({e}): expected `keytype base64-key` \
             (as in a .pub file)",
            cut(&format!("{kind} {b64}"))
        )
    })?;
    Ok(key.key_data().clone())
}

fn cut(s: &str) -> String {
    let mut out: String = s.chars().take(60).collect();
    if out.len() < s.len() {
        out.push_str("...");
    }
    out
}

#[derive(Default)]
struct Options {
    namespaces: Option<String>,
    valid_after: Option<u64>,
    valid_before: Option<u64>,
}

fn parse_options(text: &str) -> Result<Options, String> {
    let mut options = Options::default();
    let mut rest = text;
    loop {
        let name_end = rest.find([',', '=']).unwrap_or(rest.len());
        let name = rest[..name_end].to_ascii_lowercase();
        rest = &rest[name_end..];
        let value = if let Some(after) = rest.strip_prefix('=') {
            let Some(quoted) = after.strip_prefix('"') else {
                return Err(format!(
                    "option '{name}' needs a quoted value: {name}=\"...\""
                ));
            };
            let mut value = String::new();
            let mut end = None;
            let mut chars = quoted.char_indices();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            value.push(n);
                        }
                    }
                    '"' => {
                        end = Some(i);
                        break;
                    }
                    _ => value.push(c),
                }
            }
            let end = end.ok_or_else(|| format!("option '{name}': the quote is not closed"))?;
            rest = &quoted[end + 1..];
            Some(value)
        } else {
            None
        };
        match (name.as_str(), value) {
            ("cert-authority", None) => {
                return Err(
                    "cert-authority is not supported: skilldeck checks signatures by \
                     plain keys, not certificates; list each signing key itself"
                        .into(),
                );
            }
            ("namespaces", Some(v)) => {
                if options.namespaces.replace(v).is_some() {
                    return Err("more than one \"namespaces\" option".into());
                }
            }
            ("valid-after", Some(v)) => {
                let t = parse_time(&v)?;
                if options.valid_after.replace(t).is_some() {
                    return Err("more than one \"valid-after\" option".into());
                }
            }
            ("valid-before", Some(v)) => {
                let t = parse_time(&v)?;
                if options.valid_before.replace(t).is_some() {
                    return Err("more than one \"valid-before\" option".into());
                }
            }
            ("namespaces" | "valid-after" | "valid-before", None) => {
                return Err(format!("option '{name}' needs a value: {name}=\"...\""));
            }
            (other, _) => {
                return Err(format!(
                    "unknown option '{other}' (known: namespaces, valid-after, valid-before)"
                ));
            }
        }
        if rest.is_empty() {
            break;
        }
        match rest.strip_prefix(',') {
            Some("") => return Err("the options end with a comma".into()),
            Some(r) => rest = r,
            None => return Err(format!("unexpected '{}' after an option", cut(rest))),
        }
    }
    if let (Some(a), Some(b)) = (options.valid_after, options.valid_before)
        && b <= a
    {
        return Err("\"valid-before\" is not after \"valid-after\"".into());
    }
    Ok(options)
}

/// `YYYYMMDD`, `YYYYMMDDHHMM` or `YYYYMMDDHHMMSS`, optionally ending in
/// `Z`, as Unix seconds (read as UTC).
fn parse_time(text: &str) -> Result<u64, String> {
    let digits = text.strip_suffix(['Z', 'z']).unwrap_or(text);
    let bad = || {
        format!(
            "'{}' is not a time: write YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, optionally \
             ending in Z (skilldeck reads every time as UTC)",
            cut(text)
        )
    };
    if !matches!(digits.len(), 8 | 12 | 14) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| digits.get(r).and_then(|s| s.parse::<u64>().ok());
    let year = num(0..4).ok_or_else(bad)?;
    let month = num(4..6).ok_or_else(bad)?;
    let day = num(6..8).ok_or_else(bad)?;
    let hour = num(8..10).unwrap_or(0);
    let minute = num(10..12).unwrap_or(0);
    let second = num(12..14).unwrap_or(0);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1970..=9999).contains(&year)
        || !(1..=12).contains(&month)
        || day == 0
        || day > month_days[(month - 1) as usize]
        || hour > 23
        || minute > 59
        || second > 59
    {
        return Err(bad());
    }
    Ok(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (year >= 1970).
fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Unix seconds as `YYYY-MM-DDTHH:MM:SSZ`.
fn format_time(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// OpenSSH's `match_pattern_list`: `list` is comma-separated patterns
/// (`*`, `?`); a matching `!pattern` refuses at once; else any matching
/// pattern accepts.
fn match_pattern_list(text: &str, list: &str) -> bool {
    let mut matched = false;
    for pattern in list.split(',') {
        let (negated, pattern) = match pattern.strip_prefix('!') {
            Some(p) => (true, p),
            None => (false, pattern),
        };
        if match_pattern(text.as_bytes(), pattern.as_bytes()) {
            if negated {
                return false;
            }
            matched = true;
        }
    }
    matched
}

fn match_pattern(text: &[u8], pattern: &[u8]) -> bool {
    // Iterative glob with backtracking to the last `*`.
    let (mut t, mut p) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && (pattern[p] == b'?' || pattern[p] == text[t]) {
            t += 1;
            p += 1;
        } else if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|b| *b == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principal_patterns_follow_openssh() {
        assert!(match_pattern_list("alice@example.com", "*@example.com"));
        assert!(match_pattern_list("alice", "bob,alice"));
        assert!(!match_pattern_list("alice", "*,!alice"));
        assert!(match_pattern_list("skilldeck", "git,skill?eck"));
        assert!(!match_pattern_list("skilldeck", "git,file"));
        assert!(match_pattern_list("a", "*"));
    }

    #[test]
    fn times_are_read_as_utc_and_printed_back() {
        assert_eq!(parse_time("19700101").unwrap(), 0);
        assert_eq!(parse_time("20240229Z").unwrap(), 1_709_164_800);
        assert_eq!(parse_time("202402291230").unwrap(), 1_709_164_800 + 45_000);
        assert_eq!(format_time(1_709_164_800 + 45_001), "2024-02-29T12:30:01Z");
        for bad in [
            "2023022",
            "20230229",
            "20231301",
            "2023010125",
            "yesterday",
            "",
        ] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }

    const KEY: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIMYX0jYgrtC6ZGPxQc9pEVlab2IdA7ad2oQatoYuSoe";

    #[test]
    fn the_test_key_parses() {
        let signers = AllowedSigners::parse(&format!("alice {KEY}\n"), Path::new("f")).unwrap();
        assert_eq!(signers.len(), 1);
    }

    proptest::proptest! {
        /// Any text, and lines built from the format's own pieces, give a
        /// parsed file or an error naming a line: never a panic.
        #[test]
        fn the_allowed_signers_parser_never_panics(
            raw in "\\PC{0,200}",
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "alice", "\"a b\"", "\"", ",", "!", "*", " ", "\t", "=", "namespaces",
                    "=\"skilldeck\"", "valid-before", "valid-after", "=\"2024\"",
                    "=\"20240101Z\"", "cert-authority", "\\", "#", "\n", KEY, "ssh-ed25519",
                    "AAAA", "é",
                ]),
                0..24,
            ),
        ) {
            let _ = AllowedSigners::parse(&raw, Path::new("f"));
            let text: String = pieces.concat();
            if let Err(e) = AllowedSigners::parse(&text, Path::new("f")) {
                proptest::prop_assert!(e.to_string().starts_with("f:"), "{}", e);
            }
        }
    }

    #[test]
    fn a_signer_fingerprint_parses_only_from_its_own_text() {
        let good = "SHA256:IMYkdnnCh3q3V9DirOYOeuEdMLEbmLymvczyVx5YKBg";
        assert_eq!(good.parse::<SignerFingerprint>().unwrap().as_str(), good);
        for bad in [
            "sha256:IMYkdnnCh3q3V9DirOYOeuEdMLEbmLymvczyVx5YKBg",
            "SHA256:IMYkdnnCh3q3V9DirOYOeuEdMLEbmLymvczyVx5YKB",
            "SHA256:IMYkdnnCh3q3V9DirOYOeuEdMLEbmLymvczyVx5YKB=",
            "MD5:aa:bb",
        ] {
            assert!(bad.parse::<SignerFingerprint>().is_err(), "{bad}");
        }
    }
}
