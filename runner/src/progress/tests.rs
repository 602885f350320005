use super::*;
use indicatif::TermLike;
use std::sync::mpsc;

#[test]
fn eta_is_the_expected_seconds_left_at_this_machines_pace() {
    let s = Duration::from_secs;
    let ms = |x: u64| x * SCALE as u64;
    assert_eq!(eta(s(10), 0, 0), None, "no total: no estimate");
    // Nothing done yet: the recorded seconds as they are.
    assert_eq!(eta(s(0), 0, ms(60)), Some(s(60)));
    // On pace (20 s of 20 expected): the expected seconds left.
    assert_eq!(eta(s(20), ms(20), ms(60)), Some(s(40)));
    // Twice as slow over 100 expected seconds: (200 + 20) / (100 + 20) = 11/6 pace.
    let e = eta(s(200), ms(100), ms(160)).unwrap();
    assert!((e.as_secs_f64() - 60.0 * 11.0 / 6.0).abs() < 1e-6, "{e:?}");
    // A long first family does not extrapolate to the whole run: 40 s spent on 12
    // expected seconds of 60 gives (60 / 32) x 48 s left = 90 s, not 40 / 12 x 48.
    let e = eta(s(40), ms(12), ms(60)).unwrap();
    assert!((e.as_secs_f64() - 90.0).abs() < 1e-6, "{e:?}");
    // All done, or more than a total that shrank: nothing left, never negative.
    assert_eq!(eta(s(10), ms(60), ms(60)), Some(s(0)));
    assert_eq!(eta(s(10), ms(70), ms(60)), Some(s(0)));
    // Mid-way through a 12 s unit on schedule (6 s run, credited in flight) of a 52 s
    // run: its other 6 s and the 40 s after it.
    let done = in_flight(s(6), ms(12));
    assert_eq!(eta(s(6), done, ms(52)), Some(s(46)));
    // A unit that overran its weight is credited its weight, no more.
    assert_eq!(in_flight(s(30), ms(12)), ms(12));
}

#[test]
fn eta_is_formatted_for_people() {
    assert_eq!(format_eta(Duration::from_secs(45)), "45s");
    assert_eq!(format_eta(Duration::from_secs(185)), "3m05s");
    assert_eq!(format_eta(Duration::from_secs(3720)), "1h02m");
}

#[test]
fn the_style_template_parses() {
    let _ = style();
}

#[test]
fn the_first_line_fits_every_width_and_keeps_the_unit_whole_while_it_can() {
    let s = State {
        elapsed: Duration::from_secs(65),
        done: fixed(30.0),
        pos: fixed(30.0),
        len: fixed(60.0),
    };
    let unit = "mem.copy-threshold on interleave:0,1";
    for width in 20..=220 {
        let l = first_line(unit, &s, width);
        assert!(l.chars().count() <= width, "{width}: {l:?}");
        if width >= 80 {
            assert!(l.starts_with(unit), "{width}: {l:?}");
            assert!(l.contains("50%  1m05s elapsed, ETA ~"), "{width}: {l:?}");
            assert!(l.contains('['), "a bar at {width}: {l:?}");
        }
    }
    let wide = first_line(unit, &s, 200);
    assert!(
        wide.contains(&format!("[{}>{}]", "=".repeat(14), " ".repeat(15))),
        "{wide}"
    );
    let narrow = first_line(unit, &s, 40);
    // (65 + 20) / (30 + 20) of the 30 planned seconds left.
    assert!(
        narrow.ends_with("ETA ~51s") && narrow.contains('…'),
        "{narrow}"
    );
}

/// Waits for `f` on another thread, failing the test (not hanging it) past `limit`.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("did not finish within {limit:?}: the display blocked it"))
}

fn cost(points: &[(usize, f64)]) -> Cost {
    let mut c = Cost::new();
    for (i, (n, s)) in points.iter().enumerate() {
        c.add(format!("p{i}"), *n, *s);
    }
    c
}

#[test]
fn points_move_the_reported_position_and_the_bar_follows() {
    let bar = ProgressBar::hidden();
    let p = Progress::with(Mode::Bar, Some(bar.clone()));
    p.set_total(10.0);
    p.start("mem.latency", "anon", &cost(&[(2, 1.5), (1, 3.0)]));
    let point = p.point_callback();
    point();
    assert_eq!(
        p.shown.pos.load(Ordering::Relaxed),
        fixed(1.5),
        "the first point"
    );
    point();
    point();
    assert_eq!(p.shown.pos.load(Ordering::Relaxed), fixed(6.0));
    point();
    assert_eq!(
        p.shown.pos.load(Ordering::Relaxed),
        fixed(6.0),
        "a point beyond the plan credits nothing"
    );
    assert_eq!(p.done(), 4);
    p.start("mem.bandwidth", "anon", &cost(&[(4, 0.5)]));
    point();
    assert_eq!(p.done(), 1);
    assert_eq!(
        p.shown.pos.load(Ordering::Relaxed),
        fixed(8.0),
        "the unit's end credits what it had left"
    );
    p.dropped(1.0);
    assert_eq!(p.shown.len.load(Ordering::Relaxed), fixed(9.0));
    (p.callback())("placing memory...");
    // The display thread draws it within a frame or two.
    let deadline = Instant::now() + Duration::from_secs(5);
    while bar.message() != "placing memory..." || !bar.prefix().contains(" 88% ") {
        assert!(
            Instant::now() < deadline,
            "the display never drew the report"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        bar.prefix().starts_with("mem.bandwidth on anon  ["),
        "{}",
        bar.prefix()
    );
    drop(p);
    assert!(bar.is_finished());
}

/// A terminal that records what is drawn on it and can be made to stall, like a
/// terminal whose user pressed Ctrl-S or a tmux pane in copy mode.
#[derive(Debug, Clone, Default)]
struct Recorder {
    text: Arc<Mutex<String>>,
    frames: Arc<AtomicU64>,
    stalled: Arc<AtomicBool>,
}

impl Recorder {
    fn wait_while_stalled(&self) {
        while self.stalled.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl TermLike for Recorder {
    fn width(&self) -> u16 {
        80
    }
    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.write_str(s)?;
        self.write_str("\n")
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.wait_while_stalled();
        hold(&self.text).push_str(s);
        Ok(())
    }
    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }
    fn flush(&self) -> std::io::Result<()> {
        self.frames.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

fn drawn(term: &Recorder) -> Progress {
    let target = ProgressDrawTarget::term_like(Box::new(term.clone()));
    Progress::with(
        Mode::Bar,
        Some(ProgressBar::with_draw_target(Some(1), target)),
    )
}

#[test]
fn reporting_never_waits_for_a_frame_that_draws_the_eta() {
    // A bar that really renders its template (the ETA key included) on every frame,
    // while points are reported as fast as a loop can: the reporting side must never
    // wait for the display, which once took the lock a point held and hung every run.
    let term = Recorder::default();
    let p = drawn(&term);
    p.set_total(100.0);
    let shown = p.shown.clone();
    let p = within(Duration::from_secs(20), move || {
        let point = p.point_callback();
        let message = p.callback();
        for unit in 0..50 {
            p.start("mem.latency", "anon", &cost(&[(1000, 0.001)]));
            for i in 0..1000 {
                point();
                if i % 100 == 0 {
                    message(&format!("unit {unit}, point {i}"));
                }
            }
            p.done();
        }
        p
    });
    assert_eq!(shown.pos.load(Ordering::Relaxed), fixed(50.0));
    drop(p);
    assert!(term.frames.load(Ordering::Relaxed) > 0, "nothing was drawn");
    assert!(hold(&term.text).contains("ETA"), "{}", hold(&term.text));
}

#[test]
fn a_stalled_terminal_stalls_the_display_not_the_run() {
    let term = Recorder::default();
    let p = drawn(&term);
    p.set_total(10.0);
    // Let a first frame draw, then stall the terminal and report a new message: the
    // display thread blocks in the write of the frame that shows it (a draw inside
    // set_message or tick), and every later report must still return at once.
    std::thread::sleep(Duration::from_millis(300));
    term.stalled.store(true, Ordering::Release);
    (p.callback())("the message the stalled frame draws");
    std::thread::sleep(Duration::from_millis(300));
    let p = within(Duration::from_secs(10), move || {
        let point = p.point_callback();
        let message = p.callback();
        for _ in 0..5 {
            p.start("pool.c2c", "anon", &cost(&[(100, 0.01)]));
            for i in 0..100 {
                point();
                message(&format!("point {i}"));
            }
            p.done();
            std::thread::sleep(Duration::from_millis(150));
        }
        p
    });
    assert_eq!(p.shown.pos.load(Ordering::Relaxed), fixed(5.0));
    term.stalled.store(false, Ordering::Release);
    drop(p);
}

#[test]
fn the_elapsed_time_ticks_while_a_point_runs() {
    let term = Recorder::default();
    let p = drawn(&term);
    p.set_total(10.0);
    p.start("mem.latency", "anon", &cost(&[(1, 10.0)]));
    // Nothing is reported for 2.5 s (one long point): frames keep coming.
    let before = term.frames.load(Ordering::Relaxed);
    std::thread::sleep(Duration::from_millis(2500));
    let after = term.frames.load(Ordering::Relaxed);
    assert!(after >= before + 2, "frames {before} -> {after} in 2.5 s");
    assert!(
        hold(&term.text).contains("2s elapsed"),
        "{}",
        hold(&term.text)
    );
    drop(p);
}

#[test]
fn a_dumb_terminal_gets_every_message_as_a_line_in_order() {
    let p = Progress::with(Mode::Lines, None);
    let message = p.callback();
    for i in 0..10 {
        message(&format!("line {i}"));
    }
    // The lines are printed by the display thread; what is owed is bounded.
    for i in 0..(LINES_HELD + 10) {
        message(&format!("more {i}"));
    }
    let held = hold(&p.shown.lines).0.len();
    assert!(held <= LINES_HELD, "{held} lines held");
    let shown = p.shown.clone();
    drop(p);
    assert!(
        hold(&shown.lines).0.is_empty(),
        "the last lines were printed at the end"
    );
}

#[test]
fn a_message_of_several_lines_shows_its_first_on_the_bar() {
    let bar = ProgressBar::hidden();
    let p = Progress::with(Mode::Bar, Some(bar.clone()));
    (p.callback())("\npool.flush on anon: p50 ns\n   size  stores\n   64 B    12.0\n");
    let deadline = Instant::now() + Duration::from_secs(5);
    while bar.message() != "pool.flush on anon: p50 ns" {
        assert!(Instant::now() < deadline, "{:?}", bar.message());
        std::thread::sleep(Duration::from_millis(10));
    }
}
