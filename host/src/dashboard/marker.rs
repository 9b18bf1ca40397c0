//! `.vx/dashboard.json`: the sign that a dashboard is up for this
//! workspace (`{"pid": …, "port": …}`), written when it starts and removed
//! when it stops. `vx run` reads it once at its start, and only when the
//! process it names is alive does the run write its live file: a run pays
//! one failed `open` when no dashboard is up. A marker left by a dashboard
//! that was killed names a dead process and is ignored.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What the marker holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Marker {
    pub pid: i32,
    pub port: u16,
}

/// The marker's path in the workspace's state directory (`.vx`).
pub(crate) fn marker_path(state_dir: &Path) -> PathBuf {
    state_dir.join("dashboard.json")
}

/// The directory runs write their live files to while a dashboard is up.
pub(crate) fn live_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("runs").join("live")
}

/// The dashboard up for the workspace, if there is one and it is alive.
pub(crate) fn live_dashboard(state_dir: &Path) -> Option<Marker> {
    let text = std::fs::read(marker_path(state_dir)).ok()?;
    let marker: Marker = serde_json::from_slice(&text).ok()?;
    crate::guard::pid_alive(marker.pid).then_some(marker)
}

/// Writes the marker of this process; removed when the guard drops.
pub(crate) fn write_marker(state_dir: &Path, port: u16) -> std::io::Result<MarkerGuard> {
    let path = marker_path(state_dir);
    std::fs::create_dir_all(state_dir)?;
    let marker = Marker { pid: std::process::id() as i32, port };
    crate::paths::write_atomic(&path, &serde_json::to_vec(&marker).expect("a marker serializes"))?;
    Ok(MarkerGuard { path, marker })
}

/// Removes the marker when dropped, unless another dashboard has replaced it.
#[derive(Debug)]
pub(crate) struct MarkerGuard {
    path: PathBuf,
    marker: Marker,
}

impl Drop for MarkerGuard {
    fn drop(&mut self) {
        let ours = std::fs::read(&self.path)
            .ok()
            .and_then(|t| serde_json::from_slice::<Marker>(&t).ok())
            .is_some_and(|m| m == self.marker);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_names_a_live_dashboard_until_it_is_dropped_and_a_dead_pid_is_ignored() {
        let dir = std::env::temp_dir().join(format!("vx-dashboard-marker-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(live_dashboard(&dir), None, "no marker");
        let guard = write_marker(&dir, 4321).unwrap();
        assert_eq!(live_dashboard(&dir), Some(Marker { pid: std::process::id() as i32, port: 4321 }));
        drop(guard);
        assert!(!marker_path(&dir).exists(), "removed when the dashboard stops");
        std::fs::write(marker_path(&dir), r#"{"pid": 2147483647, "port": 1}"#).unwrap();
        assert_eq!(live_dashboard(&dir), None, "a stale marker names a dead process");
        std::fs::write(marker_path(&dir), "not json").unwrap();
        assert_eq!(live_dashboard(&dir), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
