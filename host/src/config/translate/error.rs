//! What stops `vx init`: no source to read (or several), a source file it
//! cannot read as its tool does, `vx.toml` files it would overwrite, and
//! a written configuration that does not load.

use std::path::PathBuf;

use crate::config::ConfigError;
use crate::error::{Error, ErrorKind};

pub(crate) type Result<T, E = InitError> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// `--from KIND` names a tool whose marker file is not there.
    #[error("no {marker} in {}", .root.display())]
    NoMarker { marker: &'static str, root: PathBuf },
    #[error("no turbo.json, nx.json or .moon/workspace.yml in {}", .root.display())]
    NoSource { root: PathBuf },
    #[error("several configurations found ({})", .markers.join(", "))]
    SeveralSources { markers: Vec<&'static str> },
    #[error("{path} already exists; nothing was written")]
    Exists { path: String },
    #[error("{first} and {more} more vx.toml files already exist; nothing was written")]
    ExistMany { first: String, more: usize },
    /// A source file that is not JSON or YAML.
    #[error("{file}: {why}")]
    Unparsable { file: String, why: String },
    /// `turbo.json` or `nx.json` whose top level is not an object.
    #[error("{file}: expected a JSON object")]
    NotAnObject { file: &'static str },
    #[error("{file}: expected a mapping")]
    NotAMapping { file: &'static str },
    #[error("{file}: expected a JSON object, got {got}")]
    ProjectNotAnObject { file: String, got: String },
    #[error(
        "turbo.json: no package.json `workspaces` or pnpm-workspace.yaml names the packages, and there is no root package.json"
    )]
    NoPackages,
    /// Both `turbo.json` and `turbo.jsonc` in one directory, which turbo refuses.
    #[error("{dir}: both turbo.json and turbo.jsonc exist")]
    BothTurboFiles { dir: String },
    /// A task that depends on itself, which turbo refuses.
    #[error("{file}: {setting}: task `{task}` depends on itself")]
    SelfDependency { file: String, setting: String, task: String },
    /// A package's `turbo.json` that turbo would refuse to load.
    #[error("{file}: {why}")]
    InvalidPackageConfig { file: String, why: String, hint: String },
    #[error("{file}: invalid project glob `{pattern}`: {why}")]
    BadGlob { file: &'static str, pattern: String, why: String },
    #[error("failed to read {file}: {source}")]
    Read { file: String, source: std::io::Error },
    #[error("failed to write {}: {source}", .path.display())]
    Write { path: PathBuf, source: std::io::Error },
    /// The workspace's own files (`package.json`, workspace globs).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A bug of `vx init`: what it wrote does not load. Holds the load
    /// error as the user would read it, hint included.
    #[error("the written configuration does not load: {0}")]
    WrittenDoesNotLoad(Error),
}

impl InitError {
    /// A workspace file's own error, as config gives it.
    fn into_config(self) -> Error {
        match self {
            InitError::Config(inner) => inner.into(),
            other => Error::config(other.to_string()),
        }
    }
}

impl From<InitError> for Error {
    fn from(e: InitError) -> Error {
        let (kind, hint) = match &e {
            InitError::Config(_) => return e.into_config(),
            InitError::NoMarker { .. } => {
                (ErrorKind::Usage, "run `vx init` at the root of the workspace, or pick another --from".to_string())
            }
            InitError::NoSource { .. } => {
                (ErrorKind::Usage, "run `vx init` at the root of a Turborepo, Nx or moon workspace".to_string())
            }
            InitError::SeveralSources { .. } => (ErrorKind::Usage, "pick one with --from turbo|nx|moon".to_string()),
            InitError::Exists { .. } => {
                (ErrorKind::Usage, "pass --force to overwrite it, or --dry to see what would be written".to_string())
            }
            InitError::ExistMany { .. } => {
                (ErrorKind::Usage, "pass --force to overwrite them, or --dry to see what would be written".to_string())
            }
            InitError::Unparsable { .. } => {
                (ErrorKind::Config, "fix the file first; vx init reads it as its tool does".to_string())
            }
            InitError::NotAnObject { file } => (ErrorKind::Config, format!("fix {file} first")),
            InitError::NotAMapping { .. } => (ErrorKind::Config, "fix the file first".to_string()),
            InitError::NoPackages => {
                (ErrorKind::Config, "declare the workspace packages in package.json first".to_string())
            }
            InitError::BothTurboFiles { .. } => {
                (ErrorKind::Config, "keep one of them, as turbo requires; vx init reads either".to_string())
            }
            InitError::SelfDependency { .. } => {
                (ErrorKind::Config, "remove it from dependsOn; turbo refuses it too".to_string())
            }
            InitError::InvalidPackageConfig { hint, .. } => (ErrorKind::Config, hint.clone()),
            InitError::WrittenDoesNotLoad(_) => {
                // Turborepo never deletes outputs, so it takes globs vx
                // refuses (docs/cache.md, "Outputs are owned"); anything
                // else the written files say is vx init's fault.
                (
                    ErrorKind::Config,
                    "fix the vx.toml it names by hand: Turborepo takes outputs vx refuses (docs/cache.md), \
                     and any other error here is a vx init bug to report"
                        .to_string(),
                )
            }
            InitError::ProjectNotAnObject { .. } | InitError::BadGlob { .. } => {
                return Error::config(e.to_string());
            }
            InitError::Read { .. } | InitError::Write { .. } => return Error::internal(e.to_string()),
        };
        Error::new(kind, e.to_string()).with_hint(hint)
    }
}
