//! [`OciError`]: what can go wrong between vx and a registry, each in one
//! line that names the registry or reference, with the fix as its hint.

use crate::error::Error;

#[derive(Debug, thiserror::Error)]
pub enum OciError {
    #[error("{0}")]
    Reference(String),
    #[error("could not reach {registry}: {source}")]
    Connect { registry: String, source: Box<ureq::Error> },
    #[error("{registry} refused the credentials ({status}) for {what}")]
    Denied { registry: String, status: u16, what: String },
    #[error("{what}: not found on {registry}")]
    NotFound { registry: String, what: String },
    #[error("{registry} answered {status} to {what}{detail}")]
    Status { registry: String, status: u16, what: String, detail: String },
    #[error("{what} is not a WebAssembly component artifact: {why}")]
    NotWasm { what: String, why: String },
    #[error("{what} does not match its digest: expected {expected}, got {got}; nothing was installed")]
    Digest { what: String, expected: String, got: String },
    #[error("{what} is larger than {limit} bytes")]
    TooLarge { what: String, limit: u64 },
    #[error("could not read the CA file {path} ({var}): {why}")]
    CaFile { var: &'static str, path: String, why: String },
}

impl From<OciError> for Error {
    fn from(e: OciError) -> Error {
        let hint = match &e {
            OciError::Reference(_) => Some("write it as oci://REGISTRY/NAMESPACE/NAME:TAG or …@sha256:DIGEST"),
            OciError::Connect { source, .. } if is_tls(source) => Some(
                "if the registry's certificate comes from a private CA, set VX_REGISTRY_CA_FILE to its PEM file (or SSL_CERT_FILE)",
            ),
            OciError::Connect { .. } => {
                Some("check the registry's address and the network (--plain-http for a registry without TLS)")
            }
            OciError::Denied { .. } => Some(
                "set VX_REGISTRY_TOKEN, or VX_REGISTRY_USERNAME and VX_REGISTRY_PASSWORD, or log in with `docker login`",
            ),
            OciError::NotFound { .. } => {
                Some("check the reference's repository and tag, or publish it with `vx plugin publish`")
            }
            OciError::Digest { .. } => {
                Some("the registry's copy is corrupt or was altered; ask its publisher to publish it again")
            }
            OciError::NotWasm { .. } => {
                Some("publish the component with `vx plugin publish FILE oci://…` (or wkg oci push)")
            }
            OciError::Status { .. } | OciError::TooLarge { .. } | OciError::CaFile { .. } => None,
        };
        let error = match &e {
            OciError::Reference(_) => Error::usage(e.to_string()),
            _ => Error::internal(e.to_string()),
        };
        match hint {
            Some(hint) => error.with_hint(hint),
            None => error,
        }
    }
}

fn is_tls(e: &ureq::Error) -> bool {
    matches!(e, ureq::Error::Rustls(_)) || e.to_string().to_ascii_lowercase().contains("certificate")
}
