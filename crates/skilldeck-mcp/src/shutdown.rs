//! Stopping on a signal: SIGINT (Ctrl-C) or SIGTERM.
//!
//! The handlers are installed when [`on_signal`] is called, not when its
//! future is first polled: a server calls it before it says it is ready
//! (`listening on ...`), so a supervisor that sends SIGTERM as soon as it
//! reads that line gets a graceful stop, never the default action (death
//! by the signal, cleanup skipped). Both servers (`serve --http`, stdio,
//! and `registry serve`) stop through this one function.

use std::future::Future;

/// Installs the SIGINT and SIGTERM handlers now and returns a future that
/// resolves when either signal arrives. Call inside a Tokio runtime. If a
/// handler cannot be installed, the future waits for the other one (and
/// forever if neither could be: the process then keeps the default
/// action).
pub fn on_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let interrupt = signal(SignalKind::interrupt());
        let terminate = signal(SignalKind::terminate());
        async move {
            let wait = |s: std::io::Result<tokio::signal::unix::Signal>| async move {
                match s {
                    Ok(mut s) => {
                        s.recv().await;
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "a signal handler could not be installed");
                        std::future::pending::<()>().await;
                    }
                }
            };
            tokio::select! {
                () = wait(interrupt) => {},
                () = wait(terminate) => {},
            }
            tracing::info!("shutting down");
        }
    }
    #[cfg(not(unix))]
    {
        async {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
            tracing::info!("shutting down");
        }
    }
}
