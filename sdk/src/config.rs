//! Typed plugin configuration: the host hands over the plugin's
//! `[plugins.NAME].config` table as JSON; the SDK deserializes it with serde
//! and reports a bad value as `invalid-config` naming the key.

use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::Error;

/// The `Config` of a plugin that takes no settings: any key is an error,
/// so a typo in `vx.toml` does not pass silently.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoConfig {}

/// Reads this plugin's config from the host and deserializes it.
pub fn load<T: DeserializeOwned>() -> Result<T, Error> {
    parse("config", &crate::bindings::imports::vx::plugin::host::config())
}

/// Deserializes `json` as `T`. An empty string counts as `{}`. Errors read
/// `"{what}.build.jobs: invalid type: ..."`: the key path, not a JSON line
/// and column, because the user wrote TOML and JSON positions mean nothing
/// to them.
pub fn parse<T: DeserializeOwned>(what: &str, json: &str) -> Result<T, Error> {
    let json = if json.trim().is_empty() { "{}" } else { json };
    let mut de = serde_json::Deserializer::from_str(json);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let position = format!(" at line {} column {}", inner.line(), inner.column());
        let text = inner.to_string();
        let text = text.strip_suffix(&position).unwrap_or(&text);
        // Syntax errors carry a meaningless path ("?"), the root is ".".
        if inner.is_syntax() || inner.is_eof() || path == "." {
            Error::invalid_config(format!("{what}: {text}"))
        } else {
            Error::invalid_config(format!("{what}.{path}: {text}"))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "kebab-case", deny_unknown_fields)]
    struct Settings {
        suite_name: Option<String>,
        #[serde(default)]
        retries: u32,
        nested: Option<Nested>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Nested {
        depth: u8,
    }

    #[test]
    fn parses_a_table() {
        let s: Settings = parse("config", r#"{"suite-name":"ci","retries":2}"#).unwrap();
        assert_eq!(s, Settings { suite_name: Some("ci".into()), retries: 2, nested: None });
    }

    #[test]
    fn empty_input_is_an_empty_table() {
        let s: Settings = parse("config", "  ").unwrap();
        assert_eq!(s, Settings { suite_name: None, retries: 0, nested: None });
        let _: NoConfig = parse("config", "").unwrap();
    }

    #[test]
    fn a_bad_value_names_its_key_path() {
        let e = parse::<Settings>("config", r#"{"nested":{"depth":"deep"}}"#).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidConfig);
        assert_eq!(e.message(), "config.nested.depth: invalid type: string \"deep\", expected u8");
    }

    #[test]
    fn an_unknown_key_is_refused() {
        let e = parse::<NoConfig>("config", r#"{"sutie":"x"}"#).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidConfig);
        assert!(e.message().starts_with("config.sutie: unknown field `sutie`"), "{}", e.message());
    }

    #[test]
    fn malformed_json_is_invalid_config() {
        let e = parse::<Settings>("options", "{").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidConfig);
        assert_eq!(e.message(), "options: EOF while parsing an object");
    }
}
