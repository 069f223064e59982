//! The `activate_skill` catalog at scale: a library far larger than the
//! default budget still gives the model a ranked list in which every listed
//! skill has a description, the operator's choices are listed, a closing
//! line counts the rest and points to `search_skills`, and no server path
//! appears.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use skilldeck::{Config, DiscoveryOptions};
use skilldeck_mcp::{Engine, ServeOptions, tools};

/// Four collections of 250 skills each, with descriptions of a realistic
/// length (about 150 characters).
fn library(root: &Path) {
    for collection in ["alpha-pack", "beta-pack", "gamma-pack", "delta-pack"] {
        for i in 0..250 {
            let name = format!("{collection}-{i:03}");
            skilldeck_testkit::skill(root.join(collection), &name)
                .description(format!(
                    "Handles {collection} task number {i}: reads the inputs, checks them \
                     against the rules and writes a short report. Use when the user asks for {name}."
                ))
                .body("Steps.\n")
                .write();
        }
    }
}

/// `(name, description)` of every `<skill>` in the description.
fn entries(text: &str) -> Vec<(String, Option<String>)> {
    text.split("<skill>")
        .skip(1)
        .map(|entry| {
            let field = |tag: &str| {
                let open = format!("<{tag}>");
                let start = entry.find(&open)? + open.len();
                let end = entry[start..].find(&format!("</{tag}>"))? + start;
                Some(entry[start..end].to_owned())
            };
            (field("name").unwrap(), field("description"))
        })
        .collect()
}

#[test]
fn a_thousand_skills_get_a_ranked_catalog_with_descriptions_and_a_closing_count() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    library(&root);
    let config = Config::parse(
        "[modes]\n\"delta-pack-249\" = \"pinned\"\n\n[catalog.priority]\n\"gamma-pack-200\" = 10\n",
        &tmp.path().join("skilldeck.toml"),
    )
    .unwrap();
    let discovery =
        DiscoveryOptions::from_config(&config, tmp.path(), Some(std::slice::from_ref(&root)));
    let mut options = ServeOptions::from_config(&config, discovery).unwrap();
    options.reload = None;
    let engine = Engine::new(options).unwrap();
    let snapshot = engine.snapshot();
    assert_eq!(snapshot.model_names.len(), 1_000);

    let activate = tools::definitions(&snapshot)
        .into_iter()
        .find(|t| t.name == "activate_skill")
        .unwrap();
    let description = activate.description.unwrap().to_string();
    let listed = entries(&description);

    // Far from all fit the default budget, but many do, each with a
    // description.
    assert!(
        listed.len() > 100 && listed.len() < 1_000,
        "{}",
        listed.len()
    );
    for (name, desc) in &listed {
        assert!(
            desc.as_deref().is_some_and(|d| !d.is_empty()),
            "{name} has no description"
        );
    }
    // Ranked: the pinned skill first, then the priority one; the rest take
    // turns across the four collections (not the alphabetical head).
    assert_eq!(listed[0].0, "delta-pack-249");
    assert_eq!(listed[1].0, "gamma-pack-200");
    for collection in ["alpha-pack", "beta-pack", "gamma-pack", "delta-pack"] {
        let n = listed
            .iter()
            .filter(|(n, _)| n.starts_with(collection))
            .count();
        assert!(
            n * 4 + 8 >= listed.len(),
            "{collection}: {n} of {}",
            listed.len()
        );
    }
    // The closing line counts the others and names the search tool.
    let line = format!(
        "{} more skills are not listed here; find them with the `search_skills` tool.",
        1_000 - listed.len()
    );
    assert!(
        description.trim_end().ends_with(&line),
        "{}",
        &description[description.len() - 200..]
    );
    assert_eq!(snapshot.catalog.unlisted, 1_000 - listed.len());
    // No path of this machine.
    assert!(!description.contains("<location>"));
    assert!(!description.contains(&tmp.path().display().to_string()));
}
