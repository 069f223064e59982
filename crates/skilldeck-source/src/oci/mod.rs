//! OCI artifacts: skills pushed to and pulled from any OCI registry
//! (`skilldeck push oci://REGISTRY/REPOSITORY:TAG`,
//! `skilldeck install oci://REGISTRY/REPOSITORY@sha256:...`).
//!
//! - [`reference`](mod@reference): the `oci://` syntax, checked before any request;
//! - [`artifact`]: the artifact's format (media types, annotations, the
//!   fingerprint annotation) and the checks of a pulled manifest;
//! - [`credentials`]: anonymous, basic or bearer, from the environment or
//!   a Docker `config.json`;
//! - [`transfer`]: push and pull, every byte checked (digest of the
//!   manifest and the layer, fingerprint of the unpacked skill).

pub mod artifact;
pub mod credentials;
pub mod reference;
pub mod transfer;

pub use credentials::Credentials;
pub use reference::{OCI_SCHEME, OciRef, is_oci_source};
pub use transfer::{OciOptions, Pulled, Pushed, pull, push, resolve};
