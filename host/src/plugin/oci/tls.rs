//! The HTTP agent registries are reached with: ureq over rustls (the TLS
//! stack vx already has), trusting the system's CA roots (which
//! `SSL_CERT_FILE` and `SSL_CERT_DIR` replace, as for OpenSSL) plus a
//! private CA's PEM file named by `VX_REGISTRY_CA_FILE`, so that a
//! company registry needs no change to the machine's trust store.

use std::time::Duration;

use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig};

use super::error::OciError;

/// The environment variable naming an extra CA bundle (PEM).
pub(crate) const CA_FILE_ENV: &str = "VX_REGISTRY_CA_FILE";

/// A whole pull or push is given this long; plugins are a few MiB.
const TIMEOUT: Duration = Duration::from_secs(300);

/// The agent: status codes are answers (not errors), no body-less
/// redirect loses its `Authorization` to another host (ureq's default).
pub(crate) fn agent() -> Result<ureq::Agent, OciError> {
    let mut roots: Vec<Certificate<'static>> = rustls_native_certs::load_native_certs()
        .certs
        .into_iter()
        .map(|der| Certificate::from_der(der.as_ref()).to_owned())
        .collect();
    if let Some(path) = std::env::var_os(CA_FILE_ENV).filter(|p| !p.is_empty()) {
        let shown = path.to_string_lossy().into_owned();
        let ca_error = |why: String| OciError::CaFile { var: CA_FILE_ENV, path: shown.clone(), why };
        let pem = std::fs::read(&path).map_err(|e| ca_error(e.to_string()))?;
        let before = roots.len();
        for item in ureq::tls::parse_pem(&pem) {
            if let PemItem::Certificate(cert) = item.map_err(|e| ca_error(e.to_string()))? {
                roots.push(cert);
            }
        }
        if roots.len() == before {
            return Err(ca_error("no PEM certificate in it".to_string()));
        }
    }
    // With no system roots found (a bare container), the Mozilla roots
    // ureq carries are better than trusting nothing.
    let roots = if roots.is_empty() { RootCerts::WebPki } else { RootCerts::new_with_certs(&roots) };
    Ok(ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(TIMEOUT))
        .user_agent(concat!("vx/", env!("CARGO_PKG_VERSION")))
        .tls_config(TlsConfig::builder().root_certs(roots).build())
        .build()
        .into())
}
