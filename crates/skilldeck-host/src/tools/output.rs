//! [`ToolOutput`]: what a tool call answered, typed, with the text for the
//! model; [`FileOutput`] for a file, [`SearchHit`] for a search result.

use crate::host::Activated;

/// What a tool call answered.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    /// `activate_skill`: the instructions, or the already-active notice.
    Activation(Activated),
    /// `read_skill_resource`: a file of a skill.
    File(FileOutput),
    /// `search_skills`: the served skills that matched, best first.
    Search(Vec<SearchHit>),
}

impl ToolOutput {
    /// The text for the model.
    pub fn text(&self) -> String {
        match self {
            ToolOutput::Activation(activated) => activated.text().to_owned(),
            ToolOutput::File(file) => file.text(),
            ToolOutput::Search(hits) => search_text(hits),
        }
    }
}

/// A file's bytes as the tool returns them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileContent {
    /// UTF-8 text.
    Text(String),
    /// Anything else (a face attaches it, base64 or raw).
    Binary(Vec<u8>),
}

/// A file of a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileOutput {
    /// The skill's name.
    pub skill: String,
    /// The path relative to the skill folder, normalised.
    pub path: String,
    /// Its MIME type (from the extension).
    pub mime: &'static str,
    /// Its size in bytes.
    pub size: u64,
    /// Its content.
    pub content: FileContent,
}

impl FileOutput {
    /// The text for the model: the file's text, or a line saying a binary
    /// file is attached.
    pub fn text(&self) -> String {
        match &self.content {
            FileContent::Text(text) => text.clone(),
            FileContent::Binary(bytes) => format!(
                "{} is a binary file ({} bytes, {}); its content is attached.",
                self.path,
                bytes.len(),
                self.mime
            ),
        }
    }
}

/// One served skill that matched (the field order is the structured
/// content's).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SearchHit {
    /// The skill's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// BM25 score (higher is better).
    pub score: f64,
    /// Whether the model may activate it.
    pub model_invocable: bool,
}

/// The text for the model: one `- name: description` line per hit, or a
/// line saying nothing matched.
fn search_text(hits: &[SearchHit]) -> String {
    let mut text = String::new();
    for hit in hits {
        text.push_str(&format!("- {}: {}\n", hit.name, hit.description));
    }
    if hits.is_empty() {
        text.push_str("No skill matches that query.");
    }
    text
}
