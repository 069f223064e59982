//! Single sign-on with OpenID Connect: [`settings`] (`[registry.ui.oidc]`,
//! checked at start-up), [`rules`] (claims to scopes), [`provider`]
//! (discovery, keys, the provider's HTTP) and [`flow`] (the two routes).

pub mod flow;
pub mod provider;
pub mod rules;
pub mod settings;

pub use provider::Sso;
pub use settings::{OidcConfigError, OidcSettings};
