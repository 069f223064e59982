//! The names of the tools that run skill code, shared by the rules that
//! decide about them (execution, approvals) without either importing the
//! other. `run_code`'s name is [`crate::code::RUN_CODE`].

/// The tool that runs any file under a skill's `scripts/` folder.
pub const RUN_SKILL_SCRIPT: &str = "run_skill_script";
