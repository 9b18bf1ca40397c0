//! The JSON Schema of `vx.toml`, generated from the serde mirror (`raw`)
//! so that it cannot drift from what the parser reads: the same keys, every
//! table closed to unknown keys, descriptions from the fields' doc comments.
//!
//! Where `raw` keeps a loose value for a later check with a span (a
//! `toml::Value`, a duration as a string), the functions here describe what
//! that check accepts, so an editor flags `timeout = "10"` or
//! `priority = "urgent"` as vx would. The committed copy is
//! `docs/schema/vx-toml.json`; a unit test below fails when it differs from
//! what this generates, and rewrites it with `VX_WRITE_SCHEMA=1`.

use schemars::{Schema, SchemaGenerator, json_schema};

/// Where the schema lives in the repository.
pub(crate) const SCHEMA_PATH: &str = "docs/schema/vx-toml.json";

/// The schema of this version of vx, at its release tag: what `vx init`
/// writes in a `#:schema` comment. A URL of the tag, not of `main`, so an
/// editor checks a file against the keys the installed vx reads.
pub(crate) fn schema_url() -> String {
    let repo = env!("CARGO_PKG_REPOSITORY").replacen("https://github.com/", "https://raw.githubusercontent.com/", 1);
    format!("{repo}/v{}/{SCHEMA_PATH}", env!("CARGO_PKG_VERSION"))
}

/// `30s`, `10m`, `1h30m`, `250ms`, `14d`: a number and a unit, repeated
/// (`config::duration::parse_duration`); a bare number is refused.
pub(super) fn duration(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "string",
        "pattern": "^\\s*([0-9]+(ms|s|m|h|d))+\\s*$",
        "examples": ["30s", "10m", "1h30m"],
    })
}

/// `512MiB`, `5GB`, `1024` (bytes) (`config::duration::parse_size`).
pub(super) fn size(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "string",
        "pattern": "^\\s*([0-9]+\\.?[0-9]*|\\.[0-9]+)\\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)?\\s*$",
        "examples": ["512MiB", "2GiB", "5GB"],
    })
}

/// `[history] keep`: a number of runs from 1, or a duration
/// (`config::history`).
pub(super) fn history_keep(generator: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "anyOf": [{ "type": "integer", "minimum": 1, "maximum": u32::MAX }, duration(generator)],
        "examples": [1000, "90d"],
    })
}

/// A plugin limit given as a size may also be a whole number of bytes.
pub(super) fn size_or_bytes(generator: &mut SchemaGenerator) -> Schema {
    json_schema!({ "anyOf": [size(generator), { "type": "integer", "minimum": 0 }] })
}

/// An `env`-style list: names, `*` patterns and `!` exclusions
/// (`config::env::check_entry`).
pub(super) fn env_list(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "items": { "type": "string", "pattern": "^!?[^=!\\u0000]+$" },
    })
}

/// `runtime` commands: none blank.
pub(super) fn commands(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "array", "items": { "type": "string", "pattern": "\\S" } })
}

/// `command`: a string for `sh -c`, or an argv exec'd directly.
pub(super) fn command(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "oneOf": [
            { "type": "string", "pattern": "\\S", "description": "Run by `sh -c`." },
            {
                "type": "array",
                "items": { "type": "string" },
                "minItems": 1,
                "description": "Exec'd directly: the program, then its arguments.",
            },
        ],
    })
}

/// `sandbox`: `true`/`false`, or a table (`config::sandbox`).
pub(super) fn sandbox(_: &mut SchemaGenerator) -> Schema {
    let paths = json_schema!({
        "type": "array",
        "items": { "type": "string", "minLength": 1 },
        "description": "`/x` at the workspace root, `~/x` at home, `x` in the project, or an absolute path.",
    });
    json_schema!({
        "oneOf": [
            { "type": "boolean" },
            {
                "type": "object",
                "properties": {
                    "allow-read": paths.clone(),
                    "allow-write": paths,
                    "network": {
                        "oneOf": [{ "type": "boolean" }, { "const": "loopback" }],
                        "description": "`true`: the host's network; `\"loopback\"`: a loopback of its own; `false` (the default): none.",
                    },
                },
                "additionalProperties": false,
            },
        ],
    })
}

/// `resources.cpus`: a number above 0, fractions allowed (`config::schedule`).
pub(super) fn cpus(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "number", "exclusiveMinimum": 0, "maximum": 1_000_000 })
}

/// `mutex`: a word of letters, digits, `.`, `_`, `-`, not starting with `.`.
pub(super) fn mutex(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "pattern": "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$" })
}

/// A `[[workspace.boundaries]]` pattern: a tag glob, `!` before it for
/// the projects with no matching tag (`config::boundaries`).
fn tag_pattern() -> Schema {
    json_schema!({ "type": "string", "pattern": "^!?[^!]", "examples": ["scope:app", "scope:*", "!type:app"] })
}

/// `allow` and `deny`: lists of tag patterns.
pub(super) fn tag_patterns(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "array", "items": tag_pattern() })
}

/// `from`: one tag pattern, or several a project must all match.
pub(super) fn tag_patterns_or_one(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "oneOf": [tag_pattern(), { "type": "array", "items": tag_pattern(), "minItems": 1 }] })
}

/// One of a fixed set of words.
fn one_of(words: &[&str]) -> Schema {
    json_schema!({ "type": "string", "enum": words })
}

pub(super) fn priority(_: &mut SchemaGenerator) -> Schema {
    one_of(&["low", "normal", "high"])
}

pub(super) fn env_mode(_: &mut SchemaGenerator) -> Schema {
    one_of(&["strict", "loose"])
}

pub(super) fn monitor(_: &mut SchemaGenerator) -> Schema {
    one_of(&["auto", "watchman", "git", "off"])
}

/// `[tasks.NAME]`: a name may not be empty, hold `#` or start with `^`.
pub(super) fn tasks(generator: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "propertyNames": { "pattern": "^[^#^][^#]*$" },
        "additionalProperties": generator.subschema_for::<super::raw::RawTask>(),
    })
}

/// `[plugins.NAME] dirs`: `"DIR"` or `{ path = "DIR", rw = true }`
/// (`plugin::grants`).
pub(super) fn plugin_dirs(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "items": {
            "oneOf": [
                { "type": "string" },
                {
                    "type": "object",
                    "properties": { "path": { "type": "string" }, "rw": { "type": "boolean" } },
                    "required": ["path"],
                },
            ],
        },
    })
}

/// `[plugins.NAME] allow-programs`: `"PROGRAM"` or `{ program, args }`.
pub(super) fn plugin_programs(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "items": {
            "oneOf": [
                { "type": "string" },
                {
                    "type": "object",
                    "properties": {
                        "program": { "type": "string" },
                        "args": { "type": "array", "items": { "type": "string" } },
                    },
                    "required": ["program"],
                    "additionalProperties": false,
                },
            ],
        },
    })
}

/// `[plugins.NAME] limits`: each a size or a duration (`plugin::grants`).
pub(super) fn plugin_limits(generator: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "properties": {
            "memory": size_or_bytes(generator),
            "output": size_or_bytes(generator),
            "cpu": duration(generator),
            "call-timeout": duration(generator),
        },
        "additionalProperties": false,
    })
}

/// `[plugins.NAME] config`: the plugin's own table, passed to it as is.
pub(super) fn any_table(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "object" })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use schemars::generate::SchemaSettings;
    use serde_json::Value;

    use super::super::raw::RawFile;

    /// The schema as pretty JSON with a final newline, as committed: the
    /// schema test compares it with (or writes) `docs/schema/vx-toml.json`.
    pub(crate) fn vx_toml_schema() -> String {
        // Draft 7: what taplo (and so Even Better TOML) validates with.
        let mut schema = SchemaSettings::draft07().into_generator().into_root_schema_for::<RawFile>();
        schema.insert("title".into(), "vx.toml".into());
        schema.insert(
            "description".into(),
            "A vx.toml file: the workspace root's (`[workspace]`, `[cache]`, `[plugins]`, `[remote]`) or a project's \
             (`[project]`, `[tasks]`). Reference: docs/config.md."
                .into(),
        );
        let mut value = schema.to_value();
        drop_null(&mut value);
        let mut text = serde_json::to_string_pretty(&value).expect("a schema serializes");
        text.push('\n');
        text
    }

    /// Removes `null` from the schema: schemars lets an `Option` be null, as
    /// JSON can, but TOML has no null, so an optional key is simply absent.
    fn drop_null(value: &mut Value) {
        let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
        match value {
            Value::Object(map) => {
                if map.get("default").is_some_and(Value::is_null) {
                    map.remove("default");
                }
                if let Some(Value::Array(types)) = map.get_mut("type") {
                    types.retain(|t| t != "null");
                    if let [only] = types.as_slice() {
                        let only = only.clone();
                        map.insert("type".into(), only);
                    }
                }
                if let Some(Value::Array(any)) = map.get_mut("anyOf") {
                    any.retain(|s| !is_null(s));
                    if let [only] = any.as_slice() {
                        let only = only.clone();
                        map.remove("anyOf");
                        // Draft 7 ignores the siblings of a `$ref`, so a
                        // described reference stays wrapped.
                        match only {
                            Value::Object(inner) if !inner.contains_key("$ref") => map.extend(inner),
                            only => {
                                map.insert("allOf".into(), Value::Array(vec![only]));
                            }
                        }
                    }
                }
                map.values_mut().for_each(drop_null);
            }
            Value::Array(items) => items.iter_mut().for_each(drop_null),
            _ => {}
        }
    }

    /// The committed schema is what this version generates; with
    /// `VX_WRITE_SCHEMA=1` the test writes it instead.
    #[test]
    fn committed_schema_is_generated() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(SCHEMA_PATH);
        let generated = vx_toml_schema();
        if std::env::var_os("VX_WRITE_SCHEMA").is_some() {
            std::fs::write(&path, &generated).expect("write the schema");
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "{SCHEMA_PATH} is not what the configuration types generate; \
             run `VX_WRITE_SCHEMA=1 cargo nextest run -p vx schema` and commit it"
        );
    }

    #[test]
    fn url_names_this_version_at_its_tag() {
        assert_eq!(
            schema_url(),
            format!(
                "https://raw.githubusercontent.com/vx-dev/vx/v{}/docs/schema/vx-toml.json",
                env!("CARGO_PKG_VERSION")
            )
        );
    }
}
