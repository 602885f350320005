//! Text for people fitted to the terminal's width: on a terminal, every line longer than
//! its width is wrapped at spaces (never cut: every character is kept, a word longer than
//! a whole line is broken over lines), continued under its hanging indent; on a pipe or
//! in a file, lines are printed whole, as they are (a tool reads one record per line).
//!
//! The width is the terminal's that the text goes to ([`stdout_columns`], and
//! [`stderr_columns`] for the plan a run prints first); `--help` is clap's (feature
//! `wrap_help`, [`crate::registry::command`]). Text laid out in columns (the summary) says
//! where each line's text starts and continues under it ([`wrap_under`]); other text
//! continues under the column that takes the fewest lines ([`fit`]).

use std::io::IsTerminal;
use std::os::fd::AsFd;

/// The narrowest width text is wrapped to (a terminal narrower than this still gets
/// lines of this many characters).
pub const MIN_COLUMNS: usize = 40;

/// Room a continuation line keeps at least after its hanging indent.
const MIN_ROOM: usize = 30;

/// The width of the terminal stdout is, at least [`MIN_COLUMNS`]; `None` when stdout is
/// not a terminal (then lines are printed whole). A terminal that does not say its size
/// gives `COLUMNS`, else 80.
pub fn stdout_columns() -> Option<usize> {
    columns_of(std::io::stdout())
}

/// The width of the terminal stderr is, as [`stdout_columns`]: for what a run prints
/// there (its plan, the bar, errors), `None` when stderr is not a terminal. Read at each
/// call: a resized terminal gets the new width.
pub fn stderr_columns() -> Option<usize> {
    columns_of(std::io::stderr())
}

fn columns_of(stream: impl IsTerminal + AsFd) -> Option<usize> {
    if !stream.is_terminal() {
        return None;
    }
    let cols = terminal_size::terminal_size_of(&stream)
        .map(|(w, _)| usize::from(w.0))
        .or_else(|| std::env::var("COLUMNS").ok()?.trim().parse().ok())
        .unwrap_or(80);
    Some(cols.max(MIN_COLUMNS))
}

/// `text` with every line longer than `width` wrapped ([`wrap`]); as it is without a
/// width.
pub fn fit(text: &str, width: Option<usize>) -> String {
    let Some(width) = width else {
        return text.to_string();
    };
    let mut s = String::with_capacity(text.len() + text.len() / 16);
    for l in text.split_inclusive('\n') {
        let (line, nl) = match l.strip_suffix('\n') {
            Some(x) => (x, "\n"),
            None => (l, ""),
        };
        let wrapped = wrap_fewest(line, width);
        s.push_str(&wrapped.join("\n"));
        s.push_str(nl);
    }
    s
}

/// `line` wrapped under the column start ([`column_starts`]) that takes the fewest lines
/// (on a tie the later: a table row continues under its last cells), or under its own
/// indent plus 4 where that takes a third fewer lines or better (a wide table row: two
/// lines rather than three; a paragraph under its label keeps its alignment).
pub fn wrap_fewest(line: &str, width: usize) -> Vec<String> {
    if line.chars().count() <= width {
        return vec![line.to_string()];
    }
    let aligned = column_starts(line, width)
        .into_iter()
        .map(|at| wrap(line, width, at))
        .reduce(|best, w| if w.len() <= best.len() { w } else { best })
        .unwrap_or_else(|| wrap(line, width, hanging_indent(line, width)));
    if aligned.len() <= 2 {
        return aligned;
    }
    let lead = line.chars().take_while(|c| *c == ' ').count();
    let plain = wrap(line, width, (lead + 4).min(width / 2));
    if plain.len() * 3 <= aligned.len() * 2 {
        plain
    } else {
        aligned
    }
}

/// `line` wrapped ([`wrap`]) with its continuation lines under column `at`, where its text
/// starts (after its label: `self-checks    `, `  crew_skew:  `); under its own indent
/// plus 4 where `at` would leave less than [`MIN_ROOM`] columns (a label too long for a
/// narrow terminal).
pub fn wrap_under(line: &str, width: usize, at: usize) -> Vec<String> {
    let at = if width.saturating_sub(at) >= MIN_ROOM.min(width / 2) {
        at
    } else {
        let lead = line.chars().take_while(|c| *c == ' ').count();
        (lead + 4).min(width / 2)
    };
    wrap(line, width, at)
}

/// Where the line's columns of text start (after a run of two or more spaces: `label:
/// text`, a table's cells), among those that leave [`MIN_ROOM`] columns.
pub fn column_starts(line: &str, width: usize) -> Vec<usize> {
    let chars: Vec<char> = line.chars().collect();
    let lead = chars.iter().take_while(|c| **c == ' ').count();
    ((lead + 2)..chars.len().min(width))
        .filter(|&i| chars[i] != ' ' && chars[i - 1] == ' ' && chars[i - 2] == ' ')
        .take_while(|&i| width.saturating_sub(i) >= MIN_ROOM)
        .collect()
}

/// The column a wrapped line continues at: where its last column of text starts
/// ([`column_starts`]), else its own indent plus 4.
pub fn hanging_indent(line: &str, width: usize) -> usize {
    let lead = line.chars().take_while(|c| *c == ' ').count();
    column_starts(line, width)
        .last()
        .copied()
        .unwrap_or_else(|| (lead + 4).min(width.saturating_sub(MIN_ROOM.min(width / 2))))
}

/// `line` in lines of at most `width` characters: broken at spaces (the spaces at a break
/// dropped, those inside a line kept), each continuation line starting with `indent`
/// spaces; a word longer than a continuation line's room is broken into pieces. Nothing
/// is cut: the words of the result are the words of `line`, in order.
pub fn wrap(line: &str, width: usize, indent: usize) -> Vec<String> {
    let width = width.max(1);
    if line.chars().count() <= width {
        return vec![line.to_string()];
    }
    let indent = indent.min(width - 1);
    let pad = " ".repeat(indent);
    let mut out: Vec<String> = vec![];
    let mut cur = String::new();
    let mut len = 0;
    // No word on the current line yet.
    let mut at_start = true;
    for (gap, word) in tokens(line) {
        let wl = word.chars().count();
        // A continuation line starts with its indent, not with the gap of the break.
        let mut gap = if at_start && !out.is_empty() { "" } else { gap };
        if !at_start && len + gap.chars().count() + wl > width {
            out.push(std::mem::replace(&mut cur, pad.clone()));
            len = indent;
            gap = "";
        }
        cur.push_str(gap);
        len += gap.chars().count();
        // A word longer than the room left is broken into pieces.
        let mut rest: Vec<char> = word.chars().collect();
        let mut broke = false;
        while len + rest.len() > width {
            let room = width.saturating_sub(len);
            let piece: String = rest.drain(..room.min(rest.len())).collect();
            cur.push_str(&piece);
            out.push(std::mem::replace(&mut cur, pad.clone()));
            len = indent;
            broke = true;
        }
        at_start = rest.is_empty() && broke;
        len += rest.len();
        cur.extend(rest);
    }
    if !at_start || out.is_empty() {
        out.push(cur);
    }
    out
}

/// The line as (spaces before, word) pairs.
fn tokens(line: &str) -> Vec<(&str, &str)> {
    let mut v = vec![];
    let mut rest = line;
    while !rest.is_empty() {
        let ws = rest.len() - rest.trim_start_matches(' ').len();
        let (gap, after) = rest.split_at(ws);
        let wl = after.find(' ').unwrap_or(after.len());
        let (word, next) = after.split_at(wl);
        if word.is_empty() {
            break;
        }
        v.push((gap, word));
        rest = next;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    #[test]
    fn short_lines_are_left_as_they_are() {
        assert_eq!(wrap("  a  b", 10, 4), vec!["  a  b"]);
        assert_eq!(fit("x\n\ny\n", Some(40)), "x\n\ny\n");
        let long = "word ".repeat(50);
        assert_eq!(fit(&long, None), long, "no width: whole lines");
    }

    #[test]
    fn long_lines_wrap_at_spaces_under_their_hanging_indent_and_keep_every_word() {
        let line = "  missing:  mpi_lat_ns (produced by external: osu_latency / osu_bw \
                    (not measured by cxlchar; supply with --what-if KEY=VALUE)); the network";
        let at = hanging_indent(line, 60);
        assert_eq!(at, 12, "after `missing:  `");
        let w = wrap(line, 60, at);
        assert!(w.len() > 1, "{w:?}");
        for l in &w {
            assert!(l.chars().count() <= 60, "{l:?}");
        }
        for l in &w[1..] {
            assert!(l.starts_with(&" ".repeat(12)) && !l.starts_with(&" ".repeat(13)));
        }
        assert!(w[0].starts_with("  missing:  mpi_lat_ns"));
        assert_eq!(words(&w.join(" ")), words(line));
    }

    #[test]
    fn a_paragraph_continues_under_its_label_not_under_a_later_gap() {
        let line = "  equation: T_msg(m) = MPI_LAT + m / MPI_BW;  T_cxl = 2 x CXL_ATOMIC_LAT;  \
                    crossover m* = (2 x CXL_ATOMIC_LAT - MPI_LAT) x MPI_BW";
        let line = line.replacen("equation: ", "equation:  ", 1);
        let w = wrap_fewest(&line, 80);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[1].starts_with(&format!("{}crossover", " ".repeat(13))),
            "{w:?}"
        );
    }

    #[test]
    fn a_wide_table_row_takes_two_lines_rather_than_three() {
        let row = format!(
            "  {:<40}{:>9}{:>9}{:>10}{:>9}{:>9}  GB/s   down    yes      not comparable",
            "agents_read_k16_agg_bw_gbs", "78.079", "64.415", "-13.664", "-17.5%", "2.333"
        );
        let w = wrap_fewest(&row, 80);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[1].starts_with("      2.333") || w[1].starts_with("      GB/s"),
            "{w:?}"
        );
        assert_eq!(words(&w.join(" ")), words(&row));
    }

    #[test]
    fn a_line_continues_under_the_column_it_is_given_or_its_indent_plus_4() {
        let line = format!("self-checks    {}", "verdict words ".repeat(12));
        let w = wrap_under(&line, 80, 15);
        assert!(w.len() > 1, "{w:?}");
        for l in &w[1..] {
            assert!(
                l.starts_with(&" ".repeat(15)) && !l.starts_with(&" ".repeat(16)),
                "{w:?}"
            );
        }
        assert_eq!(words(&w.join(" ")), words(&line));
        // A column that leaves too little room: the line's indent plus 4.
        let w = wrap_under(&line, 40, 30);
        assert!(
            w[1].starts_with("    ") && !w[1].starts_with("     "),
            "{w:?}"
        );
        for l in &w {
            assert!(l.chars().count() <= 40, "{l:?}");
        }
    }

    #[test]
    fn a_word_longer_than_a_line_is_broken_not_cut() {
        let word = "x".repeat(130);
        let line = format!("code: {word} end");
        let w = wrap(&line, 50, 4);
        for l in &w {
            assert!(l.chars().count() <= 50, "{l:?}");
        }
        let kept: String = w
            .iter()
            .flat_map(|l| l.chars())
            .filter(|c| *c == 'x')
            .collect();
        assert_eq!(kept.len(), 130, "{w:?}");
        assert!(w.last().unwrap().ends_with("end"), "{w:?}");
    }

    #[test]
    fn a_table_row_continues_under_its_last_cell() {
        let row = format!("  name_of_key   12.5  ns  {}", "meaning words ".repeat(10));
        let w = wrap(&row, 80, hanging_indent(&row, 80));
        let at = row.find("meaning").unwrap();
        assert!(w[1].starts_with(&" ".repeat(at)), "{w:?}");
        assert_eq!(words(&w.join(" ")), words(&row));
    }

    #[test]
    fn every_width_keeps_every_character_of_random_lines() {
        let text = "ab cdefgh  ijklmnopqrstu v wxyz0123456789abcdefghij  k l mnopq rs \
                    tuvwxyzABCDEFGHIJKLMNOP  QRS TU V";
        for width in 1..90 {
            for indent in [0, 2, 8, 30] {
                let w = wrap(text, width, indent);
                for l in &w {
                    assert!(l.chars().count() <= width.max(1), "{width} {indent}: {l:?}");
                }
                let a: String = text.chars().filter(|c| *c != ' ').collect();
                let b: String = w.concat().chars().filter(|c| *c != ' ').collect();
                assert_eq!(a, b, "{width} {indent}");
            }
        }
    }
}
