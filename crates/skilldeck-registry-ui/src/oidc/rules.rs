//! The claim mapping: which scopes an identity provider's user gets, from
//! their groups and their email. Every rule that matches adds its scopes;
//! a user no rule matches gets none (and is refused).

use skilldeck_registry::Scope;

/// What a rule matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Matcher {
    /// Membership of a group (exact, case-sensitive: group names are the
    /// provider's identifiers).
    Group(String),
    /// One email address (case-insensitive).
    Email(String),
    /// Every address of a domain (`*@example.com`; case-insensitive; not
    /// its subdomains).
    EmailDomain(String),
}

/// One rule: who, and the scopes they get.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Who.
    pub matcher: Matcher,
    /// What they get.
    pub grant: Vec<Scope>,
}

/// What the provider said about the user, as the rules see it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// The email, if the provider gave one.
    pub email: Option<String>,
    /// Whether the provider says it verified the email.
    pub email_verified: bool,
    /// The groups claim.
    pub groups: Vec<String>,
}

/// Why a rule in the config is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// Neither or both of `group` and `email`.
    #[error("a rule needs exactly one of `group` or `email`")]
    OneMatcher,
    /// An empty group or a malformed address.
    #[error("`{0}` is not a group name, an email address or `*@domain`")]
    BadMatcher(String),
    /// No scope to give.
    #[error("`grant` is empty: list the scopes the rule gives")]
    EmptyGrant,
    /// A scope that does not parse, or one a person may not hold.
    #[error("`{0}`: {1}")]
    BadScope(String, String),
}

fn plausible_domain(domain: &str) -> bool {
    !domain.is_empty()
        && domain.len() <= 253
        && domain
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
}

impl Rule {
    /// A rule from the config's `group`, `email` and `grant`.
    pub fn parse(
        group: Option<&str>,
        email: Option<&str>,
        grant: &[String],
    ) -> Result<Rule, RuleError> {
        let matcher = match (group, email) {
            (Some(g), None) => {
                let g = g.trim();
                if g.is_empty() || g.chars().any(char::is_control) {
                    return Err(RuleError::BadMatcher(g.to_owned()));
                }
                Matcher::Group(g.to_owned())
            }
            (None, Some(e)) => {
                let e = e.trim().to_ascii_lowercase();
                match e.split_once('@') {
                    Some(("*", domain)) if plausible_domain(domain) => {
                        Matcher::EmailDomain(domain.to_owned())
                    }
                    Some((local, domain))
                        if !local.is_empty()
                            && !local.contains('*')
                            && !local.chars().any(|c| c.is_control() || c == ' ')
                            && plausible_domain(domain) =>
                    {
                        Matcher::Email(e.clone())
                    }
                    _ => return Err(RuleError::BadMatcher(e)),
                }
            }
            _ => return Err(RuleError::OneMatcher),
        };
        if grant.is_empty() {
            return Err(RuleError::EmptyGrant);
        }
        let grant = grant
            .iter()
            .map(|text| {
                let scope = Scope::parse(text.trim())
                    .map_err(|e| RuleError::BadScope(text.clone(), e.to_string()))?;
                if matches!(scope, Scope::Agent(_)) {
                    return Err(RuleError::BadScope(
                        text.clone(),
                        "agent scopes belong to agents' tokens, not to people".to_owned(),
                    ));
                }
                Ok(scope)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Rule { matcher, grant })
    }

    /// True when this rule covers `who`. An email rule needs a verified
    /// email when `require_verified_email`.
    pub fn matches(&self, who: &Identity, require_verified_email: bool) -> bool {
        let email = who
            .email
            .as_deref()
            .filter(|_| who.email_verified || !require_verified_email)
            .map(str::to_ascii_lowercase);
        match &self.matcher {
            Matcher::Group(g) => who.groups.iter().any(|x| x == g),
            Matcher::Email(e) => email.as_deref() == Some(e.as_str()),
            Matcher::EmailDomain(d) => email
                .as_deref()
                .and_then(|e| e.rsplit_once('@'))
                .is_some_and(|(local, domain)| !local.is_empty() && domain == d),
        }
    }
}

/// The scopes `who` gets from `rules`: the union of every matching rule's
/// grant, in rule order, without repeats. Empty when none matches.
pub fn scopes_for(rules: &[Rule], who: &Identity, require_verified_email: bool) -> Vec<Scope> {
    let mut out: Vec<Scope> = Vec::new();
    for rule in rules
        .iter()
        .filter(|r| r.matches(who, require_verified_email))
    {
        for scope in &rule.grant {
            if !out.contains(scope) {
                out.push(scope.clone());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(group: Option<&str>, email: Option<&str>, grant: &[&str]) -> Rule {
        let grant: Vec<String> = grant.iter().map(|s| (*s).to_owned()).collect();
        Rule::parse(group, email, &grant).unwrap()
    }

    fn who(email: Option<&str>, verified: bool, groups: &[&str]) -> Identity {
        Identity {
            email: email.map(str::to_owned),
            email_verified: verified,
            groups: groups.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    fn names(scopes: &[Scope]) -> Vec<String> {
        scopes.iter().map(Scope::to_string).collect()
    }

    fn rules() -> Vec<Rule> {
        vec![
            rule(Some("platform-admins"), None, &["admin"]),
            rule(None, Some("*@acme.example"), &["read:acme"]),
            rule(Some("acme-dev"), None, &["publish:acme", "read:acme"]),
            rule(None, Some("Carol@Partner.example"), &["review:acme"]),
        ]
    }

    #[test]
    fn every_matching_rule_adds_its_scopes_once() {
        let got = scopes_for(
            &rules(),
            &who(Some("dev@acme.example"), true, &["acme-dev"]),
            true,
        );
        assert_eq!(names(&got), ["read:acme", "publish:acme"]);
        let admin = scopes_for(&rules(), &who(None, false, &["platform-admins"]), true);
        assert_eq!(names(&admin), ["admin"]);
    }

    #[test]
    fn a_user_no_rule_matches_gets_no_scope() {
        assert!(
            scopes_for(
                &rules(),
                &who(Some("x@evil.example"), true, &["staff"]),
                true
            )
            .is_empty()
        );
        assert!(scopes_for(&rules(), &who(None, false, &[]), true).is_empty());
        assert!(
            scopes_for(
                &[],
                &who(Some("dev@acme.example"), true, &["acme-dev"]),
                true
            )
            .is_empty()
        );
    }

    #[test]
    fn an_unverified_email_matches_no_email_rule_unless_allowed() {
        let unverified = who(Some("dev@acme.example"), false, &[]);
        assert!(scopes_for(&rules(), &unverified, true).is_empty());
        assert_eq!(
            names(&scopes_for(&rules(), &unverified, false)),
            ["read:acme"]
        );
    }

    #[test]
    fn email_rules_ignore_case_but_not_lookalike_domains() {
        let carol = who(Some("CAROL@partner.EXAMPLE"), true, &[]);
        assert_eq!(names(&scopes_for(&rules(), &carol, true)), ["review:acme"]);
        for email in [
            "dev@sub.acme.example",
            "dev@acme.example.evil",
            "dev@evilacme.example",
            "@acme.example",
            "acme.example",
        ] {
            assert!(
                scopes_for(&rules(), &who(Some(email), true, &[]), true).is_empty(),
                "{email}"
            );
        }
    }

    #[test]
    fn group_names_match_exactly() {
        for g in ["Platform-Admins", "platform-admins ", "platform"] {
            assert!(
                scopes_for(&rules(), &who(None, false, &[g]), true).is_empty(),
                "{g}"
            );
        }
    }

    #[test]
    fn malformed_rules_are_refused_with_the_reason() {
        let grant = vec!["admin".to_owned()];
        assert_eq!(Rule::parse(None, None, &grant), Err(RuleError::OneMatcher));
        assert_eq!(
            Rule::parse(Some("g"), Some("a@b.c"), &grant),
            Err(RuleError::OneMatcher)
        );
        assert!(matches!(
            Rule::parse(None, Some("*@"), &grant),
            Err(RuleError::BadMatcher(_))
        ));
        assert!(matches!(
            Rule::parse(None, Some("a*@b.c"), &grant),
            Err(RuleError::BadMatcher(_))
        ));
        assert!(matches!(
            Rule::parse(Some(" "), None, &grant),
            Err(RuleError::BadMatcher(_))
        ));
        assert_eq!(
            Rule::parse(Some("g"), None, &[]),
            Err(RuleError::EmptyGrant)
        );
        assert!(matches!(
            Rule::parse(Some("g"), None, &["root".to_owned()]),
            Err(RuleError::BadScope(..))
        ));
        assert!(matches!(
            Rule::parse(Some("g"), None, &["agent:bot".to_owned()]),
            Err(RuleError::BadScope(..))
        ));
    }
}
