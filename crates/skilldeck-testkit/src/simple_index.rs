//! A package index served on loopback by Python's `http.server` over a
//! folder: a PEP 503 simple index (`ROOT/NAME/index.html`) and an npm
//! registry alike (`ROOT/NAME`, a file, `ROOT/@scope/name` for a scoped
//! name). A name's folder may hold `STATUS` (a number: that status is the
//! answer, a server error) or `REDIRECT` (a URL: a 302 to it). Started
//! by [`IndexServer::start`], stopped when dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::process::{lines_of, wait_for_line};

const SERVER: &str = r#"
import functools, http.server, os, sys
root = sys.argv[1]
class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        first = self.path.split("?")[0].strip("/").split("/")[0]
        folder = os.path.join(root, first)
        if first and os.path.isfile(os.path.join(folder, "STATUS")):
            self.send_error(int(open(os.path.join(folder, "STATUS")).read().strip()))
            return
        if first and os.path.isfile(os.path.join(folder, "REDIRECT")):
            self.send_response(302)
            self.send_header("Location", open(os.path.join(folder, "REDIRECT")).read().strip())
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        super().do_GET()
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=root))
print("listening", server.server_address[1], flush=True)
server.serve_forever()
"#;

/// A running index server.
pub struct IndexServer {
    child: Child,
    root: PathBuf,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
}

impl IndexServer {
    /// Serves `root` on a free loopback port (`python3` on `PATH`);
    /// returns once the server listens.
    pub fn start(root: &Path) -> IndexServer {
        let mut child = Command::new("python3")
            .arg("-c")
            .arg(SERVER)
            .arg(root)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("python3 (the index server) could not start: {e}"));
        let Some(stdout) = child.stdout.take() else {
            panic!("the index server's standard output is not piped")
        };
        let lines = lines_of(stdout);
        let port = wait_for_line(&lines, "listening ", "the index server");
        IndexServer {
            child,
            root: root.to_path_buf(),
            url: format!("http://127.0.0.1:{}", port.trim()),
        }
    }

    /// Puts the PEP 503 project page `ROOT/NAME/index.html` (NAME
    /// normalised by the caller).
    pub fn add_project(&self, name: &str) {
        let dir = self.root.join(name);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("project folder: {e}"));
        std::fs::write(
            dir.join("index.html"),
            format!(
                "<!DOCTYPE html><html><body><a href=\"../../files/{name}-1.0-py3-none-any.whl\">{name}-1.0-py3-none-any.whl</a></body></html>\n"
            ),
        )
        .unwrap_or_else(|e| panic!("project page: {e}"));
    }

    /// Makes the server answer `status` for everything under `/NAME/`.
    pub fn fail_project(&self, name: &str, status: u16) {
        let dir = self.root.join(name);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("project folder: {e}"));
        std::fs::write(dir.join("STATUS"), status.to_string())
            .unwrap_or_else(|e| panic!("STATUS: {e}"));
    }

    /// Makes the server redirect `/NAME/...` to `location`.
    pub fn redirect_project(&self, name: &str, location: &str) {
        let dir = self.root.join(name);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("project folder: {e}"));
        std::fs::write(dir.join("REDIRECT"), location).unwrap_or_else(|e| panic!("REDIRECT: {e}"));
    }

    /// Puts an npm packument `ROOT/NAME` (`@scope/name` in a folder).
    pub fn add_npm_package(&self, name: &str) {
        let file = self.root.join(name);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("scope folder: {e}"));
        }
        std::fs::write(
            file,
            format!(
                "{{\"name\":\"{name}\",\"dist-tags\":{{\"latest\":\"1.0.0\"}},\"versions\":{{}}}}\n"
            ),
        )
        .unwrap_or_else(|e| panic!("packument: {e}"));
    }
}

impl Drop for IndexServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
