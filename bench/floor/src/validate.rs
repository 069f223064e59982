//! The I/O floor of validation, the yardstick for `skilldeck validate -r`.
//!
//! Does the system calls validation with its lints needs and next to no
//! work in user space: walks the tree on all cores as skilldeck does (one
//! `open` and `getdents64` calls per folder into a reused buffer, a skill's
//! `scripts/`, `references/` and `assets/` not entered, `.git` and
//! `node_modules` skipped, no symlink followed); for every `SKILL.md`, opens
//! it relative to its folder, `fstat`s it and reads it whole; one `stat` per
//! local link target; and every linked Markdown file is opened, read whole
//! and its own local targets `stat`ed (the nested-reference lint). Nothing
//! is parsed: link targets are found by a byte search (`](` and the three
//! resource folder names), cruder and cheaper than skilldeck's scanner.
//! `strace -c -f` of both shows the same system calls (docs/benchmarks.md).
//!
//! `floor-validate DIR [RUNS]`:
//! - with no RUNS, one pass, printing what it did (run it as a whole process
//!   beside `skilldeck validate -r`);
//! - with RUNS, also the in-process floors as one JSON line, min and median
//!   seconds of RUNS passes each: `walked` (walk and I/O, what `validate -r`
//!   does) and `dirs` (the I/O of each skill from its folder's path, no walk:
//!   what `validate_many` over a list of folders does).

use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir};

const RESOURCE_DIRS: [&[u8]; 3] = [b"scripts", b"references", b"assets"];
const SKIPPED_DIRS: [&[u8]; 2] = [b".git", b"node_modules"];
const LISTING_BYTES: usize = 64 * 1024;

thread_local! {
    static LISTING: std::cell::RefCell<Vec<MaybeUninit<u8>>> =
        std::cell::RefCell::new(vec![MaybeUninit::uninit(); LISTING_BYTES]);
    static READ: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[derive(Default)]
struct Counts {
    /// The skill folders found, when asked for (the untimed first pass).
    found: Option<std::sync::Mutex<Vec<PathBuf>>>,
    skills: AtomicUsize,
    linked_read: AtomicUsize,
    stats: AtomicUsize,
    bytes: AtomicUsize,
}

fn open_dir(path: &Path) -> Option<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NONBLOCK;
    rustix::fs::open(path, flags, Mode::empty()).ok()
}

impl Counts {
    fn visit(&self, dir: &Path) {
        let Some(fd) = open_dir(dir) else {
            return;
        };
        let mut subdirs: Vec<Vec<u8>> = Vec::new();
        let mut is_skill = false;
        LISTING.with(|cell| {
            let mut buffer = cell.borrow_mut();
            let mut entries = RawDir::new(&fd, &mut buffer[..]);
            while let Some(Ok(entry)) = entries.next() {
                let name = entry.file_name().to_bytes();
                if name == b"." || name == b".." {
                    continue;
                }
                match entry.file_type() {
                    FileType::Directory if !SKIPPED_DIRS.contains(&name) => {
                        subdirs.push(name.to_vec())
                    }
                    FileType::RegularFile if name == b"SKILL.md" => is_skill = true,
                    _ => {}
                }
            }
        });
        if is_skill {
            if let Some(found) = &self.found {
                found
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(dir.to_path_buf());
            }
            self.skill(fd.as_fd(), Path::new("SKILL.md"));
            subdirs.retain(|name| !RESOURCE_DIRS.contains(&name.as_slice()));
        }
        drop(fd);
        subdirs.par_iter().for_each(|name| {
            self.visit(&dir.join(std::ffi::OsStr::from_bytes(name)));
        });
    }

    /// The I/O of one skill: `at` is its folder (or the working folder with
    /// `skill_md` a whole path), `skill_md` its `SKILL.md`.
    fn skill(&self, at: BorrowedFd<'_>, skill_md: &Path) {
        self.skills.fetch_add(1, Ordering::Relaxed);
        let folder = skill_md.parent().unwrap_or(Path::new(""));
        let Some(targets) = self.read_targets(at, skill_md, None) else {
            return;
        };
        // One `stat` a path a skill, as skilldeck keeps them.
        let mut stats: Vec<(PathBuf, Option<FileType>, usize)> = Vec::new();
        let mut stat = |path: PathBuf| -> (Option<FileType>, usize) {
            if let Some((_, kind, len)) = stats.iter().find(|(p, _, _)| *p == path) {
                return (*kind, *len);
            }
            self.stats.fetch_add(1, Ordering::Relaxed);
            let (kind, len) = match rustix::fs::statat(at, &path, AtFlags::empty()) {
                Ok(stat) => (
                    Some(FileType::from_raw_mode(stat.st_mode)),
                    usize::try_from(stat.st_size).unwrap_or(0),
                ),
                Err(_) => (None, 0),
            };
            stats.push((path, kind, len));
            (kind, len)
        };
        let mut seen: Vec<&[u8]> = Vec::new();
        for target in &targets {
            if seen.contains(&target.as_slice()) {
                continue;
            }
            seen.push(target);
            let path = folder.join(std::ffi::OsStr::from_bytes(target));
            let (kind, len) = stat(path.clone());
            if kind == Some(FileType::RegularFile)
                && target.ends_with(b".md")
                && !target.ends_with(b"SKILL.md")
            {
                let from = path.parent().unwrap_or(folder).to_path_buf();
                if let Some(onward) = self.read_targets(at, &path, Some(len)) {
                    for next in &onward {
                        stat(from.join(std::ffi::OsStr::from_bytes(next)));
                    }
                }
                self.linked_read.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Opens `path`, reads it whole (`fstat` first when its length is not
    /// known from a `stat`), closes it, and returns its local link targets.
    fn read_targets(
        &self,
        at: BorrowedFd<'_>,
        path: &Path,
        len: Option<usize>,
    ) -> Option<Vec<Vec<u8>>> {
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(at, path, flags, Mode::empty()).ok()?;
        let len = match len {
            Some(len) => len,
            None => usize::try_from(rustix::fs::fstat(&fd).ok()?.st_size).ok()?,
        };
        READ.with(|cell| {
            let mut buffer = cell.borrow_mut();
            // Grown, never shrunk: only new capacity is zeroed, once.
            if buffer.len() <= len {
                buffer.resize(len + 1, 0);
            }
            let n = rustix::io::read(&fd, &mut buffer[..=len]).ok()?;
            self.bytes.fetch_add(n, Ordering::Relaxed);
            Some(targets(&buffer[..n]))
        })
    }
}

/// Local link targets by byte search: `](target)` and bare paths under the
/// three resource folders. No fence, code span or URL rule beyond skipping
/// `scheme:`, `#` and `/` starts.
fn targets(text: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let end = |rest: &[u8]| {
        rest.iter()
            .position(|b| b" \t\r\n)`'\"<>,;|]".contains(b))
            .unwrap_or(rest.len())
    };
    let mut keep = |raw: &[u8]| {
        let raw = raw.split(|&b| b == b'#').next().unwrap_or(raw);
        let raw = raw.strip_prefix(b"./").unwrap_or(raw);
        let raw = raw.strip_suffix(b".").unwrap_or(raw);
        let raw = raw.strip_suffix(b"/").unwrap_or(raw);
        let bare_dir = RESOURCE_DIRS.contains(&raw);
        if !raw.is_empty()
            && !bare_dir
            && raw[0] != b'/'
            && !raw.contains(&b':')
            && !raw.contains(&b'*')
        {
            out.push(raw.to_vec());
        }
    };
    // Code fences: "```" at a line start opens or closes one; a link inside
    // is an example (skilldeck does the same, and more).
    let mut fences: Vec<usize> = memchr::memmem::find_iter(text, b"```")
        .filter(|&at| at == 0 || text[at - 1] == b'\n')
        .collect();
    if fences.len() % 2 == 1 {
        fences.push(text.len());
    }
    let fenced = |at: usize| fences.chunks(2).any(|f| f[0] <= at && at < f[1]);
    for at in memchr::memmem::find_iter(text, b"](") {
        if fenced(at) {
            continue;
        }
        let rest = &text[at + 2..];
        keep(&rest[..end(rest)]);
    }
    for dir in [&b"references/"[..], b"scripts/", b"assets/"] {
        for at in memchr::memmem::find_iter(text, dir) {
            if fenced(at) {
                continue;
            }
            let word_start = at == 0
                || !(text[at - 1].is_ascii_alphanumeric()
                    || text[at - 1] == b'/'
                    || text[at - 1] == b'(');
            if word_start {
                let rest = &text[at..];
                keep(&rest[..end(rest)]);
            }
        }
    }
    out
}

fn timed(runs: usize, mut pass: impl FnMut()) -> (f64, f64) {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            pass();
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    (times[0], times[times.len() / 2])
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(root) = args.next() else {
        eprintln!("usage: floor-validate DIR [RUNS]");
        return ExitCode::from(2);
    };
    let root = PathBuf::from(root);
    let counts = Counts {
        found: Some(Default::default()),
        ..Counts::default()
    };
    counts.visit(&root);
    let Some(runs) = args.next() else {
        println!(
            "{} SKILL.md files, {} linked Markdown files read, {} stats, {} bytes read",
            counts.skills.load(Ordering::Relaxed),
            counts.linked_read.load(Ordering::Relaxed),
            counts.stats.load(Ordering::Relaxed),
            counts.bytes.load(Ordering::Relaxed),
        );
        return ExitCode::SUCCESS;
    };
    let Ok(runs) = runs.parse::<usize>() else {
        eprintln!("RUNS is a count of passes, not {runs:?}");
        return ExitCode::from(2);
    };
    let runs = runs.max(1);
    // The skill folders the first pass found, for the pass without the walk.
    let dirs = counts
        .found
        .map(|found| {
            found
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        })
        .unwrap_or_default();
    let walked = timed(runs, || Counts::default().visit(&root));
    let cwd = rustix::fs::CWD;
    let by_dir = timed(runs, || {
        let counts = Counts::default();
        dirs.par_iter()
            .for_each(|dir| counts.skill(cwd, &dir.join("SKILL.md")));
    });
    println!(
        "{{\"skills\": {}, \"walked\": [{}, {}], \"dirs\": [{}, {}]}}",
        dirs.len(),
        walked.0,
        walked.1,
        by_dir.0,
        by_dir.1
    );
    ExitCode::SUCCESS
}
