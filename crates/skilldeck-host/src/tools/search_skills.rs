//! `search_skills` (`query`, optional `limit`): BM25 over the names and
//! descriptions of the served skills.

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

/// Searches the served skills.
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
    let hits = snapshot
        .search_index()
        .search(&SearchQuery::new(query).limit(limit));
    let mut results = Vec::with_capacity(hits.len());
    for hit in &hits {
        // Skills turned off are indexed but not served.
        let Some(skill) = snapshot.get(&hit.name) else {
            continue;
        };
        results.push(SearchHit {
            name: skill.name.clone(),
            description: skill.description.clone(),
            score: hit.score,
            model_invocable: rules::is_model_invocable(skill),
        });
    }
    Ok(ToolOutput::Search(results))
}
