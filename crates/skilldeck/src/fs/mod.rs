//! The filesystem, safely: bounded non-blocking reads (`read.rs`),
//! containment of paths inside a skill folder (`contain.rs`), path
//! questions answered on bytes for hot paths (`path.rs`), the walk that
//! finds skill folders (`walk.rs`), file stamps (`stamp.rs`) and skilldeck's
//! own folders (`dirs.rs`).

pub(crate) mod contain;
pub mod dirs;
pub(crate) mod path;
pub(crate) mod read;
pub(crate) mod stamp;
pub(crate) mod walk;

pub use contain::normalize_resource_path;
pub use read::{
    SKILL_MD, SKILL_MD_LOWERCASE, read_frontmatter_prefix, read_listed_frontmatter_prefix,
    read_skill_md, read_skill_md_capped, read_skill_md_lossy,
};
pub use stamp::FileStamp;
pub use walk::{FoundSkill, RESOURCE_DIRS, SKIPPED_DIRS, WalkLimits, WalkOutcome, find_skill_dirs};
