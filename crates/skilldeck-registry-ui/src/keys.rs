//! The UI's signing key, shared by every replica through the registry's
//! database ([`Registry::ui_shared_key`]): it signs the sign-in form's
//! cookie and the SSO state cookie, and derives each session's CSRF token,
//! so a form served by one replica is accepted by any other. Read once per
//! process (the first request that needs it), then kept.
//!
//! Each use is domain-separated (its own label in the MAC), so a value
//! made for one purpose is never accepted for another.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit as _, Mac as _};
use sha2::Sha256;
use skilldeck_registry::Registry;
use tokio::sync::OnceCell;

use crate::error::UiError;

/// The name of the key in the registry's `ui_keys` table.
pub const UI_KEY_NAME: &str = "ui-signing";

/// What a MAC is for (its domain-separation label).
#[derive(Debug, Clone, Copy)]
pub enum Purpose {
    /// The sign-in form's token from its cookie.
    SignInForm,
    /// A session's CSRF token from its id.
    Csrf,
    /// The SSO state cookie's signature.
    OidcState,
}

impl Purpose {
    fn label(self) -> &'static [u8] {
        match self {
            Purpose::SignInForm => b"skilldeck-ui-signin\0",
            Purpose::Csrf => b"skilldeck-ui-csrf\0",
            Purpose::OidcState => b"skilldeck-ui-oidc-state\0",
        }
    }
}

/// The key, loaded on first use.
pub struct UiKey {
    registry: Registry,
    key: OnceCell<Vec<u8>>,
}

impl std::fmt::Debug for UiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UiKey(..)")
    }
}

/// A loaded key: MACs for each purpose.
#[derive(Clone, Copy)]
pub struct Key<'a>(&'a [u8]);

impl UiKey {
    /// The key of `registry`'s database (not read yet).
    pub fn new(registry: Registry) -> UiKey {
        UiKey {
            registry,
            key: OnceCell::new(),
        }
    }

    /// The key; fails closed (no signed cookie, no CSRF token) when the
    /// database cannot give one.
    pub async fn get(&self) -> Result<Key<'_>, UiError> {
        let key = self
            .key
            .get_or_try_init(|| self.registry.ui_shared_key(UI_KEY_NAME))
            .await?;
        Ok(Key(key))
    }
}

impl Key<'_> {
    /// A key of the tests.
    #[cfg(test)]
    pub fn of(bytes: &[u8]) -> Key<'_> {
        Key(bytes)
    }

    /// HMAC-SHA256 of `text` for `purpose`, base64url (43 characters).
    pub fn mac(&self, purpose: Purpose, text: &str) -> String {
        // HMAC takes a key of any length: this cannot fail.
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(self.0) else {
            return String::new();
        };
        mac.update(purpose.label());
        mac.update(text.as_bytes());
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    }

    /// True when `given` is the MAC of `text` for `purpose` (constant
    /// time; an empty `given` never matches).
    pub fn verify(&self, purpose: Purpose, text: &str, given: &str) -> bool {
        !given.is_empty() && crate::secret::secrets_equal(given, &self.mac(purpose, text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mac_for_one_purpose_is_not_accepted_for_another() {
        let key = Key::of(b"0123456789abcdef0123456789abcdef");
        let csrf = key.mac(Purpose::Csrf, "session");
        assert_eq!(csrf.len(), 43);
        assert!(key.verify(Purpose::Csrf, "session", &csrf));
        assert!(!key.verify(Purpose::SignInForm, "session", &csrf));
        assert!(!key.verify(Purpose::OidcState, "session", &csrf));
        assert!(!key.verify(Purpose::Csrf, "other", &csrf));
        assert!(!key.verify(Purpose::Csrf, "session", ""));
        let other = Key::of(b"another key of thirty-two bytes!");
        assert!(!other.verify(Purpose::Csrf, "session", &csrf));
    }
}
