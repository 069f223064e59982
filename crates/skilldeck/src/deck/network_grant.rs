//! The network part of a skill's grant (`[exec.skills.<name>] network`):
//! nothing, everything, or a list of host-name patterns reached only
//! through skilldeck's proxy; and the operator's address ranges that the
//! proxy may reach despite the built-in refusals (`[exec]
//! network-allow-ranges`). Data and validation only; the execution crate
//! enforces them.
//!
//! ```toml
//! [exec]
//! network-allow-ranges = ["10.1.0.0/16"]   # internal API the proxy may reach
//!
//! [exec.skills.gh]
//! network = ["api.github.com", "*.pypi.org"]
//! ```

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Longest host name (RFC 1035, without the trailing dot).
pub const MAX_HOST_NAME_LEN: usize = 253;
/// Longest label of a host name (RFC 1035).
pub const MAX_HOST_LABEL_LEN: usize = 63;
/// Most host patterns one grant may list.
pub const MAX_HOST_PATTERNS: usize = 256;

/// What a skill may reach over the network.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum NetworkGrant {
    /// No network at all (`network = false`, the default).
    #[default]
    None,
    /// The host's whole network (`network = true`): TCP/UDP, DNS.
    All,
    /// Only these names, through skilldeck's filtering HTTP proxy (`network
    /// = ["api.github.com", "*.pypi.org"]`); the sandbox has no network of
    /// its own.
    Hosts(Vec<HostPattern>),
}

impl NetworkGrant {
    /// Any network at all (the whole network or a host list).
    pub fn is_granted(&self) -> bool {
        !matches!(self, NetworkGrant::None)
    }

    /// The host's whole network.
    pub fn is_all(&self) -> bool {
        matches!(self, NetworkGrant::All)
    }

    /// The host patterns of a host-list grant (empty otherwise).
    pub fn hosts(&self) -> &[HostPattern] {
        match self {
            NetworkGrant::Hosts(h) => h,
            _ => &[],
        }
    }

    /// True when `host` (a host name as a client sent it) is allowed by
    /// this grant's patterns; always false for `None` and `All` (which
    /// are not decided per name).
    pub fn allows_host(&self, host: &str) -> bool {
        let Ok(name) = normalize_host(host) else {
            return false;
        };
        self.hosts().iter().any(|p| p.matches_normalized(&name))
    }

    /// A short description for logs and `skilldeck sandbox`.
    pub fn describe(&self) -> String {
        match self {
            NetworkGrant::None => "none".to_owned(),
            NetworkGrant::All => "all".to_owned(),
            NetworkGrant::Hosts(h) => {
                let names: Vec<&str> = h.iter().map(HostPattern::as_str).collect();
                format!("hosts via proxy: {}", names.join(", "))
            }
        }
    }
}

impl From<bool> for NetworkGrant {
    fn from(b: bool) -> Self {
        if b {
            NetworkGrant::All
        } else {
            NetworkGrant::None
        }
    }
}

impl Serialize for NetworkGrant {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            NetworkGrant::None => s.serialize_bool(false),
            NetworkGrant::All => s.serialize_bool(true),
            NetworkGrant::Hosts(h) => h.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for NetworkGrant {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Bool(bool),
            List(Vec<String>),
        }
        let raw = Raw::deserialize(d).map_err(|_| {
            serde::de::Error::custom(
                "network must be true, false or a list of host names such as [\"api.github.com\", \"*.pypi.org\"]",
            )
        })?;
        match raw {
            Raw::Bool(b) => Ok(b.into()),
            Raw::List(list) => {
                if list.len() > MAX_HOST_PATTERNS {
                    return Err(serde::de::Error::custom(format!(
                        "network lists {} host names; at most {MAX_HOST_PATTERNS} are allowed",
                        list.len()
                    )));
                }
                let mut patterns: Vec<HostPattern> = Vec::with_capacity(list.len());
                for item in &list {
                    let p = HostPattern::parse(item).map_err(serde::de::Error::custom)?;
                    if !patterns.contains(&p) {
                        patterns.push(p);
                    }
                }
                if patterns.is_empty() {
                    return Ok(NetworkGrant::None);
                }
                Ok(NetworkGrant::Hosts(patterns))
            }
        }
    }
}

/// A host-name pattern of a grant: an exact ASCII host name
/// (`api.github.com`) or `*.` and a name of at least two labels
/// (`*.pypi.org`: every subdomain, at any depth, never `pypi.org` itself).
/// Stored lowercase without a trailing dot. IP addresses are not patterns
/// (an operator allows addresses with `[exec] network-allow-ranges`, and
/// only for names that resolve into them).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostPattern {
    text: String,
}

impl HostPattern {
    /// The pattern `text`, validated and lowercased; the error says what is
    /// wrong and what to write instead.
    pub fn parse(text: &str) -> Result<HostPattern, String> {
        let shown = text.escape_debug();
        let (wild, name) = match text.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        if text == "*" || name.contains('*') {
            return Err(format!(
                "network host '{shown}': '*' is allowed only as a whole first label ('*.example.com', its subdomains); to grant every host write network = true"
            ));
        }
        if text.parse::<IpAddr>().is_ok()
            || text
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .is_ok()
        {
            return Err(format!(
                "network host '{shown}': an IP address is not a host name; list the host's name (an operator may allow its address range with [exec] network-allow-ranges)"
            ));
        }
        let name = normalize_host(name).map_err(|why| format!("network host '{shown}': {why}"))?;
        if wild && !name.contains('.') {
            return Err(format!(
                "network host '{shown}': a wildcard must cover a name of at least two labels ('*.example.com', not '*.com')"
            ));
        }
        Ok(HostPattern {
            text: if wild { format!("*.{name}") } else { name },
        })
    }

    /// The pattern as written in the config (lowercase).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// True when the host name `host` matches (compared without regard to
    /// case and a trailing dot; an invalid name never matches).
    pub fn matches(&self, host: &str) -> bool {
        normalize_host(host).is_ok_and(|n| self.matches_normalized(&n))
    }

    fn matches_normalized(&self, name: &str) -> bool {
        match self.text.strip_prefix("*.") {
            Some(base) => name
                .strip_suffix(base)
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            None => name == self.text,
        }
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for HostPattern {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HostPattern::parse(s)
    }
}

impl Serialize for HostPattern {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

/// `host` as a lowercase ASCII host name without a trailing dot, or why it
/// is not one: labels of letters, digits and '-' (not first or last), 1 to
/// [`MAX_HOST_LABEL_LEN`] bytes each, [`MAX_HOST_NAME_LEN`] in all, and a
/// last label that is not all digits (that is an IPv4 address).
pub fn normalize_host(host: &str) -> Result<String, String> {
    if !host.is_ascii() {
        return Err(
            "not an ASCII host name; write an internationalized name in its ASCII (punycode, 'xn--…') form".to_owned(),
        );
    }
    let name = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    if name.is_empty() || name.len() > MAX_HOST_NAME_LEN {
        return Err(format!(
            "a host name has 1 to {MAX_HOST_NAME_LEN} characters"
        ));
    }
    for label in name.split('.') {
        if label.is_empty() || label.len() > MAX_HOST_LABEL_LEN {
            return Err(format!(
                "each dot-separated label has 1 to {MAX_HOST_LABEL_LEN} characters"
            ));
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            || label.starts_with('-')
            || label.ends_with('-')
        {
            return Err(
                "a label holds letters, digits and '-' (not first or last) only".to_owned(),
            );
        }
    }
    if name
        .rsplit('.')
        .next()
        .is_some_and(|last| last.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err("this is an IP address, not a host name".to_owned());
    }
    Ok(name)
}

/// An address range the operator lets the proxy reach although the
/// built-in rules refuse it (`[exec] network-allow-ranges`, CIDR: an
/// address and a prefix length with no host bits set, `10.1.0.0/16`,
/// `fd12:3456::/48`). It never widens which names a skill may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpRange(ipnet::IpNet);

impl IpRange {
    /// The range `text`, or why it is not one.
    pub fn parse(text: &str) -> Result<IpRange, String> {
        let shown = text.escape_debug();
        let net: ipnet::IpNet = text.parse().map_err(|_| {
            format!(
                "network-allow-ranges: '{shown}' is not an address range in CIDR form such as \"10.1.0.0/16\" or \"fd12:3456::/48\""
            )
        })?;
        if net.trunc() != net {
            return Err(format!(
                "network-allow-ranges: '{shown}' has host bits set; write its network, \"{}\"",
                net.trunc()
            ));
        }
        Ok(IpRange(net))
    }

    /// True when `addr` is in the range (an IPv4-mapped IPv6 address is
    /// compared as its IPv4 address).
    pub fn contains(&self, addr: IpAddr) -> bool {
        let addr = match addr {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
            v4 => v4,
        };
        self.0.contains(&addr)
    }
}

impl fmt::Display for IpRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for IpRange {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for IpRange {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        IpRange::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn a_wildcard_matches_subdomains_only_never_the_apex_or_a_lookalike() {
        let p = HostPattern::parse("*.PyPI.org.").unwrap();
        assert_eq!(p.as_str(), "*.pypi.org");
        assert!(p.matches("files.pypi.org"));
        assert!(p.matches("a.b.PYPI.org."));
        assert!(!p.matches("pypi.org"));
        assert!(!p.matches("evilpypi.org"));
        assert!(!p.matches("pypi.org.evil.com"));
        let exact = HostPattern::parse("api.github.com").unwrap();
        assert!(exact.matches("API.github.com"));
        assert!(!exact.matches("x.api.github.com"));
        assert!(!exact.matches("api.github.com.evil.com"));
    }

    #[test]
    fn bare_wildcards_ip_literals_and_non_ascii_names_are_not_patterns() {
        for bad in [
            "*",
            "*.com",
            "a.*.com",
            "*example.com",
            "1.2.3.4",
            "::1",
            "[::1]",
            "bücher.de",
            "",
            "a..b",
            "-a.com",
            "a_b.com",
            "http://a.com",
            "a.com:443",
            "10.0.0.1.",
        ] {
            assert!(HostPattern::parse(bad).is_err(), "{bad:?} was accepted");
        }
        assert!(HostPattern::parse("xn--bcher-kva.de").is_ok());
    }

    #[test]
    fn a_range_with_host_bits_is_refused_and_mapped_addresses_match() {
        assert!(IpRange::parse("10.1.2.3/16").is_err());
        assert!(IpRange::parse("10.1.0.0").is_err());
        let r = IpRange::parse("10.1.0.0/16").unwrap();
        assert!(r.contains("10.1.200.3".parse().unwrap()));
        assert!(r.contains("::ffff:10.1.0.9".parse().unwrap()));
        assert!(!r.contains("10.2.0.1".parse().unwrap()));
    }
}
