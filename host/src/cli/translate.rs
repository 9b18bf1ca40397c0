//! Flags people type from habit with Turborepo and Nx, translated to vx's
//! spelling with a one-line notice, or refused with the vx spelling when
//! there is no equivalent. Runs on the raw arguments before clap.
//!
//! | typed | becomes |
//! |-------|---------|
//! | `vx run-many -t build -p a,b` (nx) | `vx run build --filter a --filter b` |
//! | `vx affected -t test` (nx) | `vx run test --affected` |
//! | `vx turbo run …`, `vx nx run-many …` | the same without the tool's name |
//! | `-t X`, `--target X`, `--targets X,Y` | the tasks `X`, `Y` |
//! | `--scope X` (lerna/turbo 1) | `--filter X` |
//! | `-p X,Y`, `--projects X,Y` | `--filter X --filter Y` |
//! | `--exclude X` | `--filter !X` |
//! | `--since REV`, `--base REV` | `--affected=REV` |
//! | `--parallel=N` | `--concurrency N` |
//! | `--skip-nx-cache`, `--skip-cache` | `--force` |
//! | `--no-cache` (turbo: do not write) | `--cache local:r` |
//! | `--dry-run[=json]` (turbo) | `--dry[=json]` |
//!
//! Dropped with a notice: `--no-daemon`, `--daemon` (vx has no daemon),
//! bare `--parallel` (vx runs in parallel by default), `--nx-bail`
//! (vx's default). Refused: `--head`, `--nx-ignore-cycles`.
//! `--env-mode`, `--only` and `--ui` are vx's own flags, with turbo's
//! meaning, and pass as they are.

use crate::error::{Error, Result};

/// Rewrites `argv` (program name first); prints one notice per rewrite.
pub(crate) fn translate(argv: Vec<String>) -> Result<Vec<String>> {
    let Some((program, rest)) = argv.split_first().filter(|(_, rest)| !rest.is_empty()) else {
        return Ok(argv);
    };
    let (args, subcommand_affected) = translate_subcommand(rest.to_vec());
    let mut out = vec![program.clone()];
    if !matches!(args.first().map(String::as_str), Some("run" | "watch")) {
        out.extend(args);
        return Ok(out);
    }
    out.push(args[0].clone());
    let mut tasks = Vec::new();
    let mut i = 1;
    while i < args.len() {
        if args[i] == "--" {
            out.extend(args[i..].iter().cloned());
            break;
        }
        i = translate_flag(&args, i, &mut out, &mut tasks)?;
    }
    if subcommand_affected && !out.iter().any(|a| a.starts_with("--affected")) {
        out.push("--affected".into());
    }
    // Tasks given with -t go where positional tasks go.
    out.splice(2..2, tasks);
    Ok(out)
}

/// `vx turbo run …` and `vx nx run-many …` lose the tool's name; Nx's
/// `run-many` and `affected` become `run`. Says whether `affected` was.
fn translate_subcommand(mut args: Vec<String>) -> (Vec<String>, bool) {
    if matches!(args.first().map(String::as_str), Some("turbo" | "nx")) && args.len() > 1 {
        notice(&format!("`vx {} {}` is `vx {}`", args[0], args[1], args[1]));
        args.remove(0);
    }
    match args.first().map(String::as_str) {
        Some("run-many") => {
            notice("`run-many` is `vx run` (tasks with -t are kept)");
            args[0] = "run".into();
            (args, false)
        }
        Some("affected") => {
            notice("`affected` is `vx run --affected`");
            args[0] = "run".into();
            (args, true)
        }
        _ => (args, false),
    }
}

/// Translates the argument at `args[i]` into `out` (tasks named with
/// `-t` into `tasks`); returns the index of the next argument.
fn translate_flag(args: &[String], i: usize, out: &mut Vec<String>, tasks: &mut Vec<String>) -> Result<usize> {
    let arg = &args[i];
    let (name, inline) = match arg.split_once('=') {
        Some((n, v)) if n.starts_with('-') => (n, Some(v)),
        _ => (arg.as_str(), None),
    };
    if takes_value(name) {
        let (value, next) = match inline {
            Some(v) => (v.to_string(), i + 1),
            None => {
                let v = args
                    .get(i + 1)
                    .cloned()
                    .ok_or_else(|| Error::usage(format!("{name} expects a value")).with_hint("see `vx run --help`"))?;
                (v, i + 2)
            }
        };
        translate_valued(name, value, out, tasks);
        return Ok(next);
    }
    match name {
        "--parallel" => match inline {
            Some(v) => {
                notice(&format!("`--parallel={v}` is `--concurrency {v}`"));
                out.extend(["--concurrency".into(), v.to_string()]);
            }
            None => notice(
                "vx runs tasks in parallel by default (`--concurrency N` sets how many); `--parallel` is ignored",
            ),
        },
        "--skip-nx-cache" | "--skip-cache" => {
            notice(&format!("`{name}` is `--force`"));
            out.push("--force".into());
        }
        "--no-cache" => {
            notice("`--no-cache` (do not write the cache) is `--cache local:r`");
            out.extend(["--cache".into(), "local:r".into()]);
        }
        "--dry-run" => {
            let dry = inline.map_or_else(|| "--dry".to_string(), |v| format!("--dry={v}"));
            notice(&format!("`{arg}` is `{dry}`"));
            out.push(dry);
        }
        "--no-daemon" | "--daemon" | "--nx-bail" => {
            notice(&format!("`{arg}` has no effect in vx and is ignored"));
        }
        "--head" | "--nx-ignore-cycles" => return Err(no_equivalent(name)),
        _ => out.push(arg.clone()),
    }
    Ok(i + 1)
}

/// The habits that take a value, as `--flag V` or `--flag=V`.
fn takes_value(name: &str) -> bool {
    matches!(
        name,
        "-t" | "--target" | "--targets" | "--scope" | "-p" | "--projects" | "--exclude" | "--since" | "--base"
    )
}

fn translate_valued(name: &str, v: String, out: &mut Vec<String>, tasks: &mut Vec<String>) {
    match name {
        "-t" | "--target" | "--targets" => {
            notice(&format!("`{name} {v}` names the task(s) to run: `vx run {}`", v.replace(',', " ")));
            tasks.extend(v.split(',').filter(|t| !t.is_empty()).map(str::to_string));
        }
        "--scope" => {
            notice(&format!("`--scope {v}` is `--filter {v}`"));
            out.extend(["--filter".into(), v]);
        }
        "-p" | "--projects" => {
            notice(&format!("`{name} {v}` is one `--filter` per project"));
            for p in v.split(',').filter(|p| !p.is_empty()) {
                out.extend(["--filter".into(), p.to_string()]);
            }
        }
        "--exclude" => {
            notice(&format!("`--exclude {v}` is `--filter '!{v}'`"));
            for p in v.split(',').filter(|p| !p.is_empty()) {
                out.extend(["--filter".into(), format!("!{p}")]);
            }
        }
        _ => {
            notice(&format!("`{name} {v}` is `--affected={v}`"));
            out.push(format!("--affected={v}"));
        }
    }
}

/// The refusal of a habit vx has no equivalent for, with what to do instead.
fn no_equivalent(name: &str) -> Error {
    let (what, hint) = match name {
        "--head" => ("vx compares the working tree (uncommitted files included) with a base", "use --affected=BASE"),
        // `--nx-ignore-cycles`.
        _ => ("vx refuses dependency cycles", "remove the cycle the error names"),
    };
    Error::usage(format!("`{name}` has no vx equivalent: {what}")).with_hint(hint)
}

fn notice(text: &str) {
    eprintln!("vx: note: {text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(args: &[&str]) -> Vec<String> {
        let argv = std::iter::once("vx").chain(args.iter().copied()).map(str::to_string).collect();
        translate(argv).unwrap()[1..].to_vec()
    }

    #[test]
    fn nx_and_turbo_habits() {
        assert_eq!(t(&["run-many", "-t", "build", "-p", "a,b"]), ["run", "build", "--filter", "a", "--filter", "b"]);
        assert_eq!(t(&["affected", "-t", "test"]), ["run", "test", "--affected"]);
        assert_eq!(t(&["nx", "run-many", "--targets=build,test"]), ["run", "build", "test"]);
        assert_eq!(t(&["turbo", "run", "build", "--filter=web..."]), ["run", "build", "--filter=web..."]);
        assert_eq!(
            t(&["run", "build", "--scope", "web", "--since", "main"]),
            ["run", "build", "--filter", "web", "--affected=main"]
        );
        assert_eq!(t(&["run", "build", "--parallel=4"]), ["run", "build", "--concurrency", "4"]);
        assert_eq!(t(&["run", "build", "--parallel"]), ["run", "build"]);
        assert_eq!(t(&["run", "build", "--dry-run=json"]), ["run", "build", "--dry=json"]);
        assert_eq!(
            t(&["run", "build", "--no-cache", "--skip-nx-cache"]),
            ["run", "build", "--cache", "local:r", "--force"]
        );
        assert_eq!(t(&["show", "--scope", "x"]), ["show", "--scope", "x"], "only run and watch are translated");
        assert_eq!(t(&["run", "build", "--", "--scope"]), ["run", "build", "--", "--scope"]);
        assert_eq!(t(&["run", "dev", "--ui", "tui"]), ["run", "dev", "--ui", "tui"], "vx's own flag");
        assert_eq!(t(&["turbo", "run", "test", "--only"]), ["run", "test", "--only"], "turbo's --only is vx's");
    }

    #[test]
    fn refuses_what_has_no_equivalent() {
        let argv: Vec<String> = ["vx", "run", "build", "--head", "x"].iter().map(|s| s.to_string()).collect();
        let e = translate(argv).unwrap_err();
        assert!(e.message.contains("--head"), "{e}");
    }
}
