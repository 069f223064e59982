//! A real OCI registry for tests (Debian's `docker-registry`, started on
//! loopback by `scripts/oci-registry.sh`, which `scripts/test-oci.sh`
//! runs), and the distribution API spoken directly, so a test can put
//! into the registry what `skilldeck push` never would (a manifest whose
//! annotation lies).
//!
//! [`registry`] reads [`REGISTRY_ENV`] (`127.0.0.1:PORT`) and
//! [`STORAGE_ENV`] (the registry's storage folder, to damage a blob in
//! place). Without them a test is skipped, saying so, unless
//! [`REQUIRE_ENV`]` = 1`: then it fails.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;

use crate::process::GIVE_UP;

/// The registry's address, `127.0.0.1:PORT`.
pub const REGISTRY_ENV: &str = "SKILLDECK_TEST_OCI_REGISTRY";

/// The registry's storage folder (its `rootdirectory`).
pub const STORAGE_ENV: &str = "SKILLDECK_TEST_OCI_STORAGE";

/// `1`: a test that needs the registry fails without it.
pub const REQUIRE_ENV: &str = "SKILLDECK_TEST_REQUIRE_OCI";

/// The OCI image manifest media type.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";

/// The registry the tests use.
#[derive(Debug, Clone)]
pub struct Registry {
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// Its storage folder, when given.
    pub storage: Option<PathBuf>,
}

/// The registry of [`REGISTRY_ENV`]; `None` (and a note on stderr) when it
/// is not set, unless [`REQUIRE_ENV`] is `1`, which panics.
pub fn registry(test: &str) -> Option<Registry> {
    match std::env::var(REGISTRY_ENV).ok().filter(|v| !v.is_empty()) {
        Some(addr) => Some(Registry {
            addr,
            storage: std::env::var_os(STORAGE_ENV).map(PathBuf::from),
        }),
        None => {
            assert!(
                std::env::var(REQUIRE_ENV).as_deref() != Ok("1"),
                "{test}: {REQUIRE_ENV}=1 but {REGISTRY_ENV} is not set: run scripts/test-oci.sh \
                 (it starts docker-registry on loopback and sets both)"
            );
            eprintln!(
                "{test}: skipped: {REGISTRY_ENV} is not set (scripts/test-oci.sh starts a \
                 registry and runs these tests against it)"
            );
            None
        }
    }
}

/// An answer: status, headers (names lowercased) and body bytes.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Answer {
    /// The first header named `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 request (`Connection: close`) to `addr`, with optional
/// `Content-Type` and `Accept`; the body is read to its Content-Length
/// (the registry does not chunk what it sends).
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    accept: Option<&str>,
    body: &[u8],
) -> Answer {
    let mut s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    s.set_read_timeout(Some(GIVE_UP))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(t) = content_type {
        head.push_str(&format!("Content-Type: {t}\r\n"));
    }
    if let Some(a) = accept {
        head.push_str(&format!("Accept: {a}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes())
        .and_then(|()| s.write_all(body))
        .unwrap_or_else(|e| panic!("write to {addr}: {e}"));
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)
        .unwrap_or_else(|e| panic!("read from {addr}: {e}"));
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("not an HTTP answer: {}", String::from_utf8_lossy(&raw)));
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP status line: {head}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Answer {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    }
}

/// Uploads `bytes` (whose digest is `digest`, `sha256:...`) to `repo` in
/// one monolithic upload; panics unless the registry accepts it.
pub fn put_blob(addr: &str, repo: &str, digest: &str, bytes: &[u8]) {
    let start = request(
        addr,
        "POST",
        &format!("/v2/{repo}/blobs/uploads/"),
        None,
        None,
        b"",
    );
    assert_eq!(start.status, 202, "start an upload: {start:?}");
    let location = start
        .header("location")
        .unwrap_or_else(|| panic!("no Location: {start:?}"));
    // An absolute URL or a path: keep the path and query.
    let path = match location.split_once("://") {
        Some((_, rest)) => rest.find('/').map(|i| &rest[i..]).unwrap_or("/"),
        None => location,
    };
    let sep = if path.contains('?') { '&' } else { '?' };
    let put = request(
        addr,
        "PUT",
        &format!("{path}{sep}digest={}", digest.replace(':', "%3A")),
        Some("application/octet-stream"),
        None,
        bytes,
    );
    assert_eq!(put.status, 201, "finish the upload of {digest}: {put:?}");
}

/// Puts the manifest `bytes` at `reference` (a tag or a digest) in `repo`;
/// the answer is returned (201 when accepted).
pub fn put_manifest(addr: &str, repo: &str, reference: &str, bytes: &[u8]) -> Answer {
    request(
        addr,
        "PUT",
        &format!("/v2/{repo}/manifests/{reference}"),
        Some(MANIFEST_MEDIA_TYPE),
        None,
        bytes,
    )
}

/// The manifest at `reference` in `repo`; panics unless found.
pub fn get_manifest(addr: &str, repo: &str, reference: &str) -> Vec<u8> {
    let a = request(
        addr,
        "GET",
        &format!("/v2/{repo}/manifests/{reference}"),
        None,
        Some(MANIFEST_MEDIA_TYPE),
        b"",
    );
    assert_eq!(a.status, 200, "GET manifest {repo}:{reference}: {a:?}");
    a.body
}

/// Where the registry keeps the blob `digest` (`sha256:HEX`) under its
/// storage folder (the distribution server's filesystem layout).
pub fn blob_path(storage: &std::path::Path, digest: &str) -> PathBuf {
    let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
    storage
        .join("docker/registry/v2/blobs/sha256")
        .join(&hex[..2])
        .join(hex)
        .join("data")
}
