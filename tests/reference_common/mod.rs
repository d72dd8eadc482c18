//! Test support: the built reference server over real pipes, in any era.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_mcp-conform");
pub const TIMEOUT: Duration = Duration::from_secs(10);
pub const V0618: &str = "2025-06-18";
pub const V1125: &str = "2025-11-25";
pub const V0728: &str = "2026-07-28";
pub const ERAS: [&str; 3] = [V0618, V1125, V0728];

pub fn mini() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/catalogs/mini.json")
}

/// A generated catalog of `n` tools, kept in cargo's per-target temp
/// directory. Written under a private name and renamed into place, so test
/// binaries running in parallel never read a half-written file.
pub fn generated(n: usize) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("reference-gen-{n}.json"));
    if !path.exists() {
        // Tests run as threads of one process: the thread id keeps two
        // concurrent generators from sharing (and renaming away) one file.
        let tmp = path.with_extension(format!(
            "{}.{:?}.tmp",
            std::process::id(),
            std::thread::current().id()
        ));
        let status = Command::new(BIN)
            .args(["serve-reference", "--catalog-gen", &n.to_string(), "--out"])
            .arg(&tmp)
            .status()
            .expect("run generator");
        assert!(status.success());
        std::fs::rename(&tmp, &path).expect("rename generated catalog");
    }
    path
}

pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: i64,
    /// The era this client speaks: requests carry `_meta` in 2026-07-28.
    pub version: String,
    /// Notifications seen while waiting for responses.
    pub notes: Vec<Value>,
}

impl Server {
    /// Starts `serve-reference --catalog mini.json` plus `args`.
    pub fn start(args: &[&str]) -> Server {
        let mut full: Vec<String> = vec!["--catalog".into(), mini().display().to_string()];
        full.extend(args.iter().map(|s| s.to_string()));
        Server::start_raw(&full)
    }

    pub fn start_raw(args: &[String]) -> Server {
        let mut child = Command::new(BIN)
            .arg("serve-reference")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn server");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            next_id: 1,
            version: V1125.into(),
            notes: Vec::new(),
        }
    }

    /// Starts and opens a session in `version`'s era.
    pub fn open(version: &str, args: &[&str]) -> Server {
        let mut s = Server::start(args);
        s.connect(version);
        s
    }

    pub fn connect(&mut self, version: &str) {
        self.version = version.into();
        if version != V0728 {
            let r = self.request(
                "initialize",
                json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
            );
            assert_eq!(r["result"]["protocolVersion"], version, "{r}");
            self.notify("notifications/initialized", None);
        }
    }

    pub fn stateless(&self) -> bool {
        self.version == V0728
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write");
        stdin.flush().expect("flush");
    }

    pub fn send(&mut self, msg: &Value) {
        let mut line = serde_json::to_vec(msg).expect("json");
        line.push(b'\n');
        self.send_raw(&line);
    }

    pub fn notify(&mut self, method: &str, params: Option<Value>) {
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.send(&msg);
    }

    /// The next line from the server, parsed.
    pub fn recv(&mut self) -> Value {
        self.recv_within(TIMEOUT).expect("server answered in time")
    }

    pub fn recv_within(&mut self, timeout: Duration) -> Option<Value> {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Some(
                serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}")),
            ),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Params with the era's `_meta` added.
    pub fn params(&self, params: Value) -> Value {
        let mut p = if params.is_null() { json!({}) } else { params };
        if self.stateless() {
            if let Some(obj) = p.as_object_mut() {
                let meta = obj.entry("_meta").or_insert_with(|| json!({}));
                meta["io.modelcontextprotocol/protocolVersion"] = json!(V0728);
                meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
            }
        }
        p
    }

    /// Sends a request with a fresh id (and the era's `_meta`) and waits for
    /// its response; notifications meanwhile go to `notes`.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let params = self.params(params);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response_to(&json!(id))
    }

    /// Sends exactly `msg` and waits for the response with `id`.
    pub fn exchange(&mut self, msg: &Value) -> Value {
        self.send(msg);
        self.response_to(&msg["id"])
    }

    pub fn response_to(&mut self, id: &Value) -> Value {
        loop {
            let msg = self.recv();
            if msg.get("method").is_some() && msg.get("id").is_none() {
                self.notes.push(msg);
                continue;
            }
            if &msg["id"] == id || msg["id"].is_null() {
                return msg;
            }
            panic!("unexpected message while waiting for {id}: {msg}");
        }
    }

    /// `result` of a request, failing on an error.
    pub fn ok(&mut self, method: &str, params: Value) -> Value {
        let r = self.request(method, params);
        assert!(r.get("error").is_none(), "{method} failed: {r}");
        r["result"].clone()
    }

    /// The error code of a request that must fail.
    pub fn err(&mut self, method: &str, params: Value) -> Value {
        let r = self.request(method, params);
        assert!(r.get("error").is_some(), "{method} should fail: {r}");
        r["error"].clone()
    }

    /// Every tool name of a (possibly filtered) tools/list, following cursors.
    pub fn list_names(&mut self, params: Value) -> Vec<String> {
        let mut names = Vec::new();
        let mut params = params;
        for _ in 0..1000 {
            let r = self.ok("tools/list", params.clone());
            names.extend(tool_names(&r["tools"]));
            match r.get("nextCursor").and_then(Value::as_str) {
                Some(c) => {
                    if params.is_null() {
                        params = json!({});
                    }
                    params["cursor"] = json!(c);
                }
                None => return names,
            }
        }
        panic!("pagination did not terminate");
    }

    /// Reads tool descriptions (authorizing them).
    pub fn fetch(&mut self, tools: &str) -> Value {
        let r = self.ok(
            "resources/read",
            json!({"uri": format!("resource:///tool_descriptions?tools={tools}")}),
        );
        serde_json::from_str(r["contents"][0]["text"].as_str().expect("text")).expect("json text")
    }

    pub fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// Closes stdin and returns how long the process took to exit.
    pub fn close(mut self) -> Duration {
        drop(self.stdin.take());
        let start = Instant::now();
        loop {
            if let Ok(Some(_)) = self.child.try_wait() {
                return start.elapsed();
            }
            if start.elapsed() > TIMEOUT {
                let _ = self.child.kill();
                panic!("server did not exit after stdin closed");
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// True when the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn tool_names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The structured result of a successful `tools/call` response.
pub fn structured(r: &Value) -> Value {
    assert!(r.get("error").is_none(), "call failed: {r}");
    assert_eq!(r["result"]["isError"], false, "tool error: {r}");
    let text: Value =
        serde_json::from_str(r["result"]["content"][0]["text"].as_str().expect("text"))
            .expect("json");
    assert_eq!(text, r["result"]["structuredContent"]);
    r["result"]["structuredContent"].clone()
}
