//! Verifying a downloaded binary and putting it in place atomically: a new
//! file beside the target (same directory, so `rename` is atomic), written,
//! made executable, fsynced, then renamed over the target; the directory is
//! fsynced so the rename survives a crash. On any failure the temporary
//! file is removed and the target is untouched.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::Digest;

use super::release::Asset;
use crate::error::{Error, Result};

/// The file to replace: `VX_UPGRADE_TARGET`, else the running binary.
pub fn install_target() -> Result<PathBuf> {
    if let Some(target) = std::env::var_os("VX_UPGRADE_TARGET").filter(|t| !t.is_empty()) {
        return Ok(PathBuf::from(target));
    }
    let exe = std::env::current_exe().map_err(|e| Error::io("find the running vx binary", e))?;
    exe.canonicalize().map_err(|e| Error::io(format_args!("resolve {}", exe.display()), e))
}

/// Checks `bytes` against the asset's checksums, then replaces `target`.
pub fn install(asset: &Asset, bytes: &[u8], target: &Path) -> Result<()> {
    verify(asset, bytes)?;
    let dir = target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = target.file_name().map_or_else(|| "vx".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.upgrade-{}", std::process::id()));
    let result = write_new(&tmp, bytes, target).and_then(|()| {
        std::fs::rename(&tmp, target).map_err(|e| Error::io(format_args!("replace {}", target.display()), e))
    });
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
            return Err(Error::internal(format!(
                "{}: {name} mismatch: the metadata says {want}, the download hashes to {got}",
                asset.url
            ))
            .with_hint("the download is corrupt or was altered; nothing was installed"));
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
        .map_err(|e| Error::io(format_args!("create {}", tmp.display()), e))?;
    file.write_all(bytes).map_err(|e| Error::io(format_args!("write {}", tmp.display()), e))?;
    file.set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(|e| Error::io(format_args!("make {} executable", tmp.display()), e))?;
    file.sync_all().map_err(|e| Error::io(format_args!("sync {}", tmp.display()), e))
}
