//! [`Snapshot`]: one immutable view of the deck. Requests take the current
//! snapshot once and use it throughout, so a reload never mixes two decks
//! in one answer.

use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::{Arc, OnceLock};

use std::collections::HashMap;

use skilldeck::{CatalogSummary, Deck, SearchIndex, Skill};

use crate::langchain::PackageTools;
use crate::options::HostOptions;
use crate::rules;
use crate::skill_tools::SkillTools;

/// One immutable view of the deck: the skills, what the catalog shows, and
/// the options it was built under (the tools read their limits there).
#[derive(Debug)]
pub struct Snapshot {
    /// Counts reloads that changed the catalog (cursors carry it).
    pub generation: u64,
    /// The skills (served or not: see [`crate::rules`]).
    pub deck: Deck,
    /// Hash of what the catalog shows (see [`catalog_fingerprint`]).
    pub fingerprint: u64,
    /// The `activate_skill` description: instructions plus the catalog.
    pub tool_description: String,
    /// Model-invocable skills, in deck order (the `name` enum).
    pub model_names: Vec<String>,
    /// What the description's catalog lists and leaves out, against its
    /// budget (a face warns when skills are unlisted).
    pub catalog: CatalogSummary,
    options: Arc<HostOptions>,
    /// BM25 over names and descriptions, built on the first search (it is
    /// not needed to answer the first request).
    search: OnceLock<SearchIndex>,
    /// The skills' declared tools by full name, with compiled schemas,
    /// built on first use.
    skill_tools: OnceLock<SkillTools>,
    /// Describes LangChain tool packages, when skill code runs here.
    packages: Option<Arc<PackageTools>>,
}

impl Snapshot {
    /// Builds the view of `deck` under `options`: renders the catalog for
    /// the `activate_skill` description and lists the model-invocable names.
    pub fn build(
        deck: Deck,
        generation: u64,
        options: Arc<HostOptions>,
    ) -> Result<Snapshot, skilldeck::Error> {
        Snapshot::build_ranked(deck, generation, options, &HashMap::new())
    }

    /// [`Snapshot::build`], ranking the catalog by recent use too (`uses`:
    /// activations by skill name), so when the budget cannot list every
    /// skill the ones in use keep their place.
    pub fn build_ranked(
        deck: Deck,
        generation: u64,
        options: Arc<HostOptions>,
        uses: &HashMap<String, u64>,
    ) -> Result<Snapshot, skilldeck::Error> {
        let served: Vec<&Skill> = rules::served(&deck).collect();
        let catalog = options.render_tool_catalog_ranked(&deck, uses)?;
        let summary = catalog.explanation.summary();
        let model_names: Vec<String> = served
            .iter()
            .filter(|s| rules::is_model_invocable(s))
            .map(|s| s.name.clone())
            .collect();
        let tool_description = tool_description(&catalog.text, model_names.len());
        Ok(Snapshot {
            generation,
            fingerprint: catalog_fingerprint(&deck),
            deck,
            tool_description,
            model_names,
            catalog: summary,
            options,
            search: OnceLock::new(),
            skill_tools: OnceLock::new(),
            packages: None,
        })
    }

    /// This snapshot with LangChain tool packages described by `packages`
    /// (their tools join [`Snapshot::skill_tools`]); `None`: they offer
    /// nothing (skill code does not run here).
    pub fn with_packages(mut self, packages: Option<Arc<PackageTools>>) -> Snapshot {
        self.packages = packages;
        self
    }

    /// The options this snapshot was built under.
    pub fn options(&self) -> &HostOptions {
        &self.options
    }

    /// The search index (built on first use).
    pub fn search_index(&self) -> &SearchIndex {
        self.search
            .get_or_init(|| SearchIndex::new(self.deck.skills()))
    }

    /// The tools skills declare (`tools:`, entry points) and the tools of
    /// LangChain packages (when [`Snapshot::with_packages`] gave a
    /// describer), by full name, with each schema compiled once for this
    /// snapshot (built on first use: describing a package runs it in the
    /// sandbox, once per package content).
    pub fn skill_tools(&self) -> &SkillTools {
        self.skill_tools
            .get_or_init(|| SkillTools::build_with(&self.deck, self.packages.as_deref()))
    }

    /// The served skill named `name`, if any.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.deck.get(name).filter(|s| rules::is_served(s))
    }

    /// The served skill named `name`, else the core's error saying why not
    /// (turned off, skipped by discovery with its diagnostic, or unknown
    /// with close names). See [`rules::require_served`].
    pub fn require(&self, name: &str) -> Result<&Skill, skilldeck::Error> {
        rules::require_served(&self.deck, name)
    }

    /// Every served skill, in deck order.
    pub fn served(&self) -> impl Iterator<Item = &Skill> {
        rules::served(&self.deck)
    }

    /// Every user-invocable skill, in deck order (the prompts).
    pub fn user_invocable(&self) -> impl Iterator<Item = &Skill> {
        self.served().filter(|s| rules::is_user_invocable(s))
    }

    /// The served skill whose folder holds `path` (the deepest one, when
    /// skill folders nest), by its folder as found or with symlinks
    /// resolved: a change at `path` is a change to that skill's files.
    pub fn owner_of(&self, path: &Path) -> Option<&Skill> {
        self.served()
            .filter(|s| path.starts_with(s.dir()) || path.starts_with(s.real_dir()))
            .max_by_key(|s| s.dir().as_os_str().len())
    }

    /// True when no skill is served (then no skill tools are offered).
    pub fn is_empty(&self) -> bool {
        self.served().next().is_none()
    }
}

/// What clients see of the catalog: served skills' names, descriptions,
/// modes, invocation flags, argument hints and files. Bodies are not in it,
/// so an edit to a body keeps the fingerprint (and clients' caches).
pub fn catalog_fingerprint(deck: &Deck) -> u64 {
    // A fixed-seed quality hash: the same on every run (compared across
    // reloads), about four times cheaper than SipHash over 10,000 skills'
    // texts. Like SipHash with fixed keys it is no defence against crafted
    // collisions; a collision only delays a client's list refresh.
    let mut h = std::hash::BuildHasher::build_hasher(&foldhash::quality::FixedState::default());
    for s in rules::served(deck) {
        s.name.hash(&mut h);
        s.description.hash(&mut h);
        s.mode.hash(&mut h);
        s.model_invocable().hash(&mut h);
        s.user_invocable().hash(&mut h);
        s.argument_hint().hash(&mut h);
        s.skill_md.hash(&mut h);
        s.skill_type().hash(&mut h);
        for tool in s.tools() {
            tool.name.hash(&mut h);
            tool.description.hash(&mut h);
            tool.run.hash(&mut h);
            tool.call.hash(&mut h);
            tool.input_schema.to_string().hash(&mut h);
        }
    }
    h.finish()
}

fn tool_description(catalog: &str, model_skills: usize) -> String {
    let mut text = String::with_capacity(catalog.len() + 600);
    text.push_str(
        "Load a skill: its full instructions, with `arguments` substituted, and the list of \
         its files. Call this when a task matches a skill's description below, before acting; \
         follow the instructions it returns. Read the skill's files with \
         `read_skill_resource` when the instructions point to them. A second call for the \
         same skill in this session returns a short notice: the instructions are already \
         in the conversation.",
    );
    if model_skills == 0 {
        text.push_str("\n\nNo skill is available to the model right now.");
        return text;
    }
    text.push_str("\n\nAvailable skills:\n");
    text.push_str(catalog);
    text
}
