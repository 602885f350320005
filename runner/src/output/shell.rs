//! Words of a command the tool suggests (or records) as a shell reads them: every file
//! name or argument quoted so that pasting the command runs it and nothing else.
//!
//! A word of plain characters stays as it is; any other is single-quoted ([`shlex`]), in
//! which `$(...)`, backquotes, `;` and spaces are literal. A word with a control character
//! (a newline, an escape) or bytes that are not UTF-8 (a path) cannot be printed on one
//! line inside single quotes: it is written in the `$'...'` form with `\n`, `\xHH`
//! escapes (bash, zsh, ksh and POSIX.1-2024 sh read it), so the line stays one line and
//! names the very bytes.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// `word` as one shell word, safe to paste.
pub fn quote(word: &str) -> String {
    if word.chars().any(char::is_control) {
        return ansi_c(word.as_bytes());
    }
    match shlex::try_quote(word) {
        Ok(q) => q.into_owned(),
        // Only a NUL byte is refused, and it is a control character.
        Err(_) => ansi_c(word.as_bytes()),
    }
}

/// A path as one shell word, safe to paste: its bytes as they are, also those that are not
/// UTF-8.
pub fn quote_path(path: &std::path::Path) -> String {
    quote_os(path.as_os_str())
}

/// An OS string as one shell word ([`quote_path`]).
pub fn quote_os(word: &OsStr) -> String {
    match word.to_str() {
        Some(s) => quote(s),
        None => ansi_c(word.as_bytes()),
    }
}

/// A command line, each word quoted ([`quote`]).
pub fn command<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `$'...'` form of `bytes`: printable UTF-8 as it is, `\\`, `\'`, the usual control
/// escapes, every other control character or byte as `\xHH` (UTF-8 bytes of a C1
/// control character each so).
fn ansi_c(bytes: &[u8]) -> String {
    let mut s = String::from("$'");
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => s.push_str("\\\\"),
                '\'' => s.push_str("\\'"),
                '\n' => s.push_str("\\n"),
                '\t' => s.push_str("\\t"),
                '\r' => s.push_str("\\r"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        s.push_str(&format!("\\x{b:02x}"));
                    }
                }
                c => s.push(c),
            }
        }
        for b in chunk.invalid() {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s.push('\'');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// What `sh -c 'printf %s "$1"' _ WORD` reads WORD as, with WORD pasted as `quoted`.
    fn read_back(quoted: &str) -> Vec<u8> {
        let o = Command::new("bash")
            .arg("-c")
            .arg(format!("printf %s {quoted}"))
            .output()
            .expect("bash runs");
        assert!(o.status.success(), "{quoted}: {o:?}");
        o.stdout
    }

    #[test]
    fn hostile_names_come_back_as_themselves_and_run_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let pwned = dir.path().join("PWNED");
        let hostile = [
            format!("fleet'; touch {}; '.json", pwned.display()),
            format!("$(touch {}).json", pwned.display()),
            format!("`touch {}`.json", pwned.display()),
            "a b\nc\td.json".to_string(),
            "it's \"x\" \\ ; | & > <.json".to_string(),
            "\u{1b}[31mred\u{85}.json".to_string(),
            "plain-name_1.json".to_string(),
            "-".to_string(),
        ];
        for h in &hostile {
            let q = quote(h);
            assert!(!q.chars().any(char::is_control), "{q:?}");
            assert_eq!(read_back(&q), h.as_bytes(), "{q}");
        }
        assert!(!pwned.exists(), "a quoted name ran a command");
        assert_eq!(quote("plain-name_1.json"), "plain-name_1.json");
        let c = command(&["printf", "%s|", ".a b", "x'y"]);
        assert!(c.starts_with("printf '%s|' '.a b' "), "{c}");
        let o = Command::new("bash").arg("-c").arg(&c).output().unwrap();
        assert_eq!(o.stdout, b".a b|x'y|");
    }

    #[test]
    fn a_path_that_is_not_utf8_is_named_by_its_bytes() {
        let p = OsStr::from_bytes(b"bad\xffname.json");
        let q = quote_os(p);
        assert_eq!(q, r"$'bad\xffname.json'");
        assert_eq!(read_back(&q), b"bad\xffname.json");
    }
}
