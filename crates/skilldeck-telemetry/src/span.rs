//! The spans that carry a trace id: one id in the log lines and the
//! exported trace, and a caller's id bound to its call.

use crate::context::{CallerTrace, TraceContext};
use crate::state::{export_content, exporting};

/// Makes the client's trace context the parent of `span` (before it is
/// entered). Without the `otel` feature, or with export off, a no-op.
pub fn set_parent(span: &tracing::Span, context: &TraceContext) {
    #[cfg(feature = "otel")]
    crate::export::set_parent(span, context);
    #[cfg(not(feature = "otel"))]
    let _ = (span, context);
}

/// The trace id `span` is exported under (its OpenTelemetry context's,
/// after [`set_parent`]), or `None` when nothing is exported.
fn exported_trace_id(span: &tracing::Span) -> Option<String> {
    #[cfg(feature = "otel")]
    if exporting() {
        return crate::export::trace_id(span);
    }
    let _ = span;
    None
}

/// A trace id of our own, for log lines when nothing is exported: 32 hex
/// digits, never all zero, different per call.
fn fresh_trace_id() -> String {
    use std::hash::{BuildHasher, RandomState};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let state = RandomState::new();
    format!("{:016x}{:016x}", state.hash_one(n), state.hash_one(!n) | 1)
}

/// Puts on `span` (declared with `trace_id = tracing::field::Empty`) the one
/// trace id its log lines and its exported spans share: the client's (its
/// `traceparent` becomes the parent), else the exported span's own, else a
/// fresh one (nothing exported). Returns it.
pub fn bind_trace_id(span: &tracing::Span, client: Option<&TraceContext>) -> String {
    if let Some(trace) = client {
        set_parent(span, trace);
    }
    let id = client
        .map(|t| t.trace_id().to_owned())
        .or_else(|| exported_trace_id(span))
        .unwrap_or_else(fresh_trace_id);
    span.record("trace_id", tracing::field::display(&id));
    id
}

/// [`bind_trace_id`] for an application's own id ([`CallerTrace`]): a
/// `traceparent` is the remote parent; a trace id (or a UUID) becomes the
/// trace id of `span`, exported as a root span of that trace (no invented
/// parent span); any other id is recorded on `span` as
/// `skilldeck.caller.trace_id` (when declared) and a new trace id is used.
/// Call it before `span` is entered, on any thread. Returns the trace id.
pub fn bind_caller_trace(span: &tracing::Span, caller: Option<&CallerTrace>) -> String {
    match caller {
        None => bind_trace_id(span, None),
        Some(CallerTrace::Parent(context)) => bind_trace_id(span, Some(context)),
        Some(CallerTrace::TraceId(id)) => {
            #[cfg(feature = "otel")]
            if exporting() {
                crate::export::start_with_trace_id(span, id);
            }
            span.record("trace_id", tracing::field::display(id));
            id.clone()
        }
        Some(CallerTrace::Opaque(value)) => {
            span.record("skilldeck.caller.trace_id", value.as_str());
            bind_trace_id(span, None)
        }
    }
}

/// The span of one piece of the server's own work (`startup`, `reload`,
/// `watch`): a root span with its trace id bound ([`bind_trace_id`]), so
/// every line logged inside carries the trace id of the exported trace.
pub fn operation_span(name: &'static str) -> tracing::Span {
    let span = tracing::info_span!(
        "operation",
        operation = name,
        trace_id = tracing::field::Empty,
        otel.name = exporting().then_some(name),
    );
    bind_trace_id(&span, None);
    span
}

/// The root span a binding enters around one host call (`face` is
/// `python` or `node`, `operation` the call: `discover`, `activate`, ...),
/// with the caller's trace id bound ([`bind_caller_trace`]); the host's
/// spans inside (`discover` with `skilldeck.discovery.skills`, tool runs)
/// are its children. Enter it on the thread that runs the host call.
///
/// While nothing is exported it is [`tracing::Span::none`]: a binding has
/// no log lines of its own, so the span would carry nothing anywhere, and
/// an unused span costs one atomic load.
pub fn call_span(
    face: &'static str,
    operation: &'static str,
    caller: Option<&str>,
) -> tracing::Span {
    if !exporting() {
        return tracing::Span::none();
    }
    let span = tracing::info_span!(
        parent: None,
        "call",
        otel.name = operation,
        skilldeck.face = face,
        skilldeck.operation = operation,
        skilldeck.caller.trace_id = tracing::field::Empty,
        trace_id = tracing::field::Empty,
    );
    let caller = caller.and_then(CallerTrace::parse);
    bind_caller_trace(&span, caller.as_ref());
    span
}

/// Records `value` on `span` as the attribute `key` for export only (not on
/// log lines); only when [`export_content`] is on.
pub fn record_content(span: &tracing::Span, key: &'static str, value: impl FnOnce() -> String) {
    if !export_content() {
        return;
    }
    #[cfg(feature = "otel")]
    {
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        span.set_attribute(key, value());
    }
    #[cfg(not(feature = "otel"))]
    let _ = (span, key, value);
}

#[cfg(all(test, feature = "otel"))]
mod tests {
    use std::sync::{Arc, Mutex};

    use opentelemetry::trace::{SpanId, TraceContextExt as _, TraceId, TracerProvider as _};
    use opentelemetry_sdk::error::OTelSdkResult;
    use opentelemetry_sdk::trace::{SimpleSpanProcessor, SpanData, SpanExporter};
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;
    use crate::export::{layer, test_provider, test_set_exporting};

    /// Keeps the finished spans (the real provider, ids and sampler; only
    /// the network is left out).
    #[derive(Debug, Clone, Default)]
    struct Kept(Arc<Mutex<Vec<SpanData>>>);

    impl SpanExporter for Kept {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .extend(batch);
            Ok(())
        }
    }

    /// Runs `work` under a subscriber exporting through [`layer`] with the
    /// production id generator; returns the finished spans.
    fn exported(work: impl FnOnce()) -> Vec<SpanData> {
        let kept = Kept::default();
        let provider = test_provider(SimpleSpanProcessor::new(kept.clone()));
        let subscriber = tracing_subscriber::registry().with(layer(provider.tracer("test")));
        test_set_exporting();
        tracing::subscriber::with_default(subscriber, work);
        let _ = provider.force_flush();
        kept.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn named<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
        spans
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no span {name} in {spans:?}"))
    }

    const ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

    #[test]
    fn a_callers_trace_id_is_the_exported_trace_id_of_the_call_and_its_host_spans() {
        let spans = exported(|| {
            // A span the application has open does not adopt the call.
            let outer = tracing::info_span!(target: "skilldeck_test", "outer");
            let _outer = outer.enter();
            let span = call_span("python", "discover", Some(ID));
            let _in = span.enter();
            tracing::info_span!(target: "skilldeck", "discover").in_scope(|| {});
        });
        let call = named(&spans, "discover");
        let root = spans
            .iter()
            .find(|s| s.name == "discover" && s.parent_span_id == SpanId::INVALID)
            .expect("the call span is a root");
        assert_eq!(format!("{:032x}", root.span_context.trace_id()), ID);
        assert_eq!(format!("{:032x}", call.span_context.trace_id()), ID);
        let host = spans
            .iter()
            .find(|s| s.parent_span_id == root.span_context.span_id())
            .expect("the host's span is the call's child");
        assert_eq!(host.span_context.trace_id(), root.span_context.trace_id());
        let outer = named(&spans, "outer");
        assert_ne!(outer.span_context.trace_id(), root.span_context.trace_id());
    }

    #[test]
    fn a_uuid_and_a_traceparent_bind_their_trace_and_an_opaque_id_is_an_attribute() {
        let uuid = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
        let tp = format!("00-{ID}-00f067aa0ba902b7-01");
        let mut bound = Vec::new();
        let spans = exported(|| {
            for (op, id) in [
                ("activate", uuid),
                ("search", tp.as_str()),
                ("catalog", "lf-42"),
            ] {
                let span = call_span("node", op, Some(id));
                bound.push(span.context().span().span_context().trace_id());
                span.in_scope(|| {});
            }
            // Without a caller id, a new trace per call.
            let span = call_span("node", "reload", None);
            span.in_scope(|| {});
        });
        let activate = named(&spans, "activate");
        assert_eq!(
            format!("{:032x}", activate.span_context.trace_id()),
            "7c9e6679742540de944be07fc1f90ae7"
        );
        let search = named(&spans, "search");
        assert_eq!(format!("{:032x}", search.span_context.trace_id()), ID);
        assert_eq!(
            format!("{:016x}", search.parent_span_id),
            "00f067aa0ba902b7"
        );
        let catalog = named(&spans, "catalog");
        let kept = catalog
            .attributes
            .iter()
            .find(|kv| kv.key.as_str() == "skilldeck.caller.trace_id")
            .map(|kv| kv.value.to_string());
        assert_eq!(kept.as_deref(), Some("lf-42"));
        assert_ne!(catalog.span_context.trace_id(), TraceId::INVALID);
        assert_eq!(bound[2], catalog.span_context.trace_id());
        let reload = named(&spans, "reload");
        assert_ne!(
            reload.span_context.trace_id(),
            catalog.span_context.trace_id()
        );
    }

    #[test]
    fn the_bound_trace_id_is_the_one_returned_for_log_lines() {
        let mut returned = String::new();
        let spans = exported(|| {
            let span = tracing::info_span!(
                target: "skilldeck_test",
                "op",
                trace_id = tracing::field::Empty,
                skilldeck.caller.trace_id = tracing::field::Empty,
            );
            returned = bind_caller_trace(&span, CallerTrace::parse(ID).as_ref());
            span.in_scope(|| {});
        });
        assert_eq!(returned, ID);
        let op = named(&spans, "op");
        assert_eq!(format!("{:032x}", op.span_context.trace_id()), ID);
    }
}
