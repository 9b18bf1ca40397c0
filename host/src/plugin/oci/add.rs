//! `vx plugin add oci://…`: pull and verify, then install exactly as a
//! local file is installed (`install::add_bytes`: the same component check, the
//! copy into `.vx/plugins/`, the BLAKE3 pin, `[plugins.NAME]`), and record
//! in the pin where it came from and the manifest digest it resolved to.

use std::path::Path;

use super::error::OciError;
use super::pull::pull;
use super::reference::Reference;
use crate::config::load_workspace;
use crate::error::{Error, Result};
use crate::plugin::{AddRequest, Added, write_pin_source};

/// A plugin added from a registry.
#[derive(Debug)]
pub(crate) struct OciAdded {
    pub added: Added,
    /// The reference pinned to the manifest digest that was installed.
    pub pinned: Reference,
}

pub(crate) fn add(cwd: &Path, target: &str, request: &AddRequest, plain_http: bool) -> Result<OciAdded> {
    let reference = Reference::parse(target).map_err(OciError::Reference)?;
    // The workspace first: no download for a command that cannot install.
    let root = load_workspace(cwd)?.root;
    let pulled = pull(&reference, plain_http)?;
    let name = request.name.clone().unwrap_or_else(|| reference.name().replace('_', "-"));
    let hash = blake3::hash(&pulled.bytes);
    let added = crate::plugin::add_bytes(cwd, &name, &pulled.bytes, hash, None, request)?;
    let pinned = reference.with_digest(&pulled.manifest_digest);
    write_pin_source(&root, &added.name, &reference.to_string(), &pulled.manifest_digest)
        .map_err(|e| Error::internal(e.to_string()))?;
    Ok(OciAdded { added, pinned })
}
