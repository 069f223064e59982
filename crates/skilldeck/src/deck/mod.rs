//! The deck: discovering skills under their roots (`discovery.rs`), the
//! config file (`config.rs`), the metadata index that makes a second
//! discovery cheap (`index.rs`), the bundled example skills (`bundled.rs`),
//! and the [`Deck`] itself: every loaded skill plus what was skipped or
//! shadowed.

pub(crate) mod bundled;
pub(crate) mod config;
pub(crate) mod config_layers;
#[allow(clippy::module_inception)]
pub(crate) mod deck;
pub(crate) mod discovery;
pub(crate) mod eligibility;
pub(crate) mod exec_config;
pub(crate) mod index;
pub(crate) mod network_grant;

pub use bundled::{materialize as materialize_bundled, skill_names as bundled_skill_names};
pub use config::{
    AuditConfig, OidcConfig, OidcRuleConfig, RegistryConfig, RegistryUiConfig, TelemetryConfig,
};
pub use config::{
    BundledMode, CONFIG_FILE, CacheConfig, CatalogConfig, Config, DiscoveryConfig,
    EnvironmentsConfig, ExplicitSkillConfig, MANAGED_ROOT, MAX_CONFIG_BYTES, ResourcesConfig,
    ValidateConfig,
};
pub use config_layers::{ConfigLayers, PATH_KEYS as CONFIG_PATH_KEYS};
pub use deck::{Deck, RootReport, Shadowed};
pub use discovery::{
    DiscoveryOptions, ExplicitSkill, MAX_LOGGED_SKILL_NAMES, PROJECT_ROOT_NAMES, Root, discover,
    project_roots, skill_folders, skill_names_capped, user_roots, user_roots_for,
};
pub use eligibility::{EligibilityContext, Ineligible, host_os};
pub use exec_config::{
    ApprovalMode, ExecConfig, RESERVED_ENV_NAMES, RESERVED_ENV_PREFIXES, SandboxProfile,
    SkillGrant, ToolExposure, TreeLimitsMode, is_env_name, is_reserved_env_name,
};
pub use index::{IndexStats, MetadataIndex, default_path as default_index_path};
pub use network_grant::{
    HostPattern, IpRange, MAX_HOST_LABEL_LEN, MAX_HOST_NAME_LEN, MAX_HOST_PATTERNS, NetworkGrant,
    normalize_host,
};
