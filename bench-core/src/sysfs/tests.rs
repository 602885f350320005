use super::*;
use std::sync::mpsc;
use std::time::Duration;

/// Runs `f` on a thread and waits at most 20 s for it: a read that blocks fails the test
/// instead of hanging the suite.
pub(crate) fn within_20s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("the read returned within 20 s (a FIFO must never be waited on)")
}

/// A FIFO at `p` (nobody ever writes to it).
pub(crate) fn mkfifo(p: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .expect("mkfifo runs")
        .success();
    assert!(ok, "mkfifo {}", p.display());
}

#[test]
fn a_fifo_is_refused_without_waiting_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("online");
    mkfifo(&p);
    let q = p.clone();
    let r = within_20s(move || read_bounded(&q, ATTRIBUTE_MAX_BYTES));
    let e = r.unwrap_err();
    assert!(
        matches!(e, ReadError::NotRegular { kind: "a FIFO", .. }),
        "{e}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains(&p.display().to_string()) && msg.contains("FIFO"),
        "{msg}"
    );
    // The readers that take `None` read it as missing, and `checked` names it.
    let q = p.clone();
    let (v, c) = within_20s(move || (read_trim(&q), checked(|| read_trim(&q))));
    assert_eq!(v, None);
    assert!(c.unwrap_err().to_string().contains("FIFO"));
}

#[test]
fn a_device_linked_in_place_of_a_file_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    for dev in ["/dev/zero", "/dev/urandom"] {
        let p = dir.path().join(dev.trim_start_matches("/dev/"));
        std::os::unix::fs::symlink(dev, &p).unwrap();
        let e = read_bounded(&p, TABLE_MAX_BYTES).unwrap_err();
        assert!(
            matches!(
                e,
                ReadError::NotRegular {
                    kind: "a character device",
                    ..
                }
            ),
            "{dev}: {e}"
        );
        assert!(read_head(&p, 1 << 20).is_none());
    }
}

#[test]
fn a_file_past_its_cap_is_refused_and_one_at_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("size");
    fs::write(&p, vec![b'1'; ATTRIBUTE_MAX_BYTES + 1]).unwrap();
    let e = read_bounded(&p, ATTRIBUTE_MAX_BYTES).unwrap_err();
    assert!(matches!(e, ReadError::TooLarge { .. }), "{e}");
    assert!(e.to_string().contains("larger than 65536 bytes"), "{e}");
    assert!(checked(|| read_trim(&p)).is_err());
    fs::write(&p, vec![b'1'; ATTRIBUTE_MAX_BYTES]).unwrap();
    assert_eq!(
        read_bounded(&p, ATTRIBUTE_MAX_BYTES)
            .unwrap()
            .unwrap()
            .len(),
        ATTRIBUTE_MAX_BYTES
    );
    // The head of a longer file: whole lines only.
    fs::write(&p, "flags : a b\nmore : c\n").unwrap();
    assert_eq!(read_head(&p, 14).as_deref(), Some("flags : a b\n"));
}

#[test]
fn missing_files_are_not_offered_and_not_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("nothing");
    assert!(read_bounded(&p, 10).unwrap().is_none());
    // A component that is a file.
    fs::write(&p, "x").unwrap();
    assert!(read_bounded(&p.join("below"), 10).unwrap().is_none());
    assert!(checked(|| read_trim(&p.join("below"))).unwrap().is_none());
    let d = dir.path().join("dir");
    fs::create_dir(&d).unwrap();
    let e = read_bounded(&d, 10).unwrap_err();
    assert!(
        matches!(
            e,
            ReadError::NotRegular {
                kind: "a directory",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn checked_scopes_nest_and_name_the_first_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    fs::create_dir(&a).unwrap();
    fs::create_dir(&b).unwrap();
    let outer = checked(|| {
        let _ = read_trim(&a);
        // An inner scope takes its own refusals, and leaves the outer one's.
        let inner = checked(|| read_trim(&b));
        assert!(inner.unwrap_err().to_string().contains("/b:"));
    });
    assert!(outer.unwrap_err().to_string().contains("/a:"));
    // Outside any scope a refusal is only `None`.
    assert_eq!(read_trim(&a), None);
    assert!(checked(|| ()).is_ok());
}

#[test]
fn meminfo_sizes_overflow_as_errors_never_as_small_numbers() {
    let node = "Node 0 MemTotal:       16384000 kB\nNode 0 MemFree: 1 kB\n";
    assert_eq!(meminfo_bytes(node, "MemTotal"), Ok(Some(16384000 * 1024)));
    assert_eq!(meminfo_bytes(node, "MemFree"), Ok(Some(1024)));
    assert_eq!(meminfo_bytes(node, "MemUsed"), Ok(None));
    let proc = "MemTotal:       24000000 kB\nMemAvailable:   23000000 kB\n";
    assert_eq!(
        meminfo_bytes(proc, "MemAvailable"),
        Ok(Some(23_000_000 * 1024))
    );
    // 2^54 kB is 2^64 bytes: one past u64::MAX (a wrap would read as 0).
    let wrap = format!("Node 0 MemTotal: {} kB\n", 1u64 << 54);
    let e = meminfo_bytes(&wrap, "MemTotal").unwrap_err();
    assert!(e.contains("MemTotal") && e.contains("64 bits"), "{e}");
    let largest = format!("MemTotal: {} kB\n", u64::MAX / 1024);
    assert_eq!(
        meminfo_bytes(&largest, "MemTotal"),
        Ok(Some(u64::MAX / 1024 * 1024))
    );
    // Read from a file, the overflow is a refusal naming it.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("meminfo");
    fs::write(&p, wrap).unwrap();
    let e = checked(|| read_meminfo_bytes(&p, "MemTotal")).unwrap_err();
    assert!(
        e.to_string()
            .contains("meminfo: MemTotal 18014398509481984 kB"),
        "{e}"
    );
}

#[test]
fn cpu_lists_are_parsed_once_per_text_and_bounded_in_all() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("shared_cpu_list");
    fs::write(&p, "4-7,0-3\n").unwrap();
    let mut lists = CpuLists::new();
    let l = lists.read(&p).unwrap();
    assert_eq!((&l.cpus[..], l.new), (&[0, 1, 2, 3, 4, 5, 6, 7][..], true));
    let again = lists.read(&p).unwrap();
    assert!(!again.new && again.id == l.id, "the same text again");
    // A list naming a CPU Linux cannot have is refused, not expanded.
    fs::write(&p, "0-4294967295\n").unwrap();
    let e = checked(|| CpuLists::new().read(&p)).unwrap_err();
    assert!(e.to_string().contains("4294967295"), "{e}");
    // Distinct long lists, one per CPU of a hostile tree, stop at the bound.
    let mut lists = CpuLists::new();
    let r = checked(|| {
        (0..65).all(|k| {
            fs::write(&p, format!("{k}-65535\n")).unwrap();
            lists.read(&p).is_some()
        })
    });
    assert!(r.unwrap_err().to_string().contains("more than"));
}
