//! Replays every input kept in the tree through its target's body, without
//! instrumentation: the seed corpus (`corpus/TARGET/`) and the inputs that
//! once crashed a target (`regressions/TARGET/`). A regression of any fix
//! fails here in an ordinary `cargo test`, with no fuzz build.

use std::path::Path;

#[test]
fn every_kept_input_passes_its_target() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut failed = Vec::new();
    let mut replayed = 0;
    for (name, body) in vx_fuzz::TARGETS {
        for kind in ["corpus", "regressions"] {
            let dir = here.join(kind).join(name);
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let data = std::fs::read(entry.path()).expect("a kept input reads");
                replayed += 1;
                if std::panic::catch_unwind(|| body(&data)).is_err() {
                    failed.push(format!("{kind}/{name}/{}", entry.file_name().to_string_lossy()));
                }
            }
        }
    }
    assert!(failed.is_empty(), "inputs that fail their target: {failed:?}");
    assert!(replayed >= vx_fuzz::TARGETS.len(), "only {replayed} inputs replayed: is the corpus there?");
}

#[test]
fn every_target_has_a_seed_corpus() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let empty: Vec<&str> = vx_fuzz::TARGETS
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| std::fs::read_dir(here.join("corpus").join(name)).ok().and_then(|mut d| d.next()).is_none())
        .collect();
    assert!(empty.is_empty(), "targets without seeds: {empty:?}");
}
