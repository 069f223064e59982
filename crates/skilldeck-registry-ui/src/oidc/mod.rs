//! Single sign-on with OpenID Connect: [`settings`] (`[registry.ui.oidc]`,
//! checked at start-up), [`rules`] (claims to scopes) and [`provider`]
//! (discovery, keys, the provider's HTTP). The two routes are the page
//! module [`crate::pages::sso`].

pub mod provider;
pub mod rules;
pub mod settings;

pub use provider::Sso;
pub use settings::{OidcConfigError, OidcSettings};
