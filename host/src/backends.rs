//! Which remote cache backend a workspace uses. This is the one place that
//! knows every kind: `cache` defines the [`Backend`] interface and knows no
//! implementation but its own store, `plugin` and `remote` each provide
//! one, and the commands that open a cache ask here which to hand it.

use crate::cache::Backend;
use crate::config::{REAPI_REMOTE, Workspace};
use crate::plugin::PluginBackend;
use crate::remote::ReapiTier;

/// The remote backend `ws` names, if any; nothing connects or loads until
/// its first call. A `[remote]` table makes the REAPI server the remote
/// unless `[cache] remote` names a plugin.
pub(crate) fn remote(ws: &Workspace) -> Option<Box<dyn Backend>> {
    let name = ws.cache.remote.as_deref().or(ws.remote.as_ref().map(|_| REAPI_REMOTE))?;
    match ws.remote.as_ref().filter(|_| name == REAPI_REMOTE) {
        Some(settings) => Some(Box::new(ReapiTier::new(settings.clone()))),
        None => Some(Box::new(PluginBackend::new(ws, name))),
    }
}
