//! The binary run with stdout on a pseudo-terminal of a given width, as a person's
//! terminal runs it (stdin and stderr closed: the width is the pty's only).

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::Stdio;

/// Runs `cxlchar ARGS` with stdout on a `cols`-column pty; its exit code and what it
/// printed, line ends as `\n`.
pub fn in_pty(args: &[&str], cols: u16) -> (Option<i32>, String) {
    let (mut master, mut slave) = (-1, -1);
    let ws = libc::winsize {
        ws_row: 60,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two descriptors into the two ints; no name is asked for
    // (null), the terminal settings are the defaults (null), `ws` lives for the call.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &ws,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: openpty just opened both descriptors; nothing else owns them.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut child = {
        let mut cmd = super::cxlchar_process();
        cmd.args(args)
            .env_remove("COLUMNS")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .stdout(Stdio::from(slave));
        cmd.spawn().expect("cxlchar starts")
        // The command, and with it this process's copy of the pty's slave, is dropped
        // here: the master reads EOF (EIO) once the child exits.
    };
    let mut out = Vec::new();
    let mut f = std::fs::File::from(master);
    let mut buf = [0u8; 8192];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.raw_os_error() == Some(libc::EIO) => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => panic!("reading the pty: {e}"),
        }
    }
    let status = child.wait().expect("cxlchar exits");
    (
        status.code(),
        String::from_utf8_lossy(&out).replace("\r\n", "\n"),
    )
}
