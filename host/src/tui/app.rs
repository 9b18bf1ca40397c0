//! [`Tui`]: whether a run shows the UI, taking the terminal over, the
//! thread that reads keys and draws, and giving the terminal back.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::KeyEvent;

use super::state::State;
use super::{draw, input, keys, screen};

use crate::config::Workspace;
use crate::events::{Event, Subscriber};
use crate::graph::TaskGraph;
use crate::run::Controls;

/// How long the UI waits for a key before it looks at the state again.
const TICK: Duration = Duration::from_millis(40);
/// The running clocks move at least this often.
const REDRAW: Duration = Duration::from_millis(250);

/// Whether a run shows the terminal UI: `--ui` when given (`tui` only on
/// a terminal), else on an interactive terminal outside CI when a selected
/// task is persistent (a server's output never ends, so lines scrolling by
/// are of little use). Returns the choice and, when `tui` was asked for
/// and cannot be had, why.
pub(crate) fn wanted(asked: Option<bool>, ws: &Workspace, graph: &TaskGraph) -> (bool, Option<&'static str>) {
    let terminal = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    match asked {
        Some(true) if !terminal => (false, Some("--ui=tui needs a terminal (stdin and stdout); showing the stream")),
        Some(tui) => (tui, None),
        None => {
            let persistent = graph.nodes.iter().any(|n| ws.projects[n.project].tasks[&n.id.task].persistent);
            (terminal && std::env::var_os("CI").is_none() && persistent, None)
        }
    }
}

/// The UI of a run; a subscriber of its events.
#[derive(Debug)]
pub(crate) struct Tui {
    state: Arc<Mutex<State>>,
    dirty: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Tui {
    /// Takes over the terminal and starts drawing the run of `graph`.
    pub(crate) fn start(
        ws: &Workspace,
        graph: &TaskGraph,
        concurrency: usize,
        title: String,
    ) -> std::io::Result<(Tui, Arc<Controls>)> {
        let p50s = crate::history::recorded_p50s(ws, graph);
        let planned = graph
            .topological_order()
            .into_iter()
            .map(|n| {
                let node = &graph.nodes[n];
                let task = &ws.projects[node.project].tasks[&node.id.task];
                let id = node.id.to_string();
                let p50 = p50s.get(&id).copied();
                (id, p50, task.persistent, task.interactive)
            })
            .collect();
        let state = Arc::new(Mutex::new(State::new(planned, concurrency)));
        let controls = Arc::new(Controls::default());
        let dirty = Arc::new(AtomicBool::new(true));
        let done = Arc::new(AtomicBool::new(false));
        let (key_tx, keys) = mpsc::channel();
        input::spawn_reader(key_tx)?;
        let screen = screen::Screen::enter()?;
        let thread = {
            let (state, controls, dirty, done) = (state.clone(), controls.clone(), dirty.clone(), done.clone());
            std::thread::Builder::new()
                .name("vx-tui".into())
                .spawn(move || ui_loop(screen, &keys, &state, &controls, &dirty, &done, &title))?
        };
        Ok((Tui { state, dirty, done, thread: Mutex::new(Some(thread)) }, controls))
    }

    /// Stops drawing and gives the terminal back; the screen is as it was
    /// before the run. Safe to call more than once.
    pub(crate) fn close(&self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.lock().expect("tui thread lock poisoned").take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        self.close();
    }
}

impl Subscriber for Tui {
    fn on(&self, event: &Event<'_>) {
        self.state.lock().expect("tui state lock poisoned").apply(event);
        self.dirty.store(true, Ordering::Release);
    }
}

/// Reads keys and draws until the run is over (or the UI is closed).
fn ui_loop(
    mut screen: screen::Screen,
    keys: &mpsc::Receiver<KeyEvent>,
    state: &Mutex<State>,
    controls: &Controls,
    dirty: &AtomicBool,
    done: &AtomicBool,
    title: &str,
) {
    let mut drawn = Instant::now();
    loop {
        match keys.recv_timeout(TICK) {
            Ok(key) => {
                keys::handle(key, &mut state.lock().expect("tui state lock poisoned"), controls);
                dirty.store(true, Ordering::Release);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            // The terminal went away (its window closed): nothing to show
            // on. vx had SIGHUP with it, which stops the run.
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        let finished = state.lock().expect("tui state lock poisoned").finished;
        if done.load(Ordering::SeqCst) || finished {
            break;
        }
        if dirty.swap(false, Ordering::AcqRel) || drawn.elapsed() >= REDRAW {
            let state = state.lock().expect("tui state lock poisoned");
            if screen.draw(|frame| draw::draw(frame, &state, title)).is_err() {
                break;
            }
            drawn = Instant::now();
        }
    }
    screen.leave();
}
