//! The exporter: a counted batch processor over the OTLP/HTTP exporter,
//! the layer a face adds to its subscriber ([`layer`]), and the
//! process-wide exporter of the bindings ([`install`], [`flush`],
//! [`shutdown`]).

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use opentelemetry::Context;
use opentelemetry::propagation::TextMapPropagator as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::trace::{SpanId, TraceId};
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, Sampler, SdkTracer, SdkTracerProvider, SpanData,
    SpanExporter, SpanProcessor,
};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt as _;

use crate::context::{TRACEPARENT, TRACESTATE, TraceContext};
use crate::error::Error;
use crate::settings::{
    EXPORT_INTERVAL, EXPORT_TIMEOUT, MAX_EXPORT_BATCH, SHUTDOWN_TIMEOUT, Settings,
};
use crate::state::set_exporting;

/// Makes `context` the remote parent of `span` (before it starts).
pub fn set_parent(span: &tracing::Span, context: &TraceContext) {
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
pub fn trace_id(span: &tracing::Span) -> Option<String> {
    use opentelemetry::trace::TraceContextExt as _;
    let context = span.context();
    let id = context.span().span_context().trace_id();
    (id != opentelemetry::trace::TraceId::INVALID).then(|| format!("{id:032x}"))
}

/// What happened to the spans: ended, exported, failed to export, and
/// those in an export that has not returned yet.
#[derive(Debug, Default)]
pub struct Counts {
    ended: AtomicU64,
    exported: AtomicU64,
    failed: AtomicU64,
    in_flight: AtomicU64,
}

/// What [`Exporter::shutdown`] found: the counts, and whether the last
/// spans were flushed within [`SHUTDOWN_TIMEOUT`].
#[derive(Debug)]
pub struct ShutdownReport {
    /// Spans ended (handed to the queue).
    pub ended: u64,
    /// Spans the collector accepted.
    pub exported: u64,
    /// Spans in exports that returned an error.
    pub failed: u64,
    /// Spans in an export still waiting for the collector when
    /// shutdown gave up.
    pub abandoned: u64,
    /// Spans never handed to the exporter (queue full, or still queued
    /// when shutdown gave up).
    pub dropped: u64,
    /// Why the flush did not finish, if it did not (a timeout: the
    /// collector did not answer in time).
    pub flush_error: Option<String>,
    /// The traces URL.
    pub endpoint: String,
}

impl ShutdownReport {
    /// True when a span was not exported, or the flush gave up.
    pub fn is_failure(&self) -> bool {
        self.failed > 0 || self.abandoned > 0 || self.dropped > 0 || self.flush_error.is_some()
    }

    /// The line that says an export was abandoned at shutdown (an
    /// export failure: the collector never answered), if one was.
    pub fn abandoned_line(&self) -> Option<String> {
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
    pub fn summary(&self) -> String {
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
pub struct Exporter {
    provider: SdkTracerProvider,
    counts: Arc<Counts>,
    endpoint: String,
}

impl Exporter {
    /// Exports what is queued now, waiting for the collector's answers
    /// (each export bounded by [`EXPORT_TIMEOUT`]).
    pub fn flush(&self) -> Result<(), Error> {
        self.provider
            .force_flush()
            .map_err(|e| Error::Flush(format!("cannot flush spans to {}: {e}", self.endpoint)))
    }

    /// Builds the exporter and its tracer. Call outside an async
    /// runtime (the blocking HTTP client owns one).
    pub fn new(settings: &Settings) -> Result<(Exporter, SdkTracer), Error> {
        let otlp = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(settings.traces_endpoint.clone())
            .with_headers(settings.headers.clone().into_iter().collect())
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| Error::Setup(format!("cannot build the OTLP exporter: {e}")))?;
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
            .with_id_generator(CallerIds::default())
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
    pub fn shutdown(&self) -> ShutdownReport {
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

/// Marks spans as exported from now on (with tool arguments and results
/// when `settings.export_content`): call it once the [`layer`] is part of
/// the installed subscriber. [`Exporter::shutdown`] clears it.
pub fn set_active(settings: &Settings) {
    set_exporting(true, settings.export_content);
}

/// Marks spans as no longer exported (before [`Exporter::shutdown`]).
pub fn set_inactive() {
    set_exporting(false, false);
}

/// The layer that exports the `skilldeck*` spans and events at INFO and
/// above through `tracer` (other crates' spans, and the log filter, are
/// not its business).
pub fn layer<S>(tracer: SdkTracer) -> impl Layer<S>
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_tracked_inactivity(false)
        .with_threads(false)
        .with_location(false)
        .with_target(false)
        .with_filter(tracing_subscriber::filter::filter_fn(|meta| {
            meta.target().starts_with("skilldeck") && *meta.level() <= tracing::Level::INFO
        }))
}

/// A provider with the production id generator over `processor` (the
/// tests of the spans, without a network).
#[cfg(test)]
pub(crate) fn test_provider(processor: impl SpanProcessor + 'static) -> SdkTracerProvider {
    SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_id_generator(CallerIds::default())
        .build()
}

/// Marks spans as exported (the tests of the spans).
#[cfg(test)]
pub(crate) fn test_set_exporting() {
    set_exporting(true, false);
}

thread_local! {
    /// The trace id the next root span built on this thread takes
    /// ([`start_with_trace_id`]).
    static FORCED_TRACE_ID: Cell<Option<TraceId>> = const { Cell::new(None) };
}

/// Random ids, except for a root span started by [`start_with_trace_id`]:
/// it takes the caller's trace id.
#[derive(Debug, Default)]
struct CallerIds {
    random: RandomIdGenerator,
}

impl IdGenerator for CallerIds {
    fn new_trace_id(&self) -> TraceId {
        FORCED_TRACE_ID
            .with(Cell::take)
            .unwrap_or_else(|| self.random.new_trace_id())
    }
    fn new_span_id(&self) -> SpanId {
        self.random.new_span_id()
    }
}

/// Starts `span` (not yet entered) as a root span of the trace `id` (32
/// lowercase hex digits): no parent, whatever span is current. The span is
/// built here, on this thread, so the id generator hands it `id`.
pub fn start_with_trace_id(span: &tracing::Span, id: &str) {
    let Ok(trace_id) = TraceId::from_hex(id) else {
        return;
    };
    if trace_id == TraceId::INVALID || span.set_parent(Context::new()).is_err() {
        return;
    }
    FORCED_TRACE_ID.with(|forced| forced.set(Some(trace_id)));
    let _ = span.context();
    // Not consumed when the span was not built (filtered out).
    FORCED_TRACE_ID.with(|forced| forced.set(None));
}

/// The process-wide exporter of a binding ([`install`]).
static GLOBAL: Mutex<Option<Exporter>> = Mutex::new(None);
/// Set once [`install`] put its subscriber in place (it stays for the
/// process: `tracing`'s global subscriber cannot be replaced).
static INSTALLED: OnceLock<String> = OnceLock::new();

fn global() -> std::sync::MutexGuard<'static, Option<Exporter>> {
    GLOBAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What [`install`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installed {
    /// The exporter is installed now, to this traces URL.
    New(String),
    /// One was installed before (the first settings win for the process),
    /// to this traces URL.
    Already(String),
}

/// Installs the process-wide exporter of a binding: a global subscriber
/// with the export [`layer`] alone (a binding writes no log lines), its
/// batch thread and HTTP client. Once per process: later calls answer
/// [`Installed::Already`]; after [`shutdown`] it is an error. Call it
/// outside an async runtime.
pub fn install(settings: &Settings) -> Result<Installed, Error> {
    let mut slot = global();
    if let Some(endpoint) = INSTALLED.get() {
        return if slot.is_some() {
            Ok(Installed::Already(endpoint.clone()))
        } else {
            Err(Error::Setup(
                "telemetry was shut down in this process; spans are no longer exported".into(),
            ))
        };
    }
    let (exporter, tracer) = Exporter::new(settings)?;
    let subscriber = tracing_subscriber::registry().with(layer(tracer));
    if let Err(e) = tracing::subscriber::set_global_default(subscriber) {
        let _ = exporter.shutdown();
        return Err(Error::Setup(format!(
            "cannot install the span exporter: {e} (another tracing subscriber is installed)"
        )));
    }
    set_active(settings);
    let endpoint = settings.traces_endpoint.clone();
    let _ = INSTALLED.set(endpoint.clone());
    *slot = Some(exporter);
    Ok(Installed::New(endpoint))
}

/// Exports the spans the process-wide exporter holds, waiting for the
/// collector. `Ok(false)` when none is installed.
pub fn flush() -> Result<bool, Error> {
    match global().as_ref() {
        Some(exporter) => exporter.flush().map(|()| true),
        None => Ok(false),
    }
}

/// Flushes and stops the process-wide exporter (at process exit): spans
/// are no longer exported. `None` when none was running.
pub fn shutdown() -> Option<ShutdownReport> {
    let exporter = global().take()?;
    set_inactive();
    Some(exporter.shutdown())
}

/// True while the process-wide exporter runs.
pub fn installed() -> bool {
    global().is_some()
}

#[cfg(test)]
mod tests {
    use skilldeck::deck::TelemetryConfig;

    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

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
        let (exporter, tracer) = Exporter::new(&settings).unwrap();
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
}
