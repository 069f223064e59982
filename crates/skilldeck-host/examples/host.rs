//! What an agent host writes to embed skills (the README's library
//! example): `cargo run -p skilldeck-host --example host -- [SKILL [ARGS]]`.
//!
//! The host layer gives the model three tools as data (name, description,
//! JSON schema) and answers their calls; the agent loop only passes them
//! through. Progressive disclosure: the catalog is in `activate_skill`'s
//! description (level 1), a call returns the instructions (level 2), and
//! `read_skill_resource` returns a file when they point to one (level 3).

use serde_json::{Map, Value, json};
use skilldeck::{Config, DiscoveryOptions};
use skilldeck_host::{Host, HostOptions, ToolOutput};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The same roots and config as the `skilldeck` command.
    let config = Config::discover(None)?.map(|(_, c)| c).unwrap_or_default();
    let cwd = std::env::current_dir()?;
    let discovery = DiscoveryOptions::from_config(&config, &cwd, None);
    let host = Host::new(HostOptions::from_config(&config, discovery)?)?;
    let snapshot = host.snapshot();
    for d in snapshot.deck.diagnostics() {
        eprintln!("{d}"); // file:line:col: error[code]: ...
    }

    // Level 1: the tools to give the model; the catalog is in the first
    // one's description.
    for tool in host.tool_specs(&snapshot) {
        println!("tool {}: {}", tool.name, tool.input_schema);
    }
    println!("{}", snapshot.tool_description);

    // Level 2: the model calls activate_skill (one session per conversation:
    // a second call returns a short "already active" notice).
    let name = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "code-review".to_owned());
    let arguments = std::env::args().skip(2).collect::<Vec<_>>().join(" ");
    let session = host.new_session_key();
    let call = |tool: &str, args: Value| {
        let args: Map<String, Value> = args.as_object().cloned().unwrap_or_default();
        host.call_tool(&snapshot, &session, tool, &args)
    };
    // A mistake (an unknown skill, a bad argument) is a ToolError whose
    // message the model can act on ("did you mean ...?").
    let activated = call(
        "activate_skill",
        json!({"name": name, "arguments": arguments}),
    )?;
    println!("{}", activated.text());

    // Level 3: a file the instructions mention; paths that leave the skill
    // are refused.
    let skill = snapshot.require(&name)?;
    if let Ok(listing) = skilldeck::list_resources(skill)
        && let Some(file) = listing.files.iter().find(|f| f.path != "SKILL.md")
    {
        let read = call(
            "read_skill_resource",
            json!({"name": skill.name, "path": file.path}),
        )?;
        if let ToolOutput::File(file) = read {
            println!("{}: {} bytes, {}", file.path, file.size, file.mime);
        }
    }
    Ok(())
}
