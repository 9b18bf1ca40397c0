//! Logging into vx's log. The host tags each record with the plugin's name,
//! rate-limits and truncates it; `eprintln!` also ends up there, but without
//! a level or fields.

use crate::bindings::imports::vx::plugin::host;

pub use host::Level;

/// Logs `message` with structured `fields` at `level`.
pub fn log(level: Level, message: &str, fields: &[(&str, &str)]) {
    let fields: Vec<(String, String)> = fields.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    host::log(level, message, &fields);
}

pub fn trace(message: &str) {
    log(Level::Trace, message, &[]);
}

pub fn debug(message: &str) {
    log(Level::Debug, message, &[]);
}

pub fn info(message: &str) {
    log(Level::Info, message, &[]);
}

pub fn warn(message: &str) {
    log(Level::Warn, message, &[]);
}

pub fn error(message: &str) {
    log(Level::Error, message, &[]);
}
