//! The progressive-disclosure loop a host embeds (the README's library
//! example): `cargo run -p skilldeck-host --example host -- [SKILL [ARGS]]`.

use skilldeck::search::require;
use skilldeck::{
    ActivationFormat, CatalogOptions, Config, DiscoveryOptions, discover, render_catalog,
};
use skilldeck_host::ContentCache;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let config = Config::discover(None)?.map(|(_, c)| c).unwrap_or_default();
    let cwd = std::env::current_dir()?;
    let deck = discover(&DiscoveryOptions::from_config(&config, &cwd, None));
    for d in deck.diagnostics() {
        eprintln!("{d}"); // file:line:col: error[code]: ...
    }

    // Level 1: the catalog for the system prompt.
    let options = CatalogOptions::from_config(&config.catalog)?;
    let catalog = render_catalog(deck.skills(), &options, None)?;
    println!("{}", catalog.text);

    // Level 2: the instructions, when the model picks a skill.
    let name = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "code-review".to_owned());
    let arguments = std::env::args().skip(2).collect::<Vec<_>>().join(" ");
    let mut cache = ContentCache::new(config.cache.capacity.unwrap_or(256));
    let skill = require(&deck, &name)?; // "did you mean ...?" on typos
    let activation = cache.activate(skill, &arguments)?; // re-read only if SKILL.md changed
    println!("{}", activation.rendered(ActivationFormat::Xml));

    // Level 3: a file, only if needed; paths that leave the skill are refused.
    if let Some(entry) = activation.activation().resources.first() {
        let file = skilldeck::read_resource(skill, &entry.path)?;
        println!("{}: {} bytes, {}", file.path, file.size, file.mime);
    }
    Ok(())
}
