//! The I/O floor of discovery, the yardstick for `skilldeck list`.
//!
//! Walks a tree on all cores (one `read_dir` per folder, subfolders fanned out
//! with rayon, no symlink following) and, for every `SKILL.md`, only opens
//! it, reads its first 4 KiB and closes it. Nothing is parsed, nothing is
//! printed but a count. Any real discovery must do at least this.
//!
//! `floor [--skip-resource-dirs] DIR`: with the flag, a skill's `scripts/`,
//! `references/` and `assets/` folders are not entered (skilldeck's own
//! rule), so the floor does the same walk skilldeck does.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

const HEAD_BYTES: usize = 4096;
const RESOURCE_DIRS: [&str; 3] = ["scripts", "references", "assets"];

struct Floor {
    skip_resource_dirs: bool,
    files: AtomicUsize,
    bytes: AtomicUsize,
}

impl Floor {
    fn visit(&self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut subdirs = Vec::new();
        let mut is_skill = false;
        for entry in entries.flatten() {
            let Ok(ft) = entry.file_type() else { continue };
            if ft.is_dir() {
                subdirs.push(entry.path());
            } else if entry.file_name() == "SKILL.md" {
                is_skill = true;
                let mut buf = [0u8; HEAD_BYTES];
                if let Ok(mut f) = std::fs::File::open(entry.path()) {
                    let n = f.read(&mut buf).unwrap_or(0);
                    self.files.fetch_add(1, Ordering::Relaxed);
                    self.bytes.fetch_add(n, Ordering::Relaxed);
                }
            }
        }
        if is_skill && self.skip_resource_dirs {
            subdirs.retain(|p| {
                !p.file_name()
                    .is_some_and(|n| RESOURCE_DIRS.iter().any(|r| n == *r))
            });
        }
        subdirs.par_iter().for_each(|d| self.visit(d));
    }
}

fn main() -> ExitCode {
    let mut skip_resource_dirs = false;
    let mut root = None;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--skip-resource-dirs" => skip_resource_dirs = true,
            _ => root = Some(arg),
        }
    }
    let Some(root) = root else {
        eprintln!("usage: floor [--skip-resource-dirs] DIR");
        return ExitCode::from(2);
    };
    let floor = Floor {
        skip_resource_dirs,
        files: AtomicUsize::new(0),
        bytes: AtomicUsize::new(0),
    };
    floor.visit(Path::new(&root));
    println!(
        "{} SKILL.md files, {} bytes read",
        floor.files.load(Ordering::Relaxed),
        floor.bytes.load(Ordering::Relaxed)
    );
    ExitCode::SUCCESS
}
