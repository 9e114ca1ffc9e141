//! A real headless browser for the spectator page's tests: Debian's `chromium`, started by
//! the test on a fresh profile and driven over the Chrome DevTools Protocol (a small
//! client on tokio-tungstenite: one command at a time, events read past until its answer).
//!
//! Conditions on the page are awaited in the page itself: an expression re-checked on
//! every change of the DOM (a `MutationObserver`), given back once true, or an error once
//! its deadline passes — no sleep anywhere. The browser is closed over the protocol and
//! then killed by its own pid if it has not gone.

use base64::Engine as _;
use futures_util::{SinkExt as _, StreamExt as _};
use mcpl_testkit::within;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// Where Debian installs it.
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// The page's width and height, in CSS pixels.
const VIEWPORT: (u32, u32) = (1280, 900);

/// A headless chromium and one page of it.
pub struct Browser {
    child: Child,
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// The page's session (flattened target attachment).
    session: String,
    next_id: u64,
    /// Events read while awaiting an answer, not yet taken.
    events: std::collections::VecDeque<Value>,
    /// Its profile, removed when dropped.
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts chromium, headless on a fresh profile, with one blank page. Fails the test,
    /// saying how to install it, when it is not installed.
    pub async fn start() -> Browser {
        assert!(
            Path::new(CHROMIUM).exists(),
            "{CHROMIUM} is missing: the spectator page's tests drive a real browser. Install \
             Debian's chromium: `apt-get update && apt-get install -y chromium`"
        );
        let profile = tempfile::tempdir().expect("a profile directory");
        let mut child = Command::new(CHROMIUM)
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
            .arg(format!("--window-size={},{}", VIEWPORT.0, VIEWPORT.1))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("chromium starts");
        // It says where its DevTools listen on stderr: "DevTools listening on ws://…".
        let stderr = child.stderr.take().expect("piped");
        let mut lines = BufReader::new(stderr).lines();
        let url = within(async {
            while let Some(line) = lines.next_line().await.expect("chromium's stderr") {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    return url.trim().to_owned();
                }
            }
            panic!("chromium exited without its DevTools address");
        })
        .await;
        // The rest of its stderr is drained, so that it never blocks writing to it.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let (ws, _) = within(tokio_tungstenite::connect_async(url.as_str()))
            .await
            .expect("chromium's DevTools socket");
        let mut browser = Browser {
            child,
            ws,
            session: String::new(),
            next_id: 0,
            events: Default::default(),
            _profile: profile,
        };
        let target = browser
            .command(None, "Target.createTarget", json!({"url": "about:blank"}))
            .await;
        let attached = browser
            .command(
                None,
                "Target.attachToTarget",
                json!({"targetId": target["targetId"], "flatten": true}),
            )
            .await;
        browser.session = attached["sessionId"]
            .as_str()
            .expect("a session")
            .to_owned();
        browser.page("Page.enable", json!({})).await;
        browser
            .page(
                "Emulation.setDeviceMetricsOverride",
                json!({"width": VIEWPORT.0, "height": VIEWPORT.1, "deviceScaleFactor": 1, "mobile": false}),
            )
            .await;
        browser
    }

    /// Sends a command (to the page's session, or the browser's) and returns its result;
    /// an error answer fails the test.
    async fn command(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            message["sessionId"] = json!(s);
        }
        within(self.ws.send(Message::text(message.to_string())))
            .await
            .expect("sent to chromium");
        loop {
            let reply = self.read().await;
            if reply["id"] == id {
                assert!(
                    reply.get("error").is_none(),
                    "{method} failed: {}",
                    reply["error"]
                );
                return reply["result"].clone();
            }
            // Only the events some wait takes are kept.
            if reply["method"] == "Page.loadEventFired" {
                self.events.push_back(reply);
            }
        }
    }

    /// The next message from chromium (an answer or an event).
    async fn read(&mut self) -> Value {
        loop {
            let frame = within(self.ws.next())
                .await
                .expect("chromium's socket open")
                .expect("a frame");
            if let Message::Text(text) = frame {
                return serde_json::from_str(text.as_str()).expect("JSON from chromium");
            }
        }
    }

    async fn page(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.command(Some(&session), method, params).await
    }

    /// Opens `url` and waits for its `load` event (after any redirect).
    pub async fn navigate(&mut self, url: &str) {
        self.events.clear();
        let nav = self.page("Page.navigate", json!({"url": url})).await;
        assert!(nav.get("errorText").is_none(), "navigating to {url}: {nav}");
        loop {
            let event = match self.events.pop_front() {
                Some(event) => event,
                None => self.read().await,
            };
            if event["method"] == "Page.loadEventFired" && event["sessionId"] == self.session {
                return;
            }
        }
    }

    /// Evaluates `expression` in the page (awaiting a promise); its value, or the
    /// exception's text as `Err`.
    pub async fn eval(&mut self, expression: &str) -> Result<Value, String> {
        let r = self
            .page(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            )
            .await;
        match r.get("exceptionDetails") {
            Some(e) => Err(e["exception"]["description"]
                .as_str()
                .or_else(|| e["text"].as_str())
                .unwrap_or("an exception")
                .to_owned()),
            None => Ok(r["result"]["value"].clone()),
        }
    }

    /// Waits until `condition` (a JavaScript expression) is truthy in the page — checked
    /// now and after every change of the DOM — and returns its value; fails the test after
    /// `limit`, saving a screenshot as `target/spectator/failed.png`.
    pub async fn wait_for(&mut self, condition: &str, limit: Duration) -> Value {
        let ms = limit.as_millis();
        let quoted = serde_json::to_string(condition).expect("a string");
        let expression = format!(
            r#"new Promise((resolve, reject) => {{
  const test = () => {{ try {{ return ({condition}); }} catch (e) {{ return false; }} }};
  const first = test();
  if (first) {{ resolve(first); return; }}
  const obs = new MutationObserver(() => {{
    const v = test();
    if (v) {{ obs.disconnect(); clearTimeout(t); resolve(v); }}
  }});
  obs.observe(document, {{subtree: true, childList: true, attributes: true, characterData: true}});
  const t = setTimeout(() => {{ obs.disconnect(); reject(new Error("not true within {ms} ms: " + {quoted})); }}, {ms});
}})"#
        );
        match self.eval(&expression).await {
            Ok(v) => v,
            Err(e) => {
                let png = self.screenshot().await;
                let path = save(&png, "failed.png");
                panic!("{e} (the page as it was: {})", path.display());
            }
        }
    }

    /// The whole page as a PNG.
    pub async fn screenshot(&mut self) -> Vec<u8> {
        let metrics = self.page("Page.getLayoutMetrics", json!({})).await;
        let size = &metrics["cssContentSize"];
        let clip =
            json!({"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1});
        let shot = self
            .page(
                "Page.captureScreenshot",
                json!({"format": "png", "captureBeyondViewport": true, "clip": clip}),
            )
            .await;
        base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().expect("PNG data"))
            .expect("base64 PNG")
    }

    /// Closes the browser over the protocol, then kills it by its pid if it has not gone.
    pub async fn close(mut self) {
        self.next_id += 1;
        let close = json!({"id": self.next_id, "method": "Browser.close"});
        let _ = self.ws.send(Message::text(close.to_string())).await;
        let exited = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
        if exited.is_err() {
            // `Child::kill` signals this child's own pid.
            let _ = self.child.kill().await;
        }
    }
}

/// The workspace's `target/` directory (where this test binary was built).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    // target/debug/deps/<test>
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .expect("the test binary sits in target/<profile>/deps")
}

/// Saves `png` as `target/spectator/NAME`; its path.
pub fn save(png: &[u8], name: &str) -> PathBuf {
    let dir = target_dir().join("spectator");
    std::fs::create_dir_all(&dir).expect("target/spectator");
    let path = dir.join(name);
    std::fs::write(&path, png).expect("the screenshot written");
    path
}
