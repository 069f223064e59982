//! Plugin fixtures: Claude Code plugins (`.claude-plugin/plugin.json`),
//! Codex plugins (`.codex-plugin/plugin.json`), and their marketplaces,
//! each skill a folder with a `SKILL.md` in the plugin's `skills/`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The description every fixture skill gets (valid in strict mode).
pub fn description(skill: &str) -> String {
    format!("Does {skill} things. Use when a task needs {skill}.")
}

/// Writes a plugin folder `base/dir` whose manifest (at `manifest_path`,
/// inside the folder) is `manifest`, with one skill folder per name in
/// `skills/`. Returns the plugin folder.
pub fn plugin_at(
    base: &Path,
    dir: &str,
    manifest_path: &str,
    manifest: &Value,
    skills: &[&str],
) -> PathBuf {
    let plugin = base.join(dir);
    crate::file(
        plugin.join(manifest_path),
        serde_json::to_string_pretty(manifest).unwrap_or_else(|e| panic!("json: {e}")),
    );
    for s in skills {
        crate::file(
            plugin.join("skills").join(s).join("SKILL.md"),
            crate::skill_md(s, &description(s), &format!("# {s}\n\nSteps for {s}.\n")),
        );
    }
    plugin
}

/// A Claude Code plugin `base/name` (version 1.0.0) with `skills`.
pub fn claude_plugin(base: &Path, name: &str, skills: &[&str]) -> PathBuf {
    plugin_at(
        base,
        name,
        ".claude-plugin/plugin.json",
        &json!({"name": name, "version": "1.0.0", "description": format!("The {name} plugin"),
                "author": {"name": "Fixture"}}),
        skills,
    )
}

/// A Codex plugin `base/name` (version 1.0.0, `"skills": "./skills/"`)
/// with `skills`.
pub fn codex_plugin(base: &Path, name: &str, skills: &[&str]) -> PathBuf {
    plugin_at(
        base,
        name,
        ".codex-plugin/plugin.json",
        &json!({"name": name, "version": "1.0.0", "description": format!("The {name} plugin"),
                "skills": "./skills/", "interface": {"displayName": name}}),
        skills,
    )
}

/// Writes `root/.claude-plugin/marketplace.json` named `name` listing
/// `plugins` (each `(plugin name, source)`; a source is a path string or
/// a source object). Returns the file.
pub fn claude_marketplace(root: &Path, name: &str, plugins: &[(&str, Value)]) -> PathBuf {
    let entries: Vec<Value> = plugins
        .iter()
        .map(|(n, source)| json!({"name": n, "source": source, "description": format!("The {n} plugin")}))
        .collect();
    crate::file(
        root.join(".claude-plugin/marketplace.json"),
        serde_json::to_string_pretty(
            &json!({"name": name, "owner": {"name": "Fixture"}, "plugins": entries}),
        )
        .unwrap_or_else(|e| panic!("json: {e}")),
    )
}

/// Writes `root/.agents/plugins/marketplace.json` named `name` listing
/// local `plugins` (each `(plugin name, "./path")`). Returns the file.
pub fn codex_marketplace(root: &Path, name: &str, plugins: &[(&str, &str)]) -> PathBuf {
    let entries: Vec<Value> = plugins
        .iter()
        .map(|(n, path)| {
            json!({"name": n, "source": {"source": "local", "path": path},
                                "policy": {"installation": "AVAILABLE"}})
        })
        .collect();
    crate::file(
        root.join(".agents/plugins/marketplace.json"),
        serde_json::to_string_pretty(&json!({"name": name, "plugins": entries}))
            .unwrap_or_else(|e| panic!("json: {e}")),
    )
}
