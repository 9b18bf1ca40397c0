//! `oci://REGISTRY[:PORT]/NAMESPACE/NAME:TAG` and `…@sha256:DIGEST`: the
//! reference `vx plugin add` and `vx plugin publish` take, parsed by the
//! OCI distribution spec's grammar (lowercase repository path components,
//! tags of at most 128 characters), without Docker's implicit registry or
//! `latest` tag: a plugin reference says where it lives and which version.

use std::fmt;

/// What a reference starts with.
pub(crate) const SCHEME: &str = "oci://";

/// A parsed reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reference {
    /// `host` or `host:port`.
    pub registry: String,
    /// The repository path, e.g. `platform/junit`.
    pub repository: String,
    pub tag: Option<String>,
    /// `sha256:` and 64 lowercase hex digits.
    pub digest: Option<String>,
}

impl Reference {
    /// Parses `oci://…`; the error says what is wrong, in one line.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let rest = text.strip_prefix(SCHEME).ok_or_else(|| format!("`{text}` does not start with {SCHEME}"))?;
        let (registry, path) =
            rest.split_once('/').ok_or_else(|| format!("`{text}` has no repository after the registry"))?;
        if !valid_registry(registry) {
            return Err(format!("`{registry}` is not a registry host (HOST or HOST:PORT)"));
        }
        let (path, digest) = match path.split_once('@') {
            Some((p, d)) => (p, Some(parse_digest(d)?)),
            None => (path, None),
        };
        let (repository, tag) = match path.rsplit_once(':') {
            Some((r, t)) if !t.contains('/') => (r, Some(t)),
            _ => (path, None),
        };
        if !repository.split('/').all(valid_component) {
            return Err(format!(
                "`{repository}` is not a repository path (lowercase letters and digits, separated by `/`, `.`, `_` or `-`)"
            ));
        }
        if let Some(t) = tag
            && !valid_tag(t)
        {
            return Err(format!("`{t}` is not a tag (letters, digits, `_`, `.` and `-`, at most 128)"));
        }
        if tag.is_none() && digest.is_none() {
            return Err(format!("`{text}` names no version: add `:TAG` or `@sha256:DIGEST`"));
        }
        Ok(Reference {
            registry: registry.to_string(),
            repository: repository.to_string(),
            tag: tag.map(str::to_string),
            digest,
        })
    }

    /// What the registry's manifest endpoint is asked for: the digest when
    /// there is one (it is what gets verified), else the tag.
    pub(crate) fn target(&self) -> &str {
        self.digest.as_deref().or(self.tag.as_deref()).unwrap_or_default()
    }

    /// The last path component, the default plugin name.
    pub(crate) fn name(&self) -> &str {
        self.repository.rsplit('/').next().unwrap_or(&self.repository)
    }

    /// The reference pinned to `digest`, keeping the tag for the reader.
    pub(crate) fn with_digest(&self, digest: &str) -> Reference {
        Reference { digest: Some(digest.to_string()), ..self.clone() }
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

/// `sha256:` and 64 lowercase hex digits; other algorithms are refused.
pub(crate) fn parse_digest(text: &str) -> Result<String, String> {
    match text.strip_prefix("sha256:") {
        Some(hex) if hex.len() == 64 && hex.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')) => Ok(text.to_string()),
        _ => Err(format!("`{text}` is not a digest (`sha256:` and 64 lowercase hex digits)")),
    }
}

fn valid_registry(host: &str) -> bool {
    let (name, port) = match host.rsplit_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (host, None),
    };
    !name.is_empty()
        && name.len() <= 253
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && port.is_none_or(|p| p.parse::<u16>().is_ok_and(|n| n > 0))
}

/// A repository path component: `[a-z0-9]+` runs joined by `.`, `_`,
/// `__` or dashes.
fn valid_component(part: &str) -> bool {
    let bytes = part.as_bytes();
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    !bytes.is_empty()
        && bytes.first().is_some_and(alnum)
        && bytes.last().is_some_and(alnum)
        && bytes.iter().all(|b| alnum(b) || matches!(b, b'.' | b'_' | b'-'))
        && !part.contains("..")
        && !part.contains("___")
}

fn valid_tag(tag: &str) -> bool {
    tag.len() <= 128
        && tag.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && tag.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// Whether a `vx plugin add` argument is a registry reference.
pub(crate) fn is_reference(arg: &str) -> bool {
    arg.starts_with(SCHEME)
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn parses_tags_digests_and_ports() {
        let r = Reference::parse("oci://127.0.0.1:5000/platform/junit:1.2.0").unwrap();
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str(), r.tag.as_deref()),
            ("127.0.0.1:5000", "platform/junit", Some("1.2.0"))
        );
        assert_eq!((r.target(), r.name()), ("1.2.0", "junit"));
        let r = Reference::parse(&format!("oci://ghcr.io/acme/junit@{D}")).unwrap();
        assert_eq!((r.tag, r.digest.as_deref()), (None, Some(D)));
        let r = Reference::parse(&format!("oci://ghcr.io/acme/junit:v1@{D}")).unwrap();
        assert_eq!((r.target(), r.to_string()), (D, format!("oci://ghcr.io/acme/junit:v1@{D}")));
    }

    #[test]
    fn refuses_what_is_not_a_reference() {
        for bad in [
            "ghcr.io/acme/junit:1",
            "oci://ghcr.io",
            "oci://ghcr.io/acme/junit",
            "oci://ghcr.io/Acme/junit:1",
            "oci://ghcr.io/acme/junit:-x",
            "oci://ghcr.io/acme/junit@sha256:abc",
            "oci://ghcr.io/acme/junit@md5:0123456789abcdef0123456789abcdef",
            "oci://host:99999/a:1",
            "oci://ho st/a:1",
            "oci://h/a//b:1",
        ] {
            assert!(Reference::parse(bad).is_err(), "{bad}");
        }
    }
}
