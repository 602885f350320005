//! Warnings with remediation, as hyperfine prints them.

use bench_core::params::Warning;

/// Renders warnings, each followed by how to fix its cause.
pub fn render_warnings(w: &[Warning]) -> String {
    let mut s = String::new();
    for x in w {
        s.push_str(&format!("warning: {}\n", x.message));
        if !x.remediation.is_empty() {
            s.push_str(&format!("  fix: {}\n", x.remediation));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remediation_follows_message() {
        let s = render_warnings(&[Warning {
            code: "governor".into(),
            message: "governor is powersave".into(),
            remediation: "cpupower frequency-set -g performance".into(),
        }]);
        assert_eq!(
            s,
            "warning: governor is powersave\n  fix: cpupower frequency-set -g performance\n"
        );
    }
}
