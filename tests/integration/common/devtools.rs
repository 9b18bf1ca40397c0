//! A real click in headless chromium, through the DevTools protocol over
//! `--remote-debugging-pipe` (no websocket, no port): chromium reads
//! commands on fd 3 and writes answers on fd 4, each a JSON message ended
//! by a NUL byte. Enough of the protocol to open a page, wait for what its
//! script draws, press and release the mouse over an element, and read the
//! DOM back.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

use super::process::PATIENCE;

/// A headless chromium driven over its DevTools pipe, on one page.
pub(crate) struct Browser {
    child: Child,
    commands: std::fs::File,
    answers: BufReader<std::fs::File>,
    next_id: u64,
    session: String,
    _profile: tempfile::TempDir,
}

/// `fd` duplicated to a number above 10 (close-on-exec), so that moving it
/// to 3 or 4 in the child cannot overwrite the other pipe's end.
fn high(fd: impl AsFd) -> OwnedFd {
    let raw = nix::fcntl::fcntl(fd.as_fd(), nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(10)).expect("duplicate a pipe end");
    // SAFETY: fcntl returned a new descriptor that nothing else owns.
    unsafe { OwnedFd::from_raw_fd(raw) }
}

impl Browser {
    /// Starts chromium and opens `url` in a page of its own.
    #[expect(clippy::disallowed_methods, reason = "the tests start a browser, outside any task")]
    pub(crate) fn open(url: &str) -> Browser {
        use std::os::unix::process::CommandExt;
        let profile = tempfile::tempdir().expect("a browser profile dir");
        let (to_browser_read, to_browser_write) = std::io::pipe().expect("a pipe");
        let (from_browser_read, from_browser_write) = std::io::pipe().expect("a pipe");
        let (child_in, child_out) = (high(&to_browser_read), high(&from_browser_write));
        let mut cmd = Command::new(super::browser::program());
        cmd.args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars"])
            .args(["--remote-debugging-pipe", "--window-size=1280,900"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let (fd_in, fd_out) = (child_in.as_raw_fd(), child_out.as_raw_fd());
        // SAFETY: dup2 is async-signal-safe; the new descriptors 3 and 4
        // are deliberately left open (dup2 clears close-on-exec) for chromium.
        unsafe {
            cmd.pre_exec(move || {
                for (from, to) in [(fd_in, 3), (fd_out, 4)] {
                    if nix::libc::dup2(from, to) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("start chromium");
        drop((child_in, child_out, to_browser_read, from_browser_write));
        let mut browser = Browser {
            child,
            commands: std::fs::File::from(OwnedFd::from(to_browser_write)),
            answers: BufReader::new(std::fs::File::from(OwnedFd::from(from_browser_read))),
            next_id: 0,
            session: String::new(),
            _profile: profile,
        };
        let target = browser.call(None, "Target.createTarget", json!({"url": url}));
        let target_id = target["targetId"].as_str().expect("a target id").to_string();
        let attached = browser.call(None, "Target.attachToTarget", json!({"targetId": target_id, "flatten": true}));
        browser.session = attached["sessionId"].as_str().expect("a session id").to_string();
        browser
    }

    /// Sends one command (to the page's session, or the browser) and waits
    /// for its answer, skipping the events in between.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = serde_json::to_vec(&message).expect("a command serializes");
        bytes.push(0);
        self.commands.write_all(&bytes).expect("write to chromium's pipe");
        loop {
            let mut raw = Vec::new();
            let n = self.answers.read_until(0, &mut raw).expect("read chromium's pipe");
            assert!(n > 0, "chromium closed its pipe while {method} waited for an answer");
            raw.pop();
            let answer: Value = serde_json::from_slice(&raw).expect("chromium answers JSON");
            if answer["id"] == id {
                assert!(answer.get("error").is_none(), "{method} failed: {answer}");
                return answer["result"].clone();
            }
        }
    }

    /// Evaluates `expression` in the page, its value returned as JSON.
    pub(crate) fn eval(&mut self, expression: &str) -> Value {
        let session = self.session.clone();
        let result = self.call(
            Some(&session),
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        result["result"]["value"].clone()
    }

    /// Waits until `expression` is true in the page.
    #[track_caller]
    pub(crate) fn wait_for(&mut self, expression: &str) {
        let deadline = Instant::now() + PATIENCE;
        while self.eval(expression) != json!(true) {
            assert!(Instant::now() < deadline, "the page never had `{expression}`");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Presses and releases the left mouse button over the middle of the
    /// element `selector` names, as a user's click does.
    #[track_caller]
    pub(crate) fn click(&mut self, selector: &str) {
        let selector_js = serde_json::to_string(selector).expect("a selector serializes");
        let at = self.eval(&format!(
            "(() => {{ const e = document.querySelector({selector_js}); if (!e) return null; e.scrollIntoView({{block: 'center'}});
               const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
        ));
        let (x, y) = (at[0].as_f64(), at[1].as_f64());
        let (Some(x), Some(y)) = (x, y) else { panic!("nothing to click: no `{selector}` in the page") };
        let session = self.session.clone();
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                Some(&session),
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
