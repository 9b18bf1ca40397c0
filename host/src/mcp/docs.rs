//! The documentation `vx mcp` offers as resources: the pages an agent
//! needs to write configuration and commands, embedded in the binary so
//! they always describe the vx that serves them.

/// One page: its URI, name, what it is for, media type and text.
#[derive(Debug)]
pub(super) struct Page {
    pub(super) uri: &'static str,
    pub(super) name: &'static str,
    pub(super) description: &'static str,
    pub(super) mime: &'static str,
    pub(super) text: &'static str,
}

/// Every page, in the order a client lists them.
pub(super) const PAGES: &[Page] = &[
    Page {
        uri: "vx://docs/agents",
        name: "agents",
        description: "Working in a vx workspace as an agent: the MCP tools, what to call when, and the run tool's result",
        mime: "text/markdown",
        text: include_str!("../../../docs/agents.md"),
    },
    Page {
        uri: "vx://docs/config",
        name: "config",
        description: "The vx.toml reference: workspace, projects, tasks, inputs, outputs, tags and boundaries",
        mime: "text/markdown",
        text: include_str!("../../../docs/config.md"),
    },
    Page {
        uri: "vx://docs/cli",
        name: "cli",
        description: "Every vx command and flag",
        mime: "text/markdown",
        text: include_str!("../../../docs/cli.md"),
    },
    Page {
        uri: "vx://docs/cache",
        name: "cache",
        description: "What a task's cache key covers, and when a run is a hit",
        mime: "text/markdown",
        text: include_str!("../../../docs/cache.md"),
    },
    Page {
        uri: "vx://schema/vx-toml.json",
        name: "vx-toml-schema",
        description: "The JSON Schema of vx.toml",
        mime: "application/schema+json",
        text: include_str!("../../../docs/schema/vx-toml.json"),
    },
];

/// The page at `uri`.
pub(super) fn page(uri: &str) -> Option<&'static Page> {
    PAGES.iter().find(|p| p.uri == uri)
}
