//! Checking a skill's declared packages against the package index the
//! caller names (`deps.not-on-index`): a name nobody owns on the index can
//! be registered by anyone later, and the next install then runs their
//! code (dependency confusion).
//!
//! The audit is offline unless the caller gives it an [`IndexCheck`].
//! Python names (normalised, PEP 503) are looked up in `--find-links`
//! folders (a wheel or sdist whose distribution name matches) and on a
//! PEP 503/691 simple index (`GET INDEX/NAME/`); Node names (as written)
//! on an npm registry (`GET REGISTRY/NAME`). Only a 404 (or 410) means
//! "not there"; any other answer, a timeout or an unreadable folder is a
//! failed lookup ([`Lookup::Failed`]), reported as such, never as "not on
//! the index" and never as clean.
//!
//! Each distinct name is looked up once per [`IndexCheck`] (one run),
//! at most [`MAX_INDEX_LOOKUPS`] of them, each within
//! [`INDEX_LOOKUP_TIMEOUT_SECS`]. Requests go to the configured host only:
//! redirects are followed on that host (scheme, host and port) only, so
//! credentials in the index's URL never reach another.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::limits::{
    INDEX_LOOKUP_TIMEOUT_SECS, MAX_FIND_LINKS_ENTRIES, MAX_INDEX_LOOKUPS, MAX_INDEX_REDIRECTS,
};

/// The public Python index, when a caller checks against "PyPI".
pub const PYPI_SIMPLE: &str = "https://pypi.org/simple";

/// The public npm registry.
pub const NPM_REGISTRY: &str = "https://registry.npmjs.org";

/// Where Python packages come from, for the check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PythonIndex {
    /// Folders of wheels and sdists (`--find-links`): a name one of them
    /// holds is on the index.
    pub find_links: Vec<PathBuf>,
    /// A PEP 503/691 simple index (`https://pypi.org/simple`); `None`:
    /// the folders only.
    pub simple: Option<String>,
}

/// What the check is against: Python and Node separately; a language
/// with `None` is not checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexSources {
    /// Python's index.
    pub python: Option<PythonIndex>,
    /// An npm registry's URL (`https://registry.npmjs.org`).
    pub npm: Option<String>,
}

/// The answer for one name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The index has it.
    Found,
    /// The index answered that it does not have it.
    NotFound {
        /// What was asked (the folder(s), the URL).
        asked: String,
    },
    /// The index could not be asked or gave no clear answer.
    Failed {
        /// Why, for the report.
        reason: String,
    },
}

/// Which package world a name belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Ecosystem {
    Python,
    Npm,
}

/// One run's check: the sources, the client, and each name's answer
/// (shared by every skill of the run; cheap to clone).
#[derive(Debug, Clone)]
pub struct IndexCheck {
    inner: Arc<Inner>,
}

/// Each name asked in a run, and its answer once there is one.
type Answers = HashMap<(Ecosystem, String), Arc<OnceLock<Lookup>>>;

#[derive(Debug)]
struct Inner {
    sources: IndexSources,
    client: OnceLock<Result<reqwest::blocking::Client, String>>,
    /// The normalised distribution names the find-links folders hold
    /// (read once), or why one could not be read.
    local: OnceLock<Result<BTreeSet<String>, String>>,
    answers: Mutex<Answers>,
}

impl PartialEq for IndexCheck {
    fn eq(&self, other: &Self) -> bool {
        self.inner.sources == other.inner.sources
    }
}

impl IndexCheck {
    /// A check against `sources` (nothing is read or asked until a name
    /// is looked up).
    pub fn new(sources: IndexSources) -> IndexCheck {
        IndexCheck {
            inner: Arc::new(Inner {
                sources,
                client: OnceLock::new(),
                local: OnceLock::new(),
                answers: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// What is checked against.
    pub fn sources(&self) -> &IndexSources {
        &self.inner.sources
    }

    /// Whether names of `eco` are checked at all.
    pub(crate) fn checks(&self, eco: Ecosystem) -> bool {
        match eco {
            Ecosystem::Python => self.inner.sources.python.is_some(),
            Ecosystem::Npm => self.inner.sources.npm.is_some(),
        }
    }

    /// Looks `name` up (Python: normalised; npm: as written), once per
    /// run; `None` when `eco` is not checked.
    pub(crate) fn lookup(&self, eco: Ecosystem, name: &str) -> Option<Lookup> {
        if !self.checks(eco) {
            return None;
        }
        let cell = {
            let mut answers = self
                .inner
                .answers
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let key = (eco, name.to_owned());
            if let Some(cell) = answers.get(&key) {
                Arc::clone(cell)
            } else if answers.len() >= MAX_INDEX_LOOKUPS {
                return Some(Lookup::Failed {
                    reason: format!(
                        "not checked: the run already looked up {MAX_INDEX_LOOKUPS} names, the most \
                         one run asks"
                    ),
                });
            } else {
                let cell = Arc::new(OnceLock::new());
                answers.insert(key, Arc::clone(&cell));
                cell
            }
        };
        Some(cell.get_or_init(|| self.ask(eco, name)).clone())
    }

    fn ask(&self, eco: Ecosystem, name: &str) -> Lookup {
        match eco {
            Ecosystem::Python => {
                let Some(python) = &self.inner.sources.python else {
                    return Lookup::Found;
                };
                let mut asked = Vec::new();
                if !python.find_links.is_empty() {
                    match self
                        .inner
                        .local
                        .get_or_init(|| local_names(&python.find_links))
                    {
                        Ok(names) if names.contains(name) => return Lookup::Found,
                        Ok(_) => asked.extend(
                            python
                                .find_links
                                .iter()
                                .map(|d| format!("the wheel folder {}", d.display())),
                        ),
                        // An unreadable folder: the index may still have it.
                        Err(reason) if python.simple.is_none() => {
                            return Lookup::Failed {
                                reason: reason.clone(),
                            };
                        }
                        Err(_) => {}
                    }
                }
                let Some(base) = &python.simple else {
                    return Lookup::NotFound {
                        asked: asked.join(", "),
                    };
                };
                let url = format!("{}/{name}/", base.trim_end_matches('/'));
                match self.get(
                    &url,
                    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01",
                ) {
                    Lookup::NotFound { .. } => {
                        asked.push(shown_url(base));
                        Lookup::NotFound {
                            asked: asked.join(", "),
                        }
                    }
                    other => other,
                }
            }
            Ecosystem::Npm => {
                let Some(base) = &self.inner.sources.npm else {
                    return Lookup::Found;
                };
                // A scoped name is one path segment: @scope%2fname.
                let url = format!(
                    "{}/{}",
                    base.trim_end_matches('/'),
                    name.replace('/', "%2f")
                );
                match self.get(
                    &url,
                    "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8",
                ) {
                    Lookup::NotFound { .. } => Lookup::NotFound {
                        asked: shown_url(base),
                    },
                    other => other,
                }
            }
        }
    }

    fn client(&self) -> Result<&reqwest::blocking::Client, String> {
        self.inner
            .client
            .get_or_init(|| {
                reqwest::blocking::Client::builder()
                    .timeout(Duration::from_secs(INDEX_LOOKUP_TIMEOUT_SECS))
                    .connect_timeout(Duration::from_secs(INDEX_LOOKUP_TIMEOUT_SECS))
                    .redirect(reqwest::redirect::Policy::custom(|attempt| {
                        let same_origin = attempt
                            .previous()
                            .first()
                            .is_some_and(|first| first.origin() == attempt.url().origin());
                        if same_origin && attempt.previous().len() <= MAX_INDEX_REDIRECTS {
                            attempt.follow()
                        } else {
                            attempt.stop()
                        }
                    }))
                    .user_agent(concat!("skilldeck-audit/", env!("CARGO_PKG_VERSION")))
                    .build()
                    .map_err(|e| format!("no HTTP client: {e}"))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// `GET url`: 2xx found, 404/410 not found, anything else failed.
    fn get(&self, url: &str, accept: &str) -> Lookup {
        let shown = shown_url(url);
        let parsed = match url::Url::parse(url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => u,
            Ok(u) => {
                return Lookup::Failed {
                    reason: format!("{shown}: a '{}' URL cannot be asked over HTTP", u.scheme()),
                };
            }
            Err(e) => {
                return Lookup::Failed {
                    reason: format!("{shown}: not a URL ({e})"),
                };
            }
        };
        let client = match self.client() {
            Ok(c) => c,
            Err(reason) => return Lookup::Failed { reason },
        };
        match client
            .get(parsed)
            .header(reqwest::header::ACCEPT, accept)
            .send()
        {
            Ok(r) if r.status().is_success() => Lookup::Found,
            Ok(r) if matches!(r.status().as_u16(), 404 | 410) => Lookup::NotFound { asked: shown },
            Ok(r) if r.status().is_redirection() => Lookup::Failed {
                reason: format!(
                    "{shown} answered {} redirecting to another host (or too often): not followed, \
                     so nothing is sent elsewhere",
                    r.status()
                ),
            },
            Ok(r) => Lookup::Failed {
                reason: format!("{shown} answered {}", r.status()),
            },
            Err(e) if e.is_timeout() => Lookup::Failed {
                reason: format!("{shown}: no answer within {INDEX_LOOKUP_TIMEOUT_SECS} s"),
            },
            Err(e) => Lookup::Failed {
                reason: format!("{shown}: {}", error_chain(&e)),
            },
        }
    }
}

/// A URL for messages: without a password or user name in it.
fn shown_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_password(None);
            let _ = u.set_username("");
            u.to_string()
        }
        Err(_) => url.to_owned(),
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// The normalised distribution names of the wheels and sdists directly in
/// `folders` (as uv reads `--find-links`: not recursive).
fn local_names(folders: &[PathBuf]) -> Result<BTreeSet<String>, String> {
    let mut names = BTreeSet::new();
    let mut seen = 0usize;
    for folder in folders {
        let entries = std::fs::read_dir(folder)
            .map_err(|e| format!("the wheel folder {} cannot be read: {e}", folder.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| {
                format!("the wheel folder {} cannot be read: {e}", folder.display())
            })?;
            seen += 1;
            if seen > MAX_FIND_LINKS_ENTRIES {
                return Err(format!(
                    "the wheel folders hold more than {MAX_FIND_LINKS_ENTRIES} entries: not read"
                ));
            }
            if let Some(name) = distribution_of(&entry.file_name().to_string_lossy()) {
                names.insert(name);
            }
        }
    }
    Ok(names)
}

/// The normalised distribution name of a wheel (`{name}-{version}-...whl`,
/// the name with `_` for `-`) or an sdist (`{name}-{version}.tar.gz` or
/// `.zip`); `None` for any other file.
pub fn distribution_of(file_name: &str) -> Option<String> {
    let lower = file_name.to_ascii_lowercase();
    let name = if let Some(stem) = lower.strip_suffix(".whl") {
        // name-version(-build)?-python-abi-platform: five or six parts.
        let parts: Vec<&str> = stem.split('-').collect();
        if !(5..=6).contains(&parts.len()) {
            return None;
        }
        parts[0]
    } else {
        let stem = lower
            .strip_suffix(".tar.gz")
            .or_else(|| lower.strip_suffix(".zip"))?;
        let (name, version) = stem.rsplit_once('-')?;
        if !version.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        name
    };
    (!name.is_empty()).then(|| skilldeck::environment::normalise_name(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wheel_or_sdist_file_name_gives_its_normalised_distribution_name() {
        for (file, name) in [
            ("requests-2.32.3-py3-none-any.whl", Some("requests")),
            (
                "python_dateutil-2.9.0-py2.py3-none-any.whl",
                Some("python-dateutil"),
            ),
            (
                "Zope.Interface-6.0-1-cp312-cp312-linux_x86_64.whl",
                Some("zope-interface"),
            ),
            ("my_pkg-1.0.tar.gz", Some("my-pkg")),
            ("my-pkg-1.0.zip", Some("my-pkg")),
            ("requests.whl", None),
            ("README.md", None),
            ("notes-final.tar.gz", None),
        ] {
            assert_eq!(distribution_of(file).as_deref(), name, "{file}");
        }
    }

    #[test]
    fn a_url_shown_in_a_report_carries_no_credentials() {
        assert_eq!(
            shown_url("https://user:s3cret@pypi.internal/simple"),
            "https://pypi.internal/simple"
        );
    }

    #[test]
    fn names_past_the_run_limit_are_not_checked_and_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let check = IndexCheck::new(IndexSources {
            python: Some(PythonIndex {
                find_links: vec![dir.path().to_path_buf()],
                simple: None,
            }),
            npm: None,
        });
        for i in 0..MAX_INDEX_LOOKUPS {
            assert!(matches!(
                check.lookup(Ecosystem::Python, &format!("p{i}")),
                Some(Lookup::NotFound { .. })
            ));
        }
        // A name already asked is answered again; a new one is not asked.
        assert!(matches!(
            check.lookup(Ecosystem::Python, "p0"),
            Some(Lookup::NotFound { .. })
        ));
        assert!(matches!(
            check.lookup(Ecosystem::Python, "one-more"),
            Some(Lookup::Failed { reason }) if reason.contains("not checked")
        ));
        assert_eq!(check.lookup(Ecosystem::Npm, "x"), None);
    }
}
