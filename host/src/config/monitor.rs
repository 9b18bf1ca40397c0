//! `[cache] monitor`: whether a file-system monitor may spare the walks
//! of unchanged trees. A setting, so it lives with the configuration; the
//! inputs room (`inputs::monitor`) acts on it.

/// How `[cache] monitor` asks for a file-system monitor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MonitorMode {
    /// watchman when its daemon runs and already watches the workspace.
    #[default]
    Auto,
    /// watchman, started and told to watch the workspace if need be.
    Watchman,
    /// Git's index in a git repository (`inputs::gitview`), never
    /// watchman: the walk still stats every file, but reads none that
    /// git's index vouches for.
    Git,
    /// Never: every run walks (the stat index still saves reads).
    Off,
}

impl MonitorMode {
    pub fn parse(text: &str) -> Option<MonitorMode> {
        match text {
            "auto" => Some(MonitorMode::Auto),
            "watchman" => Some(MonitorMode::Watchman),
            "git" => Some(MonitorMode::Git),
            "off" => Some(MonitorMode::Off),
            _ => None,
        }
    }
}
