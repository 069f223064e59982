//! Every limit the engine enforces, in one place.
//!
//! Each is a named constant so a reader can find it, and the ones a user may
//! want to change are copied into [`crate::ValidationOptions`].

/// Longest `SKILL.md` we read (bytes). Larger files are reported as
/// `file-too-large` without being read past this cap.
pub const MAX_SKILL_MD_BYTES: u64 = 1024 * 1024;

/// Largest read buffer a validation thread keeps for its next file (bytes):
/// `SKILL.md` files and linked files up to this size are read into a buffer
/// that is reused, not allocated and zeroed per file; larger ones get their
/// own, freed after.
pub const KEPT_READ_BUFFER_BYTES: usize = 1024 * 1024;

/// Size of a walk thread's `getdents64` buffer (bytes): a folder of a few
/// hundred entries is listed in one call (and one more that finds the end).
pub const WALK_LISTING_BUFFER_BYTES: usize = 64 * 1024;

/// Longest frontmatter block (bytes between the two `---` lines).
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// Spec: `name` is 1–64 characters.
pub const MAX_NAME_CHARS: usize = 64;

/// Spec: `description` is 1–1024 characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Spec: `compatibility` is 1–500 characters.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;

/// Spec advice: keep `SKILL.md` under 500 lines.
pub const MAX_BODY_LINES: usize = 500;

/// Spec advice: instructions under 5,000 tokens.
pub const MAX_BODY_TOKENS: usize = 5_000;

/// Characters per token for the body-size lint's estimate (the usual
/// rule of thumb for English prose and code with BPE tokenizers).
pub const CHARS_PER_TOKEN_ESTIMATE: usize = 4;

/// How many files linked from `SKILL.md` the nested-reference lint opens.
pub const MAX_LINT_LINKED_FILES: usize = 64;

/// How much of each linked file the nested-reference lint reads (bytes).
pub const MAX_LINT_LINKED_FILE_BYTES: u64 = 256 * 1024;

/// YAML budget: most nodes (scalars, sequences, mappings) in one frontmatter,
/// counting every alias expansion. Stops "billion laughs" alias bombs.
pub const MAX_YAML_NODES: usize = 20_000;

/// YAML budget: deepest nesting of sequences and mappings.
pub const MAX_YAML_DEPTH: usize = 32;

/// YAML budget: most alias references (`*a`) in one frontmatter.
pub const MAX_YAML_ALIASES: usize = 1_000;

/// `validate -r`: deepest folder level searched below each path.
pub const MAX_WALK_DEPTH: usize = 16;

/// Discovery and `validate -r`: most folders visited below each root or
/// path (the root itself not counted), so 100,000 skill folders side by
/// side are all found; reaching it is reported (`walk-limit`).
pub const MAX_WALK_DIRS: usize = 100_000;

/// Discovery: deepest folder level searched below each root.
pub const MAX_DISCOVERY_DEPTH: usize = 6;

/// Discovery: bytes read at a time while looking for the end of the
/// frontmatter (the body is never read during discovery).
pub const FRONTMATTER_READ_CHUNK: usize = 4096;

/// Activation cache: default number of rendered activations kept.
pub const CONTENT_CACHE_CAPACITY: usize = 256;

/// Resources: largest file `read_resource` returns (bytes).
pub const MAX_RESOURCE_BYTES: u64 = 10 * 1024 * 1024;

/// Resources: longest relative path accepted (bytes), checked before any
/// file system call.
pub const MAX_RESOURCE_PATH_BYTES: usize = 4096;

/// Resources: most files `list_resources` returns.
pub const MAX_RESOURCE_LIST_FILES: usize = 10_000;

/// Resources: deepest folder level whose files `list_resources` lists
/// (`a/b/c.md` is in level 2; files in the skill folder itself, level 0).
pub const MAX_RESOURCE_LIST_DEPTH: usize = 16;

/// Resources: most entries (files and folders) `list_resources` visits
/// before it stops counting.
pub const MAX_RESOURCE_LIST_ENTRIES: usize = 100_000;

/// Search: hits returned when a query sets no limit.
pub const DEFAULT_SEARCH_LIMIT: usize = 10;

/// Name lookup: most "did you mean" suggestions.
pub const MAX_SUGGESTIONS: usize = 3;

/// Name lookup: most edits (insert, delete, substitute, swap two
/// neighbours) between a typo and a suggested name.
pub const MAX_SUGGESTION_EDITS: usize = 3;

/// Activation cache: default budget for the bodies kept (bytes); least
/// recently used entries are dropped beyond it.
pub const CONTENT_CACHE_MAX_BYTES: usize = 64 * 1024 * 1024;

/// Activation: most resource files listed in the envelope; the rest are
/// counted ("... and N more").
pub const MAX_ACTIVATION_RESOURCES: usize = 50;

/// Activation: longest argument string accepted (bytes).
pub const MAX_ARGUMENTS_BYTES: usize = 64 * 1024;

/// Activation: longest body after argument substitution (bytes). Stops a
/// body of many placeholders times a long argument from growing without bound.
pub const MAX_ACTIVATION_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Activation tracker: default number of conversations remembered (least
/// recently active forgotten first).
pub const TRACKER_CONVERSATIONS: usize = 1024;

/// Activation tracker: default time after which an activation is forgotten
/// and the skill's body is sent again.
pub const TRACKER_TTL: std::time::Duration = std::time::Duration::from_secs(60 * 60);

/// Activation tracker: most skills remembered per conversation (the oldest
/// activation is forgotten first).
pub const TRACKER_SKILLS_PER_CONVERSATION: usize = 128;

/// Catalog: descriptions are never shortened below this many characters
/// (the "…" included) before skills are reduced to their name.
pub const CATALOG_DESCRIPTION_FLOOR_CHARS: usize = 60;

/// Catalog: the smallest floor accepted (one character plus "…"); lower
/// values given in options are raised to it.
pub const CATALOG_MIN_FLOOR_CHARS: usize = 2;

/// Longest full name of a skill-defined tool (`{skill}__{tool}`), in
/// characters: the MCP and model APIs' tool-name limit.
pub const MAX_TOOL_FULL_NAME_CHARS: usize = 64;

/// Most tools one skill may declare under `tools:`.
pub const MAX_SKILL_TOOLS: usize = 64;

/// Largest JSON argument value accepted for one skill tool call (bytes of
/// its JSON text). Larger arguments are refused before any validation.
pub const MAX_TOOL_ARGUMENT_BYTES: usize = 1024 * 1024;

/// Most dynamic-context directives (`` !`cmd` ``, ```` ```! ````) replaced in
/// one activation; the rest are replaced by the disabled text unexecuted.
pub const MAX_DYNAMIC_DIRECTIVES: usize = 32;

/// `[exec] enabled`: skill execution is off until the operator turns it on.
pub const DEFAULT_EXEC_ENABLED: bool = false;

/// `[exec] timeout-secs`: wall-clock limit of one execution.
pub const DEFAULT_EXEC_TIMEOUT_SECS: u64 = 30;

/// Largest `[exec] timeout-secs` accepted; a larger value is a config error.
pub const MAX_EXEC_TIMEOUT_SECS: u64 = 600;

/// `[exec] output-cap-bytes`: most bytes kept per output stream.
pub const DEFAULT_EXEC_OUTPUT_CAP_BYTES: u64 = 1024 * 1024;

/// Largest `[exec] output-cap-bytes` accepted.
pub const MAX_EXEC_OUTPUT_CAP_BYTES: u64 = 64 * 1024 * 1024;

/// `[exec] memory-bytes`: memory of one execution: the whole process tree's
/// (a per-run cgroup, where `[exec] tree-limits` finds one) and each
/// process's address space (`RLIMIT_AS`).
pub const DEFAULT_EXEC_MEMORY_BYTES: u64 = 1024 * 1024 * 1024;

/// `[exec] max-processes`: most processes (threads) one execution may hold:
/// the whole tree's (a per-run cgroup's `pids.max`) and `RLIMIT_NPROC`.
pub const DEFAULT_EXEC_MAX_PROCESSES: u64 = 64;

/// `[exec] workdir-bytes`: size of one execution's work directory (a
/// size-capped tmpfs: its cwd, `HOME` and `TMPDIR` together).
pub const DEFAULT_EXEC_WORKDIR_BYTES: u64 = 256 * 1024 * 1024;

/// `[exec] file-size-bytes`: largest file one execution may write.
pub const DEFAULT_EXEC_FILE_SIZE_BYTES: u64 = 64 * 1024 * 1024;

/// `[exec] cpu-secs`: CPU time of one execution.
pub const DEFAULT_EXEC_CPU_SECS: u64 = 30;

/// `[exec] concurrency`: most executions running at once.
pub const DEFAULT_EXEC_CONCURRENCY: usize = 3;

/// Largest `[exec] concurrency` accepted.
pub const MAX_EXEC_CONCURRENCY: usize = 64;

/// `[exec] queue`: most executions waiting for a slot; beyond it a call is
/// refused with a clear error.
pub const DEFAULT_EXEC_QUEUE: usize = 32;

/// Largest `[exec] queue` accepted.
pub const MAX_EXEC_QUEUE: usize = 4096;

/// `[exec] dynamic-context`: `` !`cmd` `` directives are not run by default.
pub const DEFAULT_EXEC_DYNAMIC_CONTEXT: bool = false;

/// `[exec] code`: the `run_code` tool (the model's own code in the sandbox)
/// is off until the operator turns it on.
pub const DEFAULT_EXEC_CODE: bool = false;

/// `[exec] code-quota-bytes`: the size of one conversation's `run_code`
/// work folder (every file in it, checked before and after each call).
pub const DEFAULT_EXEC_CODE_QUOTA_BYTES: u64 = 64 * 1024 * 1024;

/// `[exec] code-idle-secs`: a conversation's `run_code` work folder is
/// removed once no call used it for this long.
pub const DEFAULT_EXEC_CODE_IDLE_SECS: u64 = 30 * 60;

/// Largest `[exec] code-idle-secs` accepted (a day).
pub const MAX_EXEC_CODE_IDLE_SECS: u64 = 24 * 60 * 60;

/// Largest plugin manifest read (`.claude-plugin/plugin.json`,
/// `.codex-plugin/plugin.json`; bytes).
pub const MAX_PLUGIN_MANIFEST_BYTES: u64 = 256 * 1024;

/// Most `skills` paths one plugin manifest (or marketplace entry) may name.
pub const MAX_PLUGIN_SKILL_PATHS: usize = 64;

/// Largest marketplace file read (`marketplace.json`; bytes).
pub const MAX_MARKETPLACE_BYTES: u64 = 4 * 1024 * 1024;

/// Most plugins one marketplace file may list.
pub const MAX_MARKETPLACE_PLUGINS: usize = 1024;
