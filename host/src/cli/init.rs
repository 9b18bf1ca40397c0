//! `vx init`: write `vx.toml` files from a Turborepo, Nx or moon workspace,
//! and say what did not translate. Existing files are never overwritten
//! without `--force`; nothing is written when any would be refused.

use std::io::Write;
use std::path::Path;

use clap::Args;

use crate::config::load_workspace;
use crate::error::{Error, Result};
use crate::init::{RenderedFile, SourceKind, detect, render, translate};

const INIT_HELP: &str = "Examples:
  vx init                  translate turbo.json, nx.json or .moon/ at the current directory
  vx init --dry            print the files instead of writing them
  vx init --from nx        pick the source when several tools are configured
  vx init --force          overwrite existing vx.toml files";

/// Write vx.toml files from a Turborepo, Nx or moon workspace.
#[derive(Debug, Args)]
#[command(after_help = INIT_HELP)]
pub struct InitArgs {
    /// The configuration to read: `turbo`, `nx` or `moon` (default: the one present).
    #[arg(long, value_name = "TOOL")]
    pub from: Option<String>,

    /// Print what would be written; write nothing.
    #[arg(long)]
    pub dry: bool,

    /// Overwrite existing vx.toml files.
    #[arg(long)]
    pub force: bool,
}

pub fn cmd_init(args: InitArgs, cwd: &Path) -> Result<u8> {
    let kind = pick_source(cwd, args.from.as_deref())?;
    let plan = translate(cwd, kind)?;
    let files = render(&plan);
    let mut out = std::io::stdout().lock();
    if args.dry {
        for file in &files {
            let _ = writeln!(out, "--- {} (would write)\n{}", file.path, file.text);
        }
    } else {
        refuse_existing(cwd, &files, args.force)?;
        for file in &files {
            write_file(cwd, file)?;
            let _ = writeln!(out, "wrote {}", file.path);
        }
    }
    for note in &plan.notes {
        let _ = writeln!(out, "not translated: {note}");
    }
    let verb = if args.dry { "would write" } else { "wrote" };
    let _ = writeln!(
        out,
        "vx init: {verb} {} file(s) from {}; {} setting(s) not translated",
        files.len(),
        kind.marker(),
        plan.notes.len()
    );
    drop(out);
    if !args.dry {
        load_workspace(cwd).map_err(Error::from).map_err(|e| {
            Error::config(format!("the written configuration does not load: {e}"))
                .with_hint("this is a vx init bug; fix the vx.toml it names by hand and report it")
        })?;
    }
    Ok(0)
}

fn pick_source(root: &Path, from: Option<&str>) -> Result<SourceKind> {
    if let Some(name) = from {
        return SourceKind::parse(name).ok_or_else(|| {
            Error::usage(format!("--from expects turbo, nx or moon, got `{name}`")).with_hint("see `vx init --help`")
        });
    }
    match detect(root)[..] {
        [kind] => Ok(kind),
        [] => Err(Error::usage(format!("no turbo.json, nx.json or .moon/workspace.yml in {}", root.display()))
            .with_hint("run `vx init` at the root of a Turborepo, Nx or moon workspace")),
        ref several => {
            let names: Vec<&str> = several.iter().map(|k| k.marker()).collect();
            Err(Error::usage(format!("several configurations found ({})", names.join(", ")))
                .with_hint("pick one with --from turbo|nx|moon"))
        }
    }
}

fn refuse_existing(root: &Path, files: &[RenderedFile], force: bool) -> Result<()> {
    if force {
        return Ok(());
    }
    let existing: Vec<&str> = files.iter().filter(|f| root.join(&f.path).exists()).map(|f| f.path.as_str()).collect();
    match existing.as_slice() {
        [] => Ok(()),
        [one] => Err(Error::usage(format!("{one} already exists; nothing was written"))
            .with_hint("pass --force to overwrite it, or --dry to see what would be written")),
        [first, rest @ ..] => Err(Error::usage(format!(
            "{first} and {} more vx.toml files already exist; nothing was written",
            rest.len()
        ))
        .with_hint("pass --force to overwrite them, or --dry to see what would be written")),
    }
}

/// Writes beside the target and renames over it, so a reader never sees
/// half a file.
fn write_file(root: &Path, file: &RenderedFile) -> Result<()> {
    let path = root.join(&file.path);
    let tmp = path.with_file_name(".vx.toml.init-tmp");
    std::fs::write(&tmp, &file.text).map_err(|e| Error::io(format_args!("write {}", tmp.display()), e))?;
    std::fs::rename(&tmp, &path).map_err(|e| Error::io(format_args!("write {}", path.display()), e))
}
