//! The target bodies, grouped by the part of vx that reads the input.

pub mod cache;
pub mod config;
pub mod history;
pub mod init;
pub mod lockfile;
pub mod plugin;
pub mod reapi;
