//! The MCP server: its tools (each a thin call into `listing`, `answers`
//! or `run_tool`), the documentation resources, and the instructions a
//! client shows its model.
//!
//! A tool that fails for a reason the agent can act on (an unknown task, a
//! broken configuration, a bad revision) answers with `isError` and vx's
//! own one-line message, as the protocol asks for tool errors, so the agent
//! reads it; only a malformed request is a protocol error.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource, ResourceContents,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde_json::Value;

use super::params::{AffectedParams, FailedLogParams, ProjectsParams, RunsParams, SelectionParams, TaskParams};
use super::{answers, docs, failed, listing, run_tool};

/// What the client shows its model about this server.
const INSTRUCTIONS: &str = "vx runs the tasks of this monorepo in dependency order and caches them. \
Start with list_projects; show_task gives a task's resolved command and cache key; affected says what a \
change selects and why; plan is `vx run --dry=json`; last_runs and failed_log say what failed and why \
(the whole log). run_tasks runs tasks when the server was started with --allow-run. The resource \
vx://docs/agents explains each tool.";

/// The `vx mcp` server of one workspace.
#[derive(Clone)]
pub(crate) struct VxServer {
    root: Arc<PathBuf>,
    state_dir: Arc<PathBuf>,
    tool_router: ToolRouter<VxServer>,
}

impl VxServer {
    /// The server of the workspace at `root` (state in `state_dir`, `.vx`);
    /// `run_tasks` is offered only when `allow_run`.
    pub(crate) fn new(root: PathBuf, state_dir: PathBuf, allow_run: bool) -> VxServer {
        let mut tool_router = Self::tool_router();
        if !allow_run {
            tool_router.remove_route("run_tasks");
        }
        VxServer { root: Arc::new(root), state_dir: Arc::new(state_dir), tool_router }
    }
}

impl std::fmt::Debug for VxServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VxServer").field("root", &self.root).finish_non_exhaustive()
    }
}

/// `work`, unless the client cancels the request first: the future is
/// then dropped, and with it any child vx, which gets SIGTERM
/// (`guard::VxChild`). rmcp only signals a cancellation; it does not stop
/// the handler.
async fn unless_cancelled(
    context: &RequestContext<RoleServer>,
    work: impl std::future::Future<Output = Result<Value, String>>,
) -> Result<Value, String> {
    tokio::select! {
        result = work => result,
        () = context.ct.cancelled() => Err("cancelled by the client".to_string()),
    }
}

/// A tool's answer: the value as structured content (and as text, for
/// clients that read only text), or the error as an `isError` result.
fn answer(result: Result<Value, String>) -> Result<CallToolResult, ErrorData> {
    Ok(match result {
        Ok(value) => CallToolResult::structured(value),
        Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
    })
}

#[tool_router]
impl VxServer {
    #[tool(
        description = "The workspace's projects: name, directory, tags, dependencies and tasks (with descriptions). \
        `filter` narrows them as `vx run --filter` does; `detail` gives each task's command, dependencies, inputs, outputs and env.",
        annotations(read_only_hint = true)
    )]
    async fn list_projects(&self, Parameters(p): Parameters<ProjectsParams>) -> Result<CallToolResult, ErrorData> {
        let root = self.root.clone();
        let listed = tokio::task::spawn_blocking(move || listing::list_projects(&root, &p).map_err(|e| e.to_string()))
            .await
            .unwrap_or_else(|e| Err(format!("the listing stopped: {e}")));
        answer(listed)
    }

    #[tool(
        description = "One task as `vx run` would run it: the resolved command, directory, dependencies, inputs, outputs, \
        env, its cache key and whether that key is cached (`cache_status`).",
        annotations(read_only_hint = true)
    )]
    async fn show_task(
        &self,
        Parameters(p): Parameters<TaskParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        answer(unless_cancelled(&context, answers::show_task(&self.root, &p)).await)
    }

    #[tool(
        description = "The tasks a change selects (`vx run TASKS --affected=BASE`), each with the reason: the changed file \
        that is one of its inputs, its manifest, a moved lockfile entry, or the affected dependency.",
        annotations(read_only_hint = true)
    )]
    async fn affected(
        &self,
        Parameters(p): Parameters<AffectedParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        answer(unless_cancelled(&context, answers::affected(&self.root, &p)).await)
    }

    #[tool(
        description = "The newest runs (`vx history`): each run's command, time, exit code and counts of failed, cached \
        and run tasks.",
        annotations(read_only_hint = true)
    )]
    async fn last_runs(
        &self,
        Parameters(p): Parameters<RunsParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        answer(unless_cancelled(&context, answers::last_runs(&self.root, &p)).await)
    }

    #[tool(
        description = "The whole log of a task's failed attempt, kept in history: of its latest failed run, or of `run`. \
        Says when the log was cut to its bound.",
        annotations(read_only_hint = true)
    )]
    async fn failed_log(&self, Parameters(p): Parameters<FailedLogParams>) -> Result<CallToolResult, ErrorData> {
        let state = self.state_dir.clone();
        let found = tokio::task::spawn_blocking(move || failed::failed_log(&state, &p))
            .await
            .unwrap_or_else(|e| Err(format!("the lookup stopped: {e}")));
        answer(found)
    }

    #[tool(
        description = "Why a task would run or be a cache hit (`vx why`): its key, the key of its last run, and what \
        changed between them (files, env, dependencies, command).",
        annotations(read_only_hint = true)
    )]
    async fn why(
        &self,
        Parameters(p): Parameters<TaskParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        answer(unless_cancelled(&context, answers::why(&self.root, &p)).await)
    }

    #[tool(
        description = "The plan of a `vx run` without running it (`--dry=json`): every task in order with its command, \
        dependencies, key, cache status and predicted time.",
        annotations(read_only_hint = true)
    )]
    async fn plan(
        &self,
        Parameters(p): Parameters<SelectionParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        answer(unless_cancelled(&context, answers::plan(&self.root, &p)).await)
    }

    #[tool(
        description = "Run tasks (`vx run`), dependencies first, with the cache. Per task: status, cache outcome, \
        duration, exit code, the last lines of its log and the file with all of it.",
        annotations(read_only_hint = false, destructive_hint = false)
    )]
    async fn run_tasks(
        &self,
        Parameters(p): Parameters<SelectionParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        answer(unless_cancelled(&context, run_tool::run_tasks(&self.root, &self.state_dir, &p)).await)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for VxServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("vx", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = docs::PAGES
            .iter()
            .map(|p| {
                Resource::new(p.uri, p.name)
                    .with_description(p.description)
                    .with_mime_type(p.mime)
                    .with_size(p.text.len() as u64)
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let Some(page) = docs::page(&request.uri) else {
            let known: Vec<&str> = docs::PAGES.iter().map(|p| p.uri).collect();
            return Err(ErrorData::resource_not_found(
                format!("no resource `{}`; the resources are {}", request.uri, known.join(", ")),
                None,
            ));
        };
        let contents = ResourceContents::text(page.text, page.uri).with_mime_type(page.mime);
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// Serves the workspace at `root` on stdin and stdout until the client
/// closes them.
pub(crate) async fn serve(root: PathBuf, state_dir: PathBuf, allow_run: bool) -> crate::error::Result<()> {
    let server = VxServer::new(root, state_dir, allow_run);
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| crate::Error::usage(format!("the MCP client did not start a session: {e}")))?;
    running.waiting().await.map_err(|e| crate::Error::internal(format!("the MCP session ended badly: {e}")))?;
    Ok(())
}
