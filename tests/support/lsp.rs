//! A Language Server Protocol client for the tests: the real `hip-unroll server` as a child
//! process, messages framed and typed by `lsp-server` and `lsp-types` on its stdin/stdout (as
//! rust-analyzer's own test harness does), every notification kept in arrival order.
#![allow(dead_code)]

use lsp_server::{Message, Notification, Request, RequestId, Response};
use lsp_types::notification::Notification as _;
use lsp_types::{PublishDiagnosticsParams, Uri};
use std::io::{BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");
/// No answer within this long is a hang (generous: CI machines are shared).
pub const PATIENCE: Duration = Duration::from_secs(120);

pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Message>,
    next_id: i32,
    /// Every notification received, in order.
    pub notifications: Vec<Notification>,
    /// Requests the server sent us (answered with `null`).
    pub server_requests: Vec<Request>,
}

pub fn file_uri(path: &Path) -> Uri {
    format!("file://{}", path.display()).parse().unwrap()
}

impl Client {
    /// Start `hip-unroll server` in `cwd` with extra environment variables.
    pub fn start(cwd: &Path, env: &[(&str, &str)]) -> Client {
        let mut cmd = Command::new(BIN);
        cmd.arg("server")
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("start hip-unroll server");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Ok(Some(m)) = Message::read(&mut r) {
                if tx.send(m).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Client {
            child,
            stdin,
            rx,
            next_id: 0,
            notifications: Vec::new(),
            server_requests: Vec::new(),
        }
    }

    pub fn send(&mut self, m: impl Into<Message>) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        m.into().write(stdin).expect("write to the server");
    }

    /// A frame with this exact body (for bytes that are not UTF-8).
    pub fn send_raw(&mut self, body: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        write!(stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        stdin.write_all(body).unwrap();
        stdin.flush().unwrap();
    }

    /// Close the server's stdin (end of input).
    pub fn close_input(&mut self) {
        self.stdin = None;
    }

    /// The next response or notification (requests from the server are answered `null` and
    /// kept); `None` when the server closed its output.
    fn recv(&mut self, deadline: Instant) -> Option<Message> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(Message::Request(r)) => {
                    let id = r.id.clone();
                    self.server_requests.push(r);
                    self.send(Response::new_ok(id, serde_json::Value::Null));
                }
                Ok(m) => return Some(m),
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no message from the server in {PATIENCE:?}")
                }
                Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// Send a request and wait for its response (notifications meanwhile are kept).
    pub fn request_raw(&mut self, method: &str, params: serde_json::Value) -> Response {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.send(Request::new(id.clone(), method.into(), params));
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.recv(deadline) {
                Some(Message::Response(r)) if r.id == id => return r,
                Some(Message::Notification(n)) => self.notifications.push(n),
                Some(_) => {}
                None => panic!("the server closed its output before answering {method}"),
            }
        }
    }

    pub fn request<R: lsp_types::request::Request>(&mut self, params: R::Params) -> R::Result {
        let r = self.request_raw(R::METHOD, serde_json::to_value(params).unwrap());
        if let Some(e) = r.error {
            panic!("{} failed: {} ({})", R::METHOD, e.message, e.code);
        }
        serde_json::from_value(r.result.unwrap_or(serde_json::Value::Null)).unwrap()
    }

    pub fn notify<N: lsp_types::notification::Notification>(&mut self, params: N::Params) {
        self.send(Notification::new(N::METHOD.into(), params));
    }

    /// `initialize` (with these initialization options and client capabilities) and
    /// `initialized`.
    pub fn initialize_with(
        &mut self,
        options: serde_json::Value,
        capabilities: lsp_types::ClientCapabilities,
    ) -> lsp_types::InitializeResult {
        #[allow(deprecated)]
        let params = lsp_types::InitializeParams {
            initialization_options: Some(options),
            capabilities,
            ..lsp_types::InitializeParams::default()
        };
        let r = self.request::<lsp_types::request::Initialize>(params);
        self.notify::<lsp_types::notification::Initialized>(lsp_types::InitializedParams {});
        r
    }

    pub fn initialize(&mut self) -> lsp_types::InitializeResult {
        self.initialize_with(
            serde_json::json!({}),
            lsp_types::ClientCapabilities::default(),
        )
    }

    pub fn open(&mut self, uri: &Uri, version: i32, text: &str) {
        self.notify::<lsp_types::notification::DidOpenTextDocument>(
            lsp_types::DidOpenTextDocumentParams {
                text_document: lsp_types::TextDocumentItem {
                    uri: uri.clone(),
                    language_id: "cuda".into(),
                    version,
                    text: text.into(),
                },
            },
        );
    }

    /// Replace the whole text.
    pub fn change(&mut self, uri: &Uri, version: i32, text: &str) {
        self.notify::<lsp_types::notification::DidChangeTextDocument>(
            lsp_types::DidChangeTextDocumentParams {
                text_document: lsp_types::VersionedTextDocumentIdentifier {
                    uri: uri.clone(),
                    version,
                },
                content_changes: vec![lsp_types::TextDocumentContentChangeEvent {
                    range: None,
                    range_length: None,
                    text: text.into(),
                }],
            },
        );
    }

    pub fn close(&mut self, uri: &Uri) {
        self.notify::<lsp_types::notification::DidCloseTextDocument>(
            lsp_types::DidCloseTextDocumentParams {
                text_document: lsp_types::TextDocumentIdentifier { uri: uri.clone() },
            },
        );
    }

    /// Wait for a notification that `pred` accepts among those not seen before `from`
    /// (an index into `notifications`); returns its index.
    pub fn wait_for(&mut self, from: usize, pred: impl Fn(&Notification) -> bool) -> usize {
        let deadline = Instant::now() + PATIENCE;
        let mut i = from;
        loop {
            while i < self.notifications.len() {
                if pred(&self.notifications[i]) {
                    return i;
                }
                i += 1;
            }
            match self.recv(deadline) {
                Some(Message::Notification(n)) => self.notifications.push(n),
                Some(_) => {}
                None => panic!("the server closed its output while a notification was awaited"),
            }
        }
    }

    /// The next diagnostics published for `uri` (after notification index `from`), with
    /// `version` when given.
    pub fn diagnostics_after(
        &mut self,
        from: usize,
        uri: &Uri,
        version: Option<i32>,
    ) -> (usize, PublishDiagnosticsParams) {
        let i = self.wait_for(from, |n| {
            n.method == lsp_types::notification::PublishDiagnostics::METHOD
                && publish(n).uri == *uri
                && version.is_none_or(|v| publish(n).version == Some(v))
        });
        (i, publish(&self.notifications[i]))
    }

    pub fn diagnostics(&mut self, uri: &Uri, version: i32) -> PublishDiagnosticsParams {
        self.diagnostics_after(0, uri, Some(version)).1
    }

    /// Every `publishDiagnostics` received so far for `uri`.
    pub fn published(&self, uri: &Uri) -> Vec<PublishDiagnosticsParams> {
        self.notifications
            .iter()
            .filter(|n| n.method == lsp_types::notification::PublishDiagnostics::METHOD)
            .map(publish)
            .filter(|p| p.uri == *uri)
            .collect()
    }

    /// Every `window/logMessage` text received so far.
    pub fn logs(&self) -> Vec<String> {
        self.notifications
            .iter()
            .filter(|n| n.method == lsp_types::notification::LogMessage::METHOD)
            .map(|n| n.params["message"].as_str().unwrap_or("").to_string())
            .collect()
    }

    pub fn status(&mut self) -> serde_json::Value {
        let r = self.request_raw("hip-unroll/status", serde_json::Value::Null);
        r.result.expect("status")
    }

    /// Wait for the process to end (at most PATIENCE).
    pub fn wait(mut self) -> ExitStatus {
        self.stdin = None;
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the server did not exit");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `shutdown`, then `exit`; the exit status.
    pub fn shutdown(mut self) -> ExitStatus {
        self.request::<lsp_types::request::Shutdown>(());
        self.notify::<lsp_types::notification::Exit>(());
        self.wait()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

pub fn publish(n: &Notification) -> PublishDiagnosticsParams {
    serde_json::from_value(n.params.clone()).unwrap()
}

/// `edits` (LSP text edits on `text`, UTF-16 positions) applied, last first.
pub fn apply(text: &str, edits: &[lsp_types::TextEdit]) -> String {
    let offset = |p: lsp_types::Position| -> usize {
        let mut at = 0;
        for (i, line) in text.split_inclusive('\n').enumerate() {
            if i as u32 == p.line {
                let mut units = 0;
                for (b, c) in line.char_indices() {
                    if units >= p.character {
                        return at + b;
                    }
                    units += c.len_utf16() as u32;
                }
                return at + line.trim_end_matches('\n').len();
            }
            at += line.len();
        }
        text.len()
    };
    let mut sorted: Vec<&lsp_types::TextEdit> = edits.iter().collect();
    sorted.sort_by_key(|e| std::cmp::Reverse((e.range.start.line, e.range.start.character)));
    let mut out = text.to_string();
    for e in sorted {
        let (s, t) = (offset(e.range.start), offset(e.range.end));
        out.replace_range(s..t, &e.new_text);
    }
    out
}
