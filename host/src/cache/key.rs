//! Cache keys. A task's key is BLAKE3 over, in this order and each
//! length-prefixed so no two different inputs can collide by concatenation:
//! the cache schema version, the task id, the command, the executor name
//! and its config, the declared `env` names with their values, every input
//! file (workspace-relative path and content hash, sorted), the workspace's
//! global inputs (likewise), the keys of the tasks it depends on (sorted
//! by task id), and what the package manager pins for its project: the
//! normalised `package.json` and the project's lockfile slice
//! (`super::deps`). docs/cache.md is the user-facing description.
//!
//! The [`KeyManifest`] records what went in, for `--dry=json` and
//! `vx why` — env names only, never values (a value appears as a digest
//! keyed with a secret local to the machine, so it cannot be guessed from
//! the manifest, yet a change can still be named).

use serde::{Deserialize, Serialize};

use super::deps::ProjectDeps;
use crate::config::Command;

/// Bumped whenever the key's recipe changes, so old entries stop matching.
pub const SCHEMA_VERSION: u32 = 2;

/// A task's cache key: 64 hex digits of BLAKE3.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CacheKey(pub String);

impl std::fmt::Display for CacheKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl CacheKey {
    /// Whether `text` has the shape of a key (used before touching paths).
    pub fn is_valid(text: &str) -> bool {
        text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvEntry {
    pub name: String,
    pub set: bool,
    /// Keyed digest of the value (see the module doc), empty when unset.
    pub digest: String,
}

/// Everything that made a key, in a form that can be shown and compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyManifest {
    pub schema: u32,
    pub task: String,
    pub command: String,
    pub executor: String,
    pub executor_config: String,
    pub env: Vec<EnvEntry>,
    /// `(workspace-relative path, content hash)`, sorted.
    pub files: Vec<(String, String)>,
    pub global: Vec<(String, String)>,
    /// `(task id, key)`, sorted.
    pub deps: Vec<(String, CacheKey)>,
    /// The normalised `package.json` digest (hex), empty without one.
    #[serde(default)]
    pub package_json: String,
    /// The lockfile part: `slice:HEX`, `whole:HEX`, or empty.
    #[serde(default)]
    pub lockfile: String,
}

fn field(h: &mut blake3::Hasher, bytes: &[u8]) {
    h.update(&(bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// The key of one task.
#[derive(Debug)]
pub struct KeyInputs<'a> {
    pub task: &'a str,
    pub command: &'a Command,
    pub executor: &'a str,
    pub executor_config: &'a str,
    /// `(name, value)`; a variable that is unset is `None`, distinct from empty.
    pub env: &'a [(String, Option<String>)],
    pub files: &'a [(String, blake3::Hash)],
    pub global: &'a [(String, blake3::Hash)],
    pub deps: &'a [(String, CacheKey)],
    pub package: &'a ProjectDeps,
}

impl KeyInputs<'_> {
    pub fn compute(&self, env_secret: &[u8; 32]) -> (CacheKey, KeyManifest) {
        let mut h = blake3::Hasher::new();
        h.update(b"vx-cache-key\0");
        h.update(&SCHEMA_VERSION.to_le_bytes());
        field(&mut h, self.task.as_bytes());
        match self.command {
            Command::Shell(s) => {
                field(&mut h, b"sh");
                field(&mut h, s.as_bytes());
            }
            Command::Argv(argv) => {
                field(&mut h, b"argv");
                h.update(&(argv.len() as u64).to_le_bytes());
                for a in argv {
                    field(&mut h, a.as_bytes());
                }
            }
        }
        field(&mut h, self.executor.as_bytes());
        field(&mut h, self.executor_config.as_bytes());
        let mut env = Vec::with_capacity(self.env.len());
        field(&mut h, b"env");
        h.update(&(self.env.len() as u64).to_le_bytes());
        for (name, value) in self.env {
            field(&mut h, name.as_bytes());
            match value {
                Some(v) => {
                    field(&mut h, b"=");
                    field(&mut h, v.as_bytes());
                }
                None => field(&mut h, b"unset"),
            }
            let digest =
                value.as_ref().map(|v| blake3::keyed_hash(env_secret, v.as_bytes()).to_hex()[..16].to_string());
            env.push(EnvEntry { name: name.clone(), set: value.is_some(), digest: digest.unwrap_or_default() });
        }
        for (tag, list) in [(&b"files"[..], self.files), (&b"global"[..], self.global)] {
            field(&mut h, tag);
            h.update(&(list.len() as u64).to_le_bytes());
            for (path, hash) in list {
                field(&mut h, path.as_bytes());
                h.update(hash.as_bytes());
            }
        }
        field(&mut h, b"deps");
        h.update(&(self.deps.len() as u64).to_le_bytes());
        for (id, key) in self.deps {
            field(&mut h, id.as_bytes());
            field(&mut h, key.0.as_bytes());
        }
        let package_json = self.package.package_json.map(|d| d.to_hex().to_string()).unwrap_or_default();
        let lockfile = self.package.lockfile.manifest_text();
        field(&mut h, b"package.json");
        field(&mut h, package_json.as_bytes());
        field(&mut h, b"lockfile");
        field(&mut h, lockfile.as_bytes());
        let key = CacheKey(h.finalize().to_hex().to_string());
        let hex =
            |list: &[(String, blake3::Hash)]| list.iter().map(|(p, h)| (p.clone(), h.to_hex().to_string())).collect();
        let manifest = KeyManifest {
            schema: SCHEMA_VERSION,
            task: self.task.to_string(),
            command: self.command.to_string(),
            executor: self.executor.to_string(),
            executor_config: self.executor_config.to_string(),
            env,
            files: hex(self.files),
            global: hex(self.global),
            deps: self.deps.to_vec(),
            package_json,
            lockfile,
        };
        (key, manifest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::LockPart;

    const NO_PACKAGE: ProjectDeps = ProjectDeps { package_json: None, lockfile: LockPart::None };

    fn key(cmd: &str, env: &[(String, Option<String>)], files: &[(String, blake3::Hash)]) -> CacheKey {
        let command = Command::Shell(cmd.into());
        let inputs = KeyInputs {
            task: "a#build",
            command: &command,
            executor: "local",
            executor_config: "",
            env,
            files,
            global: &[],
            deps: &[],
            package: &NO_PACKAGE,
        };
        inputs.compute(&[7; 32]).0
    }

    #[test]
    fn every_component_changes_the_key() {
        let f = vec![("src/a".to_string(), blake3::hash(b"1"))];
        let base = key("make", &[], &f);
        assert_eq!(base, key("make", &[], &f), "keys are deterministic");
        assert!(CacheKey::is_valid(&base.0));
        assert_ne!(base, key("make all", &[], &f));
        assert_ne!(base, key("make", &[("X".into(), None)], &f));
        assert_ne!(key("make", &[("X".into(), None)], &f), key("make", &[("X".into(), Some(String::new()))], &f));
        assert_ne!(base, key("make", &[], &[("src/a".to_string(), blake3::hash(b"2"))]));
        assert_ne!(base, key("make", &[], &[("src/b".to_string(), blake3::hash(b"1"))]));
    }

    #[test]
    fn the_manifest_never_holds_env_values() {
        let command = Command::Shell("x".into());
        let env = [("TOKEN".to_string(), Some("s3cr3t-value".to_string()))];
        let (_, manifest) = KeyInputs {
            task: "a#b",
            command: &command,
            executor: "local",
            executor_config: "",
            env: &env,
            files: &[],
            global: &[],
            deps: &[],
            package: &NO_PACKAGE,
        }
        .compute(&[1; 32]);
        let json = serde_json::to_string(&manifest).unwrap();
        assert!(!json.contains("s3cr3t"));
        assert!(json.contains("TOKEN"));
    }
}
