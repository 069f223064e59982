//! The exit codes of every command, in one place.

/// Everything valid (or the command did what was asked).
pub const OK: u8 = 0;
/// At least one skill is invalid.
pub const INVALID: u8 = 1;
/// Usage or I/O error: the command could not give its verdict.
pub const USAGE: u8 = 2;
/// `run`: the script ran past its timeout and was killed (as timeout(1)).
pub const TIMED_OUT: u8 = 124;
/// `run`: the sandbox refused to run the file (missing layer, bad path,
/// missing interpreter, busy), as env(1) uses 125 for its own failures.
pub const EXEC_REFUSED: u8 = 125;
