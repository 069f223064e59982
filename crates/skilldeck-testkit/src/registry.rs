//! `skilldeck registry serve` as a process for tests: started on a free
//! loopback port over a data folder (SQLite and a blob folder there), its
//! ready line awaited, and plain HTTP/1.1 requests to it.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::Receiver;

use crate::process::{GIVE_UP, lines_of, wait_for_line};

/// What the registry prints on stdout once it listens, before its URL.
pub const READY_PREFIX: &str = "skilldeck registry listening on ";

/// The environment variables that would point a registry at another
/// database or store; removed so a test's registry uses its data folder.
pub const BACKEND_ENV: [&str; 2] = [
    "SKILLDECK_REGISTRY_DATABASE_URL",
    "SKILLDECK_REGISTRY_STORE",
];

/// A running registry process, killed when dropped.
pub struct RegistryProcess {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// The admin token file it wrote (or read) in its data folder.
    pub admin_file: PathBuf,
    /// Its stdout lines after the ready line.
    pub stdout: Receiver<String>,
    /// Its stderr lines.
    pub stderr: Receiver<String>,
}

impl RegistryProcess {
    /// Starts `BIN registry serve --listen 127.0.0.1:0 --data DATA EXTRA...`
    /// (BIN is the test's `skilldeck` executable) and waits for its ready
    /// line.
    pub fn start(bin: &str, data: &Path, extra: &[&str]) -> RegistryProcess {
        let mut command = Command::new(bin);
        command
            .args(["registry", "serve", "--listen", "127.0.0.1:0", "--data"])
            .arg(data)
            .args(extra);
        RegistryProcess::spawn(command, data)
    }

    /// Starts `command` (a `registry serve` command line with `--listen
    /// 127.0.0.1:0`, whose data folder is `data`) and waits for its ready
    /// line.
    pub fn spawn(mut command: Command, data: &Path) -> RegistryProcess {
        for name in BACKEND_ENV {
            command.env_remove(name);
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
        let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
            panic!("stdout and stderr were piped")
        };
        let stdout = lines_of(out);
        let url = wait_for_line(&stdout, READY_PREFIX, "the registry")
            .trim()
            .to_owned();
        let addr = url.trim_start_matches("http://").to_owned();
        RegistryProcess {
            child,
            url,
            addr,
            admin_file: data.join("admin-token"),
            stdout,
            stderr: lines_of(err),
        }
    }

    /// The admin token (the file's content, trimmed).
    pub fn admin_token(&self) -> String {
        std::fs::read_to_string(&self.admin_file)
            .unwrap_or_else(|e| panic!("{}: {e}", self.admin_file.display()))
            .trim()
            .to_owned()
    }

    /// Kills the process and waits for it (as dropping does).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Asks it to stop gracefully (SIGTERM) and waits: its exit status.
    pub fn terminate(&mut self) -> ExitStatus {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap_or_else(|e| panic!("kill -TERM: {e}"));
        assert!(sent.success(), "kill -TERM {} failed", self.child.id());
        self.child
            .wait()
            .unwrap_or_else(|e| panic!("waiting for the registry: {e}"))
    }

    /// Everything it wrote to stderr, to its end: call once it has ended
    /// (blocks until then).
    pub fn stderr_to_end(&self) -> String {
        self.stderr.iter().collect::<Vec<_>>().join("\n")
    }

    /// Everything it wrote to stderr so far.
    pub fn stderr_text(&self) -> String {
        self.stderr.try_iter().collect::<Vec<_>>().join("\n")
    }

    /// One request to it: see [`http`].
    pub fn http(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&str>,
    ) -> HttpAnswer {
        http(&self.addr, method, path, token, body)
    }
}

impl Drop for RegistryProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// An HTTP answer: the status, the headers (names in lowercase) and the
/// body (de-chunked).
#[derive(Debug, Clone)]
pub struct HttpAnswer {
    /// The status code.
    pub status: u16,
    /// The header lines, names lowercased, in order.
    pub headers: Vec<(String, String)>,
    /// The body as text.
    pub body: String,
}

impl HttpAnswer {
    /// The first header named `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// One HTTP/1.1 request to `addr` (`HOST:PORT`) with `Connection: close`,
/// a bearer `token` when given and a JSON `body` when given.
pub fn http(
    addr: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> HttpAnswer {
    let mut s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    s.set_read_timeout(Some(GIVE_UP))
        .unwrap_or_else(|e| panic!("{e}"));
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let body = body.unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap_or_else(|e| panic!("write to {addr}: {e}"));
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)
        .unwrap_or_else(|e| panic!("read from {addr}: {e}"));
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, rest) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("not an HTTP answer: {text}"));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP status line: {head}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    HttpAnswer {
        status,
        headers,
        body,
    }
}

/// The payload of a chunked body.
fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].strip_prefix("\r\n").unwrap_or(&after[n..]);
    }
    out
}
