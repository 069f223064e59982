//! # skilldeck-package
//!
//! Skill packages: a deterministic [`pack`] of a skill folder into a tar.gz
//! or zip, a safe [`unpack`] that refuses hostile archives entry by entry,
//! an atomic [`install`] into a skills root, and a lockfile
//! ([`Lockfile`], `skilldeck.lock`) that [`verify`] re-hashes against.
//!
//! The content fingerprint and per-file manifest are the core's
//! ([`skilldeck::digest`]): the same for a folder, a tar.gz and a zip.
//! Every refusal is an [`Error::Refused`] of [`skilldeck::Diagnostic`]s
//! with a stable `package-*` code naming the entry; every limit is in
//! [`limits`].
//!
//! Packages can be signed ([`signature`]): an SSH signature over the
//! fingerprint, beside the package as `PACKAGE.sig`, checked by install
//! and pinned per skill in the lock.
//!
//! Skills that declare dependencies (`requirements.txt`, `pyproject.toml`)
//! get an [`environment`] built with uv at install time, pinned by hash in
//! the lock, shared by content key and garbage-collected.
//!
//! A separate crate, so the core stays free of archive dependencies.

#![deny(missing_docs)]

pub mod discovery;
pub mod environment;
mod error;
mod export;
mod file_lock;
mod folder;
mod install;
pub mod limits;
mod lock;
mod pack;
mod path;
pub mod signature;
mod signer;
mod unpack;
mod verify;

pub use error::Error;
pub use export::{
    DEFAULT_EXPORT_VERSION, EXPORT_PLUGINS_DIR, ExportOptions, Exported, ExportedSkill,
    export_plugin,
};
pub use folder::{FolderFile, folder_files, folder_manifest};
pub use install::{
    Action, InstallOptions, Installed, InstalledEnvironment, LEFTOVER_PREFIX, Removed, Source,
    install, is_fetched, lock_source, recover, remove, resolve_source,
};
pub use limits::PackageLimits;
pub use lock::{LOCK_FORMAT, LOCKFILE_NAME, LockEntry, Lockfile, lock_path};
pub use pack::{
    ArchiveFormat, COMPRESSION_LEVEL, PackOptions, Packed, archive, archive_at_root,
    metadata_version, pack, pack_to_file, write_atomic,
};
pub use path::check_entry_path;
pub use signature::{
    AllowedSigners, PackageSignature, SignatureKind, SignaturePolicy, SignerFingerprint,
    SigningKey, Trust, Verified,
};
pub use unpack::{UnpackOptions, Unpacked, UnpackedBytes, unpack, unpack_bytes};
pub use verify::{
    EnvironmentCheck, SignatureState, SkillCheck, Status, VerifyReport, verify,
    verify_environments, verify_with,
};
