//! Cache keys. A task's key is BLAKE3 over, in this order and each
//! length-prefixed so no two different inputs can collide by concatenation:
//! the cache schema version, the task id, the command, the executor name
//! and its config, the env mode, the hashed variables (`env` and
//! `global-env`) with their values, each runtime command with its output, every input
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

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::deps::ProjectDeps;
use crate::config::Command;

/// Bumped whenever the key's recipe changes, so old entries stop matching.
pub(crate) const SCHEMA_VERSION: u32 = 3;

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

/// A runtime command (`node --version`) and what it printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeEntry {
    pub command: String,
    /// Keyed digest of its standard output, like an env value's.
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
    /// `strict` or `loose`; empty in manifests older than env modes.
    #[serde(default)]
    pub env_mode: String,
    pub env: Vec<EnvEntry>,
    /// In the order they are hashed: `global-runtime`, then the task's.
    #[serde(default)]
    pub runtime: Vec<RuntimeEntry>,
    /// `(workspace-relative path, content hash)`, sorted.
    pub files: FileDigests,
    pub global: Vec<(String, String)>,
    /// `(task id, key)`, sorted.
    pub deps: Vec<(String, CacheKey)>,
    /// The normalised `package.json` digest (hex), empty without one.
    #[serde(default)]
    pub package_json: String,
    /// The lockfile part: `slice:HEX`, `whole:HEX`, or empty.
    #[serde(default)]
    pub lockfile: String,
    /// The workspace root's dependencies (`deps:HEX`, its lockfile part),
    /// empty for the root project and a root that declares none.
    #[serde(default)]
    pub root_deps: String,
    /// The task's output globs, sorted; empty in manifests older than
    /// them and for a task without outputs.
    #[serde(default)]
    pub outputs: Vec<String>,
}

/// A task's input files as `(workspace-relative path, BLAKE3)`, sorted:
/// the very list the key was computed from, shared, not copied. A task of
/// 100,000 files would otherwise copy every path and format every hash
/// for a manifest that a fully cached run never writes. Serialized as
/// `[[path, hex], …]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileDigests(pub Arc<Vec<(String, blake3::Hash)>>);

impl FileDigests {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// As `(path, hex)` pairs, as `vx why` compares them.
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.0.iter().map(|(path, hash)| (path.clone(), hash.to_hex().to_string())).collect()
    }
}

impl Serialize for FileDigests {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for (path, hash) in self.0.iter() {
            seq.serialize_element(&(path, hash.to_hex().as_str()))?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for FileDigests {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let pairs = Vec::<(String, String)>::deserialize(d)?;
        let files = pairs
            .into_iter()
            .map(|(path, hex)| blake3::Hash::from_hex(&hex).map(|hash| (path, hash)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(serde::de::Error::custom)?;
        Ok(FileDigests(Arc::new(files)))
    }
}

fn field(h: &mut KeyHasher, bytes: &[u8]) {
    h.update(&(bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// BLAKE3 fed in large pieces. A key writes three small pieces per input
/// file; given one by one, BLAKE3 compresses them a block at a time, while
/// a buffer of many chunks is hashed several chunks at once (SIMD). The
/// digest is the same either way: BLAKE3 does not depend on how its input
/// is split.
struct KeyHasher {
    hasher: blake3::Hasher,
    buf: Vec<u8>,
}

impl KeyHasher {
    /// 64 KiB: 64 chunks, enough for the widest SIMD degree.
    const FLUSH_AT: usize = 64 * 1024;

    fn new() -> KeyHasher {
        KeyHasher { hasher: blake3::Hasher::new(), buf: Vec::with_capacity(Self::FLUSH_AT + 1024) }
    }

    fn update(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= Self::FLUSH_AT {
            self.hasher.update(&self.buf);
            self.buf.clear();
        }
    }

    fn finalize(mut self) -> blake3::Hash {
        self.hasher.update(&self.buf);
        self.hasher.finalize()
    }
}

/// The key of one task.
#[derive(Debug)]
pub(crate) struct KeyInputs<'a> {
    pub task: &'a str,
    pub command: &'a Command,
    pub executor: &'a str,
    pub executor_config: &'a str,
    /// `strict` or `loose`: a loose task sees more than its key names.
    pub env_mode: &'a str,
    /// `(name, value)`; a variable that is unset is `None`, distinct from empty.
    pub env: &'a [(String, Option<String>)],
    /// `(command, standard output)` of each runtime command.
    pub runtime: &'a [(String, Vec<u8>)],
    pub files: &'a Arc<Vec<(String, blake3::Hash)>>,
    pub global: &'a [(String, blake3::Hash)],
    pub deps: &'a [(String, CacheKey)],
    pub package: &'a ProjectDeps,
    /// The task's `outputs` globs: what an entry holds. A hit of an entry
    /// stored before `gen/**` was added would restore no `gen/`, where a
    /// fresh run writes it (Turborepo hashes its outputs too).
    pub outputs: &'a [String],
}

impl KeyInputs<'_> {
    /// The key, and the manifest that says what went into it (`vx why`
    /// compares two). The order of the fields hashed is the key's schema:
    /// changing it changes every key, so it goes with [`SCHEMA_VERSION`].
    pub(crate) fn compute(&self, env_secret: &[u8; 32]) -> (CacheKey, KeyManifest) {
        let mut h = KeyHasher::new();
        h.update(b"vx-cache-key\0");
        h.update(&SCHEMA_VERSION.to_le_bytes());
        field(&mut h, self.task.as_bytes());
        self.hash_command(&mut h);
        field(&mut h, self.executor.as_bytes());
        field(&mut h, self.executor_config.as_bytes());
        field(&mut h, self.env_mode.as_bytes());
        let env = self.hash_env(&mut h, env_secret);
        let runtime = self.hash_runtime(&mut h, env_secret);
        for (tag, list) in [(&b"files"[..], &self.files[..]), (&b"global"[..], self.global)] {
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
        let (package_json, lockfile, root_deps) = self.hash_package(&mut h);
        let outputs = self.hash_outputs(&mut h);
        let key = CacheKey(h.finalize().to_hex().to_string());
        let hex =
            |list: &[(String, blake3::Hash)]| list.iter().map(|(p, h)| (p.clone(), h.to_hex().to_string())).collect();
        let manifest = KeyManifest {
            schema: SCHEMA_VERSION,
            task: self.task.to_string(),
            command: self.command.to_string(),
            executor: self.executor.to_string(),
            executor_config: self.executor_config.to_string(),
            env_mode: self.env_mode.to_string(),
            env,
            runtime,
            files: FileDigests(self.files.clone()),
            global: hex(self.global),
            deps: self.deps.to_vec(),
            package_json,
            lockfile,
            root_deps,
            outputs,
        };
        (key, manifest)
    }

    fn hash_command(&self, h: &mut KeyHasher) {
        match self.command {
            Command::Shell(s) => {
                field(h, b"sh");
                field(h, s.as_bytes());
            }
            Command::Argv(argv) => {
                field(h, b"argv");
                h.update(&(argv.len() as u64).to_le_bytes());
                for a in argv {
                    field(h, a.as_bytes());
                }
            }
        }
    }

    /// Hashes the variables' values; the manifest keeps only a keyed digest
    /// of each, so a secret's value is never written down.
    fn hash_env(&self, h: &mut KeyHasher, env_secret: &[u8; 32]) -> Vec<EnvEntry> {
        let mut env = Vec::with_capacity(self.env.len());
        field(h, b"env");
        h.update(&(self.env.len() as u64).to_le_bytes());
        for (name, value) in self.env {
            field(h, name.as_bytes());
            match value {
                Some(v) => {
                    field(h, b"=");
                    field(h, v.as_bytes());
                }
                None => field(h, b"unset"),
            }
            let digest =
                value.as_ref().map(|v| blake3::keyed_hash(env_secret, v.as_bytes()).to_hex()[..16].to_string());
            env.push(EnvEntry { name: name.clone(), set: value.is_some(), digest: digest.unwrap_or_default() });
        }
        env
    }

    fn hash_runtime(&self, h: &mut KeyHasher, env_secret: &[u8; 32]) -> Vec<RuntimeEntry> {
        field(h, b"runtime");
        h.update(&(self.runtime.len() as u64).to_le_bytes());
        let mut runtime = Vec::with_capacity(self.runtime.len());
        for (command, output) in self.runtime {
            field(h, command.as_bytes());
            field(h, output);
            let digest = blake3::keyed_hash(env_secret, output).to_hex()[..16].to_string();
            runtime.push(RuntimeEntry { command: command.clone(), digest });
        }
        runtime
    }

    /// `package.json`, the lockfile slice and the root's dependencies, as
    /// the manifest writes them.
    fn hash_package(&self, h: &mut KeyHasher) -> (String, String, String) {
        let package_json = self.package.package_json.map(|d| d.to_hex().to_string()).unwrap_or_default();
        let lockfile = self.package.lockfile.manifest_text();
        field(h, b"package.json");
        field(h, package_json.as_bytes());
        field(h, b"lockfile");
        field(h, lockfile.as_bytes());
        // Only when there is one: a workspace without root dependencies
        // keeps the keys it had.
        let root_deps = self.package.root.clone();
        if !root_deps.is_empty() {
            field(h, b"root-deps");
            field(h, root_deps.as_bytes());
        }
        (package_json, lockfile, root_deps)
    }

    /// The output globs, sorted and without repeats.
    fn hash_outputs(&self, h: &mut KeyHasher) -> Vec<String> {
        let mut outputs = self.outputs.to_vec();
        outputs.sort();
        outputs.dedup();
        // Only when there are some: a task without outputs keeps its key.
        if !outputs.is_empty() {
            field(h, b"outputs");
            h.update(&(outputs.len() as u64).to_le_bytes());
            for glob in &outputs {
                field(h, glob.as_bytes());
            }
        }
        outputs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::LockPart;

    const NO_PACKAGE: ProjectDeps = ProjectDeps { package_json: None, lockfile: LockPart::None, root: String::new() };

    /// The buffered hasher's digest is BLAKE3's of the same bytes, however
    /// they are split: across a flush, in pieces larger than the buffer,
    /// and with nothing left over at the end.
    #[test]
    fn key_hasher_digest_is_blake3_of_the_bytes() {
        let bytes: Vec<u8> = (0..300_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let whole = blake3::hash(&bytes);
        for pieces in [1, 7, 1000, KeyHasher::FLUSH_AT, KeyHasher::FLUSH_AT + 3, 200_000] {
            let mut h = KeyHasher::new();
            bytes.chunks(pieces).for_each(|piece| h.update(piece));
            assert_eq!(h.finalize(), whole, "pieces of {pieces} bytes");
        }
        let mut exact = KeyHasher::new();
        exact.update(&bytes[..KeyHasher::FLUSH_AT]);
        assert_eq!(exact.finalize(), blake3::hash(&bytes[..KeyHasher::FLUSH_AT]));
    }

    fn key(cmd: &str, env: &[(String, Option<String>)], files: &[(String, blake3::Hash)]) -> CacheKey {
        keyed(cmd, "strict", env, &[], files)
    }

    fn keyed(
        cmd: &str,
        env_mode: &str,
        env: &[(String, Option<String>)],
        runtime: &[(String, Vec<u8>)],
        files: &[(String, blake3::Hash)],
    ) -> CacheKey {
        let command = Command::Shell(cmd.into());
        let files = Arc::new(files.to_vec());
        let inputs = KeyInputs {
            task: "a#build",
            command: &command,
            executor: "local",
            executor_config: "",
            env_mode,
            env,
            runtime,
            files: &files,
            global: &[],
            deps: &[],
            package: &NO_PACKAGE,
            outputs: &[],
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
        assert_ne!(base, keyed("make", "loose", &[], &[], &f));
        let node = |v: &str| vec![("node --version".to_string(), v.as_bytes().to_vec())];
        assert_ne!(base, keyed("make", "strict", &[], &node("v20\n"), &f));
        assert_ne!(keyed("make", "strict", &[], &node("v20\n"), &f), keyed("make", "strict", &[], &node("v22\n"), &f));
    }

    #[test]
    fn output_globs_change_the_key_and_their_order_does_not() {
        let command = Command::Shell("x".into());
        let with = |outputs: &[String]| {
            KeyInputs {
                task: "a#b",
                command: &command,
                executor: "local",
                executor_config: "",
                env_mode: "strict",
                env: &[],
                runtime: &[],
                files: &Arc::default(),
                global: &[],
                deps: &[],
                package: &NO_PACKAGE,
                outputs,
            }
            .compute(&[1; 32])
        };
        let dist = ["dist/**".to_string()];
        let both = ["dist/**".to_string(), "gen/**".to_string()];
        let (none, _) = with(&[]);
        let (one, manifest) = with(&dist);
        assert_ne!(none, one, "declaring outputs moves the key");
        assert_ne!(one, with(&both).0, "adding one moves it again");
        assert_eq!(with(&both).0, with(&[both[1].clone(), both[0].clone()]).0, "order does not count");
        assert_eq!(manifest.outputs, dist, "the manifest names them for `vx why`");
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
            env_mode: "strict",
            env: &env,
            runtime: &[("cat token".to_string(), b"s3cr3t-output".to_vec())],
            files: &Arc::default(),
            global: &[],
            deps: &[],
            package: &NO_PACKAGE,
            outputs: &[],
        }
        .compute(&[1; 32]);
        let json = serde_json::to_string(&manifest).unwrap();
        assert!(!json.contains("s3cr3t"), "{json}");
        assert_eq!(serde_json::from_str::<KeyManifest>(&json).unwrap(), manifest, "reads back");
        assert!(json.contains("cat token"));
        assert!(json.contains("TOKEN"));
    }
}

#[cfg(test)]
mod file_digests {
    use super::*;

    #[test]
    fn serialize_as_path_and_hex_pairs_and_refuse_a_bad_hash() {
        let files = FileDigests(Arc::new(vec![("src/a".to_string(), blake3::hash(b"a"))]));
        let json = serde_json::to_string(&files).unwrap();
        assert_eq!(json, format!("[[\"src/a\",\"{}\"]]", blake3::hash(b"a").to_hex()));
        assert_eq!(serde_json::from_str::<FileDigests>(&json).unwrap(), files);
        assert_eq!(files.pairs(), [("src/a".to_string(), blake3::hash(b"a").to_hex().to_string())]);
        assert!(serde_json::from_str::<FileDigests>(r#"[["src/a","not hex"]]"#).is_err());
    }
}
