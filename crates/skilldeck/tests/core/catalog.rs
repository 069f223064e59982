#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The system-prompt catalog: formats, escaping, filtering, ranking, budgets.

use std::collections::HashMap;
use std::path::PathBuf;

use skilldeck::HostFields;
use skilldeck::catalog::{
    self, Budget, CatalogFormat, CatalogOptions, Encoding, Outcome, Reason, count_tokens,
};
use skilldeck::spec::{Node, NodeKind};
use skilldeck::{DiscoveryOptions, Error, Frontmatter, Pos, Scope, Skill, SkillMode, discover};

fn skill(name: &str, description: &str) -> Skill {
    let dir = PathBuf::from(format!("/skills/{name}"));
    Skill {
        name: name.to_owned(),
        description: description.to_owned(),
        resolved_dir: None,
        skill_md: dir.join("SKILL.md"),
        scope: Scope::Extra,
        root: std::path::Path::new("/skills").into(),
        mode: SkillMode::Auto,
        host: HostFields::default(),
    }
}

fn with_mode(mut s: Skill, mode: SkillMode) -> Skill {
    s.mode = mode;
    s
}

fn with_field(mut s: Skill, key: &str, value: &str) -> Skill {
    let mut fm = Frontmatter::default();
    fm.extra.push((
        key.to_owned(),
        Node {
            kind: NodeKind::Scalar(value.to_owned()),
            pos: Pos::default(),
        },
    ));
    s.host = HostFields::from_frontmatter(&fm);
    s
}

fn options(format: CatalogFormat, budget: Option<Budget>) -> CatalogOptions {
    CatalogOptions {
        format,
        budget,
        ..CatalogOptions::default()
    }
}

fn render(skills: &[Skill], format: CatalogFormat, budget: Option<Budget>) -> catalog::Catalog<'_> {
    catalog::render(skills, &options(format, budget), None).unwrap()
}

fn tokens(limit: usize) -> Option<Budget> {
    Some(Budget::Tokens {
        limit,
        encoding: Encoding::O200kBase,
    })
}

/// A deterministic description of about `words` words.
fn prose(seed: usize, words: usize) -> String {
    const WORDS: [&str; 24] = [
        "extract",
        "tables",
        "from",
        "PDF",
        "files",
        "and",
        "convert",
        "them",
        "to",
        "CSV;",
        "use",
        "when",
        "the",
        "user",
        "asks",
        "about",
        "invoices,",
        "reports",
        "or",
        "forms.",
        "naïve",
        "café",
        "<b>",
        "R&D",
    ];
    (0..words)
        .map(|w| WORDS[(seed * 7 + w * 13 + w * w) % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

fn many(n: usize) -> Vec<Skill> {
    (0..n)
        .map(|i| skill(&format!("skill-{i:03}"), &prose(i, 10 + (i * 7) % 40)))
        .collect()
}

/// Entries of an xml catalog, as (name, description) in output order.
fn xml_entries(text: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut current: Option<(String, Option<String>)> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("<name>") {
            current = Some((rest.trim_end_matches("</name>").to_owned(), None));
        } else if let Some(rest) = line.strip_prefix("<description>") {
            if let Some(c) = current.as_mut() {
                c.1 = Some(rest.trim_end_matches("</description>").to_owned());
            }
        } else if line == "</skill>" {
            out.extend(current.take());
        }
    }
    out
}

fn names(text: &str) -> Vec<String> {
    xml_entries(text).into_iter().map(|(n, _)| n).collect()
}

#[test]
fn xml_is_the_client_guide_block_with_two_space_indentation() {
    let skills = [skill("pdf-tools", "Extract text. Use when given PDFs.")];
    let text = render(&skills, CatalogFormat::Xml, None).text;
    assert_eq!(
        text,
        "<available_skills>\n  <skill>\n    <name>pdf-tools</name>\n    \
         <description>Extract text. Use when given PDFs.</description>\n    \
         <location>/skills/pdf-tools/SKILL.md</location>\n  </skill>\n</available_skills>\n"
    );
}

#[test]
fn escaping_covers_all_five_characters_in_name_description_and_location() {
    let mut s = skill("a&b<c>d\"e'f", "x & y < z > w \" v ' u");
    s.skill_md = PathBuf::from("/p&q<r>s\"t'u/SKILL.md");
    s.resolved_dir = Some(PathBuf::from("/p&q<r>s\"t'u").into());
    let skills = [s];

    let xml = render(&skills, CatalogFormat::Xml, None).text;
    assert!(
        xml.contains("<name>a&amp;b&lt;c&gt;d&quot;e&apos;f</name>"),
        "{xml}"
    );
    assert!(xml.contains("<description>x &amp; y &lt; z &gt; w &quot; v &apos; u</description>"));
    assert!(xml.contains("<location>/p&amp;q&lt;r&gt;s&quot;t&apos;u/SKILL.md</location>"));

    let md = render(&skills, CatalogFormat::Markdown, None).text;
    assert_eq!(
        md,
        "## Available skills\n\n- **a&amp;b&lt;c&gt;d&quot;e&apos;f**: x &amp; y &lt; z &gt; w \
         &quot; v &apos; u (`/p&amp;q&lt;r&gt;s&quot;t&apos;u/SKILL.md`)\n"
    );

    let json = render(&skills, CatalogFormat::Json, None).text;
    for raw in ['&', '<', '>', '\''] {
        assert!(!json.contains(raw), "{raw} left raw in {json}");
    }
    assert!(
        json.contains(r#""name":"a\u0026b\u003cc\u003ed\"e\u0027f""#),
        "{json}"
    );
    let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(parsed[0]["name"], "a&b<c>d\"e'f");
    assert_eq!(parsed[0]["description"], "x & y < z > w \" v ' u");
    assert_eq!(parsed[0]["location"], "/p&q<r>s\"t'u/SKILL.md");

    // skills-ref: Python's html.escape for name and description, the
    // location as is.
    let sr = render(&skills, CatalogFormat::SkillsRef, None).text;
    assert!(sr.contains("\na&amp;b&lt;c&gt;d&quot;e&#x27;f\n"), "{sr}");
    assert!(sr.contains("\nx &amp; y &lt; z &gt; w &quot; v &#x27; u\n"));
    assert!(sr.contains("\n/p&q<r>s\"t'u/SKILL.md\n"));
}

#[test]
fn empty_catalog_is_empty_text_not_an_empty_tag() {
    for format in [
        CatalogFormat::Xml,
        CatalogFormat::Markdown,
        CatalogFormat::Json,
    ] {
        assert_eq!(render(&[], format, None).text, "", "{format}");
        // Only excluded skills: empty too.
        let off = [with_mode(skill("a", "A."), SkillMode::Off)];
        assert_eq!(render(&off, format, tokens(100)).text, "", "{format}");
    }
}

#[test]
fn skills_ref_empty_is_the_block_skills_ref_prints() {
    assert_eq!(
        render(&[], CatalogFormat::SkillsRef, None).text,
        "<available_skills>\n</available_skills>\n"
    );
}

#[test]
fn skills_ref_format_is_byte_identical_to_skills_ref_to_prompt() {
    let mut b = skill("beta", "  Tools for \"B\" & <b>; it's naïve.\n");
    b.resolved_dir = Some(PathBuf::from("/real/beta").into());
    let skills = [skill("alpha", "Alpha skill. Use when testing."), b];
    let expected = "<available_skills>\n\
                    <skill>\n<name>\nalpha\n</name>\n\
                    <description>\nAlpha skill. Use when testing.\n</description>\n\
                    <location>\n/skills/alpha/SKILL.md\n</location>\n</skill>\n\
                    <skill>\n<name>\nbeta\n</name>\n\
                    <description>\nTools for &quot;B&quot; &amp; &lt;b&gt;; it&#x27;s naïve.\n</description>\n\
                    <location>\n/real/beta/SKILL.md\n</location>\n</skill>\n\
                    </available_skills>\n";
    assert_eq!(
        render(&skills, CatalogFormat::SkillsRef, None).text,
        expected
    );
}

#[test]
fn skills_ref_keeps_the_callers_order_other_formats_rank_by_scope_and_name() {
    let mut z = skill("zeta", "Z.");
    z.scope = Scope::Project;
    let skills = [skill("beta", "B."), z, skill("alpha", "A.")];
    let sr = render(&skills, CatalogFormat::SkillsRef, None).text;
    let order: Vec<&str> = ["beta", "zeta", "alpha"]
        .iter()
        .map(|n| {
            let at = sr.find(&format!("<name>\n{n}\n")).unwrap();
            &sr[at + 7..at + 7 + n.len()]
        })
        .collect();
    assert_eq!(order, ["beta", "zeta", "alpha"]);
    assert!(sr.find("beta").unwrap() < sr.find("zeta").unwrap());
    assert!(sr.find("zeta").unwrap() < sr.find("alpha").unwrap());
    // Project scope outranks extra; then by name.
    assert_eq!(
        names(&render(&skills, CatalogFormat::Xml, None).text),
        ["zeta", "alpha", "beta"]
    );
}

#[test]
fn disable_model_invocation_and_modes_manual_and_off_are_left_out() {
    let skills = [
        skill("kept", "Kept."),
        with_field(
            skill("hidden", "Hidden."),
            "disable-model-invocation",
            "true",
        ),
        with_field(
            skill("visible", "Visible."),
            "disable-model-invocation",
            "false",
        ),
        with_mode(skill("manual", "Manual."), SkillMode::Manual),
        with_mode(skill("off", "Off."), SkillMode::Off),
    ];
    for format in CatalogFormat::ALL {
        let c = render(&skills, format, None);
        for gone in ["hidden", "manual", "off"] {
            assert!(!c.text.contains(gone), "{format}: {gone} in {}", c.text);
        }
        assert!(c.text.contains("kept") && c.text.contains("visible"));
        let reasons: Vec<(&str, Reason)> = c
            .explanation
            .skills()
            .iter()
            .filter(|s| s.outcome == Outcome::Excluded)
            .map(|s| (&*s.name, s.reason))
            .collect();
        assert_eq!(
            reasons,
            [
                ("hidden", Reason::DisableModelInvocation),
                ("manual", Reason::ModeManual),
                ("off", Reason::ModeOff)
            ]
        );
    }
}

#[test]
fn disable_model_invocation_from_a_discovered_frontmatter_is_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, extra) in [
        ("shown", ""),
        ("secret", "disable-model-invocation: true\n"),
    ] {
        skilldeck_testkit::skill(tmp.path(), name)
            .description(format!("The {name} skill."))
            .frontmatter_raw(extra)
            .body("Body\n")
            .write();
    }
    let deck = discover(&DiscoveryOptions::with_roots([tmp.path().to_path_buf()]));
    assert_eq!(deck.len(), 2);
    let text = catalog::render(deck.skills(), &CatalogOptions::default(), None)
        .unwrap()
        .text;
    assert_eq!(names(&text), ["shown"]);
    let location = deck.get("shown").unwrap().skill_md.display().to_string();
    assert!(text.contains(&format!("<location>{location}</location>")));
}

#[test]
fn name_only_mode_renders_without_description() {
    let skills = [
        with_mode(skill("terse", "Never shown."), SkillMode::NameOnly),
        skill("full", "Shown."),
    ];
    let xml = render(&skills, CatalogFormat::Xml, None);
    assert!(!xml.text.contains("Never shown"));
    assert!(xml.text.contains(
        "  <skill>\n    <name>terse</name>\n    <location>/skills/terse/SKILL.md</location>\n  </skill>\n"
    ));
    let terse = &xml.explanation.skills()[1];
    assert_eq!(
        (&*terse.name, terse.outcome, terse.reason),
        ("terse", Outcome::NameOnly, Reason::ModeNameOnly)
    );

    let md = render(&skills, CatalogFormat::Markdown, None).text;
    assert!(
        md.contains("- **terse** (`/skills/terse/SKILL.md`)\n"),
        "{md}"
    );
    assert!(md.contains("- **full**: Shown. (`/skills/full/SKILL.md`)\n"));

    let json: serde_json::Value =
        serde_json::from_str(&render(&skills, CatalogFormat::Json, None).text).unwrap();
    assert_eq!(json[1]["name"], "terse");
    assert_eq!(json[1]["description"], serde_json::Value::Null);
    assert_eq!(json[1]["mode"], "name-only");

    let sr = render(&skills, CatalogFormat::SkillsRef, None).text;
    assert!(sr.starts_with("<available_skills>\n<skill>\n<name>\nterse\n</name>\n<location>\n"));
}

#[test]
fn json_schema_has_stable_keys_in_order() {
    let mut s = skill("pdf", "Line one.\nLine two.");
    s.scope = Scope::Project;
    let text = render(&[s], CatalogFormat::Json, None).text;
    assert_eq!(
        text,
        "[\n  {\"name\":\"pdf\",\"description\":\"Line one.\\nLine two.\",\
         \"location\":\"/skills/pdf/SKILL.md\",\"scope\":\"project\",\"mode\":\"auto\",\
         \"shortened\":false}\n]\n"
    );
}

#[test]
fn markdown_puts_each_skill_on_one_line() {
    let mut s = skill("multi", "First line.\n  Second\tline.");
    s.skill_md = PathBuf::from("/odd`dir/SKILL.md");
    let md = render(&[s], CatalogFormat::Markdown, None).text;
    assert_eq!(
        md,
        "## Available skills\n\n- **multi**: First line. Second line. (`` /odd`dir/SKILL.md ``)\n"
    );
}

#[test]
fn pinned_skills_stay_whole_under_a_tiny_budget() {
    let long = prose(1, 80);
    let skills = [
        with_mode(skill("pinned-one", &long), SkillMode::Pinned),
        skill("auto-one", "Short."),
    ];
    for budget in [Some(Budget::Chars(10)), tokens(5)] {
        let c = render(&skills, CatalogFormat::Xml, budget);
        assert_eq!(names(&c.text), ["pinned-one"]);
        assert!(
            c.text.contains(
                &long
                    .replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;")
            )
        );
        assert!(c.explanation.over_budget);
        let e = &c.explanation.skills();
        assert_eq!((e[0].outcome, e[0].reason), (Outcome::Kept, Reason::Pinned));
        assert_eq!(
            (e[1].outcome, e[1].reason),
            (Outcome::Dropped, Reason::Budget)
        );
        assert!(c.explanation.to_string().contains("over budget"));
    }
}

#[test]
fn pinned_skills_rank_first() {
    let skills = [
        skill("aaa", "A."),
        with_mode(skill("zzz", "Z."), SkillMode::Pinned),
    ];
    assert_eq!(
        names(&render(&skills, CatalogFormat::Xml, None).text),
        ["zzz", "aaa"]
    );
}

#[test]
fn shortening_is_even_and_respects_the_floor() {
    let skills = many(12);
    let full = render(&skills, CatalogFormat::Xml, None);
    let full_chars = full.text.chars().count();
    let limit = full_chars * 3 / 4;
    let c = render(&skills, CatalogFormat::Xml, Some(Budget::Chars(limit)));
    assert!(c.text.chars().count() <= limit);
    let cap = c.explanation.cap.expect("descriptions were shortened");
    assert!(cap >= c.explanation.floor);
    assert_eq!(c.explanation.floor, CatalogOptions::default().floor_chars);

    let mut shortened = 0;
    for (skill, (name, desc)) in skills.iter().zip(xml_entries(&c.text)) {
        assert_eq!(skill.name, name);
        let desc = desc.expect("no description dropped at this budget");
        let original =
            xml_entries(&render(std::slice::from_ref(skill), CatalogFormat::Xml, None).text)
                .remove(0)
                .1
                .unwrap();
        if desc == original {
            assert!(skill.description.chars().count() <= cap);
            continue;
        }
        shortened += 1;
        // One common cap: each is cut at the last word end under it.
        let unescaped = desc
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        assert!(unescaped.ends_with('…'));
        assert!(unescaped.chars().count() <= cap, "{unescaped}");
        let kept = unescaped.trim_end_matches('…');
        assert!(skill.description.starts_with(kept));
        let next_word_end = skill.description[kept.len()..]
            .trim_start()
            .find(char::is_whitespace)
            .map(|w| {
                skill.description.len() - skill.description[kept.len()..].trim_start().len() + w
            });
        if let Some(end) = next_word_end {
            assert!(
                skill.description[..end].chars().count() + 1 > cap,
                "{kept:?} could keep another word under cap {cap}"
            );
        }
    }
    assert!(shortened >= 2);
    // The cap is the largest that fits: one more character of floor does not.
    let tighter = catalog::render(
        &skills,
        &CatalogOptions {
            floor_chars: cap + 1,
            ..options(CatalogFormat::Xml, Some(Budget::Chars(limit)))
        },
        None,
    )
    .unwrap();
    assert!(
        tighter.explanation.count(Outcome::NameOnly) + tighter.explanation.count(Outcome::Dropped)
            > 0
    );
}

#[test]
fn after_the_floor_the_lowest_ranks_are_unlisted_and_every_listed_skill_keeps_a_description() {
    let skills = many(20);
    let full_chars = render(&skills, CatalogFormat::Xml, None)
        .text
        .chars()
        .count();
    let hint = "search for them";
    let mut saw_unlisted = false;
    let mut next = full_chars;
    while next > 0 {
        let limit = next;
        next = next * 9 / 10;
        let c = catalog::render(
            &skills,
            &CatalogOptions {
                unlisted_hint: Some(hint.to_owned()),
                ..options(CatalogFormat::Xml, Some(Budget::Chars(limit)))
            },
            None,
        )
        .unwrap();
        assert!(c.text.chars().count() <= limit, "limit {limit}");
        let outcomes: Vec<Outcome> = c.explanation.skills().iter().map(|s| s.outcome).collect();
        // Rank order: listed (kept or shortened), then unlisted; never a
        // bare name.
        let stage = |o: &Outcome| match o {
            Outcome::Kept | Outcome::Shortened { .. } => 0,
            Outcome::NameOnly => 1,
            Outcome::Dropped => 2,
            Outcome::Excluded => 3,
        };
        assert!(
            outcomes.windows(2).all(|w| stage(&w[0]) <= stage(&w[1])),
            "limit {limit}: {outcomes:?}"
        );
        assert_eq!(c.explanation.count(Outcome::NameOnly), 0, "limit {limit}");
        let entries = xml_entries(&c.text);
        assert!(
            entries.iter().all(|(_, desc)| desc.is_some()),
            "limit {limit}"
        );
        let unlisted = c.explanation.count(Outcome::Dropped);
        if unlisted == 0 {
            assert!(!c.text.contains("not listed"), "limit {limit}");
            continue;
        }
        saw_unlisted = true;
        if let Some(cap) = c.explanation.cap {
            assert!(cap >= c.explanation.floor);
        }
        let line = if entries.is_empty() {
            format!("{unlisted} skills are available but not listed here; {hint}.\n")
        } else {
            format!("{unlisted} more skills are not listed here; {hint}.\n")
        };
        if !c.text.is_empty() {
            assert!(c.text.ends_with(&line), "limit {limit}: {}", c.text);
        }
    }
    assert!(saw_unlisted, "the unlisting stage was reached");
    assert_eq!(
        render(&skills, CatalogFormat::Xml, Some(Budget::Chars(0))).text,
        ""
    );
}

#[test]
fn priority_and_recent_use_rank_before_scope_and_name() {
    let skills = [
        skill("alpha", "Alpha."),
        skill("beta", "Beta."),
        skill("gamma", "Gamma."),
        skill("delta", "Delta."),
    ];
    let opts = CatalogOptions {
        priorities: [("delta".to_owned(), 5), ("beta".to_owned(), -1)].into(),
        uses: [("gamma".to_owned(), 3)].into(),
        ..options(CatalogFormat::Xml, None)
    };
    let c = catalog::render(&skills, &opts, None).unwrap();
    // delta (priority 5); gamma (used) before alpha; beta (priority -1) last.
    assert_eq!(names(&c.text), ["delta", "gamma", "alpha", "beta"]);
}

#[test]
fn when_skills_must_be_left_out_each_source_folder_takes_turns() {
    let in_folder = |folder: &str, name: &str| {
        let mut s = skill(name, &prose(name.len(), 12));
        s.skill_md = std::path::PathBuf::from(format!("/lib/{folder}/{name}/SKILL.md"));
        s
    };
    // Source "a" holds the alphabetical head; "z" only names late in the
    // alphabet.
    let mut skills: Vec<Skill> = (0..6).map(|i| in_folder("a", &format!("a{i}"))).collect();
    skills.extend((0..6).map(|i| in_folder("z", &format!("z{i}"))));
    let full = render(&skills, CatalogFormat::Xml, None)
        .text
        .chars()
        .count();
    let c = render(&skills, CatalogFormat::Xml, Some(Budget::Chars(full / 2)));
    let listed = names(&c.text);
    assert!(listed.len() >= 2 && listed.len() < 12, "{listed:?}");
    let from_a = listed.iter().filter(|n| n.starts_with('a')).count();
    let from_z = listed.len() - from_a;
    // Turns: the counts differ by at most one, and each source lists its
    // own skills in rank order.
    assert!(from_a.abs_diff(from_z) <= 1, "{listed:?}");
    assert!(listed.contains(&"a0".to_owned()) && listed.contains(&"z0".to_owned()));
}

#[test]
fn relevance_orders_the_catalog_and_the_budget_drops_the_least_relevant() {
    let skills = [
        skill("alpha", "Alpha."),
        skill("beta", "Beta."),
        skill("gamma", "Gamma."),
        skill("delta", "Delta."),
    ];
    let scores: HashMap<String, f64> = [("gamma", 3.0), ("alpha", 1.0), ("delta", 1.0)]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    let opts = options(CatalogFormat::Xml, None);
    let c = catalog::render(&skills, &opts, Some(&scores)).unwrap();
    // gamma 3; alpha and delta tie at 1 (by name); beta is missing (0).
    assert_eq!(names(&c.text), ["gamma", "alpha", "delta", "beta"]);
    assert_eq!(c.explanation.skills()[0].relevance, Some(3.0));
    assert_eq!(c.explanation.skills()[3].relevance, Some(0.0));
    assert!(c.explanation.to_string().contains("relevance 3.000"));

    let full = c.text.chars().count();
    // Room for two skills with their descriptions and the closing line.
    let line = "2 more skills are not listed here.\n";
    let pair = [skills[2].clone(), skills[0].clone()];
    let two = render(&pair, CatalogFormat::Xml, None);
    assert!(two.text.chars().count() + line.len() < full);
    let tight = catalog::render(
        &skills,
        &options(
            CatalogFormat::Xml,
            Some(Budget::Chars(two.text.chars().count() + line.len())),
        ),
        Some(&scores),
    )
    .unwrap();
    assert_eq!(names(&tight.text), ["gamma", "alpha"]);
    assert!(
        tight
            .text
            .ends_with("</available_skills>\n2 more skills are not listed here.\n")
    );
    let dropped: Vec<&str> = tight
        .explanation
        .skills()
        .iter()
        .filter(|s| s.outcome == Outcome::Dropped)
        .map(|s| &*s.name)
        .collect();
    assert_eq!(dropped, ["delta", "beta"]);
}

#[test]
fn rendering_is_deterministic() {
    let skills = many(40);
    let mut reversed = skills.clone();
    reversed.reverse();
    for format in [
        CatalogFormat::Xml,
        CatalogFormat::Markdown,
        CatalogFormat::Json,
    ] {
        for budget in [None, Some(Budget::Chars(3_000)), tokens(700)] {
            let a = render(&skills, format, budget);
            let b = render(&skills, format, budget);
            assert_eq!(a.text.as_bytes(), b.text.as_bytes());
            assert_eq!(a.explanation, b.explanation);
            // Input order only breaks ties between identical names.
            assert_eq!(render(&reversed, format, budget).text, a.text);
        }
    }
}

#[test]
fn token_budget_holds_when_the_whole_output_is_counted() {
    let skills = many(60);
    for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
        for format in CatalogFormat::ALL {
            let whole = count_tokens(&render(&skills, format, None).text, encoding).unwrap();
            for limit in [
                whole,
                whole - 1,
                whole * 4 / 5,
                whole / 2,
                whole / 4,
                whole / 10,
                50,
                1,
            ] {
                let budget = Some(Budget::Tokens { limit, encoding });
                let c = render(&skills, format, budget);
                let counted = count_tokens(&c.text, encoding).unwrap();
                assert!(counted <= limit, "{format} {encoding}: {counted} > {limit}");
                assert_eq!(c.explanation.size, counted);
                assert!(!c.explanation.over_budget);
            }
            let c = render(
                &skills,
                format,
                Some(Budget::Tokens {
                    limit: whole,
                    encoding,
                }),
            );
            assert_eq!(c.explanation.count(Outcome::Kept), skills.len(), "{format}");
        }
    }
}

#[test]
fn chars_budget_holds_when_the_whole_output_is_counted() {
    let skills = many(60);
    for format in CatalogFormat::ALL {
        let whole = render(&skills, format, None).text.chars().count();
        for limit in [
            whole,
            whole - 1,
            whole * 2 / 3,
            whole / 3,
            whole / 8,
            200,
            1,
        ] {
            let c = render(&skills, format, Some(Budget::Chars(limit)));
            let counted = c.text.chars().count();
            assert!(counted <= limit, "{format}: {counted} > {limit}");
            assert_eq!(c.explanation.size, counted);
        }
    }
}

#[test]
fn json_stays_valid_json_under_any_budget() {
    let skills = many(30);
    for limit in [100_000, 3_000, 1_500, 600, 10] {
        let c = render(&skills, CatalogFormat::Json, Some(Budget::Chars(limit)));
        if c.text.is_empty() {
            continue;
        }
        let parsed: serde_json::Value = serde_json::from_str(&c.text).unwrap();
        for entry in parsed.as_array().unwrap() {
            let shortened = entry["shortened"].as_bool().unwrap();
            let desc = entry["description"].as_str();
            assert_eq!(shortened, desc.is_some_and(|d| d.ends_with('…')));
        }
    }
}

#[test]
fn explanation_reports_every_outcome_with_its_reason() {
    let mut skills = many(10);
    skills.push(with_mode(
        skill("zz-pinned", "Pinned skill."),
        SkillMode::Pinned,
    ));
    skills.push(with_mode(skill("zz-off", "Off."), SkillMode::Off));
    let full = render(&skills, CatalogFormat::Xml, None)
        .text
        .chars()
        .count();
    let c = render(&skills, CatalogFormat::Xml, Some(Budget::Chars(full / 3)));
    let report = c.explanation.to_string();
    assert!(report.starts_with("catalog (xml): 12 skills: "), "{report}");
    assert!(report.contains("pinned: never shortened or dropped"));
    assert!(report.contains("excluded") && report.contains("mode off"));
    assert!(report.contains(" of "));
    assert!(c.explanation.skills()[0].name == "zz-pinned");
    assert_eq!(c.explanation.skills().last().unwrap().name, "zz-off");
    let total: usize = [
        Outcome::Kept,
        Outcome::Shortened { from: 0, to: 0 },
        Outcome::NameOnly,
        Outcome::Dropped,
        Outcome::Excluded,
    ]
    .into_iter()
    .map(|o| c.explanation.count(o))
    .sum();
    assert_eq!(total, 12);
    for s in c.explanation.skills() {
        if let Outcome::Shortened { from, to } = s.outcome {
            assert!(to < from && to <= c.explanation.cap.unwrap());
            assert!(report.contains(&format!("{from} -> {to} characters")));
        }
    }
}

#[test]
fn formats_and_encodings_parse_and_print_their_names() {
    for format in CatalogFormat::ALL {
        assert_eq!(format.to_string().parse::<CatalogFormat>().unwrap(), format);
    }
    assert_eq!(
        "cl100k_base".parse::<Encoding>().unwrap(),
        Encoding::Cl100kBase
    );
    assert!(matches!(
        "yaml".parse::<CatalogFormat>(),
        Err(Error::InvalidValue {
            what: "catalog format",
            ..
        })
    ));
    assert!("p50k_base".parse::<Encoding>().is_err());
}

#[test]
fn config_section_gives_options_and_refuses_two_budgets() {
    let mut config = skilldeck::deck::CatalogConfig {
        format: Some("markdown".to_owned()),
        budget_tokens: Some(8_000),
        encoding: Some("cl100k_base".to_owned()),
        ..Default::default()
    };
    let o = CatalogOptions::from_config(&config).unwrap();
    assert_eq!(o.format, CatalogFormat::Markdown);
    assert_eq!(
        o.budget,
        Some(Budget::Tokens {
            limit: 8_000,
            encoding: Encoding::Cl100kBase
        })
    );
    config.budget_chars = Some(100);
    assert!(matches!(
        CatalogOptions::from_config(&config),
        Err(Error::ConflictingOptions(_))
    ));
}

#[test]
fn count_tokens_counts_special_token_markers_as_text() {
    let n = count_tokens("<|endoftext|>", Encoding::O200kBase).unwrap();
    assert!(n > 1);
    assert_eq!(count_tokens("", Encoding::Cl100kBase).unwrap(), 0);
}

#[test]
fn unbudgeted_size_counts_characters_for_ascii_and_non_ascii_skills() {
    for skills in [
        vec![skill("plain", "Plain text. Use when testing.")],
        vec![
            skill("plain", "Plain text. Use when testing."),
            skill("accents", "Résumé café — naïve. Use when testing."),
        ],
    ] {
        for format in CatalogFormat::ALL {
            let c = render(&skills, format, None);
            assert_eq!(c.explanation.size, c.text.chars().count(), "{format}");
        }
    }
}

#[test]
fn deck_skills_render_as_fresh_copies_do() {
    // A deck checks its skills' texts once (catalog hints); clones start
    // without hints and take the checking path, which must agree.
    let mut tricky = vec![
        skill("plain", "Plain ASCII text with nothing to escape."),
        skill("amp", "Tom & Jerry <b>\"quoted\"</b> it's"),
        skill("unicode", "Café résumé naïve — “quotes” €"),
        skill("spaced", "  \u{1c}padded and\n\ttabbed  text \u{1f}\n"),
        skill("json-ctl", "back\\slash and \u{7} bell"),
        skill("md_name*", "[link](x) `code` *em*"),
        skill("quote'name", "desc"),
        with_mode(skill("only-name", "never shown"), SkillMode::NameOnly),
        with_mode(skill("pinned", "Pinned & kept"), SkillMode::Pinned),
    ];
    let mut odd = skill("odd-path", "Path with specials");
    odd.skill_md = PathBuf::from("/skills/a&b <c>/\"q\"'s/`tick`/SKILL.md");
    tricky.push(odd);
    tricky.extend(many(30));
    let deck = skilldeck::Deck::new(tricky, Vec::new(), Vec::new());
    let copies: Vec<Skill> = deck.skills().to_vec();
    for format in CatalogFormat::ALL {
        for budget in [None, Some(Budget::Chars(2_000)), tokens(600)] {
            let held = render(deck.skills(), format, budget);
            let fresh = render(&copies, format, budget);
            assert_eq!(held, fresh, "{format} {budget:?}");
        }
    }
    // An edited clone is escaped by what it holds now.
    let mut edited = deck.get("plain").unwrap().clone();
    edited.description = "Now <b>bold</b> & 'quoted'".to_owned();
    let text = render(std::slice::from_ref(&edited), CatalogFormat::Xml, None).text;
    assert!(text.contains("Now &lt;b&gt;bold&lt;/b&gt; &amp; &apos;quoted&apos;"));
    let cloned = deck.clone();
    assert_eq!(
        render(cloned.skills(), CatalogFormat::Json, None),
        render(&copies, CatalogFormat::Json, None)
    );
}

#[test]
fn without_locations_no_format_but_skills_ref_shows_a_path() {
    let skills = vec![
        skill("pdf", "Extract PDF text."),
        skill("csv", "Read CSV files."),
    ];
    for format in [
        CatalogFormat::Xml,
        CatalogFormat::Markdown,
        CatalogFormat::Json,
    ] {
        let options = CatalogOptions {
            locations: false,
            ..options(format, None)
        };
        let hidden = catalog::render(&skills, &options, None).unwrap();
        assert!(
            !hidden.text.contains("/skills/"),
            "{format:?}: {}",
            hidden.text
        );
        assert!(
            !hidden.text.contains("location"),
            "{format:?}: {}",
            hidden.text
        );
        assert!(hidden.text.contains("Extract PDF text."));
        let shown = render(&skills, format, None);
        assert!(shown.text.contains("/skills/pdf/SKILL.md"), "{format:?}");
    }
    let json = catalog::render(
        &skills,
        &CatalogOptions {
            locations: false,
            ..options(CatalogFormat::Json, None)
        },
        None,
    )
    .unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&json.text).unwrap();
    assert_eq!(parsed[0]["scope"], "extra");
    let skills_ref = catalog::render(
        &skills,
        &CatalogOptions {
            locations: false,
            ..options(CatalogFormat::SkillsRef, None)
        },
        None,
    )
    .unwrap();
    assert!(skills_ref.text.contains("<location>"));
}

#[test]
fn control_characters_never_reach_the_catalog_or_the_deck() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path(), "ctl")
        .name("\"ctl\\n- injected\"")
        .description("\"Clears \\e[2J rings \\a nul \\0 rlo \\u202e. Use when testing.\"")
        .body("Body\n")
        .write();
    let deck = discover(&DiscoveryOptions::with_roots([tmp.path().to_path_buf()]));
    assert_eq!(deck.len(), 1, "{:#?}", deck.diagnostics());
    let skill = &deck.skills()[0];
    let bad = |t: &str| t.chars().any(skilldeck::spec::is_control);
    assert!(
        !bad(&skill.name) && !skill.name.contains('\n'),
        "{:?}",
        skill.name
    );
    assert!(!bad(&skill.description), "{:?}", skill.description);
    assert!(
        skill.description.contains('\u{fffd}'),
        "{:?}",
        skill.description
    );
    for format in [CatalogFormat::Xml, CatalogFormat::Markdown] {
        let text = catalog::render(deck.skills(), &options(format, None), None)
            .unwrap()
            .text;
        assert!(!bad(&text), "{format:?}: {text:?}");
        assert!(!text.contains("\n- injected"), "{format:?}: {text:?}");
    }
}

#[test]
fn control_characters_in_a_folder_path_never_reach_the_location() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("evil\u{1b}[2J\nroot\u{202e}");
    skilldeck_testkit::skill(&root, "ctl")
        .description("Does ctl things. Use when testing.")
        .body("Body\n")
        .write();
    let deck = discover(&DiscoveryOptions::with_roots([root.clone()]));
    assert_eq!(deck.len(), 1, "{:#?}", deck.diagnostics());
    let bad = |t: &str| t.chars().any(skilldeck::spec::is_control);
    for format in [
        CatalogFormat::Xml,
        CatalogFormat::Markdown,
        CatalogFormat::SkillsRef,
        CatalogFormat::Json,
    ] {
        let text = catalog::render(deck.skills(), &options(format, None), None)
            .unwrap()
            .text;
        assert!(!bad(&text), "{format:?}: {text:?}");
        assert!(
            text.contains("evil\u{fffd}[2J\u{fffd}root\u{fffd}"),
            "{format:?}: {text:?}"
        );
    }
}
