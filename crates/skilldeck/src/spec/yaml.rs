//! YAML frontmatter to a small positioned tree.
//!
//! Parsing is done by `serde-saphyr` (safe Rust, budgets against alias bombs
//! and deep nesting, duplicate keys rejected, YAML 1.2 booleans). We keep a
//! position for every key and value, and for plain scalars that YAML would
//! type as numbers or booleans we keep the *source text* (`version: 1.0`
//! stays `"1.0"`), because every field of the spec is a string.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{Budget, Location, NonFiniteFloatPolicy, Options, Spanned};

use crate::diagnostic::Pos;
use crate::limits::{MAX_YAML_ALIASES, MAX_YAML_DEPTH, MAX_YAML_NODES};

/// A YAML value with its position in the file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Node {
    /// What the value is.
    pub kind: NodeKind,
    /// Where it is (file line and column).
    pub pos: Pos,
}

impl Node {
    /// Bytes this value holds on the heap (capacities, recursively).
    pub fn heap_bytes(&self) -> usize {
        match &self.kind {
            NodeKind::Null => 0,
            NodeKind::Scalar(s) => s.capacity(),
            NodeKind::Seq(items) => {
                items.capacity() * std::mem::size_of::<Node>()
                    + items.iter().map(Node::heap_bytes).sum::<usize>()
            }
            NodeKind::Map(entries) => {
                entries.capacity() * std::mem::size_of::<(Key, Node)>()
                    + entries
                        .iter()
                        .map(|(k, v)| k.text.capacity() + v.heap_bytes())
                        .sum::<usize>()
            }
        }
    }
}

/// The shape of a YAML value.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum NodeKind {
    /// `null`, `~` or nothing.
    Null,
    /// Any scalar, as text: strings as parsed, numbers and booleans as
    /// written in the source.
    Scalar(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in source order.
    Map(Vec<(Key, Node)>),
}

/// A mapping key with its position.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Key {
    /// The key as text.
    pub text: String,
    /// Where it is.
    pub pos: Pos,
}

impl NodeKind {
    /// A short description for messages ("a list", "a mapping", ...).
    pub fn describe(&self) -> &'static str {
        match self {
            NodeKind::Null => "null",
            NodeKind::Scalar(_) => "a string",
            NodeKind::Seq(_) => "a list",
            NodeKind::Map(_) => "a mapping",
        }
    }
}

/// A YAML error, positioned in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// The parser's message, without its position suffix.
    pub message: String,
    /// Where the parser stopped.
    pub pos: Pos,
}

/// Parses frontmatter YAML whose first line is file line `first_line`.
///
/// Most frontmatter is a flat mapping of simple scalars plus one nested
/// mapping (`metadata`). That shape is parsed directly ([`parse_simple`]),
/// about twenty times faster; anything else, or anything doubtful, goes to
/// serde-saphyr. Both give the same tree (a differential property test pins it).
pub fn parse(yaml: &str, first_line: u32) -> Result<Node, YamlError> {
    if let Some(node) = parse_simple(yaml, first_line) {
        return Ok(node);
    }
    parse_full(yaml, first_line)
}

/// The frontmatter `yaml` (first line = file line `first_line`) as a JSON
/// object, typed the way a YAML 1.2 parser types it (`true` is a boolean,
/// `1.0` a number, `"1.0"` a string): what the MCP Skills extension calls
/// the verbatim frontmatter. Same budgets and duplicate-key rule as
/// `parse`; a document that is not a mapping is an error.
pub fn to_json(
    yaml: &str,
    first_line: u32,
) -> Result<serde_json::Map<String, serde_json::Value>, YamlError> {
    match serde_saphyr::from_str_with_options::<serde_json::Value>(yaml, parser_options()) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(serde_json::Value::Null) => Ok(serde_json::Map::new()),
        Ok(_) => Err(YamlError {
            message: "frontmatter is not a mapping".to_owned(),
            pos: Pos::line(first_line),
        }),
        Err(err) => Err(yaml_error(&err, first_line)),
    }
}

/// A serde-saphyr error, positioned in the file.
fn yaml_error(err: &serde_saphyr::Error, first_line: u32) -> YamlError {
    let offset = first_line.saturating_sub(1);
    let pos = err
        .location()
        .map(|loc| to_pos(&loc, offset, 1))
        .unwrap_or(Pos::line(first_line));
    YamlError {
        message: clean_message(&err.without_snippet().to_string()),
        pos,
    }
}

/// serde-saphyr's options for frontmatter: YAML 1.2 booleans and the
/// node, depth and alias budgets of [`crate::limits`].
fn parser_options() -> Options {
    let mut options = Options::default();
    options.strict_booleans = true;
    options.non_finite_float_policy = NonFiniteFloatPolicy::PassThrough;
    options.with_snippet = false;
    let mut budget = Budget::default();
    budget.max_nodes = MAX_YAML_NODES;
    budget.max_depth = MAX_YAML_DEPTH;
    budget.max_aliases = MAX_YAML_ALIASES;
    options.budget = Some(budget);
    options
}

/// The general path: serde-saphyr with budgets.
fn parse_full(yaml: &str, first_line: u32) -> Result<Node, YamlError> {
    let options = parser_options();
    let offset = first_line.saturating_sub(1);
    match serde_saphyr::from_str_with_options::<Spanned<Raw>>(yaml, options) {
        Ok(raw) => Ok(convert(yaml, raw, offset)),
        Err(err) => Err(yaml_error(&err, first_line)),
    }
}

/// Drops the " at line L, column C" suffix and what follows it (serde-saphyr
/// appends "(defined at line ...) (used at line ...)" for aliases): we
/// report positions ourselves. A budget breach is said in words, whole.
fn clean_message(message: &str) -> String {
    let located = |i: usize| {
        let rest = &message[i + " at line ".len()..];
        rest.starts_with(|c: char| c.is_ascii_digit()) && rest.contains(", column ")
    };
    let message = match message
        .match_indices(" at line ")
        .map(|(i, _)| i)
        .find(|&i| located(i))
    {
        Some(i) => &message[..i],
        None => message,
    };
    let message = message
        .trim_start_matches("error: ")
        .split(", set DuplicateKeyPolicy")
        .next()
        .unwrap_or(message);
    match message.split_once("budget breached: ") {
        Some((before, what)) => format!("{before}budget breached: {}", budget_words(what)),
        None => message.to_owned(),
    }
}

/// serde-saphyr's budget breach (`Nodes { nodes: 20001 }`) in words.
fn budget_words(breach: &str) -> String {
    let kind = breach
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or("");
    match kind {
        "Nodes" => format!("more than {MAX_YAML_NODES} YAML nodes (aliases count each copy)"),
        "Depth" => format!("nested more than {MAX_YAML_DEPTH} levels deep"),
        k if k.starts_with("Alias") => format!("more than {MAX_YAML_ALIASES} aliases"),
        _ => breach.to_owned(),
    }
}

fn to_pos(loc: &Location, line_offset: u32, len: u32) -> Pos {
    let line = u32::try_from(loc.line()).unwrap_or(u32::MAX);
    let column = u32::try_from(loc.column()).unwrap_or(u32::MAX);
    Pos::new(line.saturating_add(line_offset), column.max(1), len)
}

fn span_len(loc: &Location) -> u32 {
    u32::try_from(loc.span().len()).unwrap_or(0)
}

fn source_text<'a>(yaml: &'a str, loc: &Location) -> Option<&'a str> {
    let span = loc.span();
    let start = usize::try_from(span.byte_offset()?).ok()?;
    let len = usize::try_from(span.byte_len()?).ok()?;
    yaml.get(start..start.checked_add(len)?)
}

fn convert(yaml: &str, raw: Spanned<Raw>, offset: u32) -> Node {
    let pos = to_pos(&raw.referenced, offset, span_len(&raw.referenced));
    let kind = match raw.value {
        Raw::Null => NodeKind::Null,
        Raw::Str(s) => NodeKind::Scalar(s),
        // Numbers and booleans: keep what the author wrote (from the
        // definition site, so an alias to `1.0` also gives "1.0").
        Raw::Typed(fallback) => NodeKind::Scalar(
            source_text(yaml, &raw.defined)
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .unwrap_or(fallback),
        ),
        Raw::Seq(items) => NodeKind::Seq(
            items
                .into_iter()
                .map(|item| convert(yaml, item, offset))
                .collect(),
        ),
        Raw::Map(entries) => NodeKind::Map(
            entries
                .into_iter()
                .map(|(key, value)| {
                    let key_pos = to_pos(&key.referenced, offset, span_len(&key.referenced));
                    let text = match key.value {
                        Raw::Str(s) => s,
                        Raw::Typed(fallback) => source_text(yaml, &key.defined)
                            .map(|s| s.trim().to_owned())
                            .unwrap_or(fallback),
                        Raw::Null => String::new(),
                        Raw::Seq(_) | Raw::Map(_) => "<complex key>".to_owned(),
                    };
                    (Key { text, pos: key_pos }, convert(yaml, value, offset))
                })
                .collect(),
        ),
    };
    Node { kind, pos }
}

/// What serde hands us; converted to [`Node`] once positions are known.
enum Raw {
    Null,
    Str(String),
    /// A number or boolean, with a text fallback if the source is unknown.
    Typed(String),
    Seq(Vec<Spanned<Raw>>),
    Map(Vec<(Spanned<Raw>, Spanned<Raw>)>),
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_none<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
        d.deserialize_any(RawVisitor)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Raw, E> {
        Ok(Raw::Typed(v.to_string()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Raw, E> {
        Ok(Raw::Typed(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Raw, E> {
        Ok(Raw::Typed(v.to_string()))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Raw, E> {
        Ok(Raw::Typed(v.to_string()))
    }
    fn visit_u128<E>(self, v: u128) -> Result<Raw, E> {
        Ok(Raw::Typed(v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Raw, E> {
        Ok(Raw::Typed(v.to_string()))
    }
    fn visit_str<E>(self, v: &str) -> Result<Raw, E> {
        Ok(Raw::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Raw, E> {
        Ok(Raw::Str(v))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<Raw, E> {
        Ok(Raw::Str(String::from_utf8_lossy(v).into_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Raw::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Raw::Map(entries))
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Raw, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

/// The fast path: a block mapping of `key: scalar` lines and at most one
/// level of nested `key:` mappings, with plain, single- or double-quoted
/// scalars that need no escape processing. Returns `None` (use the full
/// parser) for anything else: tabs, flow collections, block scalars, lists,
/// anchors, tags, escapes, comments after values, multi-line scalars,
/// duplicate keys, or an empty document.
pub fn parse_simple(yaml: &str, first_line: u32) -> Option<Node> {
    let mut root: Vec<(Key, Node)> = Vec::new();
    // The open nested mapping: its key, entries, and child indent.
    let mut nested: Option<OpenMap> = None;
    let lines = split_lines(yaml);
    for (i, raw) in lines.iter().enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if memchr::memchr2(b'\t', b'\r', line.as_bytes()).is_some() {
            return None;
        }
        let trimmed = line.trim_end_matches(' ');
        let indent = trimmed.len() - trimmed.trim_start_matches(' ').len();
        let content = &trimmed[indent..];
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let line_no = first_line.checked_add(u32::try_from(i).ok()?)?;
        let (key, value) = simple_entry(content, line_no, indent)?;
        if indent == 0 {
            if let Some((k, entries, _)) = nested.take() {
                close_nested(&mut root, k, entries)?;
            }
            if root.iter().any(|(k, _)| k.text == key.text) {
                return None;
            }
            match value {
                Some(node) => root.push((key, node)),
                None => {
                    // `key:` alone: a nested mapping if indented lines follow,
                    // else null.
                    if next_content_indent(&lines[i + 1..]).is_some_and(|n| n > 0) {
                        nested = Some((key, Vec::new(), None));
                    } else {
                        let pos = Pos::new(line_no, key.pos.column + key.pos.len, 0);
                        root.push((
                            key,
                            Node {
                                kind: NodeKind::Null,
                                pos,
                            },
                        ));
                    }
                }
            }
        } else {
            let (_, entries, child_indent) = nested.as_mut()?;
            if *child_indent.get_or_insert(indent) != indent {
                return None;
            }
            let node = match value {
                Some(node) => node,
                None => {
                    if next_content_indent(&lines[i + 1..]).is_some_and(|n| n > indent) {
                        return None;
                    }
                    let pos = Pos::new(line_no, key.pos.column + key.pos.len, 0);
                    Node {
                        kind: NodeKind::Null,
                        pos,
                    }
                }
            };
            if entries.iter().any(|(k, _)| k.text == key.text) {
                return None;
            }
            entries.push((key, node));
        }
    }
    if let Some((k, entries, _)) = nested.take() {
        close_nested(&mut root, k, entries)?;
    }
    let first = root.first()?.0.pos.line;
    Some(Node {
        kind: NodeKind::Map(root),
        pos: Pos::new(first, 1, 0),
    })
}

/// A nested mapping being read: its key, its entries, its children's indent.
type OpenMap = (Key, Vec<(Key, Node)>, Option<usize>);

fn close_nested(root: &mut Vec<(Key, Node)>, key: Key, entries: Vec<(Key, Node)>) -> Option<()> {
    if root.iter().any(|(k, _)| k.text == key.text) {
        return None;
    }
    let first = entries.first()?.0.pos;
    root.push((
        key,
        Node {
            kind: NodeKind::Map(entries),
            pos: Pos::new(first.line, first.column, 0),
        },
    ));
    Some(())
}

/// Indentation of the next line with content, if any.
fn next_content_indent(lines: &[&str]) -> Option<usize> {
    lines.iter().find_map(|l| {
        let t = l.trim_end_matches(['\r', ' ']);
        let c = t.trim_start_matches(' ');
        (!c.is_empty() && !c.starts_with('#')).then(|| t.len() - c.len())
    })
}

/// `text` split at every `\n` (`str::split('\n')`, with a SIMD search).
fn split_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::with_capacity(16);
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', text.as_bytes()) {
        lines.push(&text[start..end]);
        start = end + 1;
    }
    lines.push(&text[start..]);
    lines
}

/// `key: value` or `key:`; the value is `None` for `key:` alone.
fn simple_entry(content: &str, line: u32, indent: usize) -> Option<(Key, Option<Node>)> {
    let colon = memchr::memchr(b':', content.as_bytes())?;
    let key = &content[..colon];
    if key.is_empty()
        || !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        || key.starts_with(['-', '.'])
    {
        return None;
    }
    let key_col = u32::try_from(indent + 1).ok()?;
    let key = Key {
        text: key.to_owned(),
        pos: Pos::new(line, key_col, u32::try_from(colon).ok()?),
    };
    let rest = &content[colon + 1..];
    if rest.is_empty() {
        return Some((key, None));
    }
    let value = rest.strip_prefix(' ')?.trim_start_matches(' ');
    let value_col = key_col + u32::try_from(colon + 1 + (rest.len() - value.len())).ok()?;
    let kind = simple_scalar(value)?;
    let len = u32::try_from(value.chars().count()).ok()?;
    Some((
        key,
        Some(Node {
            kind,
            pos: Pos::new(line, value_col, len),
        }),
    ))
}

/// A scalar that needs no escape processing, or `None`.
fn simple_scalar(v: &str) -> Option<NodeKind> {
    if let Some(inner) = v.strip_prefix('"') {
        let inner = inner.strip_suffix('"')?;
        if memchr::memchr2(b'"', b'\\', inner.as_bytes()).is_some() {
            return None;
        }
        return Some(NodeKind::Scalar(inner.to_owned()));
    }
    if let Some(inner) = v.strip_prefix('\'') {
        let inner = inner.strip_suffix('\'')?;
        if memchr::memchr(b'\'', inner.as_bytes()).is_some() {
            return None;
        }
        return Some(NodeKind::Scalar(inner.to_owned()));
    }
    if v.starts_with([
        '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '%', '@', '`',
    ]) || has_pair(v.as_bytes(), b':', b' ')
        || memchr::memchr_iter(b'#', v.as_bytes()).any(|i| i > 0 && v.as_bytes()[i - 1] == b' ')
        || v.ends_with(':')
    {
        return None;
    }
    if matches!(v, "~" | "null" | "Null" | "NULL") {
        return Some(NodeKind::Null);
    }
    // Numbers and booleans keep their source text, as on the full path;
    // special floats go to the full parser (it rejects or converts them).
    let bom = "\u{feff}".as_bytes();
    if v.starts_with('.')
        || memchr::memchr_iter(bom[0], v.as_bytes()).any(|i| v.as_bytes()[i..].starts_with(bom))
    {
        return None;
    }
    Some(NodeKind::Scalar(v.to_owned()))
}

/// True when `first` is directly followed by `second` somewhere in `bytes`
/// (`str::contains` with a two-byte pattern, without building a searcher).
fn has_pair(bytes: &[u8], first: u8, second: u8) -> bool {
    memchr::memchr_iter(first, bytes).any(|i| bytes.get(i + 1) == Some(&second))
}

/// A line changed by [`repair_unquoted_colons`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repair {
    /// File line of the key.
    pub line: u32,
    /// The key whose value was quoted.
    pub key: String,
    /// The line as it should be written (first line only for long values).
    pub suggestion: String,
}

/// The common author mistake: an unquoted value holding `: `, such as
/// `description: Use when: the user asks`. Returns the YAML with every such
/// value double-quoted (continuation lines included), or `None` if no line
/// needed it. Block scalars (`|`, `>`) are left untouched.
pub fn repair_unquoted_colons(yaml: &str, first_line: u32) -> Option<(String, Vec<Repair>)> {
    let lines: Vec<&str> = yaml.split('\n').collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut repairs = Vec::new();
    let mut block_indent: Option<usize> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end_matches('\r');
        let indent = line.len() - line.trim_start_matches(' ').len();
        let content = &line[indent..];
        if let Some(block) = block_indent {
            if content.is_empty() || indent > block {
                out.push(lines[i].to_owned());
                i += 1;
                continue;
            }
            block_indent = None;
        }
        let Some((key, value)) = split_key_value(content) else {
            out.push(lines[i].to_owned());
            i += 1;
            continue;
        };
        if value.starts_with(['|', '>']) {
            block_indent = Some(indent);
        }
        let needs_quotes = !value.starts_with(['"', '\'', '[', '{', '|', '>', '&', '*', '!', '#'])
            && (value.contains(": ") || value.contains(":\t") || value.ends_with(':'));
        if !needs_quotes {
            out.push(lines[i].to_owned());
            i += 1;
            continue;
        }
        // Gather continuation lines of a multi-line plain scalar.
        let mut text = value.to_owned();
        let mut j = i + 1;
        while j < lines.len() {
            let next = lines[j].trim_end_matches('\r');
            let next_indent = next.len() - next.trim_start_matches(' ').len();
            if next.trim().is_empty() || next_indent <= indent {
                break;
            }
            text.push(' ');
            text.push_str(next.trim());
            j += 1;
        }
        let quoted = format!(
            "{}{key}: \"{}\"",
            " ".repeat(indent),
            text.replace('\\', "\\\\").replace('"', "\\\"")
        );
        let line_no = first_line.saturating_add(u32::try_from(i).unwrap_or(u32::MAX));
        repairs.push(Repair {
            line: line_no,
            key: key.to_owned(),
            suggestion: quoted.trim_start().to_owned(),
        });
        out.push(quoted);
        // Keep the line count so later positions stay right.
        for _ in i + 1..j {
            out.push(String::new());
        }
        i = j;
    }
    if repairs.is_empty() {
        None
    } else {
        Some((out.join("\n"), repairs))
    }
}

/// Splits `key: value` (block-mapping form, plain key). `None` for anything
/// else: comments, list items, flow or quoted keys, keys without a value.
fn split_key_value(content: &str) -> Option<(&str, &str)> {
    if content.starts_with(['#', '-', '"', '\'', '[', '{', '?']) {
        return None;
    }
    let idx = content.find(": ").or_else(|| content.find(":\t"))?;
    let key = &content[..idx];
    if key.is_empty() || key.contains(['#', '"', '\'']) || key.trim() != key {
        return None;
    }
    let value = content[idx + 1..].trim();
    if value.is_empty() {
        return None;
    }
    Some((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(node: &Node) -> &[(Key, Node)] {
        match &node.kind {
            NodeKind::Map(m) => m,
            other => panic!("not a map: {other:?}"),
        }
    }

    fn scalar<'a>(node: &'a Node, key: &str) -> &'a str {
        let (_, v) = map(node).iter().find(|(k, _)| k.text == key).unwrap();
        match &v.kind {
            NodeKind::Scalar(s) => s,
            other => panic!("not a scalar: {other:?}"),
        }
    }

    #[test]
    fn plain_numbers_keep_their_source_text() {
        let n = parse("name: 123\nversion: 1.0\nf: 1.10\nz: 014\nb: true\n", 2).unwrap();
        assert_eq!(scalar(&n, "name"), "123");
        assert_eq!(scalar(&n, "version"), "1.0");
        assert_eq!(scalar(&n, "f"), "1.10");
        assert_eq!(scalar(&n, "z"), "014");
        assert_eq!(scalar(&n, "b"), "true");
    }

    #[test]
    fn yaml_1_2_booleans_only() {
        let n = parse("a: yes\nb: on\n", 2).unwrap();
        assert_eq!(scalar(&n, "a"), "yes");
        assert_eq!(scalar(&n, "b"), "on");
    }

    #[test]
    fn null_tilde_and_empty_are_null() {
        let n = parse("a: null\nb: ~\nc:\nd: \"null\"\n", 2).unwrap();
        let m = map(&n);
        assert_eq!(m[0].1.kind, NodeKind::Null);
        assert_eq!(m[1].1.kind, NodeKind::Null);
        assert_eq!(m[2].1.kind, NodeKind::Null);
        assert_eq!(m[3].1.kind, NodeKind::Scalar("null".into()));
    }

    #[test]
    fn positions_are_file_lines() {
        let n = parse("name: a\ndescription: b\n", 2).unwrap();
        let m = map(&n);
        assert_eq!(m[1].0.pos, Pos::new(3, 1, 11));
        assert_eq!(m[1].1.pos.line, 3);
        assert_eq!(m[1].1.pos.column, 14);
    }

    #[test]
    fn duplicate_keys_are_an_error() {
        let err = parse("name: a\nname: b\n", 2).unwrap_err();
        assert!(err.message.contains("duplicate"), "{}", err.message);
        assert_eq!(err.pos.line, 3);
    }

    #[test]
    fn alias_to_number_keeps_definition_text() {
        let n = parse("a: &v 1.0\nb: *v\n", 2).unwrap();
        assert_eq!(scalar(&n, "b"), "1.0");
    }

    #[test]
    fn unquoted_colon_value_is_repaired() {
        let yaml =
            "name: x\ndescription: Use when: the user asks\n  and more: here\nlicense: MIT\n";
        assert!(parse(yaml, 2).is_err());
        let (fixed, repairs) = repair_unquoted_colons(yaml, 2).unwrap();
        assert_eq!(repairs.len(), 1);
        assert_eq!(repairs[0].line, 3);
        let n = parse(&fixed, 2).unwrap();
        assert_eq!(
            scalar(&n, "description"),
            "Use when: the user asks and more: here"
        );
        assert_eq!(scalar(&n, "license"), "MIT");
        assert_eq!(map(&n)[2].0.pos.line, 5);
    }

    #[test]
    fn simple_frontmatter_takes_the_fast_path() {
        let yaml = "name: a\ndescription: \"Use when: x\"\nmetadata:\n  version: 1.0\n  t: yes\n";
        assert!(parse_simple(yaml, 2).is_some());
        for complex in [
            "a: [1, 2]\n",
            "a: |\n  x\n",
            "a: &x 1\n",
            "a: b # c\n",
            "a: \"x\\\"y\"\n",
            "a:\n  - 1\n",
            "a: 1\na: 2\n",
            "a: b\n  c\n",
            "a:\n  b:\n    c: 1\n",
            "\ta: 1\n",
            "",
        ] {
            assert!(parse_simple(complex, 2).is_none(), "{complex:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3_000))]

        /// The fast path and serde-saphyr build the same tree.
        #[test]
        fn fast_path_matches_the_full_parser(lines in proptest::collection::vec(
            (
                proptest::sample::select(vec!["name", "description", "license", "metadata", "x-y", "a_b", "k.v"]),
                proptest::option::of(proptest::sample::select(vec![
                    "plain", "two words", "123", "1.0", "1.10", "014", "true", "yes", "no", "null", "~", "Null",
                    "\"quoted: yes\"", "'single'", "\"\"", "''", "Bash(git:*) Read", "a:b", "x#y", "émoji ✓",
                    "  spaced  ", "0x1F", "1e3", "-1", ".5",
                ])),
                proptest::collection::vec(
                    (
                        proptest::sample::select(vec!["author", "version", "tags"]),
                        proptest::option::of(proptest::sample::select(vec!["v", "1.0", "\"q\"", "true", "~"])),
                    ),
                    0..3,
                ),
                proptest::sample::select(vec!["  ", "    "]),
            ),
            1..6,
        )) {
            let mut yaml = String::new();
            for (key, value, children, indent) in &lines {
                match value {
                    Some(v) => yaml.push_str(&format!("{key}: {v}\n")),
                    None => {
                        yaml.push_str(&format!("{key}:\n"));
                        for (ck, cv) in children {
                            match cv {
                                Some(v) => yaml.push_str(&format!("{indent}{ck}: {v}\n")),
                                None => yaml.push_str(&format!("{indent}{ck}:\n")),
                            }
                        }
                    }
                }
            }
            if let Some(fast) = parse_simple(&yaml, 2) {
                let full = parse_full(&yaml, 2);
                proptest::prop_assert_eq!(Ok(fast), full, "{}", yaml);
            }
        }
    }

    #[test]
    fn block_scalars_are_not_repaired() {
        let yaml = "description: |\n  Use when: x\nname: a\n";
        assert!(repair_unquoted_colons(yaml, 2).is_none());
    }

    #[test]
    fn frontmatter_as_json_keeps_yaml_types() {
        let yaml = "name: a\nversion: 1.0\nquoted: \"1.0\"\nflag: yes\non: true\nlist: [x, 2]\nmetadata:\n  k: v\n";
        let map = to_json(yaml, 2).unwrap();
        assert_eq!(
            serde_json::Value::Object(map),
            serde_json::json!({
                "name": "a",
                "version": 1.0,
                "quoted": "1.0",
                "flag": "yes",
                "on": true,
                "list": ["x", 2],
                "metadata": {"k": "v"}
            })
        );
    }

    #[test]
    fn frontmatter_as_json_refuses_duplicates_and_non_mappings_with_a_line() {
        let err = to_json("name: a\nname: b\n", 2).unwrap_err();
        assert_eq!(err.pos.line, 3, "{err:?}");
        let err = to_json("- a\n- b\n", 2).unwrap_err();
        assert!(err.message.contains("not a mapping"));
        assert!(to_json("", 2).unwrap().is_empty());
    }
}
