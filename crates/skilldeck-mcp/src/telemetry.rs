//! OpenTelemetry export of the server's `tracing` spans (OTLP over HTTP,
//! protobuf), for any OTLP collector or Langfuse.
//!
//! [`Settings::resolve`] turns the `[telemetry]` config section and the
//! standard `OTEL_*` variables into export settings, or `None` when nothing
//! names an endpoint: then nothing below runs and no layer is installed
//! (see [`crate::logging::init_with_telemetry`]). The exporter itself needs
//! the `otel` cargo feature (on in the released `skilldeck` binary).
//!
//! Export never blocks a request: finished spans go to a bounded queue that
//! a background thread drains in batches; when the queue is full (the
//! collector is slow or down) spans are dropped and counted, and the counts
//! are logged at shutdown, which waits at most [`SHUTDOWN_TIMEOUT`]. A
//! shutdown that gives up (an export still waiting for a collector that
//! accepts but never answers) is logged as an export failure, with the spans
//! it abandoned: the first failure is reported whether the export's own
//! [`EXPORT_TIMEOUT`] or the shutdown's ran out first.
//!
//! Exported by default: span names, timings, parent links and the span
//! fields (skill names, counts, tool names, request ids). Tool arguments
//! and results only with `export-content = true` ([`export_content`]).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Map, Value};
use skilldeck::deck::TelemetryConfig;

use crate::error::Error;

/// The `service.name` when neither `OTEL_SERVICE_NAME` nor the config set one.
pub const DEFAULT_SERVICE_NAME: &str = "skilldeck";
/// Finished spans held for export when the config sets no `queue-size`.
pub const DEFAULT_QUEUE_SIZE: usize = 2048;
/// Most spans in one export request.
pub const MAX_EXPORT_BATCH: usize = 512;
/// How often the queue is exported.
pub const EXPORT_INTERVAL: Duration = Duration::from_secs(1);
/// How long one export request may take.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long shutdown waits for the last spans to be exported.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(3);
/// The OTLP/HTTP traces path appended to a base endpoint.
pub const TRACES_PATH: &str = "/v1/traces";
/// The `_meta` key (and HTTP header) carrying a W3C trace context.
pub const TRACEPARENT: &str = "traceparent";
/// The `_meta` key (and HTTP header) carrying W3C trace state.
pub const TRACESTATE: &str = "tracestate";

/// Where and how spans are exported.
#[derive(Clone, PartialEq)]
pub struct Settings {
    /// The full traces URL (`.../v1/traces`).
    pub traces_endpoint: String,
    /// Headers of every export request (credentials: never logged).
    /// `OTEL_EXPORTER_OTLP_HEADERS` is added by the exporter itself.
    pub headers: BTreeMap<String, String>,
    /// The `service.name` resource attribute.
    pub service_name: String,
    /// Fraction of root traces recorded (a remote parent's flag wins).
    pub sampling: f64,
    /// Export tool arguments and results.
    pub export_content: bool,
    /// Most finished spans waiting for export.
    pub queue_size: usize,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<&str> = self.headers.keys().map(String::as_str).collect();
        f.debug_struct("Settings")
            .field("traces_endpoint", &self.traces_endpoint)
            .field("header_names", &headers)
            .field("service_name", &self.service_name)
            .field("sampling", &self.sampling)
            .field("export_content", &self.export_content)
            .field("queue_size", &self.queue_size)
            .finish()
    }
}

impl Settings {
    /// The export settings from `config` and the environment (`env` looks a
    /// variable up; the process environment in the server). `OTEL_*`
    /// variables win over the config. `None` when no endpoint is set, or
    /// `OTEL_SDK_DISABLED=true`.
    pub fn resolve(
        config: &TelemetryConfig,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Settings>, Error> {
        let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let traces_endpoint = if let Some(url) = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            check_url("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url)?
        } else if let Some(base) = var("OTEL_EXPORTER_OTLP_ENDPOINT") {
            traces_url(&check_url("OTEL_EXPORTER_OTLP_ENDPOINT", base)?)
        } else if let Some(base) = &config.endpoint {
            traces_url(&check_url("[telemetry] endpoint", base.clone())?)
        } else {
            return Ok(None);
        };
        let service_name = var("OTEL_SERVICE_NAME")
            .or_else(|| config.service_name.clone())
            .unwrap_or_else(|| DEFAULT_SERVICE_NAME.to_owned());
        Ok(Some(Settings {
            traces_endpoint,
            headers: config.headers.clone(),
            service_name,
            sampling: config.sampling.unwrap_or(1.0),
            export_content: config.export_content,
            queue_size: config.queue_size.unwrap_or(DEFAULT_QUEUE_SIZE),
        }))
    }
}

fn check_url(what: &str, url: String) -> Result<String, Error> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(url)
    } else {
        Err(Error::Telemetry(format!(
            "{what}: '{url}' is not an http:// or https:// URL"
        )))
    }
}

/// `base` + [`TRACES_PATH`] (the OTLP rule for a base endpoint).
pub fn traces_url(base: &str) -> String {
    format!("{}{TRACES_PATH}", base.trim_end_matches('/'))
}

static EXPORTING: AtomicBool = AtomicBool::new(false);
static EXPORT_CONTENT: AtomicBool = AtomicBool::new(false);

/// True when spans are exported: then request spans also carry the
/// OpenTelemetry names and attributes (kept off the log lines otherwise).
pub fn exporting() -> bool {
    EXPORTING.load(Ordering::Relaxed)
}

/// True when spans may carry tool arguments and results (export is on and
/// the operator opted in with `export-content = true`).
pub fn export_content() -> bool {
    EXPORT_CONTENT.load(Ordering::Relaxed)
}

#[cfg_attr(not(feature = "otel"), allow(dead_code))]
pub(crate) fn set_exporting(on: bool, content: bool) {
    EXPORTING.store(on, Ordering::Relaxed);
    EXPORT_CONTENT.store(on && content, Ordering::Relaxed);
}

/// A W3C trace context a client sent with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    /// The `traceparent` value, checked (`00-<32 hex>-<16 hex>-<2 hex>`,
    /// ids not all zero).
    pub traceparent: String,
    /// The `tracestate` value sent with it, if any.
    pub tracestate: Option<String>,
}

impl TraceContext {
    /// The 32 hex digits of the trace id (lowercase).
    pub fn trace_id(&self) -> &str {
        self.traceparent.get(3..35).unwrap_or_default()
    }
}

/// True when `value` is a well-formed W3C `traceparent` whose ids are not
/// all zero (version `ff` is invalid; later versions may append fields).
pub fn valid_traceparent(value: &str) -> bool {
    let parts: Vec<&str> = value.trim().split('-').collect();
    let hex = |s: &str, len: usize| {
        s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    let nonzero = |s: &str| s.bytes().any(|b| b != b'0');
    match parts.as_slice() {
        [version, trace, parent, flags, rest @ ..] => {
            hex(version, 2)
                && *version != "ff"
                && (rest.is_empty() || *version != "00")
                && hex(trace, 32)
                && nonzero(trace)
                && hex(parent, 16)
                && nonzero(parent)
                && hex(flags, 2)
        }
        _ => false,
    }
}

/// The trace context of a request: `_meta.traceparent` (the request's own
/// `_meta` first, then the context's), else the HTTP `traceparent` header.
/// Malformed values are ignored (a fresh trace starts).
pub fn trace_context(
    metas: &[Option<&Map<String, Value>>],
    headers: Option<&http::HeaderMap>,
) -> Option<TraceContext> {
    for meta in metas.iter().flatten() {
        if let Some(tp) = meta.get(TRACEPARENT).and_then(Value::as_str)
            && valid_traceparent(tp)
        {
            return Some(TraceContext {
                traceparent: tp.trim().to_owned(),
                tracestate: meta
                    .get(TRACESTATE)
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            });
        }
    }
    let headers = headers?;
    let tp = headers.get(TRACEPARENT)?.to_str().ok()?;
    valid_traceparent(tp).then(|| TraceContext {
        traceparent: tp.trim().to_owned(),
        tracestate: headers
            .get(TRACESTATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
    })
}

/// Makes the client's trace context the parent of `span` (before it is
/// entered). Without the `otel` feature, or with export off, a no-op.
pub fn set_parent(span: &tracing::Span, context: &TraceContext) {
    #[cfg(feature = "otel")]
    export::set_parent(span, context);
    #[cfg(not(feature = "otel"))]
    let _ = (span, context);
}

/// The trace id `span` is exported under (its OpenTelemetry context's,
/// after [`set_parent`]), or `None` when nothing is exported.
fn exported_trace_id(span: &tracing::Span) -> Option<String> {
    #[cfg(feature = "otel")]
    if exporting() {
        return export::trace_id(span);
    }
    let _ = span;
    None
}

/// A trace id of our own, for log lines when nothing is exported: 32 hex
/// digits, never all zero, different per call.
fn fresh_trace_id() -> String {
    use std::hash::{BuildHasher, RandomState};
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
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

#[cfg(feature = "otel")]
pub(crate) mod export {
    //! The exporter: a counted batch processor over the OTLP/HTTP exporter.

    use std::collections::HashMap;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    use opentelemetry::Context;
    use opentelemetry::propagation::TextMapPropagator as _;
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
    use opentelemetry_sdk::Resource;
    use opentelemetry_sdk::error::OTelSdkResult;
    use opentelemetry_sdk::propagation::TraceContextPropagator;
    use opentelemetry_sdk::trace::{
        BatchConfigBuilder, BatchSpanProcessor, Sampler, SdkTracer, SdkTracerProvider, SpanData,
        SpanExporter, SpanProcessor,
    };
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    use crate::error::Error;
    use crate::telemetry::{
        EXPORT_INTERVAL, EXPORT_TIMEOUT, MAX_EXPORT_BATCH, SHUTDOWN_TIMEOUT, Settings, TRACEPARENT,
        TRACESTATE, TraceContext,
    };

    pub(crate) fn set_parent(span: &tracing::Span, context: &TraceContext) {
        let mut carrier = HashMap::with_capacity(2);
        carrier.insert(TRACEPARENT.to_owned(), context.traceparent.clone());
        if let Some(state) = &context.tracestate {
            carrier.insert(TRACESTATE.to_owned(), state.clone());
        }
        let parent = TraceContextPropagator::new().extract_with_context(&Context::new(), &carrier);
        // Fails only when the span is disabled or already started: then
        // it keeps its own trace.
        let _ = span.set_parent(parent);
    }

    /// The trace id of `span`'s OpenTelemetry context (32 hex digits), or
    /// `None` when the span is not sampled into a trace.
    pub(crate) fn trace_id(span: &tracing::Span) -> Option<String> {
        use opentelemetry::trace::TraceContextExt as _;
        let context = span.context();
        let id = context.span().span_context().trace_id();
        (id != opentelemetry::trace::TraceId::INVALID).then(|| format!("{id:032x}"))
    }

    /// What happened to the spans: ended, exported, failed to export, and
    /// those in an export that has not returned yet.
    #[derive(Debug, Default)]
    pub(crate) struct Counts {
        ended: AtomicU64,
        exported: AtomicU64,
        failed: AtomicU64,
        in_flight: AtomicU64,
    }

    /// What [`Exporter::shutdown`] found: the counts, and whether the last
    /// spans were flushed within [`SHUTDOWN_TIMEOUT`].
    #[derive(Debug)]
    pub(crate) struct ShutdownReport {
        /// Spans ended (handed to the queue).
        pub(crate) ended: u64,
        /// Spans the collector accepted.
        pub(crate) exported: u64,
        /// Spans in exports that returned an error.
        pub(crate) failed: u64,
        /// Spans in an export still waiting for the collector when
        /// shutdown gave up.
        pub(crate) abandoned: u64,
        /// Spans never handed to the exporter (queue full, or still queued
        /// when shutdown gave up).
        pub(crate) dropped: u64,
        /// Why the flush did not finish, if it did not (a timeout: the
        /// collector did not answer in time).
        pub(crate) flush_error: Option<String>,
        /// The traces URL.
        pub(crate) endpoint: String,
    }

    impl ShutdownReport {
        /// True when a span was not exported, or the flush gave up.
        pub(crate) fn is_failure(&self) -> bool {
            self.failed > 0 || self.abandoned > 0 || self.dropped > 0 || self.flush_error.is_some()
        }

        /// The line that says an export was abandoned at shutdown (an
        /// export failure: the collector never answered), if one was.
        pub(crate) fn abandoned_line(&self) -> Option<String> {
            let error = self.flush_error.as_ref()?;
            Some(format!(
                "telemetry: export failed: {} did not answer before shutdown gave up after {}s \
                 ({error}); {} spans abandoned in an unfinished export",
                self.endpoint,
                SHUTDOWN_TIMEOUT.as_secs(),
                self.abandoned
            ))
        }

        /// The summary line.
        pub(crate) fn summary(&self) -> String {
            format!(
                "telemetry: {} spans, {} exported to {}, {} failed to export, {} abandoned \
                 at shutdown, {} dropped (queue full or not flushed in {}s)",
                self.ended,
                self.exported,
                self.endpoint,
                self.failed,
                self.abandoned,
                self.dropped,
                SHUTDOWN_TIMEOUT.as_secs()
            )
        }
    }

    /// The installed exporter; [`Exporter::shutdown`] flushes it.
    #[derive(Debug)]
    pub(crate) struct Exporter {
        provider: SdkTracerProvider,
        counts: Arc<Counts>,
        endpoint: String,
    }

    impl Exporter {
        /// Builds the exporter and its tracer. Call outside an async
        /// runtime (the blocking HTTP client owns one).
        pub(crate) fn new(settings: &Settings) -> Result<(Exporter, SdkTracer), Error> {
            let otlp = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(Protocol::HttpBinary)
                .with_endpoint(settings.traces_endpoint.clone())
                .with_headers(settings.headers.clone().into_iter().collect())
                .with_timeout(EXPORT_TIMEOUT)
                .build()
                .map_err(|e| Error::Telemetry(format!("cannot build the OTLP exporter: {e}")))?;
            let counts = Arc::new(Counts::default());
            let batch = BatchConfigBuilder::default()
                .with_max_queue_size(settings.queue_size)
                .with_max_export_batch_size(MAX_EXPORT_BATCH.min(settings.queue_size))
                .with_scheduled_delay(EXPORT_INTERVAL)
                .build();
            let processor = BatchSpanProcessor::builder(CountingExporter {
                inner: otlp,
                counts: Arc::clone(&counts),
            })
            .with_batch_config(batch)
            .build();
            let provider = SdkTracerProvider::builder()
                .with_span_processor(CountingProcessor {
                    inner: processor,
                    counts: Arc::clone(&counts),
                })
                .with_sampler(Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(
                    settings.sampling,
                ))))
                .with_resource(
                    Resource::builder()
                        .with_service_name(settings.service_name.clone())
                        .build(),
                )
                .build();
            let tracer = provider.tracer("skilldeck");
            Ok((
                Exporter {
                    provider,
                    counts,
                    endpoint: settings.traces_endpoint.clone(),
                },
                tracer,
            ))
        }

        /// Exports what is queued (waiting at most [`SHUTDOWN_TIMEOUT`])
        /// and logs the counts; an export abandoned because the collector
        /// did not answer in time is logged as an export failure.
        pub(crate) fn shutdown(&self) -> ShutdownReport {
            let flushed = self.provider.shutdown_with_timeout(SHUTDOWN_TIMEOUT);
            // Read in-flight first: an abandoned export that returns now
            // is counted at worst twice (abandoned and failed), never in
            // neither.
            let abandoned = if flushed.is_err() {
                self.counts.in_flight.load(Ordering::Acquire)
            } else {
                0
            };
            let ended = self.counts.ended.load(Ordering::Relaxed);
            let exported = self.counts.exported.load(Ordering::Relaxed);
            let failed = self.counts.failed.load(Ordering::Relaxed);
            let report = ShutdownReport {
                ended,
                exported,
                failed,
                abandoned,
                dropped: ended.saturating_sub(exported + failed + abandoned),
                flush_error: flushed.err().map(|e| e.to_string()),
                endpoint: self.endpoint.clone(),
            };
            if let Some(line) = report.abandoned_line() {
                tracing::warn!(abandoned = report.abandoned, "{line}");
            }
            let summary = report.summary();
            let ShutdownReport {
                ended,
                exported,
                failed,
                abandoned,
                dropped,
                ..
            } = report;
            if report.is_failure() {
                tracing::warn!(ended, exported, failed, abandoned, dropped, "{summary}");
            } else {
                tracing::info!(ended, exported, "{summary}");
            }
            report
        }
    }

    /// Counts the spans handed to the batch queue.
    #[derive(Debug)]
    struct CountingProcessor<P> {
        inner: P,
        counts: Arc<Counts>,
    }

    impl<P: SpanProcessor> SpanProcessor for CountingProcessor<P> {
        fn on_start(&self, span: &mut opentelemetry_sdk::trace::Span, cx: &Context) {
            self.inner.on_start(span, cx);
        }
        fn on_end(&self, span: SpanData) {
            self.counts.ended.fetch_add(1, Ordering::Relaxed);
            self.inner.on_end(span);
        }
        fn force_flush(&self) -> OTelSdkResult {
            self.inner.force_flush()
        }
        fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
            self.inner.shutdown_with_timeout(timeout)
        }
        fn set_resource(&mut self, resource: &Resource) {
            self.inner.set_resource(resource);
        }
    }

    /// Counts the spans exported and failed; the first failure is logged
    /// (the exporter itself is silent).
    #[derive(Debug)]
    struct CountingExporter<E> {
        inner: E,
        counts: Arc<Counts>,
    }

    impl<E: SpanExporter> SpanExporter for CountingExporter<E> {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            let n = batch.len() as u64;
            self.counts.in_flight.fetch_add(n, Ordering::AcqRel);
            let result = self.inner.export(batch).await;
            match &result {
                Ok(()) => {
                    self.counts.exported.fetch_add(n, Ordering::Relaxed);
                }
                Err(e) => {
                    if self.counts.failed.fetch_add(n, Ordering::Relaxed) == 0 {
                        tracing::warn!(
                            spans = n,
                            error = %e,
                            "telemetry: export failed; spans are dropped while the collector \
                             fails (counted, summary at shutdown)"
                        );
                    }
                }
            }
            // After the outcome is counted, so that shutdown never finds
            // these spans in neither count.
            self.counts.in_flight.fetch_sub(n, Ordering::AcqRel);
            result
        }
        fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
            self.inner.shutdown_with_timeout(timeout)
        }
        fn force_flush(&self) -> OTelSdkResult {
            self.inner.force_flush()
        }
        fn set_resource(&mut self, resource: &Resource) {
            self.inner.set_resource(resource);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn telemetry_is_off_when_no_endpoint_is_configured() {
        let config = TelemetryConfig::default();
        assert_eq!(Settings::resolve(&config, env(&[])).unwrap(), None);
        let with_name = [("OTEL_SERVICE_NAME", "x")];
        assert_eq!(Settings::resolve(&config, env(&with_name)).unwrap(), None);
    }

    #[test]
    fn config_endpoint_is_a_base_url_and_gets_the_traces_path() {
        let config = TelemetryConfig {
            endpoint: Some("https://cloud.langfuse.com/api/public/otel/".into()),
            queue_size: Some(16),
            ..TelemetryConfig::default()
        };
        let s = Settings::resolve(&config, env(&[])).unwrap().unwrap();
        assert_eq!(
            s.traces_endpoint,
            "https://cloud.langfuse.com/api/public/otel/v1/traces"
        );
        assert_eq!(s.service_name, DEFAULT_SERVICE_NAME);
        assert_eq!(s.queue_size, 16);
        assert_eq!(s.sampling, 1.0);
        assert!(!s.export_content);
    }

    #[test]
    fn otel_variables_win_over_the_config() {
        let config = TelemetryConfig {
            endpoint: Some("http://config:4318".into()),
            service_name: Some("from-config".into()),
            ..TelemetryConfig::default()
        };
        let vars = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
            ("OTEL_SERVICE_NAME", "from-env"),
        ];
        let s = Settings::resolve(&config, env(&vars)).unwrap().unwrap();
        assert_eq!(s.traces_endpoint, "http://env:4318/v1/traces");
        assert_eq!(s.service_name, "from-env");
        let vars = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://env:4318/custom",
            ),
        ];
        let s = Settings::resolve(&config, env(&vars)).unwrap().unwrap();
        assert_eq!(s.traces_endpoint, "http://env:4318/custom");
        let vars = [("OTEL_SDK_DISABLED", "true")];
        assert_eq!(Settings::resolve(&config, env(&vars)).unwrap(), None);
    }

    #[test]
    fn a_non_http_endpoint_is_an_error_naming_its_source() {
        let vars = [("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318")];
        let err = Settings::resolve(&TelemetryConfig::default(), env(&vars)).unwrap_err();
        assert!(
            err.to_string().contains("OTEL_EXPORTER_OTLP_ENDPOINT"),
            "{err}"
        );
    }

    #[test]
    fn settings_debug_hides_header_values() {
        let mut config = TelemetryConfig {
            endpoint: Some("http://127.0.0.1:4318".into()),
            ..TelemetryConfig::default()
        };
        config
            .headers
            .insert("Authorization".into(), "Basic c2VjcmV0".into());
        let s = Settings::resolve(&config, env(&[])).unwrap().unwrap();
        let debug = format!("{s:?}");
        assert!(debug.contains("Authorization"), "{debug}");
        assert!(!debug.contains("c2VjcmV0"), "{debug}");
    }

    /// A collector that accepts connections (the kernel's backlog) but
    /// never answers: the shutdown gives up before the export's own
    /// timeout, and that must be reported as a failure, not passed over.
    #[cfg(feature = "otel")]
    #[test]
    fn an_export_abandoned_at_shutdown_is_reported_as_an_export_failure() {
        use opentelemetry::trace::{Span as _, Tracer as _};

        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = silent.local_addr().unwrap().port();
        let config = TelemetryConfig {
            endpoint: Some(format!("http://127.0.0.1:{port}")),
            ..TelemetryConfig::default()
        };
        let settings = Settings::resolve(&config, env(&[])).unwrap().unwrap();
        let (exporter, tracer) = export::Exporter::new(&settings).unwrap();
        tracer.start("one").end();
        // The queued span is exported by the shutdown itself at the latest,
        // and that export waits EXPORT_TIMEOUT (> SHUTDOWN_TIMEOUT) for an
        // answer that never comes: the flush gives up, whatever the timing.
        assert!(EXPORT_TIMEOUT > SHUTDOWN_TIMEOUT);
        let report = exporter.shutdown();
        assert!(report.is_failure(), "{report:?}");
        let line = report
            .abandoned_line()
            .expect("the abandoned export is reported");
        assert!(line.contains("export failed"), "{line}");
        assert!(line.contains(&settings.traces_endpoint), "{line}");
        assert_eq!(report.exported, 0, "{report:?}");
        assert_eq!(
            report.abandoned + report.failed + report.dropped,
            1,
            "the one span is accounted for: {report:?}"
        );
        drop(silent);
    }

    const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn traceparent_must_be_well_formed() {
        assert!(valid_traceparent(TP));
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        ] {
            assert!(!valid_traceparent(bad), "{bad}");
        }
        // A later version may append fields.
        assert!(valid_traceparent(
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"
        ));
    }

    #[test]
    fn meta_traceparent_wins_over_the_http_header() {
        let mut meta = Map::new();
        meta.insert(TRACEPARENT.into(), Value::from(TP));
        meta.insert(TRACESTATE.into(), Value::from("vendor=1"));
        let mut headers = http::HeaderMap::new();
        headers.insert(
            TRACEPARENT,
            http::HeaderValue::from_static(
                "00-11111111111111111111111111111111-2222222222222222-01",
            ),
        );
        let from_meta = trace_context(&[None, Some(&meta)], Some(&headers)).unwrap();
        assert_eq!(from_meta.traceparent, TP);
        assert_eq!(from_meta.tracestate.as_deref(), Some("vendor=1"));
        assert_eq!(from_meta.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        let from_header = trace_context(&[None], Some(&headers)).unwrap();
        assert_eq!(from_header.trace_id(), "11111111111111111111111111111111");
        assert_eq!(trace_context(&[None], None), None);
    }

    #[test]
    fn a_malformed_meta_traceparent_falls_back_to_the_header() {
        let mut meta = Map::new();
        meta.insert(TRACEPARENT.into(), Value::from("not-a-traceparent"));
        assert_eq!(trace_context(&[Some(&meta)], None), None);
        let mut headers = http::HeaderMap::new();
        headers.insert(TRACEPARENT, http::HeaderValue::from_static(TP));
        let tc = trace_context(&[Some(&meta)], Some(&headers)).unwrap();
        assert_eq!(tc.traceparent, TP);
    }
}
