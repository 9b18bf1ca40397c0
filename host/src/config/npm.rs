//! The parts of the JavaScript ecosystem's files that vx reads:
//! `package.json` (name, scripts, workspace dependencies, `workspaces`)
//! and `pnpm-workspace.yaml` (`packages`). Everything else in them is
//! ignored, since those files belong to other tools.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::diag::{Source, relative_display};
use super::error::{ConfigError, Diagnostic};

#[derive(Debug, Default, Deserialize)]
pub struct PackageJson {
    pub name: Option<String>,
    /// Given to scripts as `npm_package_version`.
    pub version: Option<String>,
    /// `pnpm@9.15.0`: the root's names the manager scripts are told of
    /// (`npm_config_user_agent`).
    #[serde(rename = "packageManager")]
    pub package_manager: Option<String>,
    #[serde(default)]
    pub scripts: BTreeMap<String, String>,
    #[serde(default)]
    pub dependencies: BTreeMap<String, serde_json::Value>,
    #[serde(default, rename = "devDependencies")]
    pub dev_dependencies: BTreeMap<String, serde_json::Value>,
    pub workspaces: Option<Workspaces>,
    /// `"vx": { "tags": [...] }`: what vx reads of a package's own settings.
    #[serde(default, deserialize_with = "vx_settings")]
    pub vx: VxSettings,
    /// The digest of the whole file in normal form (key order and
    /// formatting do not count), part of every task's key
    /// (`crate::lockfile::PackageJson`).
    #[serde(skip)]
    pub digest: Option<blake3::Hash>,
}

/// A `package.json`'s `"vx"` object. Unknown keys are refused, as in
/// `vx.toml`, so a typo is an error rather than a setting ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VxSettings {
    /// Added to `[project] tags` (`config::resolve`).
    #[serde(deserialize_with = "tag_list")]
    pub tags: Vec<String>,
}

/// `"vx"`: an object only (serde takes a struct from an array too, which
/// would make `"vx": ["app"]` an error about `tags`).
fn vx_settings<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<VxSettings, D::Error> {
    struct Settings;
    impl<'de> serde::de::Visitor<'de> for Settings {
        type Value = VxSettings;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("`\"vx\"` as an object like { \"tags\": [\"scope:app\"] }")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<VxSettings, A::Error> {
            VxSettings::deserialize(serde::de::value::MapAccessDeserializer::new(map))
        }
    }
    deserializer.deserialize_any(Settings)
}

/// `"tags"`: an array of strings, with a message that says so.
fn tag_list<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    struct Tags;
    impl<'de> serde::de::Visitor<'de> for Tags {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("`vx.tags` as an array of tag strings")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            let mut tags = Vec::new();
            while let Some(tag) = seq.next_element::<serde_json::Value>()? {
                match tag {
                    serde_json::Value::String(tag) => tags.push(tag),
                    other => {
                        return Err(serde::de::Error::custom(format_args!(
                            "a tag in `vx.tags` is {}, not a string",
                            json_kind(&other)
                        )));
                    }
                }
            }
            Ok(tags)
        }
    }
    deserializer.deserialize_any(Tags)
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// npm and yarn accept a list, yarn 1 also `{ "packages": [...] }`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Workspaces {
    List(Vec<String>),
    Object {
        #[serde(default)]
        packages: Vec<String>,
    },
}

impl Workspaces {
    pub fn globs(&self) -> &[String] {
        match self {
            Workspaces::List(globs) => globs,
            Workspaces::Object { packages } => packages,
        }
    }
}

impl PackageJson {
    /// The names of every package this one depends on, runtime and dev.
    pub fn dependency_names(&self) -> impl Iterator<Item = &str> {
        self.dependencies.keys().chain(self.dev_dependencies.keys()).map(String::as_str)
    }
}

/// Reads `dir/package.json` if there is one.
pub fn read_package_json(root: &Path, dir: &Path) -> Result<Option<PackageJson>, ConfigError> {
    let path = dir.join("package.json");
    let text = match crate::paths::read_config(&path) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(None),
        Err(source) => return Err(ConfigError::Read { path, source }),
    };
    let invalid = |e: serde_json::Error| -> ConfigError {
        let location = format!("{}:{}:{}", relative_display(root, &path).display(), e.line(), e.column());
        let message = strip_position(&e.to_string()).to_string();
        // The messages of `VxSettings` name `vx`; an unknown key in it is serde's.
        let ours = ["`vx.tags`", "`\"vx\"`", "expected `tags`"];
        let hint = if ours.iter().any(|m| message.contains(m)) {
            "vx reads `\"vx\": { \"tags\": [\"scope:app\"] }` in a package.json: an object holding an array of strings"
        } else {
            "fix the JSON syntax"
        };
        Diagnostic::new(location, format_args!("invalid package.json: {message}")).with_hint(hint).into()
    };
    let mut pkg: PackageJson = serde_json::from_str(&text).map_err(invalid)?;
    // The typed read above skips what vx does not use; the key takes the
    // whole file, so it is read once more as a value. Both are parses of
    // a small file already in memory.
    pkg.digest = crate::lockfile::PackageJson::from_text(&text).ok().map(|p| p.digest());
    Ok(Some(pkg))
}

/// The byte offset of `"name":` in a `package.json`'s text, after its
/// first dependency table: where a dependency on the workspace package
/// `name` is declared, for a message that points at it.
pub(crate) fn dependency_offset(text: &str, name: &str) -> Option<usize> {
    let tables = ["\"dependencies\"", "\"devDependencies\""];
    let start = tables.iter().filter_map(|t| text.find(t)).min()?;
    let quoted = serde_json::to_string(name).ok()?;
    let mut from = start;
    while let Some(found) = text[from..].find(&quoted) {
        let at = from + found;
        let after = &text[at + quoted.len()..];
        if after.trim_start().starts_with(':') {
            return Some(at);
        }
        from = at + quoted.len();
    }
    None
}

#[derive(Debug, Default, Deserialize)]
struct PnpmWorkspace {
    #[serde(default)]
    packages: Vec<String>,
}

/// Reads the `packages` globs of `dir/pnpm-workspace.yaml` if there is one.
pub fn read_pnpm_workspace(root: &Path) -> Result<Option<Vec<String>>, ConfigError> {
    let path = root.join("pnpm-workspace.yaml");
    let text = match crate::paths::read_config(&path) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(None),
        Err(source) => return Err(ConfigError::Read { path, source }),
    };
    let source = Source::new("pnpm-workspace.yaml", text);
    match serde_yaml_ng::from_str::<Option<PnpmWorkspace>>(&source.text) {
        Ok(ws) => Ok(Some(ws.unwrap_or_default().packages)),
        Err(e) => {
            let span = e.location().map(|l| l.index()..l.index());
            Err(source.error(span, format!("invalid pnpm-workspace.yaml: {}", strip_position(&e.to_string()))).into())
        }
    }
}

/// serde_json and serde_yaml append " at line L column C"; vx puts the
/// position in front instead, in the same form as every other config error.
fn strip_position(message: &str) -> &str {
    message.find(" at line ").map_or(message, |i| &message[..i])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error `read_package_json` gives for `text`.
    fn error(text: &str) -> Diagnostic {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(dir.path().join("package.json"), text).expect("write package.json");
        match read_package_json(dir.path(), dir.path()) {
            Err(ConfigError::Invalid(d)) => d,
            other => panic!("expected a located error, got {other:?}"),
        }
    }

    #[test]
    fn vx_tags_are_read() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(dir.path().join("package.json"), r#"{ "name": "a", "vx": { "tags": ["scope:app", "x"] } }"#)
            .expect("write package.json");
        let pkg = read_package_json(dir.path(), dir.path()).unwrap().unwrap();
        assert_eq!(pkg.vx.tags, ["scope:app", "x"]);
    }

    #[test]
    fn a_vx_field_of_the_wrong_shape_is_one_located_error() {
        let tags_hint = "vx reads `\"vx\": { \"tags\": [\"scope:app\"] }`";
        // serde_json places an error just after the value it refused.
        for (text, location, message) in [
            (
                "{\n  \"vx\": { \"tags\": \"app\" }\n}",
                "package.json:2:23",
                "expected `vx.tags` as an array of tag strings",
            ),
            (
                "{\n  \"vx\": { \"tags\": [\"a\", 3] }\n}",
                "package.json:2:26",
                "a tag in `vx.tags` is a number, not a string",
            ),
            ("{\n  \"vx\": { \"tag\": [] }\n}", "package.json:2:15", "unknown field `tag`, expected `tags`"),
            ("{\n  \"vx\": [\"app\"]\n}", "package.json:2:9", "expected `\"vx\"` as an object"),
        ] {
            let d = error(text);
            assert_eq!(d.location, location, "{text}: {d}");
            assert!(d.message.starts_with("invalid package.json: ") && d.message.contains(message), "{text}: {d}");
            assert!(d.hint.as_deref().is_some_and(|h| h.starts_with(tags_hint)), "{text}: {d:?}");
        }
        let syntax = error("{ \"name\": ");
        assert_eq!(syntax.hint.as_deref(), Some("fix the JSON syntax"));
    }

    #[test]
    fn a_dependency_is_found_in_the_dependency_tables_only() {
        let text = "{\n  \"name\": \"ui\",\n  \"scripts\": { \"ui\": \"x\" },\n  \"devDependencies\": {\n    \"ui\" : \"*\"\n  }\n}";
        assert_eq!(dependency_offset(text, "ui"), text.rfind("\"ui\""));
        assert_eq!(dependency_offset(text, "web"), None);
        assert_eq!(dependency_offset("{ \"name\": \"ui\" }", "ui"), None);
    }
}
