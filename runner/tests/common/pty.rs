//! The binary run on a pseudo-terminal, as a person's terminal runs it (portable-pty, the
//! pty layer of wezterm): stdin, stdout and stderr on the pty, or stdout on a pipe or a
//! file with stderr on the pty; the pty resized (SIGWINCH) and Ctrl-C typed (SIGINT
//! through the line discipline) while it runs; and what was drawn read back as the lines
//! a terminal would show.

use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where the command's stdout goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stdout {
    /// The pty, as stderr.
    Pty,
    /// A pipe (to a `cat` that writes this file): the pty sees only stderr.
    Pipe(PathBuf),
    /// Alone on the pty, stderr closed (`2>/dev/null`).
    Alone,
}

/// How to run it.
#[derive(Clone, Debug)]
pub struct Term {
    pub cols: u16,
    pub rows: u16,
    pub stdout: Stdout,
    /// `TERM` (None: unset).
    pub term: Option<String>,
    /// Further variables set (`NO_COLOR`).
    pub env: Vec<(String, String)>,
    /// Working directory.
    pub cwd: Option<PathBuf>,
}

impl Term {
    /// A `cols` x `rows` xterm with stdout and stderr on it.
    pub fn new(cols: u16, rows: u16) -> Term {
        Term {
            cols,
            rows,
            stdout: Stdout::Pty,
            term: Some("xterm-256color".into()),
            env: Vec::new(),
            cwd: None,
        }
    }
}

/// How a run ended.
#[derive(Debug)]
pub struct Ended {
    /// Exit code (None: killed by a signal, or still running when the bound passed).
    pub code: Option<i32>,
    /// Whether the bound passed first (then it was killed).
    pub timed_out: bool,
    /// Every byte written to the pty.
    pub raw: Vec<u8>,
    pub took: Duration,
}

impl Ended {
    /// What was drawn, escapes left in, as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.raw).into_owned()
    }
}

/// A command running on a pty.
pub struct Session {
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    out: Arc<Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
    began: Instant,
}

fn size(cols: u16, rows: u16) -> PtySize {
    PtySize {
        rows,
        cols,
        pixel_width: 0,
        pixel_height: 0,
    }
}

/// A shell command line word, quoted for `sh -c`.
fn quoted(w: &str) -> String {
    format!("'{}'", w.replace('\'', r"'\''"))
}

impl Session {
    /// Starts `cxlchar ARGS` on a pty as `t` says.
    pub fn start(args: &[&str], t: &Term) -> Session {
        let pair = native_pty_system()
            .openpty(size(t.cols, t.rows))
            .expect("openpty");
        let bin = assert_cmd::cargo::cargo_bin("cxlchar");
        let mut cmd = match &t.stdout {
            Stdout::Pty => {
                let mut c = CommandBuilder::new(&bin);
                c.args(args);
                c
            }
            redirected => {
                let mut line = format!("exec {}", quoted(bin.to_str().unwrap()));
                for a in args {
                    line.push(' ');
                    line.push_str(&quoted(a));
                }
                match redirected {
                    Stdout::Pipe(f) => {
                        // exec keeps the shell's pid for the measuring process; the pipe's
                        // reader is a cat started first.
                        line = format!("{{ {line}; }} | cat > {}", quoted(f.to_str().unwrap()));
                    }
                    _ => line.push_str(" 2>/dev/null"),
                }
                // bash's pipefail: the status is cxlchar's, not cat's.
                let mut c = CommandBuilder::new("bash");
                c.args(["-c", &format!("set -o pipefail; {line}")]);
                c
            }
        };
        cmd.env_remove("COLUMNS");
        cmd.env_remove("LINES");
        match &t.term {
            Some(v) => cmd.env("TERM", v),
            None => cmd.env_remove("TERM"),
        }
        for (k, v) in &t.env {
            cmd.env(k, v);
        }
        if let Some(d) = &t.cwd {
            cmd.cwd(d);
        }
        let child = pair
            .slave
            .spawn_command(cmd)
            .expect("cxlchar starts on the pty");
        // This process's copy of the slave is closed: the master reads EOF (EIO) once
        // the child and everything it started have exited.
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = pair.master.take_writer().expect("pty writer");
        let out = Arc::new(Mutex::new(Vec::new()));
        let sink = out.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => sink.lock().unwrap().extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break, // EIO: the slave side is closed
                }
            }
        });
        Session {
            master: pair.master,
            writer,
            child,
            out,
            reader: Some(reader),
            began: Instant::now(),
        }
    }

    /// What was drawn so far, as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.out.lock().unwrap()).into_owned()
    }

    /// Waits until what was drawn satisfies `pred`; false when `limit` passed first or
    /// the command ended without it.
    pub fn wait_for(&mut self, limit: Duration, pred: impl Fn(&str) -> bool) -> bool {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if pred(&self.text()) {
                return true;
            }
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                std::thread::sleep(Duration::from_millis(100));
                return pred(&self.text());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Resizes the pty (the kernel sends SIGWINCH to the foreground process group).
    pub fn resize(&self, cols: u16, rows: u16) {
        self.master.resize(size(cols, rows)).expect("resize");
    }

    /// Types `bytes` (`b"\x03"`: Ctrl-C).
    pub fn type_bytes(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("typing into the pty");
        self.writer.flush().expect("typing into the pty");
    }

    /// Waits for the command to end, at most `limit` (then it is killed).
    pub fn finish(mut self, limit: Duration) -> Ended {
        let end = self.began + limit;
        let mut timed_out = false;
        let status = loop {
            match self.child.try_wait().expect("waiting for cxlchar") {
                Some(s) => break Some(s),
                None if Instant::now() >= end => {
                    timed_out = true;
                    let _ = self.child.kill();
                    break self.child.wait().ok();
                }
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        let took = self.began.elapsed();
        // Whatever the command wrote before it ended is read before the pty goes away.
        drop(self.writer);
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        drop(self.master);
        let raw = std::mem::take(&mut *self.out.lock().unwrap());
        let code = status
            .filter(|s| s.signal().is_none() && !timed_out)
            .map(|s| s.exit_code() as i32);
        Ended {
            code,
            timed_out,
            raw,
            took,
        }
    }
}

/// Runs `cxlchar ARGS` on `t` to its end, at most `limit`.
pub fn run(args: &[&str], t: &Term, limit: Duration) -> Ended {
    Session::start(args, t).finish(limit)
}

/// Runs `cxlchar ARGS` with stdout on a `cols`-column pty (stderr closed: the width is
/// the pty's only); its exit code and what it printed, line ends as `\n`.
pub fn in_pty(args: &[&str], cols: u16) -> (Option<i32>, String) {
    let mut t = Term::new(cols, 60);
    t.stdout = Stdout::Alone;
    let e = run(args, &t, Duration::from_secs(600));
    assert!(!e.timed_out, "cxlchar {args:?} did not end in 600 s");
    (e.code, e.text().replace("\r\n", "\n"))
}

/// As [`in_pty`], with stderr on the pty too (what a run prints there: its plan, the
/// progress bar), both in the order written.
pub fn in_pty_with_stderr(args: &[&str], cols: u16) -> (Option<i32>, String) {
    let e = run(args, &Term::new(cols, 60), Duration::from_secs(600));
    assert!(!e.timed_out, "cxlchar {args:?} did not end in 600 s");
    (e.code, e.text().replace("\r\n", "\n"))
}

/// The lines a terminal shows from `raw`, as they were drawn: escape sequences (CSI,
/// OSC) removed, every run of text between two carriage returns or line feeds one line
/// (a bar redrawn in place gives one line per frame). Each line's width is what the
/// cursor covered.
pub fn drawn_lines(raw: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    // CSI: parameters, then one final byte in @..~
                    for d in chars.by_ref() {
                        if ('@'..='~').contains(&d) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    // OSC: up to BEL or ST
                    while let Some(d) = chars.next() {
                        if d == '\x07' || (d == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' | '\n' => {
                if !cur.is_empty() {
                    lines.push(std::mem::take(&mut cur));
                }
            }
            c if c.is_control() => {}
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// The escape sequences in `raw` (to check what a dumb terminal is sent).
pub fn escapes(raw: &str) -> usize {
    raw.matches('\x1b').count()
}
