//! Whether spans are exported in this process (set by the exporter once
//! installed, read on every span a face opens).

use std::sync::atomic::{AtomicBool, Ordering};

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
