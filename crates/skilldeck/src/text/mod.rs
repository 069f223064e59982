//! Small text rules every crate shares, each defined once: percent-encoding
//! of URI parts ([`percent`]) and XML escaping ([`xml`]). Control
//! characters are [`crate::spec::is_control`]'s; digests and hex are
//! [`crate::digest`]'s.

pub mod percent;
pub mod xml;
