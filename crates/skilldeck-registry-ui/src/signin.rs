//! The sign-in form's CSRF protection without a server-side session: a
//! signed double-submit cookie. `GET /ui/signin` sets a cookie
//! `skilldeck_ui_signin=<issued-at>.<random>` (`HttpOnly`,
//! `SameSite=Strict`, path `/ui/signin`) and puts
//! `HMAC-SHA256(shared key, cookie)` in the form; `POST /ui/signin` must
//! bring both, matching, within [`SIGNIN_FORM_MAX_AGE`]. Another site can
//! neither read the cookie nor compute the HMAC (the key never leaves the
//! registry's replicas), so it cannot forge a sign-in (login CSRF); and an
//! anonymous visitor costs the server nothing to remember, so a flood of
//! sign-in page loads cannot evict a signed-in session.
//!
//! The key is the one every replica shares through the database
//! ([`crate::keys`]): a form served by one replica is accepted by any
//! other, so no session affinity is needed.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::keys::{Key, Purpose};
use crate::limits::{SECRET_BYTES, SIGNIN_FORM_MAX_AGE};
use crate::secret::{RandomUnavailable, random_secret};
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

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A fresh cookie value: now, and random bytes.
pub fn new_cookie() -> Result<String, RandomUnavailable> {
    Ok(format!("{}.{}", unix_now(), random_secret()?))
}

/// The form token of a cookie value.
pub fn form_token(key: Key<'_>, cookie: &str) -> String {
    key.mac(Purpose::SignInForm, cookie)
}

/// True when `cookie` has the shape this UI issues and is not older than
/// [`SIGNIN_FORM_MAX_AGE`].
pub fn cookie_is_fresh(cookie: &str) -> bool {
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
pub fn verify(key: Key<'_>, cookie: &str, given: &str) -> bool {
    cookie_is_fresh(cookie) && key.verify(Purpose::SignInForm, cookie, given)
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
        let key = Key::of(b"0123456789abcdef0123456789abcdef");
        let cookie = new_cookie().unwrap();
        let token = form_token(key, &cookie);
        assert!(verify(key, &cookie, &token));
        let other = new_cookie().unwrap();
        assert!(!verify(key, &other, &token), "another cookie's token");
        assert!(
            !verify(
                Key::of(b"another key of thirty-two bytes!"),
                &cookie,
                &token
            ),
            "another registry's key"
        );
        assert!(!verify(key, &cookie, ""));
        let stale = format!(
            "{}.{}",
            unix_now() - SIGNIN_FORM_MAX_AGE.as_secs() - 1,
            cookie.split_once('.').unwrap().1
        );
        assert!(!verify(key, &stale, &form_token(key, &stale)), "too old");
        let forged = format!("{cookie}x");
        assert!(
            !verify(key, &forged, &form_token(key, &forged)),
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
