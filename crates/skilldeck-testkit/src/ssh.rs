//! The real `ssh-keygen`, for the signed-package tests: key pairs, and
//! `ssh-keygen -Y sign` / `-Y verify` run as a user would.
//!
//! A test that needs it calls [`ssh_keygen`], which panics with what to
//! install when it is missing: these tests never skip silently.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Where Debian's `openssh-client` puts it.
pub const SSH_KEYGEN: &str = "/usr/bin/ssh-keygen";

/// The `ssh-keygen` binary (`SSH_KEYGEN`, else the one on `PATH`);
/// panics, saying what to install, when there is none.
pub fn ssh_keygen() -> PathBuf {
    if Path::new(SSH_KEYGEN).is_file() {
        return PathBuf::from(SSH_KEYGEN);
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join("ssh-keygen");
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "ssh-keygen is required by the signature interoperability tests and was not found \
         at {SSH_KEYGEN} or on PATH: install it (`apt-get install openssh-client`, or run \
         scripts/install-ssh-keygen.sh)"
    );
}

/// A key pair made by `ssh-keygen -t TYPE` in `dir`: the private key file
/// `dir/NAME` and its public line (`dir/NAME.pub`). `kind` is `ed25519`
/// or `ecdsa`; `passphrase` encrypts the private key.
pub fn keypair(dir: &Path, name: &str, kind: &str, passphrase: &str) -> (PathBuf, String) {
    let key = dir.join(name);
    let out = Command::new(ssh_keygen())
        .args(["-q", "-t", kind, "-N", passphrase, "-C", name, "-f"])
        .arg(&key)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running ssh-keygen: {e}"));
    assert!(out.status.success(), "ssh-keygen -t {kind}: {}", text(&out));
    let public = std::fs::read_to_string(dir.join(format!("{name}.pub")))
        .unwrap_or_else(|e| panic!("reading {name}.pub: {e}"));
    (key, public.trim().to_owned())
}

/// `ssh-keygen -Y sign -n NAMESPACE -f KEY` of `message` (the bytes
/// signed): the armored signature.
pub fn sign(key: &Path, namespace: &str, message: &[u8]) -> Vec<u8> {
    let dir = key.parent().unwrap_or(Path::new("."));
    let file = dir.join(format!(
        "message-{}.txt",
        key.file_name().unwrap_or_default().to_string_lossy()
    ));
    std::fs::write(&file, message).unwrap_or_else(|e| panic!("writing {}: {e}", file.display()));
    let sig = PathBuf::from(format!("{}.sig", file.display()));
    let _ = std::fs::remove_file(&sig);
    let out = Command::new(ssh_keygen())
        .args(["-Y", "sign", "-n", namespace, "-f"])
        .arg(key)
        .arg(&file)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running ssh-keygen: {e}"));
    assert!(out.status.success(), "ssh-keygen -Y sign: {}", text(&out));
    std::fs::read(&sig).unwrap_or_else(|e| panic!("reading {}: {e}", sig.display()))
}

/// `ssh-keygen -Y verify -n NAMESPACE -f ALLOWED -I IDENTITY -s SIG` with
/// `message` on standard input: its output (check `status`).
pub fn verify(
    allowed_signers: &Path,
    identity: &str,
    namespace: &str,
    signature: &Path,
    message: &[u8],
) -> Output {
    let mut child = Command::new(ssh_keygen())
        .args(["-Y", "verify", "-n", namespace, "-f"])
        .arg(allowed_signers)
        .args(["-I", identity, "-s"])
        .arg(signature)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("running ssh-keygen: {e}"));
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(message)
            .unwrap_or_else(|e| panic!("writing to ssh-keygen: {e}"));
    }
    child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("waiting for ssh-keygen: {e}"))
}

/// An output's status and both streams, for assertion messages.
pub fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
