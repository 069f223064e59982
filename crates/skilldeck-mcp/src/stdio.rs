//! The stdio guard: a thin line filter between stdin/stdout and the MCP
//! service. rmcp drops a line that is not JSON, or longer than its cap,
//! with only a log line, so a client that sent a request with an id would
//! wait for ever. The guard answers those itself, as JSON-RPC says:
//! `-32700` (parse error) for a line that is not JSON, `-32600` (invalid
//! request) for a line over the size cap, both with `"id": null`, and the
//! session goes on. Everything else passes through unchanged.
//!
//! When stdin ends, the guard waits (up to [`DRAIN_TIMEOUT`]) for the
//! answers to the requests already passed on before it closes the service's
//! input: a client that writes its requests and closes the pipe still gets
//! every answer.

use serde::Deserialize as _;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// Bytes buffered between the guard and the service, each way.
const PIPE_BYTES: usize = 256 * 1024;

/// Lines waiting to be written to stdout.
const OUTPUT_QUEUE: usize = 256;

/// After stdin ends, the longest wait for outstanding answers.
pub const DRAIN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Ids of the requests passed on and not answered yet.
#[derive(Debug, Default)]
struct Outstanding {
    ids: std::sync::Mutex<std::collections::HashSet<String>>,
    answered: tokio::sync::Notify,
    /// The service closed its output: nothing more will be answered.
    service_gone: std::sync::atomic::AtomicBool,
}

impl Outstanding {
    fn ids(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<String>> {
        self.ids
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn remove(&self, id: &Value) {
        if self.ids().remove(&id.to_string()) {
            self.answered.notify_waiters();
        }
    }

    fn service_gone(&self) {
        self.service_gone
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.answered.notify_waiters();
    }

    async fn drained(&self) {
        loop {
            let notified = self.answered.notified();
            if self.ids().is_empty() || self.service_gone.load(std::sync::atomic::Ordering::SeqCst)
            {
                return;
            }
            notified.await;
        }
    }
}

/// The parts of a message the guard tracks; the rest is skipped unread.
#[derive(serde::Deserialize)]
struct Envelope {
    id: Option<Value>,
    method: Option<String>,
    params: Option<CancelParams>,
}

#[derive(serde::Deserialize)]
struct CancelParams {
    #[serde(rename = "requestId")]
    request_id: Option<Value>,
}

/// The service's ends of the two pipes, and the writer to wait for.
#[derive(Debug)]
pub struct Guard {
    /// The service reads requests here.
    pub requests: DuplexStream,
    /// The service writes responses here.
    pub responses: DuplexStream,
    /// Ends once every line has been written out (after the service closed
    /// `responses` and input ended): await it before the process exits.
    pub written: tokio::task::JoinHandle<()>,
}

/// The message for a request whose id (JSON text) is taken by a request
/// still in flight in the same session (HTTP and stdio say the same).
pub fn duplicate_id_message(id: &str) -> String {
    format!(
        "invalid request: id {id} is already used by a request of this session that has not \
         been answered yet; JSON-RPC ids must be unique among outstanding requests"
    )
}

fn error_line(code: i32, id: &Value, message: &str) -> Vec<u8> {
    let mut line = serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message}
    }))
    .unwrap_or_default();
    line.push(b'\n');
    line
}

/// Why `message` is not a JSON-RPC 2.0 request, notification or response,
/// with the id to answer under (the message's, when it has a valid one).
pub(crate) fn envelope_problem(message: &Value) -> Option<(Value, &'static str)> {
    let Value::Object(fields) = message else {
        return Some((
            Value::Null,
            match message {
                Value::Array(_) => "JSON-RPC batches are not supported",
                _ => "a JSON-RPC message must be an object",
            },
        ));
    };
    let id = match fields.get("id") {
        None => Value::Null,
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => id.clone(),
        Some(_) => return Some((Value::Null, "`id` must be a string, a number or null")),
    };
    if fields.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some((id, "`jsonrpc` must be \"2.0\""));
    }
    match fields.get("method") {
        Some(Value::String(_)) => match fields.get("params") {
            None | Some(Value::Object(_) | Value::Array(_)) => None,
            Some(_) => Some((id, "`params` must be an object")),
        },
        Some(_) => Some((id, "`method` must be a string")),
        None if fields.contains_key("result") || fields.contains_key("error") => None,
        None => Some((id, "a request needs a `method`")),
    }
}

/// Starts the guard over `input` and `output` (stdin and stdout in the
/// server) and returns the service's ends. `max` caps a request line.
pub fn spawn<R, W>(input: R, output: W, max: usize) -> Guard
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (service_in, mut to_service) = tokio::io::duplex(PIPE_BYTES);
    let (from_service, service_out) = tokio::io::duplex(PIPE_BYTES);
    let (lines, mut queue) = mpsc::channel::<Vec<u8>>(OUTPUT_QUEUE);

    // One writer, so guard errors and service responses never interleave.
    let written = tokio::spawn(async move {
        let mut output = output;
        while let Some(line) = queue.recv().await {
            if output.write_all(&line).await.is_err() {
                break;
            }
            if queue.is_empty() && output.flush().await.is_err() {
                break;
            }
        }
    });

    let outstanding = std::sync::Arc::new(Outstanding::default());
    let service_lines = lines.clone();
    let answered = std::sync::Arc::clone(&outstanding);
    tokio::spawn(async move {
        let mut reader = BufReader::new(from_service);
        loop {
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    // A response (an id and no method) answers a request.
                    if let Ok(Envelope {
                        id: Some(id),
                        method: None,
                        ..
                    }) = serde_json::from_slice::<Envelope>(&line)
                    {
                        answered.remove(&id);
                    }
                    if service_lines.send(line).await.is_err() {
                        break;
                    }
                }
            }
        }
        answered.service_gone();
    });

    tokio::spawn(async move {
        let mut reader = BufReader::with_capacity(64 * 1024, input);
        loop {
            let (line, oversized, eof) = match read_capped_line(&mut reader, max).await {
                Ok(read) => read,
                Err(e) => {
                    tracing::error!(error = %e, "cannot read stdin");
                    break;
                }
            };
            if oversized {
                tracing::warn!(max_bytes = max, "request over the size cap refused");
                let message = format!("request too large: over {max} bytes");
                if lines
                    .send(error_line(-32600, &Value::Null, &message))
                    .await
                    .is_err()
                {
                    break;
                }
            } else if !line.iter().all(u8::is_ascii_whitespace) {
                match serde_json::from_slice::<Value>(&line) {
                    Ok(message) => {
                        if let Some((id, why)) = envelope_problem(&message) {
                            tracing::warn!(reason = why, "invalid request refused");
                            let text = format!("invalid request: {why}");
                            if lines.send(error_line(-32600, &id, &text)).await.is_err() {
                                break;
                            }
                            continue;
                        }
                        if let Some(id) = track(&outstanding, &message) {
                            tracing::info!(%id, "refused: duplicate id of a request in flight");
                            let text = duplicate_id_message(&id.to_string());
                            if lines.send(error_line(-32600, &id, &text)).await.is_err() {
                                break;
                            }
                            continue;
                        }
                        let mut line = line;
                        if line.last() != Some(&b'\n') {
                            line.push(b'\n');
                        }
                        if to_service.write_all(&line).await.is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "unparsable request refused");
                        let message = format!("parse error: {e}");
                        if lines
                            .send(error_line(-32700, &Value::Null, &message))
                            .await
                            .is_err()
                        {
                            break;
                        }
                    }
                }
            }
            if eof {
                break;
            }
        }
        // Closing the pipe ends the session, as stdin's end does; first let
        // the requests already passed on be answered.
        if tokio::time::timeout(DRAIN_TIMEOUT, outstanding.drained())
            .await
            .is_err()
        {
            tracing::warn!("input ended; gave up waiting for outstanding answers");
        }
        let _ = to_service.shutdown().await;
    });

    Guard {
        requests: service_in,
        responses: service_out,
        written,
    }
}

/// Notes a request passed on (it will be answered), or a cancellation
/// (it will not). A request whose id is that of one not answered yet is
/// not noted: its id is returned, to be refused (rmcp routes answers by
/// id, so the two would share one answer and one would never get its own).
fn track(outstanding: &Outstanding, message: &Value) -> Option<Value> {
    let Ok(envelope) = Envelope::deserialize(message) else {
        return None;
    };
    match (envelope.method.as_deref(), envelope.id) {
        (Some("notifications/cancelled"), _) => {
            if let Some(id) = envelope.params.and_then(|p| p.request_id) {
                outstanding.remove(&id);
            }
        }
        // A subscription is answered only when it ends: not worth waiting for.
        (Some("subscriptions/listen"), _) => {}
        (Some(_), Some(id)) if !id.is_null() && !outstanding.ids().insert(id.to_string()) => {
            return Some(id);
        }
        _ => {}
    }
    None
}

/// Reads one line (with its `\n`) of at most `max` bytes. Returns the line
/// (empty when it was over the cap: its bytes are skipped, not kept),
/// whether it was over the cap, and whether input ended.
async fn read_capped_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    max: usize,
) -> std::io::Result<(Vec<u8>, bool, bool)> {
    let mut line = Vec::new();
    let mut oversized = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok((line, oversized, true));
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if !oversized && line.len() + take <= max.saturating_add(1) {
            line.extend_from_slice(&buf[..take]);
        } else if !oversized {
            oversized = true;
            line = Vec::new();
        }
        reader.consume(take);
        if done {
            return Ok((line, oversized, false));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use tokio::io::AsyncReadExt;

    async fn through_guard(input: &'static [u8], max: usize) -> (Vec<u8>, Vec<u8>) {
        let (client_out, guard_in) = tokio::io::duplex(1 << 20);
        let (guard_out, mut client_in) = tokio::io::duplex(1 << 20);
        let guard = spawn(guard_in, guard_out, max);
        let (mut service_in, service_out) = (guard.requests, guard.responses);
        // A service that answers nothing and is gone: nothing to wait for.
        drop(service_out);
        let mut client_out = client_out;
        client_out.write_all(input).await.unwrap();
        drop(client_out);
        let mut passed = Vec::new();
        service_in.read_to_end(&mut passed).await.unwrap();
        let mut answered = Vec::new();
        client_in.read_to_end(&mut answered).await.unwrap();
        (passed, answered)
    }

    #[tokio::test]
    async fn a_line_that_is_not_json_gets_a_parse_error_and_the_next_passes() {
        let (passed, answered) = through_guard(
            b"garbage{\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
            1024,
        )
        .await;
        assert_eq!(
            passed,
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
        );
        let answer: serde_json::Value = serde_json::from_slice(&answered).unwrap();
        assert_eq!(answer["error"]["code"], -32700);
        assert_eq!(answer["id"], serde_json::Value::Null);
    }

    #[tokio::test]
    async fn a_line_over_the_cap_gets_an_invalid_request_error_and_the_next_passes() {
        let mut input = vec![b'['; 5000];
        input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
        let input: &'static [u8] = Box::leak(input.into_boxed_slice());
        let (passed, answered) = through_guard(input, 100).await;
        assert_eq!(
            passed,
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n"
        );
        let answer: serde_json::Value = serde_json::from_slice(&answered).unwrap();
        assert_eq!(answer["error"]["code"], -32600);
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("over 100 bytes")
        );
    }

    #[tokio::test]
    async fn a_message_that_is_not_json_rpc_gets_invalid_request_with_its_id() {
        let (passed, answered) = through_guard(
            b"{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"x\",\"params\":\"s\"}\n\
              {\"jsonrpc\":\"2.0\",\"id\":16}\n{\"jsonrpc\":\"1.0\",\"id\":\"a\",\"method\":\"x\"}\n\
              [1]\n{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"x\"}\n",
            1024,
        )
        .await;
        assert!(passed.is_empty());
        let ids: Vec<serde_json::Value> = answered
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice::<serde_json::Value>(l).unwrap())
            .inspect(|a| assert_eq!(a["error"]["code"], -32600))
            .map(|a| a["id"].clone())
            .collect();
        assert_eq!(
            ids,
            [
                serde_json::json!(10),
                serde_json::json!(16),
                serde_json::json!("a"),
                serde_json::Value::Null,
                serde_json::Value::Null
            ]
        );
    }

    #[tokio::test]
    async fn a_last_line_without_newline_still_passes() {
        let (passed, answered) =
            through_guard(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}", 100).await;
        assert_eq!(
            passed,
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n"
        );
        assert!(answered.is_empty());
    }

    #[tokio::test]
    async fn answers_to_requests_sent_before_input_ends_are_still_delivered() {
        let (mut client_out, guard_in) = tokio::io::duplex(1 << 16);
        let (guard_out, mut client_in) = tokio::io::duplex(1 << 16);
        let guard = spawn(guard_in, guard_out, 1024);
        let (service_in, mut service_out) = (guard.requests, guard.responses);
        client_out
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n")
            .await
            .unwrap();
        drop(client_out);
        let mut service_in = BufReader::new(service_in);
        let mut request = Vec::new();
        service_in.read_until(b'\n', &mut request).await.unwrap();
        // The service answers late; its input must still be open.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        service_out
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n")
            .await
            .unwrap();
        let mut rest = Vec::new();
        service_in.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty());
        drop(service_out);
        let mut answered = Vec::new();
        client_in.read_to_end(&mut answered).await.unwrap();
        assert_eq!(answered, b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n");
    }

    #[tokio::test]
    async fn a_second_request_with_the_id_of_one_in_flight_is_refused_with_that_id() {
        let (mut client_out, guard_in) = tokio::io::duplex(1 << 16);
        let (guard_out, mut client_in) = tokio::io::duplex(1 << 16);
        let guard = spawn(guard_in, guard_out, 1024);
        let (service_in, mut service_out) = (guard.requests, guard.responses);
        let request = b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n";
        client_out.write_all(request).await.unwrap();
        client_out.write_all(request).await.unwrap();
        let mut client_in_lines = BufReader::new(&mut client_in);
        let mut refusal = Vec::new();
        client_in_lines
            .read_until(b'\n', &mut refusal)
            .await
            .unwrap();
        let refusal: serde_json::Value = serde_json::from_slice(&refusal).unwrap();
        assert_eq!(refusal["id"], 7);
        assert_eq!(refusal["error"]["code"], -32600);
        // The first went on to the service; once it is answered, the id is
        // free again.
        let mut service_in = BufReader::new(service_in);
        let mut passed = Vec::new();
        service_in.read_until(b'\n', &mut passed).await.unwrap();
        assert_eq!(passed, request);
        service_out
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n")
            .await
            .unwrap();
        let mut answer = Vec::new();
        client_in_lines
            .read_until(b'\n', &mut answer)
            .await
            .unwrap();
        assert_eq!(answer, b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n");
        client_out.write_all(request).await.unwrap();
        let mut again = Vec::new();
        service_in.read_until(b'\n', &mut again).await.unwrap();
        assert_eq!(again, request);
    }
}
