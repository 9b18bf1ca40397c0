//! The workspace configuration: `vx.toml` (root and projects) with the
//! `package.json` and `pnpm-workspace.yaml` beside it, loaded whole as
//! every command loads it; and the two JavaScript files on their own.

use crate::assert_one_line;
use crate::files::with_files;

/// Root `vx.toml`, root `package.json`, `pnpm-workspace.yaml`, then two
/// projects' files (the seeds' root configs list `app` and `lib`).
const WORKSPACE: &[&str] =
    &["vx.toml", "package.json", "pnpm-workspace.yaml", "app/vx.toml", "app/package.json", "lib/vx.toml"];

/// A configuration error is one line as the config module words it (not
/// only once `vx::Error` has flattened it), and exit 2 unless it is I/O.
pub fn vx_toml(data: &[u8]) {
    with_files(data, WORKSPACE, |root| {
        if let Err(e) = vx::fuzzing::load_workspace(root) {
            assert_one_line(&e.to_string());
            let io = matches!(e, vx::fuzzing::ConfigError::Read { .. } | vx::fuzzing::ConfigError::Resolve { .. });
            let e = vx::Error::from(e);
            assert!(io || e.exit_code() == 2, "a configuration error with exit {}: {e}", e.exit_code());
        }
    });
}

pub fn package_json(data: &[u8]) {
    with_files(data, &["package.json"], |root| {
        if let Err(e) = vx::fuzzing::read_package_json(root, root) {
            assert_one_line(&e.to_string());
        }
        if let Err(e) = vx::fuzzing::PackageJson::read(&root.join("package.json")) {
            assert_one_line(&e.to_string());
        }
    });
}

/// The globs it lists are expanded too (in a workspace with one project).
pub fn pnpm_workspace(data: &[u8]) {
    let mut files = data.to_vec();
    files.extend_from_slice(b"\0{\"name\": \"a\"}");
    with_files(&files, &["pnpm-workspace.yaml", "packages/a/package.json"], |root| {
        match vx::fuzzing::read_pnpm_workspace(root) {
            Ok(globs) => {
                if let Err(e) = vx::fuzzing::expand_project_globs(root, &globs.unwrap_or_default()) {
                    assert_one_line(&e.to_string());
                }
            }
            Err(e) => assert_one_line(&e.to_string()),
        }
    });
}
