//! Skill environments at run time (issue 31): a skill that declares
//! dependencies runs with the environments its lock records (a Python one,
//! a Node one, or both), built at install time ([`skilldeck::environment`]);
//! each is mounted read-only; a Python environment's `bin` is put first on
//! the script's `PATH` (its `python3` the interpreter of `.py` files), a
//! Node environment's `node_modules` is linked beside the skill folder in
//! the run (`Policy::node_modules`), where Node's own resolution of a bare
//! `require` or `import` finds it (and `NODE_PATH` names it); the run keeps
//! no network.
//!
//! When the environment cannot be used (the skill was never installed with
//! skilldeck, the store lost it, it differs from the lock, the
//! requirements are malformed), nothing of the skill runs: its tools are
//! not offered ([`crate::SkillTools`] leaves them out, with the
//! diagnostic), a call or a script run is refused naming the failing
//! requirement and what to do, and `show`/`doctor` say so.
//!
//! The operator's own interpreter wins: a skill with an `[exec] python`
//! (or `[exec.skills.<name>] python`) runs with it, environment or not.

use skilldeck::deck::ExecConfig;
use skilldeck::environment::{EnvProblem, EnvStore, ReadyEnvironment, environment_for};
use skilldeck::{Deck, Diagnostic, Skill};
use skilldeck_exec::Policy;

/// The environment store this process uses (`$SKILLDECK_ENVS_DIR`, else
/// the default for this user).
pub fn store() -> EnvStore {
    EnvStore::from_env(skilldeck_exec::effective_uid())
}

/// The environments skill `skill` runs with under `config` (none when it
/// declares no dependencies; its Python one is not used when the operator
/// gave it an interpreter).
pub fn for_skill(config: &ExecConfig, skill: &Skill) -> Result<Vec<ReadyEnvironment>, EnvProblem> {
    environment_for(
        &store(),
        &skill.name,
        skill.real_dir(),
        &skill.root,
        config.python_for(&skill.name).is_some(),
    )
}

/// `policy` with `env` readable, its `bin` folders first on the script's
/// `PATH` and its variables set.
pub fn apply(mut policy: Policy, env: &ReadyEnvironment) -> Policy {
    for path in &env.read_paths {
        if !policy.grants.read_paths.contains(path) {
            policy.grants.read_paths.push(path.clone());
        }
    }
    for bin in env.bin_dirs.iter().rev() {
        if !policy.bin_dirs.contains(bin) {
            policy.bin_dirs.insert(0, bin.clone());
        }
    }
    for (name, value) in &env.vars {
        policy.vars.retain(|(k, _)| k != name);
        policy.vars.push((name.clone(), value.clone()));
    }
    if let Some(modules) = &env.node_modules {
        policy.node_modules = Some(modules.clone());
    }
    policy
}

/// `policy` for a run of `skill` under `config`: with its environment
/// applied when it has one ([`for_skill`], [`apply`]), else as it was; the
/// problem when the skill's environment cannot be used.
pub fn policy_for(
    config: &ExecConfig,
    skill: &Skill,
    policy: Policy,
) -> Result<Policy, EnvProblem> {
    Ok(for_skill(config, skill)?.iter().fold(policy, apply))
}

/// A problem as one line for a model or a log: the reason, then what to do.
pub fn describe(problem: &EnvProblem) -> String {
    format!(
        "{problem} ({}: {})",
        problem.code().as_str(),
        problem.help()
    )
}

/// The problems of the environments of `deck`'s served skills (each at
/// the skill's file): what `doctor` lists and why those skills run
/// nothing. Skills without dependencies, or with the operator's
/// interpreter, have none.
pub fn problems(config: &ExecConfig, deck: &Deck) -> Vec<Diagnostic> {
    deck.skills()
        .iter()
        .filter(|s| crate::rules::is_served(s))
        .filter_map(|s| {
            for_skill(config, s)
                .err()
                .map(|p| p.to_diagnostics(&s.skill_md))
        })
        .flatten()
        .collect()
}
