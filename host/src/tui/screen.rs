//! The terminal while the UI owns it: raw mode (keys arrive one by one,
//! Ctrl-C as a key), the alternate screen (the user's scrollback is left
//! alone) and a hidden cursor. [`Screen::leave`], or dropping the screen,
//! puts all three back, so a run that ends in any way leaves the terminal
//! as it found it.

use std::io::Stdout;

use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode};
use ratatui::{Frame, Terminal};

pub(crate) struct Screen {
    terminal: Terminal<CrosstermBackend<Stdout>>,
    left: bool,
}

impl Screen {
    pub(crate) fn enter() -> std::io::Result<Screen> {
        enable_raw_mode()?;
        let mut stdout = std::io::stdout();
        if let Err(e) = ratatui::crossterm::execute!(stdout, EnterAlternateScreen, ratatui::crossterm::cursor::Hide) {
            let _ = disable_raw_mode();
            return Err(e);
        }
        let terminal = Terminal::new(CrosstermBackend::new(stdout))?;
        Ok(Screen { terminal, left: false })
    }

    /// Draws a frame; ratatui fits it to the terminal's size first, so a
    /// resize shows at the next frame.
    pub(crate) fn draw(&mut self, render: impl FnOnce(&mut Frame<'_>)) -> std::io::Result<()> {
        self.terminal.draw(render).map(|_| ())
    }

    /// Gives the terminal back: main screen, cursor, cooked mode.
    pub(crate) fn leave(&mut self) {
        if std::mem::replace(&mut self.left, true) {
            return;
        }
        let _ = ratatui::crossterm::execute!(
            self.terminal.backend_mut(),
            LeaveAlternateScreen,
            ratatui::crossterm::cursor::Show
        );
        let _ = disable_raw_mode();
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        self.leave();
    }
}
