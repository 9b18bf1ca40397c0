//! The built-in `html` reporter (`--report html`): one self-contained
//! file, for CI artifacts, with the run's timeline (a lane per slot, hits
//! light, the critical path outlined), its task table and each task's
//! detail on a click. The page embeds the run's summary document
//! (`--summarize`'s, `docs/schema/run-summary.v1.json`) and draws it with
//! the same script and styles as `vx dashboard`: no network, no CDN.

use serde_json::Value;

const TEMPLATE: &str = include_str!("assets/report.html");
/// The styles and the run view, shared with the dashboard.
pub(crate) const STYLE: &str = include_str!("assets/style.css");
pub(crate) const RUN_SCRIPT: &str = include_str!("assets/run.js");

/// The page for a run's summary document.
pub(crate) fn render(doc: &Value) -> String {
    let title = doc["invocation"]["command"].as_str().unwrap_or("vx run");
    // Filled from the bottom up: each placeholder comes before all the
    // text inserted so far, so its first match is the template's own, even
    // when a task id spells a placeholder.
    TEMPLATE
        .replacen("{{SCRIPT}}", RUN_SCRIPT, 1)
        .replacen("{{DATA}}", &script_json(doc), 1)
        .replacen("{{STYLE}}", STYLE, 1)
        .replacen("{{TITLE}}", &escape_html(title), 1)
}

/// JSON that is safe inside `<script>`: `<` is written `\u003c`, so no
/// string in it can close the element or open a comment.
pub(crate) fn script_json(doc: &Value) -> String {
    serde_json::to_string(doc).expect("a JSON value serializes").replace('<', "\\u003c")
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_cannot_close_its_script_and_the_title_is_escaped() {
        let doc = serde_json::json!({"invocation": {"command": "vx run <b>"}, "tasks": [{"id": "a#</script><x>"}]});
        let page = render(&doc);
        assert!(page.contains("<title>vx run &lt;b&gt;</title>"), "{page}");
        assert_eq!(page.matches("</script>").count(), 2, "only the page's own two scripts close");
        assert!(page.contains(r"a#\u003c/script>\u003cx>"));
        assert!(!page.contains("{{"), "every placeholder is filled");
        assert!(!page.contains(" src=") && !page.contains(" href="), "nothing is fetched");
        let spelled = serde_json::json!({"invocation": {"command": "{{STYLE}}"}, "tasks": [{"id": "{{SCRIPT}}"}]});
        let page = render(&spelled);
        assert_eq!(page.matches("vx.renderRun(").count(), 1, "the script is in once");
        assert!(page.contains("<title>{{STYLE}}</title>"), "a title that spells a placeholder stays as it is");
    }
}
