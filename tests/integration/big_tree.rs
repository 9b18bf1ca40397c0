//! A project big enough that its walk spreads over several threads and
//! its files are hashed in parts on several threads: the key's manifest
//! (kept in history) lists exactly every input file, in path order, each
//! with the BLAKE3 of its content, whichever thread walked or hashed it;
//! and one changed file changes its own digest and nothing else.

use std::path::Path;

use serde_json::Value;

use crate::common::TestEnv;

/// Directories and files per directory: 3,600 files, well past the
/// point where the walk and the hashing spread over threads.
const DIRS: usize = 36;
const PER_DIR: usize = 100;

/// Every file under `dir` but `out/`, as `(workspace path, BLAKE3 hex)`,
/// sorted by path: what the manifest must hold, found without vx.
fn expected(root: &Path, rel: &str) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut dirs = vec![rel.to_string()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(root.join(&dir)).unwrap() {
            let entry = entry.unwrap();
            let name = format!("{dir}/{}", entry.file_name().to_str().unwrap());
            if entry.file_type().unwrap().is_dir() {
                if name != format!("{rel}/out") {
                    dirs.push(name);
                }
            } else {
                let bytes = std::fs::read(root.join(&name)).unwrap();
                files.push((name, blake3::hash(&bytes).to_hex().to_string()));
            }
        }
    }
    files.sort();
    files
}

/// The file list of the manifest history keeps for `task`.
fn manifest_files(env: &TestEnv, task: &str) -> Vec<(String, String)> {
    let db = rusqlite::Connection::open(env.root().join(".vx/history.db")).unwrap();
    let json: String =
        db.query_row("SELECT manifest FROM manifests WHERE task = ?1", [task], |row| row.get(0)).unwrap();
    let manifest: Value = serde_json::from_str(&json).unwrap();
    serde_json::from_value(manifest["files"].clone()).unwrap()
}

#[test]
fn a_big_project_is_keyed_by_every_file_in_order_whichever_thread_hashed_it() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/big/vx.toml",
        "[tasks.build]\ncommand = \"mkdir -p out && touch out/done\"\noutputs = [\"out/**\"]\n",
    );
    // Names chosen so that the walk's order (directories as found) is not
    // the listing's: `d9` after `d10`, files at several depths.
    for d in 0..DIRS {
        for f in 0..PER_DIR {
            let rel = if f % 10 == 0 { format!("d{d}/deep/f{f}") } else { format!("d{d}/f{f}") };
            env.write(&format!("packages/big/src/{rel}.txt"), &format!("{d}:{f}"));
        }
    }
    env.write("packages/big/README", "top");

    env.vx(&["run", "build"]).assert_success();
    let files = manifest_files(&env, "big#build");
    assert_eq!(files.len(), DIRS * PER_DIR + 2, "every source file, README and vx.toml; nothing from out/");
    assert_eq!(files, expected(env.root(), "packages/big"));

    // One file changed: a miss whose manifest differs in that digest only.
    env.write("packages/big/src/d17/deep/f30.txt", "changed");
    let run = env.vx(&["run", "build"]);
    run.assert_success();
    assert_eq!(run.summary().cached, 0, "a changed input re-keys the task\n{run}");
    let changed = manifest_files(&env, "big#build");
    assert_eq!(changed, expected(env.root(), "packages/big"));
    let differing: Vec<&str> = files.iter().zip(&changed).filter(|(a, b)| a != b).map(|(a, _)| a.0.as_str()).collect();
    assert_eq!(differing, ["packages/big/src/d17/deep/f30.txt"]);

    // Unchanged: a hit.
    let again = env.vx(&["run", "build"]);
    again.assert_success();
    assert_eq!(again.summary().cached, 1, "{again}");
}
