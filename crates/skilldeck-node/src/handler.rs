//! A JavaScript function answering a host-implemented tool. The host calls
//! handlers synchronously from the thread running the call (a thread-pool
//! thread: every call that can reach a handler is a [`crate::job::Job`]),
//! so the call is queued to the JavaScript thread and this thread waits
//! for the function's Promise. The package wraps the application's
//! function so it takes one JSON envelope and always answers a Promise of
//! `{"ok": value}` or `{"error": message}` (see `npm/index.cjs`).

use napi::Status;
use napi::bindgen_prelude::Promise;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use serde_json::{Value, json};
use skilldeck_host::{HandlerCall, ToolHandler};

/// The JavaScript side of one handler: weak, so a registered handler does
/// not keep the process alive.
pub type JsFunction = ThreadsafeFunction<String, Promise<String>, String, Status, false, true>;

/// A registered JavaScript handler.
pub struct JsToolHandler(pub JsFunction);

/// Empty text as absent.
fn given(text: &str) -> Option<&str> {
    (!text.is_empty()).then_some(text)
}

impl ToolHandler for JsToolHandler {
    fn call(&self, call: &HandlerCall<'_>) -> Result<Value, String> {
        let envelope = json!({
            "arguments": call.arguments,
            "call": {
                "skill": call.skill,
                "fullName": call.full_name,
                "traceId": given(&call.context.call_id),
                "conversation": given(&call.context.session_id),
            },
        })
        .to_string();
        let (sender, receiver) = std::sync::mpsc::channel();
        let status = self.0.call_with_return_value(
            envelope,
            ThreadsafeFunctionCallMode::NonBlocking,
            move |returned, _env| {
                // The receiver waits below; it is gone only if that thread is.
                let _ = sender.send(returned);
                Ok(())
            },
        );
        if status != Status::Ok {
            return Err(format!(
                "the JavaScript handler of '{}' could not be called ({status}): is the process exiting?",
                call.full_name
            ));
        }
        let promise = receiver
            .recv()
            .map_err(|_| {
                format!(
                    "the JavaScript handler of '{}' never answered",
                    call.full_name
                )
            })?
            .map_err(|e| e.reason.clone())?;
        let reply = futures::executor::block_on(promise).map_err(|e| e.reason.clone())?;
        match serde_json::from_str::<Value>(&reply) {
            Ok(Value::Object(mut map)) => {
                if let Some(Value::String(message)) = map.remove("error") {
                    Err(message)
                } else {
                    Ok(map.remove("ok").unwrap_or(Value::Null))
                }
            }
            _ => Err(format!(
                "the JavaScript handler of '{}' answered something that is not JSON",
                call.full_name
            )),
        }
    }
}
