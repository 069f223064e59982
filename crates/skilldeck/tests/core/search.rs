//! Search (BM25 over names and descriptions, optional bodies, filters) and
//! name lookup with "did you mean" suggestions.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use skilldeck::deck::Root;
use skilldeck::search::tokenize;
use skilldeck::{
    Deck, DiscoveryOptions, Error, Lookup, Scope, SearchIndex, SearchQuery, did_you_mean, discover,
    lookup, require, suggest,
};

/// (name, description, body)
const PROJECT_SKILLS: [(&str, &str, &str); 4] = [
    (
        "pdf-tools",
        "Extract text and tables from PDF files and fill PDF forms. Use when working with PDF documents.",
        "# PDF tools\nRun scripts/extract.py.\n",
    ),
    (
        "csv-cleaner",
        "Clean messy CSV spreadsheets: fix headers, drop duplicate rows, normalise dates. Use when a CSV file needs tidying.",
        "# CSV cleaner\n",
    ),
    (
        "git-commit",
        "Write conventional commit messages from staged changes. Use when committing.",
        "# Commit\n",
    ),
    (
        "code-review",
        "Review a pull request for bugs, style and missing tests. Use when asked to review code.",
        "# Review\nProfile hot paths with a flamegraph before suggesting optimisations.\n",
    ),
];

const USER_SKILLS: [(&str, &str, &str); 2] = [
    (
        "docker-build",
        "Build and publish Docker images with multi-stage Dockerfiles. Use when containerising an app.",
        "# Docker\n",
    ),
    (
        "release-notes",
        "Draft release notes from the git log and merged pull requests. Use when preparing a release.",
        "# Release\n",
    ),
];

/// Four project skills and two user skills.
fn deck() -> (tempfile::TempDir, Deck) {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    let user = tmp.path().join("user");
    for (root, skills) in [(&project, &PROJECT_SKILLS[..]), (&user, &USER_SKILLS[..])] {
        for (name, description, body) in skills {
            skilldeck_testkit::skill(root, name)
                .description(description)
                .body(body)
                .write();
        }
    }
    let options = DiscoveryOptions {
        roots: vec![
            Root {
                path: project,
                scope: Scope::Project,
                required: true,
            },
            Root {
                path: user,
                scope: Scope::User,
                required: true,
            },
        ],
        ..DiscoveryOptions::default()
    };
    let deck = discover(&options);
    assert_eq!(deck.len(), 6, "{:#?}", deck.diagnostics());
    (tmp, deck)
}

fn names(index: &SearchIndex, query: &SearchQuery) -> Vec<String> {
    index.search(query).into_iter().map(|h| h.name).collect()
}

fn top(index: &SearchIndex, text: &str) -> String {
    index
        .search(&SearchQuery::new(text))
        .first()
        .map(|h| h.name.clone())
        .unwrap_or_default()
}

// ---- ranking ----

#[test]
fn bm25_ranks_the_obviously_relevant_skill_first() {
    let (_tmp, deck) = deck();
    let index = SearchIndex::from_deck(&deck);
    assert_eq!(top(&index, "extract tables from a pdf"), "pdf-tools");
    assert_eq!(top(&index, "docker image"), "docker-build");
    assert_eq!(top(&index, "commit message"), "git-commit");
    assert_eq!(top(&index, "spreadsheet duplicate rows"), "csv-cleaner");
    assert_eq!(top(&index, "review my pull request"), "code-review");
    assert_eq!(top(&index, "prepare release notes"), "release-notes");
}

#[test]
fn hits_carry_scores_scope_and_description_best_first() {
    let (_tmp, deck) = deck();
    let index = SearchIndex::from_deck(&deck);
    let hits = index.search(&SearchQuery::new("pull request"));
    assert_eq!(hits.len(), 2);
    assert!(hits[0].score >= hits[1].score);
    assert!(hits.iter().all(|h| h.score > 0.0));
    let review = hits.iter().find(|h| h.name == "code-review").unwrap();
    assert_eq!(review.scope, Scope::Project);
    assert!(review.description.starts_with("Review a pull request"));
}

#[test]
fn name_match_outranks_description_match() {
    // "git" is in git-commit's name only and in release-notes' description
    // only.
    let (_tmp, deck) = deck();
    let index = SearchIndex::from_deck(&deck);
    let hits = index.search(&SearchQuery::new("git"));
    let order: Vec<&str> = hits.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(order, ["git-commit", "release-notes"]);
    assert!(hits[0].score > hits[1].score);
}

#[test]
fn trailing_s_is_stemmed_on_both_sides() {
    let (_tmp, deck) = deck();
    let index = SearchIndex::from_deck(&deck);
    assert_eq!(top(&index, "pdfs"), "pdf-tools");
    assert_eq!(top(&index, "tool"), "pdf-tools");
    assert_eq!(tokenize("tools class"), ["tool", "class"]);
}

#[test]
fn unknown_terms_give_no_hits() {
    let (_tmp, deck) = deck();
    let index = SearchIndex::from_deck(&deck);
    assert!(
        index
            .search(&SearchQuery::new("kubernetes helm"))
            .is_empty()
    );
    assert!(index.scores("kubernetes").is_empty());
}

#[test]
fn empty_query_lists_every_skill_passing_the_filters_in_name_order() {
    let (_tmp, deck) = deck();
    let index = SearchIndex::from_deck(&deck);
    let all = index.search(&SearchQuery::new("").limit(usize::MAX));
    let order: Vec<&str> = all.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(
        order,
        [
            "code-review",
            "csv-cleaner",
            "docker-build",
            "git-commit",
            "pdf-tools",
            "release-notes"
        ]
    );
    assert!(all.iter().all(|h| h.score == 0.0));
    // Only stop words: same as empty.
    assert_eq!(
        names(&index, &SearchQuery::new("the and of").limit(2)),
        ["code-review", "csv-cleaner"]
    );
    let users = names(&index, &SearchQuery::new("").scopes([Scope::User]));
    assert_eq!(users, ["docker-build", "release-notes"]);
    // Scores need terms.
    assert!(index.scores("").is_empty());
}

#[test]
fn limit_caps_the_hits() {
    let (_tmp, deck) = deck();
    let index = SearchIndex::from_deck(&deck);
    let q = SearchQuery::new("use pdf csv docker git review release");
    assert_eq!(index.search(&q.clone().limit(2)).len(), 2);
    assert_eq!(index.search(&q.clone().limit(0)).len(), 0);
    assert_eq!(index.search(&q.limit(100)).len(), 6);
}

#[test]
fn results_are_deterministic_and_ties_break_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let description = "Format YAML files. Use when YAML needs formatting.";
    for name in ["zeta-yaml", "alpha-yaml", "mid-yaml"] {
        skilldeck_testkit::skill(tmp.path(), name)
            .description(description)
            .write();
    }
    let deck = discover(&DiscoveryOptions::with_roots([tmp.path().to_path_buf()]));
    let forward = SearchIndex::new(deck.skills());
    let mut reversed_skills = deck.skills().to_vec();
    reversed_skills.reverse();
    let reversed = SearchIndex::new(&reversed_skills);
    let q = SearchQuery::new("yaml");
    let a = forward.search(&q);
    assert_eq!(
        a.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(),
        ["alpha-yaml", "mid-yaml", "zeta-yaml"]
    );
    assert_eq!(a, forward.search(&q));
    assert_eq!(a, reversed.search(&q));
    assert_eq!(names(&forward, &q.limit(1)), ["alpha-yaml"]);
}

// ---- filters ----

#[test]
fn scope_filter_keeps_only_those_scopes() {
    let (_tmp, deck) = deck();
    let index = SearchIndex::from_deck(&deck);
    let q = SearchQuery::new("git pull request");
    assert_eq!(
        names(&index, &q.clone().scopes([Scope::User])),
        ["release-notes"]
    );
    let project = names(&index, &q.clone().scopes([Scope::Project]));
    assert_eq!(project.len(), 2);
    assert!(project.contains(&"git-commit".to_owned()));
    assert!(project.contains(&"code-review".to_owned()));
    assert!(index.search(&q.scopes([Scope::Bundled])).is_empty());
}

#[test]
fn name_regex_filter_keeps_only_matching_names() {
    let (_tmp, deck) = deck();
    let index = SearchIndex::from_deck(&deck);
    let re = regex::Regex::new("^(pdf|csv)-").unwrap();
    let hits = names(
        &index,
        &SearchQuery::new("files documents spreadsheets").name_pattern(re),
    );
    assert_eq!(hits, ["pdf-tools", "csv-cleaner"]);
    let none = regex::Regex::new("^nothing$").unwrap();
    assert!(
        index
            .search(&SearchQuery::new("pdf").name_pattern(none))
            .is_empty()
    );
}

#[test]
fn required_keywords_must_all_appear() {
    let (_tmp, deck) = deck();
    let index = SearchIndex::from_deck(&deck);
    // "file" is in pdf-tools and csv-cleaner; only csv-cleaner says "csv".
    assert_eq!(
        names(&index, &SearchQuery::new("file").require("csv")),
        ["csv-cleaner"]
    );
    // Tokenized like the text: "pull-requests" requires "pull" and "request".
    let both = names(&index, &SearchQuery::new("").require("pull-requests"));
    assert_eq!(both, ["code-review", "release-notes"]);
    let q = SearchQuery::new("").require("git").require("release");
    assert_eq!(names(&index, &q), ["release-notes"]);
    // A keyword no skill holds: nothing.
    assert!(
        index
            .search(&SearchQuery::new("pdf").require("kubernetes"))
            .is_empty()
    );
}

// ---- bodies ----

#[test]
fn bodies_are_indexed_only_when_asked() {
    let (_tmp, deck) = deck();
    let plain = SearchIndex::from_deck(&deck);
    assert!(!plain.indexes_bodies());
    assert!(plain.search(&SearchQuery::new("flamegraph")).is_empty());
    let with_bodies = SearchIndex::with_bodies(deck.skills());
    assert!(with_bodies.indexes_bodies());
    assert!(with_bodies.diagnostics().is_empty());
    assert_eq!(top(&with_bodies, "flamegraph"), "code-review");
    assert_eq!(
        names(&with_bodies, &SearchQuery::new("").require("flamegraph")),
        ["code-review"]
    );
    // The frontmatter is not body text.
    assert!(
        with_bodies
            .search(&SearchQuery::new("").require("name"))
            .is_empty()
    );
}

#[test]
fn unreadable_body_is_a_diagnostic_not_a_failure() {
    let (_tmp, deck) = deck();
    let skill = deck.get("pdf-tools").unwrap();
    std::fs::remove_file(&skill.skill_md).unwrap();
    let index = SearchIndex::with_bodies(deck.skills());
    assert_eq!(index.len(), 6);
    assert_eq!(index.diagnostics().len(), 1);
    assert_eq!(top(&index, "pdf"), "pdf-tools");
}

#[test]
fn scores_map_every_matching_skill() {
    let (_tmp, deck) = deck();
    let index = SearchIndex::from_deck(&deck);
    let scores = index.scores("pdf forms");
    assert_eq!(scores.len(), 1);
    assert!(scores["pdf-tools"] > 0.0);
    let scores = index.scores("pull request git");
    assert_eq!(scores.len(), 3);
    let hits = index.search(&SearchQuery::new("pull request git"));
    for hit in hits {
        assert_eq!(scores[&hit.name], hit.score);
    }
}

// ---- lookup ----

#[test]
fn exact_name_is_found() {
    let (_tmp, deck) = deck();
    match lookup(&deck, "pdf-tools") {
        Lookup::Exact(skill) => assert_eq!(skill.name, "pdf-tools"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn case_and_nfkc_variants_are_found() {
    let (_tmp, deck) = deck();
    for name in ["PDF-Tools", " pdf-tools ", "ｐｄｆ-ｔｏｏｌｓ"] {
        match lookup(&deck, name) {
            Lookup::Exact(skill) => assert_eq!(skill.name, "pdf-tools", "{name}"),
            other => panic!("{name}: {other:?}"),
        }
    }
}

#[test]
fn typo_suggests_the_intended_name() {
    let (_tmp, deck) = deck();
    for (typo, meant) in [
        ("pdf-tols", "pdf-tools"),
        ("pdf-toosl", "pdf-tools"),
        ("pdftools", "pdf-tools"),
        ("dokcer-build", "docker-build"),
        ("csv-claener", "csv-cleaner"),
        ("git-comit", "git-commit"),
    ] {
        match lookup(&deck, typo) {
            Lookup::Suggestions(s) => assert_eq!(s.first().map(String::as_str), Some(meant)),
            other => panic!("{typo}: {other:?}"),
        }
    }
}

#[test]
fn did_you_mean_message_names_the_typo_and_the_suggestion() {
    let (_tmp, deck) = deck();
    let names = deck.skills().iter().map(|s| s.name.as_str());
    assert_eq!(
        did_you_mean("pdf-tols", names).as_deref(),
        Some("unknown skill 'pdf-tols'; did you mean 'pdf-tools'?")
    );
    let err = require(&deck, "pdf-tols").unwrap_err();
    assert!(matches!(err, Error::UnknownSkill { .. }));
    assert_eq!(
        err.to_string(),
        "unknown skill 'pdf-tols'; did you mean 'pdf-tools'?"
    );
    assert_eq!(require(&deck, "pdf-tools").unwrap().name, "pdf-tools");
}

#[test]
fn prefix_suggests_completions() {
    let (_tmp, deck) = deck();
    let names: Vec<&str> = deck.skills().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(suggest("dock", names.iter()), ["docker-build"]);
    assert_eq!(suggest("pdf", names.iter()), ["pdf-tools"]);
    assert_eq!(suggest("rel", names.iter()), ["release-notes"]);
}

#[test]
fn fuzzy_subsequence_suggests_abbreviations() {
    let (_tmp, deck) = deck();
    let names: Vec<&str> = deck.skills().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        suggest("docbuild", names.iter())
            .first()
            .map(String::as_str),
        Some("docker-build")
    );
    assert_eq!(
        suggest("review", names.iter()).first().map(String::as_str),
        Some("code-review")
    );
}

#[test]
fn word_initial_acronym_is_suggested_but_scattered_letters_are_not() {
    assert_eq!(suggest("cdr", ["code-review"]), ["code-review"]);
    assert!(suggest("eiw", ["code-review"]).is_empty());
    assert!(suggest("oee", ["code-review"]).is_empty());
}

#[test]
fn suggestions_are_at_most_three_best_first() {
    let candidates = ["skill-e", "skill-d", "skill-c", "skill-b", "skill-a"];
    assert_eq!(
        suggest("skill", candidates),
        ["skill-a", "skill-b", "skill-c"]
    );
}

#[test]
fn unrelated_names_get_no_suggestion() {
    let (_tmp, deck) = deck();
    let names: Vec<&str> = deck.skills().iter().map(|s| s.name.as_str()).collect();
    for name in [
        "kubernetes",
        "weather-forecast",
        "zzz",
        "x",
        "translate-audio",
    ] {
        assert!(
            suggest(name, names.iter()).is_empty(),
            "{name}: {:?}",
            suggest(name, names.iter())
        );
        assert_eq!(did_you_mean(name, names.iter()), None, "{name}");
    }
    let err = require(&deck, "kubernetes").unwrap_err();
    assert_eq!(err.to_string(), "unknown skill 'kubernetes'");
}
