//! The registry's validated names: a [`Namespace`], a [`Label`], an
//! [`AgentId`] and a [`SkillRef`] (`namespace/name`). Each is checked once,
//! where it enters (a path segment, a JSON body, a command line), so the
//! rest of the code never sees an invalid one.

use std::fmt;

/// The longest namespace, agent id or skill name part of a reference.
pub const MAX_NAMESPACE_LEN: usize = 63;
/// The longest label.
pub const MAX_LABEL_LEN: usize = 32;
/// The longest agent id.
pub const MAX_AGENT_ID_LEN: usize = 63;
/// The label the registry moves itself on publish and yank.
pub const LATEST: &str = "latest";
/// A label as a regular expression: a slug that starts with a letter.
pub const LABEL_PATTERN: &str = "^[a-z][a-z0-9]*(-[a-z0-9]+)*$";
/// The namespace a publish without `?namespace=` goes to.
pub const DEFAULT_NAMESPACE: &str = "default";

/// The namespace `given`, or [`DEFAULT_NAMESPACE`] when none is given:
/// the one rule for a missing namespace (publish over the API and the CLI,
/// install, every `NS/NAME` argument that may omit `NS/`).
pub fn namespace_or_default(given: Option<&str>) -> Result<Namespace, NameError> {
    Namespace::new(given.unwrap_or(DEFAULT_NAMESPACE))
}

/// Why a name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} '{value}' is invalid: {reason}")]
pub struct NameError {
    /// What kind of name (`namespace`, `label`, `agent id`, `skill reference`).
    pub kind: &'static str,
    /// The text given.
    pub value: String,
    /// The rule it broke.
    pub reason: &'static str,
}

/// The core's slug rule ([`skilldeck::spec::SLUG_PATTERN`]) up to `max`
/// characters (so it reads like a spec skill name).
fn check_slug(kind: &'static str, value: &str, max: usize) -> Result<(), NameError> {
    let fail = |reason| {
        Err(NameError {
            kind,
            value: value.to_owned(),
            reason,
        })
    };
    match skilldeck::spec::slug_problem(value, max) {
        Some(problem) => fail(problem.reason()),
        None => Ok(()),
    }
}

macro_rules! slug_type {
    ($(#[$doc:meta])* $name:ident, $kind:literal, $max:expr, $check:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Validates `value`.
            pub fn new(value: &str) -> Result<Self, NameError> {
                let check: fn(&str) -> Result<(), NameError> = $check;
                check(value)?;
                Ok($name(value.to_owned()))
            }

            /// The name as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = NameError;
            fn try_from(value: String) -> Result<Self, NameError> {
                $name::new(&value)
            }
        }

        impl From<$name> for String {
            fn from(value: $name) -> String {
                value.0
            }
        }

        impl std::str::FromStr for $name {
            type Err = NameError;
            fn from_str(s: &str) -> Result<Self, NameError> {
                $name::new(s)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

slug_type!(
    /// A namespace: `^[a-z0-9-]{1,63}$`, no leading, trailing or double `-`.
    Namespace,
    "namespace",
    MAX_NAMESPACE_LEN,
    |v| check_slug("namespace", v, MAX_NAMESPACE_LEN)
);

slug_type!(
    /// An agent id: `^[a-z0-9-]{1,63}$`, no leading, trailing or double `-`.
    AgentId,
    "agent id",
    MAX_AGENT_ID_LEN,
    |v| check_slug("agent id", v, MAX_AGENT_ID_LEN)
);

slug_type!(
    /// A label such as `latest` or `production`: starts with a letter,
    /// `^[a-z][a-z0-9-]{0,31}$`. A label never parses as a version, so
    /// `{version}` in a path can be either.
    Label,
    "label",
    MAX_LABEL_LEN,
    |v| {
        check_slug("label", v, MAX_LABEL_LEN)?;
        if !v.starts_with(|c: char| c.is_ascii_lowercase()) {
            return Err(NameError {
                kind: "label",
                value: v.to_owned(),
                reason: "it must start with a letter",
            });
        }
        Ok(())
    }
);

/// A skill in the registry: `namespace/name`, where `name` is the
/// SKILL.md name (the spec's ASCII rule: lowercase letters, digits, `-`).
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub struct SkillRef {
    namespace: Namespace,
    name: String,
}

impl SkillRef {
    /// A reference from its two parts.
    pub fn new(namespace: &str, name: &str) -> Result<SkillRef, NameError> {
        let namespace = Namespace::new(namespace)?;
        // The spec's rule, from the core (ASCII, as packages are named);
        // text the core would have to trim is refused, not rewritten.
        match skilldeck::SkillName::with_charset(name, skilldeck::NameCharset::Ascii) {
            Ok(valid) if valid.as_str() == name => {}
            _ => {
                return Err(NameError {
                    kind: "skill name",
                    value: name.to_owned(),
                    reason: "it breaks the spec's name rule: a-z, 0-9 and '-', \
                             no leading, trailing or double '-', at most 64 characters",
                });
            }
        }
        Ok(SkillRef {
            namespace,
            name: name.to_owned(),
        })
    }

    /// Parses `namespace/name`.
    pub fn parse(text: &str) -> Result<SkillRef, NameError> {
        match text.split_once('/') {
            Some((ns, name)) => SkillRef::new(ns, name),
            None => Err(NameError {
                kind: "skill reference",
                value: text.to_owned(),
                reason: "expected namespace/name",
            }),
        }
    }

    /// Parses `namespace/name`, or a bare `name` in [`DEFAULT_NAMESPACE`]
    /// ([`namespace_or_default`]): what a command line takes, so `install
    /// foo` names the skill `publish` put in `default/foo`.
    pub fn parse_or_default(text: &str) -> Result<SkillRef, NameError> {
        match text.split_once('/') {
            Some(_) => SkillRef::parse(text),
            None => SkillRef::new(namespace_or_default(None)?.as_str(), text),
        }
    }

    /// The namespace.
    pub fn namespace(&self) -> &Namespace {
        &self.namespace
    }

    /// The skill name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for SkillRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

impl TryFrom<String> for SkillRef {
    type Error = NameError;
    fn try_from(value: String) -> Result<Self, NameError> {
        SkillRef::parse(&value)
    }
}

impl From<SkillRef> for String {
    fn from(value: SkillRef) -> String {
        value.to_string()
    }
}

impl std::str::FromStr for SkillRef {
    type Err = NameError;
    fn from_str(s: &str) -> Result<Self, NameError> {
        SkillRef::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_refuse_uppercase_slashes_and_edge_hyphens() {
        for bad in ["", "A", "a/b", "-a", "a-", "a--b", "a b", "é"] {
            assert!(Namespace::new(bad).is_err(), "{bad:?} was accepted");
        }
        assert!(Namespace::new("acme-2").is_ok());
        assert!(Namespace::new(&"a".repeat(MAX_NAMESPACE_LEN + 1)).is_err());
    }

    #[test]
    fn a_label_starts_with_a_letter_so_it_never_reads_as_a_version() {
        assert!(Label::new("production").is_ok());
        assert!(Label::new("1-0").is_err());
    }

    #[test]
    fn a_skill_reference_is_namespace_slash_name() {
        let r = SkillRef::parse("acme/pdf-tools").unwrap();
        assert_eq!((r.namespace().as_str(), r.name()), ("acme", "pdf-tools"));
        assert_eq!(r.to_string(), "acme/pdf-tools");
        for bad in ["pdf-tools", "acme/", "/pdf", "acme/pdf/x", "Acme/pdf"] {
            assert!(SkillRef::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn a_skill_name_follows_the_spec_rule_without_trimming() {
        for bad in [
            "acme/PDF",
            "acme/a--b",
            "acme/-a",
            "acme/\u{e9}t\u{e9}",
            "acme/ pdf",
            "acme/pdf ",
        ] {
            assert!(SkillRef::parse(bad).is_err(), "{bad:?} was accepted");
        }
        assert!(SkillRef::parse(&format!("acme/{}", "a".repeat(65))).is_err());
        assert!(SkillRef::parse(&format!("acme/{}", "a".repeat(64))).is_ok());
    }

    #[test]
    fn names_refuse_invalid_text_when_deserialised() {
        assert!(serde_json::from_str::<AgentId>("\"ok-agent\"").is_ok());
        assert!(serde_json::from_str::<AgentId>("\"Bad Agent\"").is_err());
    }
}
