//! The dashboard's one page: the shared styles and run view of the HTML
//! report (`report::html`) plus the dashboard's own script, all inlined,
//! so the page makes no request but to the API on the same origin.

use crate::report::html::{RUN_SCRIPT, STYLE};

const TEMPLATE: &str = include_str!("assets/dashboard.html");
const SCRIPT: &str = include_str!("assets/dashboard.js");

/// The page, the same for every request.
pub(crate) fn render() -> String {
    // Filled from the bottom up, as the report's page is: no asset spells
    // a placeholder, and each is replaced once.
    TEMPLATE.replacen("{{DASHBOARD}}", SCRIPT, 1).replacen("{{SCRIPT}}", RUN_SCRIPT, 1).replacen("{{STYLE}}", STYLE, 1)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_page_is_whole_and_fetches_nothing_from_elsewhere() {
        let page = super::render();
        assert!(!page.contains("{{"), "every placeholder is filled");
        assert!(!page.contains(" src=") && !page.contains(" href=\"http") && !page.contains("@import"));
        assert!(!page.contains("//cdn") && !page.contains("https://"), "no request leaves the machine");
        assert!(page.contains("vx.renderRun") && page.contains("vx.dashboard"));
    }
}
