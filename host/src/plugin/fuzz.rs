//! What the fuzz targets (tests/fuzz) reach of the checks on a plugin's
//! replies: the answer to `info` and the error values of any call, as
//! the user would see them. Not part of vx's API.

use super::bindings::{PluginInfo, WitError};
use super::calls::check_info;
use super::error::PluginError;

/// A plugin's `info` answer, checked; the error as vx reports it.
pub fn plugin_info(
    plugin: &str,
    name: String,
    version: String,
    min_vx_version: Option<String>,
    config_schema: Option<String>,
    requests: Vec<String>,
) -> Result<(), crate::Error> {
    let raw = PluginInfo { name, version, min_vx_version, config_schema, requests };
    check_info(plugin, raw).map(drop).map_err(crate::Error::from)
}

/// The error a plugin returned from `call` (`kind` picks the variant), as
/// vx reports it.
pub fn plugin_error(plugin: &str, call: &str, kind: u8, message: String) -> crate::Error {
    let err = match kind % 4 {
        0 => WitError::InvalidConfig(message),
        1 => WitError::Denied(message),
        2 => WitError::Unavailable(message),
        _ => WitError::Failed(message),
    };
    PluginError::returned(plugin, call, err).into()
}
