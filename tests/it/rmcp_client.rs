//! The official Rust SDK (rmcp) as a client of the reference server, over
//! stdio (rmcp's child-process transport) and Streamable HTTP, in each
//! protocol era rmcp speaks: a reference server is only a reference if real
//! clients work with it.
//!
//! rmcp's typed models drop what the tool-discovery extensions add: `Tool`
//! has no `groups` or `tags`, `ToolsCapability` has no `filtering` or
//! `search`, `ServerCapabilities` has no top-level `filtering`, and
//! `PaginatedRequestParams` has no `query` or `filter`, so an rmcp client can
//! neither see those fields nor send a filtered `tools/list`. The extension
//! methods go out as custom requests, whose answers are checked as JSON; the
//! typed parts are checked where rmcp keeps them.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest, CustomRequest,
    GetPromptRequestParams, Implementation, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ServerResult,
};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceError, ServiceExt};
use serde_json::{json, Value};

type Client = RunningService<RoleClient, ClientConfig>;

/// The eras rmcp 3 and the reference server both speak.
const ERAS: [ProtocolVersion; 3] = [
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2026_07_28,
];

/// The catalog the reference server serves by default: what its answers are
/// compared with.
fn catalog() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/catalogs/reference.json");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
}

fn names(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list
        .as_array()
        .unwrap_or_else(|| panic!("expected an array, got {list}"))
        .iter()
        .map(|item| {
            item["name"]
                .as_str()
                .unwrap_or_else(|| panic!("entry without a name: {item}"))
                .to_string()
        })
        .collect();
    names.sort();
    names
}

/// Connects an rmcp client in `era`: `initialize` for the stateful eras,
/// `server/discover` (no fallback) for 2026-07-28.
async fn connect<T, E, A>(transport: T, era: &ProtocolVersion) -> Client
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let mut config = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("mcp-conform-rmcp-interop", env!("CARGO_PKG_VERSION")),
    );
    config.protocol_version = era.clone();
    let client = if *era == ProtocolVersion::V_2026_07_28 {
        config
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![era.clone()],
                },
            )
            .await
    } else {
        config.serve(transport).await
    };
    let client = client.unwrap_or_else(|e| panic!("rmcp could not connect in {era}: {e}"));
    let negotiated = client
        .peer_info()
        .unwrap_or_else(|| panic!("no server info after connecting in {era}"))
        .protocol_version
        .clone();
    assert_eq!(negotiated, *era, "negotiated era");
    client
}

/// Sends an extension method as a custom request and returns its result as
/// JSON. rmcp parses every answer into its untagged `ServerResult`, so an
/// answer shaped like a typed result (`tools/search` answers `{tools: […]}`,
/// which parses as `ListToolsResult`) comes back as that type, with the
/// fields the type lacks already dropped.
async fn custom(client: &Client, method: &str, params: Value) -> Value {
    let answer = client
        .send_request(ClientRequest::CustomRequest(CustomRequest::new(
            method,
            Some(params),
        )))
        .await
        .unwrap_or_else(|e| panic!("{method}: {e}"));
    match answer {
        ServerResult::CustomResult(result) => result.0,
        typed => serde_json::to_value(&typed).unwrap_or_else(|e| panic!("{method}: {e}")),
    }
}

async fn exercise(client: &Client, era: &ProtocolVersion, how: &str) {
    let catalog = catalog();
    let stateful = *era != ProtocolVersion::V_2026_07_28;
    let at = format!("{how}, {era}");

    // Tools, one page at a time, as a client following nextCursor would.
    let mut tools = Vec::new();
    let mut cursor = None;
    let mut pages = 0;
    loop {
        let page = client
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await
            .unwrap_or_else(|e| panic!("tools/list ({at}): {e}"));
        pages += 1;
        assert!(pages <= 50, "tools/list never ends ({at})");
        tools.extend(page.tools);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert!(
        pages > 1,
        "the reference catalog spans several pages ({at})"
    );
    let listed: Value = serde_json::to_value(&tools).unwrap_or_else(|e| panic!("{e}"));
    // Every listed tool is the catalog's; the ones not listed are those the
    // catalog restricts to an audience (hidden from an ordinary client).
    let listed = names(&listed);
    for tool in catalog["tools"].as_array().into_iter().flatten() {
        let name = tool["name"].as_str().unwrap_or_default();
        let restricted = tool.get("audience").is_some();
        assert_eq!(
            listed.iter().any(|l| l == name),
            !restricted,
            "tool {name} (audience {}) in tools/list ({at})",
            tool["audience"]
        );
    }
    let all = client
        .list_all_tools()
        .await
        .unwrap_or_else(|e| panic!("list_all_tools ({at}): {e}"));
    assert_eq!(all.len(), tools.len(), "list_all_tools ({at})");
    // Typed out by rmcp: the tools/list entries carry `groups` and `tags` on
    // the wire (the custom tools/search below shows what remains of them).

    // Progressive disclosure: the tool_descriptions resource is listed, a
    // call before reading it is refused in the eras with sessions (the
    // refusal's data survives rmcp's ErrorData), and after the read the
    // call goes through.
    let resources = client
        .list_all_resources()
        .await
        .unwrap_or_else(|e| panic!("resources/list ({at}): {e}"));
    assert!(
        resources
            .iter()
            .any(|r| r.uri == "resource:///tool_descriptions"),
        "no tool_descriptions resource ({at})"
    );
    let call = || {
        let arguments = json!({"space_id": "spc_eng"});
        let Value::Object(arguments) = arguments else {
            unreachable!("a JSON object literal")
        };
        client.call_tool(CallToolRequestParams::new("space_get").with_arguments(arguments))
    };
    if stateful {
        match call().await {
            Err(ServiceError::McpError(error)) => {
                let data = error.data.unwrap_or_default();
                assert_eq!(data["code"], "TOOL_DESCRIPTION_REQUIRED", "{at}");
                assert_eq!(
                    data["resource_uri"], "resource:///tool_descriptions?tools=space_get",
                    "{at}"
                );
            }
            other => panic!("space_get before its description was read ({at}): {other:?}"),
        }
    }
    let description = client
        .read_resource(ReadResourceRequestParams::new(
            "resource:///tool_descriptions?tools=space_get",
        ))
        .await
        .unwrap_or_else(|e| panic!("resources/read tool_descriptions ({at}): {e}"));
    let description = serde_json::to_value(&description).unwrap_or_else(|e| panic!("{e}"));
    let text = description["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("tool description without text ({at}): {description}"));
    let full: Value = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("tool description is not JSON ({at}): {e}: {text}"));
    assert_eq!(full["space_get"]["name"], "space_get", "{at}");
    assert!(
        full["space_get"]["inputSchema"]["properties"]["space_id"].is_object(),
        "the full description carries the schema ({at}): {full}"
    );
    let result = call()
        .await
        .unwrap_or_else(|e| panic!("space_get after reading its description ({at}): {e}"));
    // The reference catalog has no data behind its tools, so the tool itself
    // may answer NOT_FOUND; what matters is that it ran, not refused.
    let shown = format!("{result:?}");
    assert!(
        !shown.contains("TOOL_DESCRIPTION_REQUIRED"),
        "space_get refused after reading its description ({at}): {shown}"
    );

    // An ordinary resource.
    let first = catalog["resources"][0]["uri"]
        .as_str()
        .unwrap_or_else(|| panic!("catalog resource without uri"))
        .to_string();
    let read = client
        .read_resource(ReadResourceRequestParams::new(first.clone()))
        .await
        .unwrap_or_else(|e| panic!("resources/read {first} ({at}): {e}"));
    assert!(!read.contents.is_empty(), "{first} is empty ({at})");

    // Prompts, and one of them rendered.
    let prompts = client
        .list_all_prompts()
        .await
        .unwrap_or_else(|e| panic!("prompts/list ({at}): {e}"));
    let listed = serde_json::to_value(&prompts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(names(&listed), names(&catalog["prompts"]), "prompts ({at})");
    let prompt = &catalog["prompts"][0];
    let mut arguments = serde_json::Map::new();
    for argument in prompt["arguments"].as_array().into_iter().flatten() {
        if argument["required"] == true {
            if let Some(name) = argument["name"].as_str() {
                arguments.insert(name.to_string(), json!("x"));
            }
        }
    }
    let name = prompt["name"].as_str().unwrap_or_default().to_string();
    let rendered = client
        .get_prompt(GetPromptRequestParams::new(name.clone()).with_arguments(arguments))
        .await
        .unwrap_or_else(|e| panic!("prompts/get {name} ({at}): {e}"));
    assert!(!rendered.messages.is_empty(), "prompt {name} ({at})");

    // The extension methods, as custom requests; groups/list pages hold 10
    // groups, so the 17 of the catalog take a cursor walk.
    let mut groups = Vec::new();
    let mut params = json!({});
    loop {
        let page = custom(client, "groups/list", params).await;
        groups.extend(page["groups"].as_array().cloned().unwrap_or_default());
        match page["nextCursor"].as_str() {
            Some(next) => params = json!({"cursor": next}),
            None => break,
        }
    }
    assert_eq!(
        names(&Value::Array(groups)),
        names(&catalog["groups"]),
        "groups/list ({at})"
    );
    let tags = custom(client, "tags/list", json!({})).await;
    assert_eq!(
        names(&tags["tags"]),
        names(&catalog["tags"]),
        "tags/list ({at})"
    );
    let found = custom(client, "tools/search", json!({"query": "space_get"})).await;
    assert_eq!(
        found["tools"][0]["name"], "space_get",
        "tools/search ranks the exact name first ({at}): {found}"
    );
    // A broader query: a full first page, each result explained by its own
    // listed entry (the reference's documentation ranks but never selects).
    // tools/search takes no filter (the search draft defines none), so
    // none is sent.
    let found = custom(client, "tools/search", json!({"query": "space"})).await;
    let hits = names(&found["tools"]);
    assert_eq!(hits.len(), 10, "a first page of 10 ({at}): {found}");
    for hit in &hits {
        let entry = catalog["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["name"] == hit.as_str())
            .unwrap_or_else(|| panic!("tools/search returned {hit}, not in the catalog ({at})"));
        let listed = ["name", "title", "description", "category", "tags"]
            .iter()
            .map(|k| entry[*k].to_string().to_lowercase())
            .collect::<String>();
        assert!(
            listed.contains("space"),
            "tools/search \"space\" returned {hit}, whose entry does not say space ({at})"
        );
    }
}

fn reference() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-conform"));
    command.arg("serve-reference");
    command
}

async fn rmcp_client_over_stdio() {
    for era in &ERAS {
        let transport = TokioChildProcess::new(
            tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-conform")).configure(|c| {
                c.arg("serve-reference");
            }),
        )
        .unwrap_or_else(|e| panic!("start the reference server: {e}"));
        let client = connect(transport, era).await;
        exercise(&client, era, "stdio").await;
        client
            .cancel()
            .await
            .unwrap_or_else(|e| panic!("close the stdio client: {e}"));
    }
}

/// The reference server over HTTP on a free loopback port, killed on drop.
struct HttpReference {
    child: Child,
    addr: SocketAddr,
}

impl HttpReference {
    fn start() -> Self {
        // Bind port 0 to learn a free port, then hand it to the server.
        let addr = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap_or_else(|e| panic!("find a free port: {e}"));
        let child = reference()
            .args(["--http", &addr.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start the reference server over HTTP: {e}"));
        let server = Self { child, addr };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(addr).is_err() {
            assert!(
                Instant::now() < deadline,
                "the reference server did not listen on {addr}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

impl Drop for HttpReference {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn rmcp_client_over_streamable_http() {
    let server = HttpReference::start();
    for era in &ERAS {
        let transport = StreamableHttpClientTransport::from_uri(server.url());
        let client = connect(transport, era).await;
        exercise(&client, era, "HTTP").await;
        client
            .cancel()
            .await
            .unwrap_or_else(|e| panic!("close the HTTP client: {e}"));
    }
}

/// Runs `test` on a runtime with two workers: rmcp's client runs its
/// transport on tasks of its own.
fn on_two_workers(test: impl std::future::Future<Output = ()>) {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"))
        .block_on(test);
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    vec![
        libtest_mimic::Trial::test("rmcp_client::rmcp_client_over_stdio", || {
            on_two_workers(rmcp_client_over_stdio());
            Ok(())
        }),
        libtest_mimic::Trial::test("rmcp_client::rmcp_client_over_streamable_http", || {
            on_two_workers(rmcp_client_over_streamable_http());
            Ok(())
        }),
    ]
}
