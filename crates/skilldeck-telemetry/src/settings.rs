//! Where and how spans are exported: the `[telemetry]` config section and
//! the standard `OTEL_*` variables resolved once.

use std::collections::BTreeMap;
use std::time::Duration;

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
        Settings::resolve_with(config, None, env)
    }

    /// [`Settings::resolve`] with an endpoint the application's code names
    /// (a binding's option): `explicit` is `(what, base URL)`, `what`
    /// naming the option in errors. It wins over the `OTEL_*` endpoint
    /// variables and the config (code states its intent for this process,
    /// as OpenTelemetry SDKs' code configuration does);
    /// `OTEL_SDK_DISABLED=true` still turns export off.
    pub fn resolve_with(
        config: &TelemetryConfig,
        explicit: Option<(&str, &str)>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Settings>, Error> {
        let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let explicit = explicit.filter(|(_, url)| !url.trim().is_empty());
        let traces_endpoint = if let Some((what, base)) = explicit {
            traces_url(&check_url(what, base.trim().to_owned())?)
        } else if let Some(url) = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
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
        Err(Error::Config(format!(
            "{what}: '{url}' is not an http:// or https:// URL"
        )))
    }
}

/// `base` + [`TRACES_PATH`] (the OTLP rule for a base endpoint).
pub fn traces_url(base: &str) -> String {
    format!("{}{TRACES_PATH}", base.trim_end_matches('/'))
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

    #[test]
    fn a_bindings_explicit_endpoint_wins_over_the_variables_but_not_over_disabled() {
        let config = TelemetryConfig {
            endpoint: Some("http://config:4318".into()),
            ..TelemetryConfig::default()
        };
        let vars = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318")];
        let explicit = Some(("otlp_endpoint", "http://code:4318/"));
        let s = Settings::resolve_with(&config, explicit, env(&vars))
            .unwrap()
            .unwrap();
        assert_eq!(s.traces_endpoint, "http://code:4318/v1/traces");
        let off = [("OTEL_SDK_DISABLED", "true")];
        assert_eq!(
            Settings::resolve_with(&config, explicit, env(&off)).unwrap(),
            None
        );
        let err = Settings::resolve_with(&config, Some(("otlpEndpoint", "code:4318")), env(&[]))
            .unwrap_err();
        assert!(err.to_string().starts_with("otlpEndpoint:"), "{err}");
        // An empty option is no option.
        let s = Settings::resolve_with(&config, Some(("otlp_endpoint", " ")), env(&[]))
            .unwrap()
            .unwrap();
        assert_eq!(s.traces_endpoint, "http://config:4318/v1/traces");
    }
}
