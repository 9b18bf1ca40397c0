//! Verifying a downloaded binary and putting it in place atomically: a new
//! file beside the target (same directory, so `rename` is atomic), written,
//! made executable, fsynced, then renamed over the target; the directory is
//! fsynced so the rename survives a crash. On any failure the temporary
//! file is removed and the target is untouched.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::Digest;

use super::error::UpgradeError;
use super::release::Asset;

type Result<T, E = UpgradeError> = std::result::Result<T, E>;

/// The file to replace: `VX_UPGRADE_TARGET`, else the running binary.
pub(crate) fn install_target() -> Result<PathBuf> {
    if let Some(target) = std::env::var_os("VX_UPGRADE_TARGET").filter(|t| !t.is_empty()) {
        return Ok(PathBuf::from(target));
    }
    let exe = std::env::current_exe().map_err(UpgradeError::CurrentExe)?;
    exe.canonicalize().map_err(|source| UpgradeError::File { action: "resolve", path: exe, source })
}

/// Checks `bytes` against the asset's checksums, then replaces `target`.
pub(crate) fn install(asset: &Asset, bytes: &[u8], target: &Path) -> Result<()> {
    verify(asset, bytes)?;
    let dir = target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = target.file_name().map_or_else(|| "vx".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.upgrade-{}", std::process::id()));
    let result = write_new(&tmp, bytes, target)
        .and_then(|()| std::fs::rename(&tmp, target).map_err(|source| file_error("replace", target, source)));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn verify(asset: &Asset, bytes: &[u8]) -> Result<()> {
    let checks = [
        ("sha256", asset.sha256.as_deref(), hex(&sha2::Sha256::digest(bytes))),
        ("blake3", asset.blake3.as_deref(), blake3::hash(bytes).to_hex().to_string()),
    ];
    for (name, want, got) in checks {
        if let Some(want) = want
            && !want.trim().eq_ignore_ascii_case(&got)
        {
            return Err(UpgradeError::ChecksumMismatch {
                url: asset.url.clone(),
                algorithm: name,
                want: want.to_string(),
                got,
            });
        }
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes the new binary with the target's permissions (0755 when there is
/// no target yet) and fsyncs it.
fn write_new(tmp: &Path, bytes: &[u8], target: &Path) -> Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mode = std::fs::metadata(target).map_or(0o755, |m| m.permissions().mode() & 0o7777) | 0o111;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(tmp)
        .map_err(|source| file_error("create", tmp, source))?;
    file.write_all(bytes).map_err(|source| file_error("write", tmp, source))?;
    file.set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(|source| UpgradeError::MakeExecutable { path: tmp.to_path_buf(), source })?;
    file.sync_all().map_err(|source| file_error("sync", tmp, source))
}

fn file_error(action: &'static str, path: &Path, source: std::io::Error) -> UpgradeError {
    UpgradeError::File { action, path: path.to_path_buf(), source }
}
