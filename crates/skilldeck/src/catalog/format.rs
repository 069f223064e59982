//! [`CatalogFormat`]: how the catalog is written.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::error::Error;

/// How the catalog is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CatalogFormat {
    /// The client guide's indented `<available_skills>` block.
    #[default]
    Xml,
    /// Byte-identical to `skills-ref to-prompt` (0.1.1).
    SkillsRef,
    /// A Markdown section with one bullet per skill.
    Markdown,
    /// A JSON array of objects.
    Json,
}

impl CatalogFormat {
    /// Every format.
    pub const ALL: [CatalogFormat; 4] = [
        CatalogFormat::Xml,
        CatalogFormat::SkillsRef,
        CatalogFormat::Markdown,
        CatalogFormat::Json,
    ];

    /// Its name (`xml`, `skills-ref`, `markdown`, `json`).
    pub fn as_str(self) -> &'static str {
        match self {
            CatalogFormat::Xml => "xml",
            CatalogFormat::SkillsRef => "skills-ref",
            CatalogFormat::Markdown => "markdown",
            CatalogFormat::Json => "json",
        }
    }
}

impl fmt::Display for CatalogFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CatalogFormat {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        CatalogFormat::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| Error::InvalidValue {
                what: "catalog format",
                value: s.to_owned(),
                expected: "xml, skills-ref, markdown or json",
            })
    }
}
