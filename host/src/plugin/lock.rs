//! Plugin pins in `vx.lock` at the workspace root: one `[plugins.NAME]`
//! table per plugin with the BLAKE3 of its bytes. Other tables in the file
//! belong to other parts of vx and are kept as they are (`toml_edit`).

use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, Item, Table, value};

/// The lock file's name, at the workspace root.
pub(crate) const LOCK_FILE: &str = "vx.lock";

/// Why `vx.lock` could not be read or written; the text names the file.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LockError {
    #[error("{}: {source}", path.display())]
    Parse { path: PathBuf, source: toml_edit::TomlError },
    #[error("could not read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{LOCK_FILE}: `plugins` is not a table")]
    NotATable,
    #[error("could not write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

/// One plugin's pin.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Pin {
    /// Workspace-relative path of the pinned file.
    pub path: String,
    pub blake3: String,
    pub size: u64,
    /// The interface it exports, e.g. `vx:plugin/report@0.1.0`.
    pub exports: String,
    pub plugin_version: String,
    pub requests: Vec<String>,
    /// A command plugin's one-line `about`, for `vx --help` without
    /// loading it.
    pub about: Option<String>,
}

pub(crate) fn lock_path(root: &Path) -> PathBuf {
    root.join(LOCK_FILE)
}

/// Reads `vx.lock`; a missing file is an empty document.
fn read_doc(root: &Path) -> Result<DocumentMut, LockError> {
    let path = lock_path(root);
    match std::fs::read_to_string(&path) {
        Ok(text) => text.parse::<DocumentMut>().map_err(|source| LockError::Parse { path, source }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(DocumentMut::new()),
        Err(source) => Err(LockError::Read { path, source }),
    }
}

/// The pin of plugin `name`, if `vx.lock` has one.
pub(crate) fn read_pin(root: &Path, name: &str) -> Result<Option<Pin>, LockError> {
    let doc = read_doc(root)?;
    let Some(table) = doc.get("plugins").and_then(|p| p.get(name)).and_then(Item::as_table_like) else {
        return Ok(None);
    };
    let text = |k: &str| table.get(k).and_then(Item::as_str).unwrap_or_default().to_string();
    let requests = table
        .get("requests")
        .and_then(Item::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    Ok(Some(Pin {
        path: text("path"),
        blake3: text("blake3"),
        size: table.get("size").and_then(Item::as_integer).map_or(0, |s| s.max(0) as u64),
        exports: text("exports"),
        plugin_version: text("plugin-version"),
        requests,
        about: table.get("about").and_then(Item::as_str).map(str::to_string),
    }))
}

/// Writes (or replaces) the pin of `name`, keeping the rest of the file.
pub(crate) fn write_pin(root: &Path, name: &str, pin: &Pin) -> Result<(), LockError> {
    let mut doc = read_doc(root)?;
    let plugins = doc.entry("plugins").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let Some(plugins) = plugins.as_table_mut() else {
        return Err(LockError::NotATable);
    };
    let mut table = Table::new();
    table["path"] = value(&pin.path);
    table["blake3"] = value(&pin.blake3);
    table["size"] = value(i64::try_from(pin.size).unwrap_or(i64::MAX));
    table["exports"] = value(&pin.exports);
    table["plugin-version"] = value(&pin.plugin_version);
    table["requests"] = value(pin.requests.iter().collect::<Array>());
    if let Some(about) = &pin.about {
        table["about"] = value(about);
    }
    plugins.insert(name, Item::Table(table));
    write_doc(root, &doc)
}

/// Records where the pinned plugin `name` came from (`vx plugin add
/// oci://…`): the reference as given and the manifest digest it resolved
/// to. `write_pin` replaces the whole table, so re-adding from a file
/// drops them.
pub(crate) fn write_pin_source(root: &Path, name: &str, source: &str, digest: &str) -> Result<(), LockError> {
    let mut doc = read_doc(root)?;
    if let Some(table) = doc.get_mut("plugins").and_then(|p| p.get_mut(name)).and_then(Item::as_table_mut) {
        table["source"] = value(source);
        table["source-digest"] = value(digest);
    }
    write_doc(root, &doc)
}

/// Removes the pin of `name`; `false` when there was none.
pub(crate) fn remove_pin(root: &Path, name: &str) -> Result<bool, LockError> {
    let mut doc = read_doc(root)?;
    let removed = doc.get_mut("plugins").and_then(Item::as_table_mut).and_then(|t| t.remove(name)).is_some();
    if removed {
        write_doc(root, &doc)?;
    }
    Ok(removed)
}

fn write_doc(root: &Path, doc: &DocumentMut) -> Result<(), LockError> {
    let path = lock_path(root);
    let tmp = root.join(format!(".{LOCK_FILE}.{}.tmp", std::process::id()));
    let mut text = doc.to_string();
    if !text.starts_with('#') {
        text = format!("# Written by vx; commit it. Plugin pins: `vx plugin add --force` re-pins.\n{text}");
    }
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|source| LockError::Write { path, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_round_trip_and_keep_other_tables() {
        let dir = tempfile_dir();
        std::fs::write(dir.join(LOCK_FILE), "# mine\n[projects.web]\nhash = \"x\" # keep\n").unwrap();
        let pin = Pin {
            path: ".vx/plugins/a.wasm".into(),
            blake3: "ab".into(),
            size: 3,
            exports: "vx:plugin/report@0.1.0".into(),
            plugin_version: "1.0.0".into(),
            requests: vec!["env=X".into()],
            about: Some("release notes since a tag".into()),
        };
        write_pin(&dir, "a", &pin).unwrap();
        assert_eq!(read_pin(&dir, "a").unwrap(), Some(pin));
        let text = std::fs::read_to_string(dir.join(LOCK_FILE)).unwrap();
        assert!(text.contains("hash = \"x\" # keep"), "{text}");
        assert!(remove_pin(&dir, "a").unwrap());
        assert_eq!(read_pin(&dir, "a").unwrap(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("vx-lock-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
