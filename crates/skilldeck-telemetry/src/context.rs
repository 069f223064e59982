//! Trace contexts: a W3C `traceparent` a client sent, and the trace id an
//! application passes to a binding's call ([`CallerTrace`]).

/// The `_meta` key (and HTTP header) carrying a W3C trace context.
pub const TRACEPARENT: &str = "traceparent";
/// The `_meta` key (and HTTP header) carrying W3C trace state.
pub const TRACESTATE: &str = "tracestate";
/// The longest caller trace id recorded as an attribute (longer ones are
/// cut, on a character boundary).
pub const MAX_CALLER_TRACE_ID_CHARS: usize = 256;

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

fn is_lower_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn nonzero(s: &str) -> bool {
    s.bytes().any(|b| b != b'0')
}

/// True when `value` is a well-formed W3C `traceparent` whose ids are not
/// all zero (version `ff` is invalid; later versions may append fields).
pub fn valid_traceparent(value: &str) -> bool {
    let parts: Vec<&str> = value.trim().split('-').collect();
    match parts.as_slice() {
        [version, trace, parent, flags, rest @ ..] => {
            is_lower_hex(version, 2)
                && *version != "ff"
                && (rest.is_empty() || *version != "00")
                && is_lower_hex(trace, 32)
                && nonzero(trace)
                && is_lower_hex(parent, 16)
                && nonzero(parent)
                && is_lower_hex(flags, 2)
        }
        _ => false,
    }
}

/// The trace id an application passes to a binding's call (`traceId` in
/// Node, `trace_id` in Python), read by [`CallerTrace::parse`]:
///
/// - a W3C `traceparent`: the spans of the call are children of that
///   remote span (its trace id, its sampled flag);
/// - a W3C trace id (32 hex digits, any case, not all zero): the call's
///   root span is exported under exactly that trace id (lowercased);
/// - a UUID (`8-4-4-4-12` hex digits, as Langfuse's and many hosts' ids
///   are): the same, its 32 hex digits without the dashes;
/// - anything else (a Langfuse-style free-form id, a request id): kept as
///   the attribute `skilldeck.caller.trace_id` on the call's root span
///   (at most [`MAX_CALLER_TRACE_ID_CHARS`]), whose trace id is new.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallerTrace {
    /// A full W3C trace context: the remote parent.
    Parent(TraceContext),
    /// A trace id (32 lowercase hex digits) for the call's root span.
    TraceId(String),
    /// An id that is no trace id: recorded, a new trace id is used.
    Opaque(String),
}

impl CallerTrace {
    /// Reads `value` (see the type's rules); `None` when it is empty or
    /// only white space.
    pub fn parse(value: &str) -> Option<CallerTrace> {
        let value = value.trim();
        if value.is_empty() {
            return None;
        }
        if valid_traceparent(value) {
            return Some(CallerTrace::Parent(TraceContext {
                traceparent: value.to_owned(),
                tracestate: None,
            }));
        }
        let lower = value.to_ascii_lowercase();
        if is_lower_hex(&lower, 32) && nonzero(&lower) {
            return Some(CallerTrace::TraceId(lower));
        }
        let groups: Vec<&str> = lower.split('-').collect();
        if let [a, b, c, d, e] = groups.as_slice()
            && is_lower_hex(a, 8)
            && is_lower_hex(b, 4)
            && is_lower_hex(c, 4)
            && is_lower_hex(d, 4)
            && is_lower_hex(e, 12)
        {
            let hex = groups.concat();
            if nonzero(&hex) {
                return Some(CallerTrace::TraceId(hex));
            }
        }
        let cut = value
            .char_indices()
            .nth(MAX_CALLER_TRACE_ID_CHARS)
            .map_or(value, |(at, _)| &value[..at]);
        Some(CallerTrace::Opaque(cut.to_owned()))
    }

    /// The trace id the call's spans are exported under, when the caller
    /// chose it (not for [`CallerTrace::Opaque`]).
    pub fn trace_id(&self) -> Option<&str> {
        match self {
            CallerTrace::Parent(context) => Some(context.trace_id()),
            CallerTrace::TraceId(id) => Some(id),
            CallerTrace::Opaque(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_callers_w3c_trace_id_is_used_as_is_in_lowercase() {
        let id = "4bf92f3577b34da6a3ce929d0e0e4736";
        assert_eq!(
            CallerTrace::parse(id),
            Some(CallerTrace::TraceId(id.into()))
        );
        assert_eq!(
            CallerTrace::parse(" 4BF92F3577B34DA6A3CE929D0E0E4736 "),
            Some(CallerTrace::TraceId(id.into()))
        );
        let parent = CallerTrace::parse(TP).unwrap();
        assert!(matches!(parent, CallerTrace::Parent(_)), "{parent:?}");
        assert_eq!(parent.trace_id(), Some(id));
    }

    #[test]
    fn a_uuid_trace_id_maps_to_its_32_hex_digits() {
        let parsed = CallerTrace::parse("7C9E6679-7425-40DE-944B-E07FC1F90AE7").unwrap();
        assert_eq!(parsed.trace_id(), Some("7c9e6679742540de944be07fc1f90ae7"));
    }

    #[test]
    fn an_id_that_is_no_trace_id_is_kept_but_gets_no_trace_of_its_own_choosing() {
        for opaque in [
            "lf-trace-1234",
            "00000000000000000000000000000000",
            "00000000-0000-0000-0000-000000000000",
            "4bf92f3577b34da6a3ce929d0e0e47",
            "g bf92f3577b34da6a3ce929d0e0e4736",
        ] {
            let parsed = CallerTrace::parse(opaque).unwrap();
            assert_eq!(parsed, CallerTrace::Opaque(opaque.into()), "{opaque}");
            assert_eq!(parsed.trace_id(), None);
        }
        assert_eq!(CallerTrace::parse("  "), None);
        let long = "é".repeat(MAX_CALLER_TRACE_ID_CHARS + 10);
        let Some(CallerTrace::Opaque(kept)) = CallerTrace::parse(&long) else {
            panic!("an opaque id");
        };
        assert_eq!(kept.chars().count(), MAX_CALLER_TRACE_ID_CHARS);
    }
}
