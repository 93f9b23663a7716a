//! A small driver for headless Chromium over the DevTools protocol (a WebSocket carrying JSON
//! commands and events), enough to load a page, run JavaScript in it, collect console errors and
//! take a screenshot. Used by the report tests; Chromium is Debian's `chromium` package.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use tungstenite::{Message, WebSocket};

/// The browser to use: `$HARNESS_CHROMIUM` when set (`None` if it names no file), else
/// `chromium` or `chromium-browser` on the PATH.
pub fn find() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("HARNESS_CHROMIUM") {
        return Some(PathBuf::from(path)).filter(|p| p.is_file());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|p| p.is_file())
}

/// Whether a missing tool fails the test (`.ci/run` sets the variable) instead of skipping it.
pub fn required(variable: &str) -> bool {
    std::env::var(variable).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Says on stderr, past the test harness's output capture, that a test was skipped and why;
/// panics instead when `variable` requires the tool.
pub fn skip(variable: &str, why: &str) {
    assert!(
        !required(variable),
        "{why}, and {variable} is set: the test must run"
    );
    let _ = writeln!(std::io::stderr(), "SKIPPED: {why}");
}

/// A headless Chromium with one page, attached over the DevTools protocol.
pub struct Browser {
    child: Child,
    socket: WebSocket<TcpStream>,
    session: String,
    next_id: u64,
    /// Events received while waiting for replies, oldest first.
    events: Vec<Value>,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts `chromium` headless (the flags that work on a machine without network) with a
    /// fresh profile, and opens a blank page.
    pub fn launch(chromium: &Path) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("could not start {}: {e}", chromium.display()));
        // Chromium prints the browser's WebSocket address on stderr.
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    let _ = tx.send(url.trim().to_owned());
                }
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("chromium said where its DevTools listen within 60 s");
        let address = url
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .unwrap()
            .to_owned();
        let stream = TcpStream::connect(&address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let (socket, _) = tungstenite::client(url.as_str(), stream).expect("DevTools handshake");
        let mut browser = Browser {
            child,
            socket,
            session: String::new(),
            next_id: 0,
            events: Vec::new(),
            _profile: profile,
        };
        let target = browser.send(None, "Target.createTarget", json!({"url": "about:blank"}));
        let target = target["targetId"].as_str().unwrap().to_owned();
        let attached = browser.send(
            None,
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        );
        browser.session = attached["sessionId"].as_str().unwrap().to_owned();
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            browser.call(domain, json!({}));
        }
        browser
    }

    fn send(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        let reply = self.send_for_reply(session, method, params);
        assert!(
            reply.get("error").is_none(),
            "{method} failed: {}",
            reply["error"]
        );
        reply["result"].clone()
    }

    /// Sends a command; returns the whole reply, an error included.
    fn send_for_reply(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.socket
            .send(Message::Text(message.to_string().into()))
            .unwrap();
        loop {
            let reply = self.read();
            if reply["id"] == json!(id) {
                return reply;
            }
            self.events.push(reply);
        }
    }

    fn read(&mut self) -> Value {
        loop {
            match self.socket.read().expect("a DevTools message") {
                Message::Text(text) => return serde_json::from_str(text.as_str()).unwrap(),
                Message::Close(_) => panic!("chromium closed the DevTools connection"),
                _ => {}
            }
        }
    }

    /// Sends a command to the page; returns its result.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.send(Some(&session), method, params)
    }

    /// Waits for the page event `method` (one that arrived earlier counts); returns its params.
    pub fn wait_for(&mut self, method: &str, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(i) = self.events.iter().position(|e| e["method"] == method) {
                return self.events.remove(i)["params"].clone();
            }
            assert!(Instant::now() < deadline, "no {method} within {timeout:?}");
            let event = self.read();
            self.events.push(event);
        }
    }

    /// Opens `url` and waits for its load event.
    pub fn open(&mut self, url: &str) {
        self.events.retain(|e| e["method"] != "Page.loadEventFired");
        self.call("Page.navigate", json!({"url": url}));
        self.wait_for("Page.loadEventFired", Duration::from_secs(60));
    }

    /// Evaluates `expression` in the page; returns its value (an exception fails the test).
    pub fn eval(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(
            result.get("exceptionDetails").is_none(),
            "`{expression}` threw: {}",
            result["exceptionDetails"]
        );
        result["result"]["value"].clone()
    }

    /// Evaluates `condition` until it is `true` (a page that is still loading may throw
    /// meanwhile), failing the test after `timeout`: no fixed sleep a slow machine outlasts.
    pub fn wait_until(&mut self, condition: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let guarded = format!(
            "(() => {{ try {{ return !!({condition}); }} catch (e) {{ return false; }} }})()"
        );
        let session = self.session.clone();
        // A page between two documents may answer with an error: not yet, then.
        while self.send_for_reply(
            Some(&session),
            "Runtime.evaluate",
            json!({"expression": guarded, "returnByValue": true}),
        )["result"]["result"]["value"]
            != Value::Bool(true)
        {
            assert!(
                Instant::now() < deadline,
                "`{condition}` not true within {timeout:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The console errors, uncaught exceptions and error log entries seen so far.
    pub fn console_errors(&mut self) -> Vec<String> {
        // Let events already on the way arrive: a round trip flushes them.
        self.eval("1");
        self.events
            .iter()
            .filter_map(|e| match e["method"].as_str()? {
                "Runtime.exceptionThrown" => Some(e["params"]["exceptionDetails"].to_string()),
                "Runtime.consoleAPICalled"
                    if matches!(e["params"]["type"].as_str(), Some("error" | "assert")) =>
                {
                    Some(e["params"]["args"].to_string())
                }
                "Log.entryAdded" if e["params"]["entry"]["level"] == "error" => {
                    Some(e["params"]["entry"].to_string())
                }
                _ => None,
            })
            .collect()
    }

    /// A PNG of the viewport at `width` x `height`, written to `path`.
    pub fn screenshot(&mut self, width: u32, height: u32, path: &Path) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
        let shot = self.call("Page.captureScreenshot", json!({"format": "png"}));
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
