//! Registry credentials, looked for in this order:
//!
//! 1. `VX_REGISTRY_TOKEN`: a bearer token, sent as it is (what CI systems
//!    hand out, e.g. a GitHub Actions `GITHUB_TOKEN` exchanged beforehand);
//! 2. `VX_REGISTRY_USERNAME` and `VX_REGISTRY_PASSWORD`;
//! 3. the Docker credential file (`$DOCKER_CONFIG/config.json`, else
//!    `~/.docker/config.json`): `auths.<registry>.auth` (base64 of
//!    `user:password`) or its `username`/`password`, the entries
//!    `docker login` writes. Credential helpers (`credsStore`,
//!    `credHelpers`) are not run: vx starts no program to get a secret.
//!
//! A user and password answer a `Basic` challenge directly, and a `Bearer`
//! challenge through the registry's token service (the distribution
//! spec's token flow), for the scope the operation needs.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// The environment variable of a bearer token.
pub(crate) const TOKEN_ENV: &str = "VX_REGISTRY_TOKEN";
pub(crate) const USERNAME_ENV: &str = "VX_REGISTRY_USERNAME";
pub(crate) const PASSWORD_ENV: &str = "VX_REGISTRY_PASSWORD";

/// What vx has to answer a registry's challenge with.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Credentials {
    Anonymous,
    Token(String),
    Basic { username: String, password: String },
}

// Never print a secret, not even in a debug dump.
impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Credentials::Anonymous => "Anonymous",
            Credentials::Token(_) => "Token(…)",
            Credentials::Basic { .. } => "Basic(…)",
        })
    }
}

impl Credentials {
    /// The credentials for `registry` (`host[:port]`), from the environment
    /// or the Docker credential file.
    pub(crate) fn for_registry(registry: &str) -> Credentials {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        if let Some(token) = env(TOKEN_ENV) {
            return Credentials::Token(token);
        }
        if let (Some(username), Some(password)) = (env(USERNAME_ENV), env(PASSWORD_ENV)) {
            return Credentials::Basic { username, password };
        }
        let dir = env("DOCKER_CONFIG")
            .map(std::path::PathBuf::from)
            .or_else(|| env("HOME").map(|h| std::path::Path::new(&h).join(".docker")));
        dir.and_then(|d| std::fs::read_to_string(d.join("config.json")).ok())
            .and_then(|text| from_docker_config(&text, registry))
            .unwrap_or(Credentials::Anonymous)
    }

    /// The `Authorization` value for a `Basic` challenge.
    pub(crate) fn basic_header(&self) -> Option<String> {
        match self {
            Credentials::Basic { username, password } => {
                Some(format!("Basic {}", STANDARD.encode(format!("{username}:{password}"))))
            }
            _ => None,
        }
    }
}

/// The entry of `registry` in a Docker `config.json`. Keys may carry a
/// scheme and a path (`https://index.docker.io/v1/`): only the host counts.
fn from_docker_config(text: &str, registry: &str) -> Option<Credentials> {
    let doc: serde_json::Value = serde_json::from_str(text).ok()?;
    let auths = doc.get("auths")?.as_object()?;
    let entry = auths.iter().find(|(key, _)| key_host(key) == registry).map(|(_, v)| v)?;
    if let Some(auth) = entry.get("auth").and_then(|a| a.as_str()).filter(|a| !a.is_empty()) {
        let decoded = String::from_utf8(STANDARD.decode(auth.trim()).ok()?).ok()?;
        let (username, password) = decoded.split_once(':')?;
        return Some(Credentials::Basic { username: username.to_string(), password: password.to_string() });
    }
    let field = |k: &str| entry.get(k).and_then(|v| v.as_str()).map(str::to_string);
    Some(Credentials::Basic { username: field("username")?, password: field("password")? })
}

fn key_host(key: &str) -> &str {
    let key = key.strip_prefix("https://").or_else(|| key.strip_prefix("http://")).unwrap_or(key);
    key.split('/').next().unwrap_or(key)
}

/// A `WWW-Authenticate` challenge: its scheme and parameters.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Challenge {
    pub scheme: String,
    pub params: Vec<(String, String)>,
}

impl Challenge {
    /// Parses `Bearer realm="…",service="…",scope="…"` (one challenge;
    /// registries send one).
    pub(crate) fn parse(header: &str) -> Option<Challenge> {
        let (scheme, rest) = header.trim().split_once(' ').unwrap_or((header.trim(), ""));
        let mut params = Vec::new();
        let mut rest = rest.trim();
        while !rest.is_empty() {
            let (key, after) = rest.split_once('=')?;
            let after = after.trim_start();
            let (value, tail) = if let Some(quoted) = after.strip_prefix('"') {
                let end = quoted.find('"')?;
                (&quoted[..end], &quoted[end + 1..])
            } else {
                after.split_once(',').map_or((after, ""), |(v, t)| (v, t))
            };
            params.push((key.trim().to_ascii_lowercase(), value.to_string()));
            rest = tail.trim_start().trim_start_matches(',').trim_start();
        }
        Some(Challenge { scheme: scheme.to_ascii_lowercase(), params })
    }

    pub(crate) fn param(&self, key: &str) -> Option<&str> {
        self.params.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_config_entries_by_host() {
        let auth = STANDARD.encode("ci:s3cret");
        let text = format!(
            r#"{{"auths":{{"https://reg.acme.dev/v1/":{{"auth":"{auth}"}},"other:5000":{{"username":"u","password":"p"}}}}}}"#
        );
        let basic = |u: &str, p: &str| Some(Credentials::Basic { username: u.into(), password: p.into() });
        assert_eq!(from_docker_config(&text, "reg.acme.dev"), basic("ci", "s3cret"));
        assert_eq!(from_docker_config(&text, "other:5000"), basic("u", "p"));
        assert_eq!(from_docker_config(&text, "ghcr.io"), None);
        assert_eq!(from_docker_config("not json", "ghcr.io"), None);
    }

    #[test]
    fn challenges_parse() {
        let c =
            Challenge::parse(r#"Bearer realm="https://auth.io/token",service="reg",scope="repository:a/b:pull,push""#)
                .unwrap();
        assert_eq!(c.scheme, "bearer");
        assert_eq!(c.param("realm"), Some("https://auth.io/token"));
        assert_eq!(c.param("scope"), Some("repository:a/b:pull,push"));
        let c = Challenge::parse(r#"Basic realm="Registry Realm""#).unwrap();
        assert_eq!((c.scheme.as_str(), c.param("realm")), ("basic", Some("Registry Realm")));
    }
}
