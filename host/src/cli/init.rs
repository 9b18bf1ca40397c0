//! `vx init`: write `vx.toml` files from a Turborepo, Nx or moon workspace,
//! and say what did not translate. Existing files are never overwritten
//! without `--force`; nothing is written when any would be refused. The
//! work is `init`'s; this file prints it or has it written.

use std::io::Write;
use std::path::Path;

use clap::Args;
use clap::ValueEnum;
use clap::builder::PossibleValue;

use super::choice::{Choice, choice};
use crate::error::Result;
use crate::init::{
    SourceKind, check_written, choose_source, refuse_existing, render, translate, with_schema_comment, write_file,
};

const INIT_HELP: &str = "Examples:
  vx init                  translate turbo.json, nx.json or .moon/ at the current directory
  vx init --dry            print the files instead of writing them
  vx init --from nx        pick the source when several tools are configured
  vx init --force          overwrite existing vx.toml files";

/// Write vx.toml files from a Turborepo, Nx or moon workspace.
#[derive(Debug, Args)]
#[command(after_help = INIT_HELP)]
pub(crate) struct InitArgs {
    /// The configuration to read: `turbo`, `nx` or `moon` (default: the one present).
    #[arg(long, value_name = "TOOL", value_parser = choice::<SourceKind>())]
    pub from: Option<SourceKind>,

    /// Print what would be written; write nothing.
    #[arg(long)]
    pub dry: bool,

    /// Overwrite existing vx.toml files.
    #[arg(long)]
    pub force: bool,
}

impl Choice for SourceKind {
    const WANTS: &'static str = "turbo, nx or moon";
}

impl ValueEnum for SourceKind {
    fn value_variants<'a>() -> &'a [Self] {
        &SourceKind::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name()))
    }
}

pub(crate) fn cmd_init(args: InitArgs, cwd: &Path) -> Result<u8> {
    let kind = choose_source(cwd, args.from)?;
    let plan = translate(cwd, kind)?;
    let files = with_schema_comment(render(&plan));
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
    for difference in &plan.differences {
        let _ = writeln!(out, "differs from {}: {difference}", kind.name());
    }
    // Translated as far as they go; a run that includes one fails with
    // this line, as the source tool's would.
    for broken in &plan.broken {
        let what = broken.task.as_ref().map_or_else(|| broken.project.clone(), |t| format!("{}#{t}", broken.project));
        let _ = writeln!(out, "refused by {} when a run includes {what}: {}", kind.name(), broken.why);
    }
    if !args.dry
        && let Some(line) = ignore_vx_dir(cwd)
    {
        let _ = writeln!(out, "{line}");
    }
    let verb = if args.dry { "would write" } else { "wrote" };
    let _ = writeln!(
        out,
        "vx init: {verb} {} file(s) from {}; {} setting(s) not translated",
        files.len(),
        plan.source,
        plan.notes.len()
    );
    drop(out);
    if !args.dry {
        check_written(cwd)?;
    }
    Ok(0)
}

/// Adds `.vx/` (the cache, history and locks) to the root `.gitignore`
/// unless a line already names it, as `vx init` users expect their
/// tool's state to be ignored; the line to print, when it wrote.
fn ignore_vx_dir(root: &Path) -> Option<String> {
    let path = root.join(".gitignore");
    let text = crate::paths::read_config(&path).ok()?.unwrap_or_default();
    let named = text.lines().map(str::trim).any(|l| matches!(l, ".vx" | ".vx/" | "/.vx" | "/.vx/" | ".vx/*"));
    if named {
        return None;
    }
    let sep = if text.is_empty() || text.ends_with('\n') { "" } else { "\n" };
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path).ok()?;
    file.write_all(format!("{sep}.vx/\n").as_bytes()).ok()?;
    Some(format!("added .vx/ to {}", if text.is_empty() { ".gitignore (new)" } else { ".gitignore" }))
}
