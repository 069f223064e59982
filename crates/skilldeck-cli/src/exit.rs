//! The exit codes of every command, in one place.

/// Everything valid (or the command did what was asked).
pub const OK: u8 = 0;
/// At least one skill is invalid.
pub const INVALID: u8 = 1;
/// Usage or I/O error: the command could not give its verdict.
pub const USAGE: u8 = 2;
