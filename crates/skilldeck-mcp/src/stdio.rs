//! The stdio guard: a thin line filter between stdin/stdout and the MCP
//! service. rmcp drops a line that is not JSON, or longer than its cap,
//! with only a log line, so a client that sent a request with an id would
//! wait for ever. The guard answers those itself, as JSON-RPC says:
//! `-32700` (parse error) for a line that is not JSON, `-32600` (invalid
//! request) for a line over the size cap, both with `"id": null`, and the
//! session goes on. Everything else passes through unchanged.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// Bytes buffered between the guard and the service, each way.
const PIPE_BYTES: usize = 256 * 1024;

/// Lines waiting to be written to stdout.
const OUTPUT_QUEUE: usize = 256;

/// The service's ends of the two pipes: it reads requests from the first
/// and writes responses to the second.
pub type ServiceEnds = (DuplexStream, DuplexStream);

fn error_line(code: i32, message: &str) -> Vec<u8> {
    let mut line = serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message}
    }))
    .unwrap_or_default();
    line.push(b'\n');
    line
}

/// Starts the guard over `input` and `output` (stdin and stdout in the
/// server) and returns the service's ends. `max` caps a request line.
pub fn spawn<R, W>(input: R, output: W, max: usize) -> ServiceEnds
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (service_in, mut to_service) = tokio::io::duplex(PIPE_BYTES);
    let (from_service, service_out) = tokio::io::duplex(PIPE_BYTES);
    let (lines, mut queue) = mpsc::channel::<Vec<u8>>(OUTPUT_QUEUE);

    // One writer, so guard errors and service responses never interleave.
    tokio::spawn(async move {
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

    let service_lines = lines.clone();
    tokio::spawn(async move {
        let mut reader = BufReader::new(from_service);
        loop {
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if service_lines.send(line).await.is_err() {
                        break;
                    }
                }
            }
        }
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
                if lines.send(error_line(-32600, &message)).await.is_err() {
                    break;
                }
            } else if !line.iter().all(u8::is_ascii_whitespace) {
                match serde_json::from_slice::<serde::de::IgnoredAny>(&line) {
                    Ok(_) => {
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
                        if lines.send(error_line(-32700, &message)).await.is_err() {
                            break;
                        }
                    }
                }
            }
            if eof {
                break;
            }
        }
        // Closing the pipe ends the session, as stdin's end does.
        let _ = to_service.shutdown().await;
    });

    (service_in, service_out)
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
        let (mut service_in, service_out) = spawn(guard_in, guard_out, max);
        let mut client_out = client_out;
        client_out.write_all(input).await.unwrap();
        drop(client_out);
        let mut passed = Vec::new();
        service_in.read_to_end(&mut passed).await.unwrap();
        drop(service_out);
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
        input.extend_from_slice(b"\n{\"id\":2}\n");
        let input: &'static [u8] = Box::leak(input.into_boxed_slice());
        let (passed, answered) = through_guard(input, 100).await;
        assert_eq!(passed, b"{\"id\":2}\n");
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
    async fn a_last_line_without_newline_still_passes() {
        let (passed, answered) = through_guard(b"{\"id\":3}", 100).await;
        assert_eq!(passed, b"{\"id\":3}\n");
        assert!(answered.is_empty());
    }
}
