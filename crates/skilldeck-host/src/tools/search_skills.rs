//! `search_skills` (`query`, optional `limit`): BM25 over the names and
//! descriptions of the skills the model may use ([`rules::model_access`]:
//! as in the catalog, a user-invoked-only skill is not offered).

use serde_json::{Map, Value, json};
use skilldeck::SearchQuery;

use super::args;
use super::output::{SearchHit, ToolOutput};
use super::spec::ToolSpec;
use crate::rules;
use crate::snapshot::Snapshot;
use crate::tool_error::ToolError;

/// The tool's name.
pub const NAME: &str = "search_skills";

/// The spec; `limit` is bounded by the snapshot's `max_search_results`.
pub fn spec(snapshot: &Snapshot) -> ToolSpec {
    let options = snapshot.options();
    ToolSpec {
        name: NAME,
        title: "Search skills",
        description: "Search the available skills by what they do (ranked by relevance over \
                      names and descriptions). Use it when no skill in the catalog fits, or the \
                      catalog was shortened."
            .to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the task is about."},
                "limit": {
                    "type": "integer", "minimum": 1, "maximum": options.max_search_results,
                    "description": format!(
                        "Most results to return (default {}).",
                        options.default_search_results
                    )
                }
            },
            "required": ["query"],
            "additionalProperties": false
        }),
        read_only: true,
    }
}

/// Searches the skills the model may use.
pub fn call(snapshot: &Snapshot, arguments: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
    let options = snapshot.options();
    args::only(arguments, &["query", "limit"])?;
    let query = args::required(arguments, "query")?;
    let limit = args::count(
        arguments,
        "limit",
        options.default_search_results,
        options.max_search_results,
    )?;
    // The index holds every skill of the deck; those the model may not use
    // are dropped before the limit, so they never take a result's place.
    let hidden = snapshot.deck.len() - snapshot.model_names.len();
    let hits = snapshot
        .search_index()
        .search(&SearchQuery::new(query).limit(limit.saturating_add(hidden)));
    let mut results = Vec::with_capacity(limit.min(hits.len()));
    for hit in &hits {
        let Some(skill) = snapshot.get(&hit.name) else {
            continue;
        };
        if rules::model_access(skill).is_err() {
            continue;
        }
        results.push(SearchHit {
            name: skill.name.clone(),
            description: skill.description.clone(),
            score: hit.score,
            model_invocable: true,
        });
        if results.len() == limit {
            break;
        }
    }
    Ok(ToolOutput::Search(results))
}
