//! Editing the root `vx.toml` in place with `toml_edit`, so its comments
//! and layout stay as the user wrote them: the `[plugins.NAME]` tables
//! that `vx plugin add` and `vx plugin remove` write. Writes are atomic
//! (a file beside, renamed over).

use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, Value, value};

use crate::error::{Error, ErrorKind};

/// The grants `vx plugin add` was given, as its flags spell them.
#[derive(Debug, Clone, Default)]
pub(crate) struct GrantFlags {
    pub env: Vec<String>,
    pub allow_hosts: Vec<String>,
    /// `DIR` (read-only) or `DIR:rw`.
    pub dirs: Vec<String>,
    pub allow_programs: Vec<String>,
    /// `--allow-clocks`: the host's real clocks.
    pub allow_clocks: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("failed to read {}: {source}", .path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: {source}", .path.display())]
    Parse { path: PathBuf, source: toml_edit::TomlError },
    #[error("vx.toml: `plugins` is not a table")]
    PluginsNotATable,
    #[error("vx.toml: `plugins.{name}` is not a table")]
    PluginNotATable { name: String },
    #[error("vx.toml: `plugins.{name}.{key}` is not an array")]
    GrantNotAList { name: String, key: &'static str },
    #[error("failed to write {}: {source}", .path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

impl From<EditError> for Error {
    fn from(e: EditError) -> Error {
        let hint = match &e {
            EditError::Read { .. } | EditError::Write { .. } => return Error::internal(e.to_string()),
            EditError::Parse { .. } => "fix vx.toml first",
            EditError::PluginsNotATable => "write it as [plugins.NAME] tables",
            EditError::PluginNotATable { .. } => "write it as [plugins.NAME]",
            EditError::GrantNotAList { .. } => "make it a list",
        };
        Error::new(ErrorKind::Config, e.to_string()).with_hint(hint)
    }
}

/// Writes `[plugins.NAME]` with `path = rel` and the grants (added to any
/// already there) into the root `vx.toml`, creating the file if needed;
/// returns the grants the table holds afterwards, as `key=value`.
pub(crate) fn add_plugin_table(
    root: &Path,
    name: &str,
    rel: &str,
    grants: &GrantFlags,
) -> Result<Vec<String>, EditError> {
    let path = root.join("vx.toml");
    let mut doc = match read(&path)? {
        Some(doc) => doc,
        None => DocumentMut::new(),
    };
    let plugins = doc.entry("plugins").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let plugins = plugins.as_table_mut().ok_or(EditError::PluginsNotATable)?;
    let table = plugins.entry(name).or_insert_with(|| Item::Table(Table::new()));
    let table = table.as_table_mut().ok_or_else(|| EditError::PluginNotATable { name: name.to_string() })?;
    table["path"] = value(rel);
    for (key, values) in grant_values(grants) {
        if values.is_empty() {
            continue;
        }
        let array = table.entry(key).or_insert_with(|| value(Array::new()));
        let array = array.as_array_mut().ok_or_else(|| EditError::GrantNotAList { name: name.to_string(), key })?;
        for v in values {
            let exists = array.iter().any(|x| x.to_string().trim() == v.to_string().trim());
            if !exists {
                array.push(v);
            }
        }
    }
    if grants.allow_clocks {
        table["allow-clocks"] = value(true);
    }
    let granted = granted_strings(table);
    write(root, &path, &doc)?;
    Ok(granted)
}

/// Removes `[plugins.NAME]` (and `[plugins]` when it is left empty) from
/// the root `vx.toml`; `false` when there was no such table or no file.
pub(crate) fn remove_plugin_table(root: &Path, name: &str) -> Result<bool, EditError> {
    let path = root.join("vx.toml");
    // An unreadable vx.toml has no table to remove: the pin and the copy
    // are still removed. One that does not parse is refused.
    let mut doc = match read(&path) {
        Ok(Some(doc)) => doc,
        Ok(None) | Err(EditError::Read { .. }) => return Ok(false),
        Err(e) => return Err(e),
    };
    let Some(plugins) = doc.get_mut("plugins").and_then(Item::as_table_mut) else { return Ok(false) };
    let removed = plugins.remove(name).is_some();
    if plugins.is_empty() {
        doc.remove("plugins");
    }
    if removed {
        write(root, &path, &doc)?;
    }
    Ok(removed)
}

/// The grant flags as the TOML values of each key: `DIR:rw` becomes
/// `{ path = "DIR", rw = true }`.
fn grant_values(grants: &GrantFlags) -> [(&'static str, Vec<Value>); 4] {
    let strings = |v: &[String]| v.iter().map(|s| Value::from(s.as_str())).collect::<Vec<_>>();
    let dirs = grants
        .dirs
        .iter()
        .map(|d| match d.strip_suffix(":rw") {
            Some(p) => {
                let mut t = InlineTable::new();
                t.insert("path", p.into());
                t.insert("rw", true.into());
                Value::InlineTable(t)
            }
            None => d.as_str().into(),
        })
        .collect();
    [
        ("env", strings(&grants.env)),
        ("allow-hosts", strings(&grants.allow_hosts)),
        ("dirs", dirs),
        ("allow-programs", strings(&grants.allow_programs)),
    ]
}

/// Grants in `[plugins.NAME]`, as `key=value` strings like plugin requests.
fn granted_strings(table: &Table) -> Vec<String> {
    let mut out = Vec::new();
    for key in ["env", "allow-hosts", "dirs", "allow-programs"] {
        for v in table.get(key).and_then(Item::as_array).into_iter().flatten() {
            let text = match v {
                Value::String(s) => s.value().clone(),
                Value::InlineTable(t) => {
                    t.get("path").or_else(|| t.get("program")).and_then(|p| p.as_str()).unwrap_or_default().to_string()
                }
                _ => continue,
            };
            out.push(format!("{key}={text}"));
        }
    }
    if table.get("allow-clocks").and_then(Item::as_bool) == Some(true) {
        out.push("allow-clocks=true".to_string());
    }
    out
}

/// The document in `path`; `None` when there is no file.
fn read(path: &Path) -> Result<Option<DocumentMut>, EditError> {
    let text = match crate::paths::read_config(path) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(None),
        Err(source) => return Err(EditError::Read { path: path.to_path_buf(), source }),
    };
    text.parse().map(Some).map_err(|source| EditError::Parse { path: path.to_path_buf(), source })
}

fn write(root: &Path, path: &Path, doc: &DocumentMut) -> Result<(), EditError> {
    let tmp = root.join(format!(".vx.toml.{}.tmp", std::process::id()));
    std::fs::write(&tmp, doc.to_string())
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|source| EditError::Write { path: path.to_path_buf(), source })
}
