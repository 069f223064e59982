//! Every limit of the web UI, named.

use std::time::Duration;

/// A session unused for this long is gone (sign in again).
pub const SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// A session never lives longer than this, however busy.
pub const SESSION_MAX_AGE: Duration = Duration::from_secs(8 * 60 * 60);
/// Signed-in sessions stored at most (in the registry's database, for
/// every replica); past it the least recently used one is dropped.
/// Anonymous visitors hold none (the sign-in form's CSRF token is a
/// signed cookie), so only successful sign-ins count.
pub const MAX_SESSIONS: u64 = 10_000;
/// A session's use is written to the database at most this often (a page
/// view does not write each time): the idle timeout is exact to within it.
pub const SESSION_TOUCH_INTERVAL: Duration = Duration::from_secs(60);
/// How long a sign-in form (its signed cookie) may be used.
pub const SIGNIN_FORM_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(60 * 60);
/// Random bytes in a session id and in a CSRF token.
pub const SECRET_BYTES: usize = 32;
/// The largest url-encoded form body.
pub const MAX_FORM_BYTES: usize = 64 * 1024;
/// What the upload form may carry beyond the registry's publish cap (its
/// other fields and the multipart framing).
pub const UPLOAD_FORM_OVERHEAD_BYTES: usize = 64 * 1024;
/// SKILL.md text rendered at most (the rest is not shown).
pub const MAX_RENDERED_MARKDOWN_BYTES: usize = 512 * 1024;
/// The SKILL.md diff against the previous version shown at most (longer
/// diffs are cut, saying so).
pub const MAX_DIFF_BYTES: usize = 64 * 1024;
/// Skills per page in lists.
pub const PAGE_SIZE: u32 = 25;
/// Skills listed per page on an agent's selection page, below the agent's
/// own assignments (which are all listed first): the page stays small at
/// any number of skills; search and filters find the rest.
pub const SELECTION_PAGE_SIZE: u32 = 50;
/// Longest token accepted by the sign-in form.
pub const MAX_TOKEN_LEN: usize = 256;
/// A file larger than this is not shown on its page (it can be
/// downloaded).
pub const MAX_FILE_VIEW_BYTES: u64 = 256 * 1024;
/// Tokens listed per page on the tokens page.
pub const TOKENS_PAGE_SIZE: u32 = 50;
/// Audit entries per page on the audit page.
pub const AUDIT_PAGE_SIZE: u32 = 50;
/// Agents offered by the skill page's "assign to agent" form (the rest
/// are typed by id).
pub const ASSIGN_AGENTS_OFFERED: u32 = 100;
