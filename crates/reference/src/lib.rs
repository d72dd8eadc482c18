//! The reference server (`mcp-conform serve-reference`): every profile the
//! harness checks, implemented correctly, in every protocol era, with
//! injectable faults.
//!
//! Layers: `catalog` (file format) → `live` (one immutable generation with
//! lazily built `index` / `filter` structures) → `handlers` (one module per
//! profile) → `dispatch` (envelope, era, method table) → `stdio` (the
//! transport). Transports call [`Server::handle`] with a [`SessionState`].
//!
//! The handlers implement the correct behaviour only. A server is built
//! from a `policy::Policy` (decisions, the specification's by default) and
//! a `server::Layer` (rewrites, none by default); `faults` builds both from
//! the injectable defects, which are declared there, one module per
//! profile, and which nothing else names.

pub mod args;
pub mod bitset;
pub mod catalog_file;
pub mod catalog_gen;
pub mod cursor;
pub mod dispatch;
pub mod error;
pub mod faults;
pub mod filter;
pub mod fuzzing;
pub mod handlers;
pub mod http;
pub mod in_process;
pub mod index;
pub mod live;
pub mod params;
pub mod policy;
pub mod rate;
pub mod served_era;
pub mod server;
pub mod session;
pub mod shared_auth;
pub mod stdio;
pub mod store;
pub mod text;

pub use catalog_file::{Catalog, CatalogError};
pub use faults::{Config, Fault, FaultTrace, Faults};
pub use server::{Server, Settings};
pub use session::{Change, SessionState};

use std::path::{Path, PathBuf};

/// The catalog served when `--catalog` is not given: the reference catalog.
pub const DEFAULT_CATALOG: &str = include_str!("../../../fixtures/catalogs/reference.json");

/// `mcp-conform serve-reference` options.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Catalog file to serve (format mcp-conform/catalog@1); default: the embedded reference catalog.
    #[arg(long, value_name = "FILE")]
    pub catalog: Option<PathBuf>,
    /// Inject a documented defect (repeatable); `--fault help` lists them.
    #[arg(long = "fault", value_name = "NAME")]
    pub faults: Vec<String>,
    /// Enable the `conform/mutate` control hook (advertised as capabilities.experimental["mcp-conform/control"]).
    #[arg(long)]
    pub control: bool,
    /// Send the client a ping request of the server's own before each tools/list answer, in
    /// the stateful eras (MCP 2025-06-18 and 2025-11-25 let either side ping), so that a
    /// client's answer to it can be checked.
    #[arg(long)]
    pub ping_client: bool,
    /// Send notifications/tools/list_changed once per session, before the answer to its first
    /// tools/list that carries a query or filter, in the stateful eras (for client scenarios: a
    /// client re-lists with the query it listed with).
    #[arg(long)]
    pub list_changed_after_query: bool,
    /// Speak 2026-07-28 only: server/discover lists no initialization-based version, and
    /// initialize is refused with UnsupportedProtocolVersion (-32022) naming the supported ones
    /// (for client scenarios: a client sends no initialize to such a server).
    #[arg(long)]
    pub modern_only: bool,
    /// Hold every tools/call that would succeed without an answer until the client cancels it
    /// (notifications/cancelled naming it, or over HTTP closing its response stream) or the
    /// session ends (for client scenarios: a call that outlasts the client's patience).
    #[arg(long)]
    pub hold_calls: bool,
    /// Per-session rate limit, e.g. `50/s` (off by default).
    #[arg(long, value_name = "N/s")]
    pub rate_limit: Option<String>,
    /// Longest accepted input line in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = mcp_conform_protocol::jsonrpc::DEFAULT_MAX_LINE)]
    pub max_line: usize,
    /// Write a synthetic N-tool catalog to --out and exit (for benchmarks).
    #[arg(long, value_name = "N", requires = "out")]
    pub catalog_gen: Option<usize>,
    /// Output file of --catalog-gen.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Seed of --catalog-gen.
    #[arg(long, default_value_t = catalog_gen::DEFAULT_SEED)]
    pub seed: u64,
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio. ADDR is HOST:PORT or a bare
    /// PORT (bound on 127.0.0.1); port 0 picks a free one. The bound URL is printed on stderr.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = http::DEFAULT_ADDR)]
    pub http: Option<String>,
    /// With --http: also accept requests whose Origin header is ORIGIN (e.g. https://app.example);
    /// loopback origins are always accepted, any other Origin gets 403 (repeatable).
    #[arg(long = "allowed-origin", value_name = "ORIGIN", requires = "http")]
    pub allowed_origins: Vec<String>,
    /// With --http: end sessions idle for this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = http::DEFAULT_SESSION_TTL_SECS)]
    pub session_ttl: u64,
    /// With --http: most sessions open at once; initialize beyond it gets 503.
    #[arg(long, value_name = "N", default_value_t = http::DEFAULT_MAX_SESSIONS)]
    pub max_sessions: usize,
}

impl Default for ServeArgs {
    /// What `mcp-conform serve-reference` with no options means.
    fn default() -> Self {
        ServeArgs {
            catalog: None,
            faults: Vec::new(),
            control: false,
            ping_client: false,
            list_changed_after_query: false,
            modern_only: false,
            hold_calls: false,
            rate_limit: None,
            max_line: mcp_conform_protocol::jsonrpc::DEFAULT_MAX_LINE,
            catalog_gen: None,
            out: None,
            seed: catalog_gen::DEFAULT_SEED,
            http: None,
            allowed_origins: Vec::new(),
            session_ttl: http::DEFAULT_SESSION_TTL_SECS,
            max_sessions: http::DEFAULT_MAX_SESSIONS,
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    #[error("cannot read catalog {path}: {source}")]
    ReadCatalog {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("catalog {path}: {source}")]
    Catalog { path: String, source: CatalogError },
    #[error(transparent)]
    Fault(#[from] faults::UnknownFault),
    #[error(transparent)]
    Rate(#[from] rate::BadRate),
    #[error("--catalog-gen needs --out FILE")]
    MissingOut,
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    #[error("--http {addr}: {reason}")]
    HttpAddr { addr: String, reason: String },
    #[error("--allowed-origin {0:?}: expected scheme://host[:port], e.g. https://app.example")]
    BadOrigin(String),
}

/// Loads `path`, or the embedded catalog.
pub fn load_catalog(path: Option<&Path>) -> Result<Catalog, ReferenceError> {
    match path {
        None => Catalog::from_slice(DEFAULT_CATALOG.as_bytes()).map_err(|source| {
            ReferenceError::Catalog {
                path: "<embedded>".into(),
                source,
            }
        }),
        Some(p) => {
            let bytes = std::fs::read(p).map_err(|source| ReferenceError::ReadCatalog {
                path: p.to_path_buf(),
                source,
            })?;
            let catalog = Catalog::from_slice(&bytes).map_err(|source| ReferenceError::Catalog {
                path: p.display().to_string(),
                source,
            });
            drop(bytes);
            release_free_memory();
            catalog
        }
    }
}

/// Hands the memory freed while parsing a large catalog (transient JSON
/// values, duplicate labels) back to the operating system, so the resident
/// size reflects what the server keeps.
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The server an invocation describes.
pub fn build_server(args: &ServeArgs) -> Result<Server, ReferenceError> {
    let config = Config {
        faults: Faults::parse(&args.faults)?,
        control: args.control,
        ping_client: args.ping_client,
        list_changed_after_query: args.list_changed_after_query,
        modern_only: args.modern_only,
        hold_calls: args.hold_calls,
        rate: args.rate_limit.as_deref().map(str::parse).transpose()?,
        max_line: args.max_line,
    };
    Ok(Server::new(load_catalog(args.catalog.as_deref())?, config))
}

/// Runs `serve-reference` to completion: prints the fault list, generates a
/// catalog, serves stdio until stdin closes, or serves HTTP until SIGTERM /
/// Ctrl-C. Blocking: it owns its runtime (use [`run_async`] from inside one).
pub fn run(args: ServeArgs) -> Result<(), ReferenceError> {
    if let Some(done) = run_offline(&args)? {
        return Ok(done);
    }
    if args.http.is_some() {
        http::tune_allocator();
    }
    let server = build_server(&args)?;
    if let Some(addr) = &args.http {
        let options = http::HttpOptions::from_args(addr, &args)?;
        // HTTP sessions are served concurrently: one worker per core.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        return rt.block_on(http::serve(server, options));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let input = stdio::BlockingStdin::new();
    let result = rt.block_on(stdio::serve(&server, input, std::io::stdout()));
    rt.shutdown_background();
    result.map_err(ReferenceError::from)
}

/// [`run`] for callers already inside a tokio runtime.
pub async fn run_async(args: ServeArgs) -> Result<(), ReferenceError> {
    if let Some(done) = run_offline(&args)? {
        return Ok(done);
    }
    let server = build_server(&args)?;
    if let Some(addr) = &args.http {
        let options = http::HttpOptions::from_args(addr, &args)?;
        return http::serve(server, options).await;
    }
    stdio::serve(&server, tokio::io::stdin(), std::io::stdout()).await?;
    Ok(())
}

/// The modes that do not serve: `--fault help` and `--catalog-gen`.
fn run_offline(args: &ServeArgs) -> Result<Option<()>, ReferenceError> {
    if args.faults.iter().any(|f| f == "help") {
        print!("{}", faults::help_text());
        return Ok(Some(()));
    }
    let Some(n) = args.catalog_gen else {
        return Ok(None);
    };
    let out = args.out.as_ref().ok_or(ReferenceError::MissingOut)?;
    let catalog = catalog_gen::generate(n, args.seed);
    let write_err = |source| ReferenceError::Write {
        path: out.clone(),
        source,
    };
    let file = std::fs::File::create(out).map_err(write_err)?;
    let mut w = std::io::BufWriter::new(file);
    serde_json::to_writer(&mut w, &catalog).map_err(|e| write_err(e.into()))?;
    std::io::Write::flush(&mut w).map_err(write_err)?;
    Ok(Some(()))
}
