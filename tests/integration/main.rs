//! Integration tests: each drives the real `vx` binary in a temporary
//! workspace through [`common::TestEnv`]. The modules named after a part
//! of vx assert its behaviour; `spec` pins the text a user sees as
//! reviewed snapshots.

mod common;

mod affected;
mod bad_input;
mod big_output;
mod big_tree;
mod cache;
mod cache_model;
mod cli_flags;
mod concurrency;
mod config_errors;
mod crash;
mod cycles;
mod dashboard;
mod depends_on;
mod env_modes;
mod everyday;
mod executors;
mod failures;
mod faults;
mod first_party;
mod git_index;
mod groups;
mod guard;
mod hardening;
mod http_cache;
mod info;
mod init;
mod monitor;
mod npm_workspaces;
mod observability;
mod output;
mod ownership;
mod package_managers;
mod paths;
mod picker;
mod plan_views;
mod plugin_commands;
mod plugins;
mod plugins_hostile;
mod plugins_oci;
mod plugins_polyglot;
mod prune;
mod reapi_cache;
mod reapi_download;
mod reapi_exec;
mod reapi_hostile;
mod retries;
mod sandbox;
mod scheduling;
mod selection;
mod shard;
mod spec;
mod subscriber;
mod task_model;
mod trust_keys;
mod tui;
mod turbo_compat;
mod turbo_repos;
mod upgrade;
mod verify;
mod watch;
