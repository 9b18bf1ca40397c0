//! How a task is scheduled: `resources` (its share of the run's cpu and
//! memory budgets), `mutex` (a name no two running tasks may hold at once)
//! and `priority` (which ready task starts first), checked with spans.
//!
//! ```toml
//! resources = { memory = "2GiB", cpus = 2 }
//! mutex = "db"
//! priority = "high"
//! ```

use toml::Spanned;

use super::diag::{Source, did_you_mean};
use super::duration::parse_size;
use super::error::Diagnostic;
use super::model::{Priority, Resources};
use super::raw::{RawResources, RawTask};

/// The largest `cpus` a task may ask for: far beyond any machine, small
/// enough that thousandths of it never overflow a sum.
const MAX_CPUS: f64 = 1_000_000.0;

/// `resources`, `mutex` and `priority` of one task, checked.
pub(crate) fn task_schedule(
    raw: &RawTask,
    source: &Source,
) -> Result<(Resources, Option<String>, Priority), Diagnostic> {
    let resources = raw.resources.as_ref().map(|r| resources(r, source)).transpose()?.unwrap_or_default();
    let mutex = raw.mutex.as_ref().map(|m| mutex(m, source)).transpose()?;
    let priority = raw.priority.as_ref().map(|p| priority(p, source)).transpose()?.unwrap_or_default();
    Ok((resources, mutex, priority))
}

fn resources(raw: &Spanned<RawResources>, source: &Source) -> Result<Resources, Diagnostic> {
    let mut out = Resources::default();
    let r = raw.get_ref();
    if let Some(memory) = &r.memory {
        out.memory = parse_size(memory.get_ref()).map_err(|m| {
            source
                .error(Some(memory.span()), format!("`resources.memory`: {m}"))
                .with_hint("write the memory the task needs at its peak, as in `memory = \"2GiB\"`")
        })?;
    }
    if let Some(cpus) = &r.cpus {
        let wrong = |got: String| {
            source
                .error(Some(cpus.span()), format!("`resources.cpus` must be a number of cpus above 0, got {got}"))
                .with_hint("write `cpus = 2` for a task that keeps two cores busy, or `cpus = 0.5` for a light one")
        };
        let value = match cpus.get_ref() {
            toml::Value::Integer(i) => *i as f64,
            toml::Value::Float(f) => *f,
            other => return Err(wrong(other.to_string())),
        };
        if !(value > 0.0 && value <= MAX_CPUS) {
            return Err(wrong(cpus.get_ref().to_string()));
        }
        out.millicpus = ((value * 1000.0).round() as u64).max(1);
    }
    Ok(out)
}

/// A mutex name is a word (letters, digits, `.`, `_`, `-`): it names a lock
/// file shared by every vx on the machine.
fn mutex(raw: &Spanned<String>, source: &Source) -> Result<String, Diagnostic> {
    let name = raw.get_ref();
    let ok = !name.is_empty()
        && name.len() <= 100
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && !name.starts_with('.');
    if !ok {
        return Err(source
            .error(Some(raw.span()), format!("invalid mutex name `{name}`"))
            .with_hint("a mutex is a name of letters, digits, `.`, `_` and `-`, as in `mutex = \"db\"`"));
    }
    Ok(name.clone())
}

fn priority(raw: &Spanned<String>, source: &Source) -> Result<Priority, Diagnostic> {
    match raw.get_ref().as_str() {
        "low" => Ok(Priority::Low),
        "normal" => Ok(Priority::Normal),
        "high" => Ok(Priority::High),
        other => {
            let hint = did_you_mean(other, ["low", "normal", "high"]);
            Err(source
                .error(Some(raw.span()), format!("unknown priority `{other}`{hint}"))
                .with_hint("`priority` is `\"low\"`, `\"normal\"` (the default) or `\"high\"`"))
        }
    }
}
