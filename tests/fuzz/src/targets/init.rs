//! The configurations of other tools that `vx init` translates: turbo.json,
//! Nx's nx.json and project.json, moon's workspace, tasks and project
//! files, each with the `package.json` files they name. A plan that reads
//! is rendered to `vx.toml` text too, as `vx init --dry` prints it.

use vx::fuzzing::SourceKind;

use crate::assert_one_line;
use crate::files::with_files;

fn translate(data: &[u8], kind: SourceKind, names: &[&str]) {
    with_files(data, names, |root| match vx::fuzzing::translate_init(root, kind) {
        Ok(plan) => {
            let _ = vx::fuzzing::render_init(&plan);
        }
        Err(e) => assert_one_line(&e.to_string()),
    });
}

pub fn init_turbo(data: &[u8]) {
    translate(
        data,
        SourceKind::Turbo,
        &["turbo.json", "package.json", "packages/a/package.json", "packages/a/turbo.json", "packages/b/package.json"],
    );
}

pub fn init_nx(data: &[u8]) {
    translate(
        data,
        SourceKind::Nx,
        &["nx.json", "package.json", "packages/a/project.json", "packages/a/package.json", "packages/b/package.json"],
    );
}

pub fn init_moon(data: &[u8]) {
    translate(
        data,
        SourceKind::Moon,
        &[
            ".moon/workspace.yml",
            ".moon/tasks.yml",
            "packages/a/moon.yml",
            "packages/a/package.json",
            "packages/b/moon.yml",
        ],
    );
}
