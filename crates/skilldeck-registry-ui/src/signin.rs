//! The sign-in form's CSRF protection without a server-side session: a
//! signed double-submit cookie. `GET /ui/signin` sets a cookie
//! `skilldeck_ui_signin=<issued-at>.<random>` (`HttpOnly`,
//! `SameSite=Strict`, path `/ui/signin`) and puts
//! `HMAC-SHA256(process key, cookie)` in the form; `POST /ui/signin` must
//! bring both, matching, within [`SIGNIN_FORM_MAX_AGE`]. Another site can
//! neither read the cookie nor compute the HMAC (the key never leaves the
//! process), so it cannot forge a sign-in (login CSRF); and an anonymous
//! visitor costs the server nothing to remember, so a flood of sign-in
//! page loads cannot evict a signed-in session.
//!
//! The key is random per process: a form served by one replica is
//! accepted by that replica only (the UI's sessions already need session
//! affinity behind a load balancer).

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit as _, Mac as _};
use sha2::Sha256;

use crate::limits::{SECRET_BYTES, SIGNIN_FORM_MAX_AGE};
use crate::secret::{RandomUnavailable, random_secret, secrets_equal};
use crate::session::cookie_value;

/// The sign-in form's cookie.
pub const SIGNIN_COOKIE: &str = "skilldeck_ui_signin";
/// The path it is sent for (the sign-in form only).
pub const SIGNIN_COOKIE_PATH: &str = "/ui/signin";
/// Characters of the random part of the cookie (base64url of
/// [`SECRET_BYTES`]).
const NONCE_CHARS: usize = SECRET_BYTES.div_ceil(3) * 4 - (3 - SECRET_BYTES % 3) % 3;
/// Longest cookie value accepted (a decimal timestamp, a dot, the nonce).
const MAX_COOKIE_CHARS: usize = 20 + 1 + NONCE_CHARS;

/// The process's signing key for sign-in forms.
pub struct SignInKey([u8; SECRET_BYTES]);

impl std::fmt::Debug for SignInKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SignInKey(..)")
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl SignInKey {
    /// A fresh random key (fails closed without the OS generator).
    pub fn new() -> Result<SignInKey, RandomUnavailable> {
        let mut key = [0u8; SECRET_BYTES];
        getrandom::fill(&mut key).map_err(|e| RandomUnavailable::from_message(e.to_string()))?;
        Ok(SignInKey(key))
    }

    /// A fresh cookie value: now, and random bytes.
    pub fn new_cookie(&self) -> Result<String, RandomUnavailable> {
        Ok(format!("{}.{}", unix_now(), random_secret()?))
    }

    /// The form token of a cookie value.
    pub fn form_token(&self, cookie: &str) -> String {
        // HMAC takes a key of any length: this cannot fail.
        let mut mac = match Hmac::<Sha256>::new_from_slice(&self.0) {
            Ok(m) => m,
            Err(_) => return String::new(),
        };
        mac.update(b"skilldeck-ui-signin\0");
        mac.update(cookie.as_bytes());
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    }

    /// True when `cookie` is one this key would issue, not older than
    /// [`SIGNIN_FORM_MAX_AGE`].
    pub fn cookie_is_fresh(&self, cookie: &str) -> bool {
        if cookie.len() > MAX_COOKIE_CHARS {
            return false;
        }
        let Some((issued, nonce)) = cookie.split_once('.') else {
            return false;
        };
        let Ok(issued) = issued.parse::<u64>() else {
            return false;
        };
        nonce.len() == NONCE_CHARS
            && nonce
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
            && unix_now().saturating_sub(issued) < SIGNIN_FORM_MAX_AGE.as_secs()
            && issued <= unix_now().saturating_add(60)
    }

    /// True when `given` is the form token of a fresh `cookie`.
    pub fn verify(&self, cookie: &str, given: &str) -> bool {
        self.cookie_is_fresh(cookie)
            && !given.is_empty()
            && secrets_equal(given, &self.form_token(cookie))
    }
}

/// The sign-in cookie in a `Cookie` header, if any.
pub fn signin_cookie_from(header: &str) -> Option<&str> {
    cookie_value(header, SIGNIN_COOKIE)
}

/// The `Set-Cookie` value of a sign-in form cookie.
pub fn signin_cookie(value: &str, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!(
        "{SIGNIN_COOKIE}={value}; Path={SIGNIN_COOKIE_PATH}; Max-Age={}; HttpOnly; SameSite=Strict{secure}",
        SIGNIN_FORM_MAX_AGE.as_secs()
    )
}

/// The `Set-Cookie` value that deletes it (after a sign-in).
pub fn cleared_signin_cookie(secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!(
        "{SIGNIN_COOKIE}=; Path={SIGNIN_COOKIE_PATH}; Max-Age=0; HttpOnly; SameSite=Strict{secure}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_token_matches_only_its_own_fresh_cookie_and_key() {
        let key = SignInKey::new().unwrap();
        let cookie = key.new_cookie().unwrap();
        let token = key.form_token(&cookie);
        assert!(key.verify(&cookie, &token));
        let other = key.new_cookie().unwrap();
        assert!(!key.verify(&other, &token), "another cookie's token");
        assert!(
            !SignInKey::new().unwrap().verify(&cookie, &token),
            "another process's key"
        );
        assert!(!key.verify(&cookie, ""));
        let stale = format!(
            "{}.{}",
            unix_now() - SIGNIN_FORM_MAX_AGE.as_secs() - 1,
            cookie.split_once('.').unwrap().1
        );
        assert!(!key.verify(&stale, &key.form_token(&stale)), "too old");
        let forged = format!("{cookie}x");
        assert!(
            !key.verify(&forged, &key.form_token(&forged)),
            "wrong shape"
        );
    }

    #[test]
    fn the_sign_in_cookie_is_httponly_samesite_strict_and_narrow() {
        let c = signin_cookie("1.abc", false);
        assert!(c.contains("HttpOnly") && c.contains("SameSite=Strict"));
        assert!(c.contains("Path=/ui/signin"));
        assert!(signin_cookie("1.abc", true).ends_with("; Secure"));
        assert!(cleared_signin_cookie(false).contains("Max-Age=0"));
        assert_eq!(
            signin_cookie_from("skilldeck_ui=a; skilldeck_ui_signin=1.b"),
            Some("1.b")
        );
    }
}
