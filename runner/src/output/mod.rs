//! Output helpers shared by the terminal, the fleet summary, plot and report.

pub mod markup;
pub mod shell;
pub mod stdout;
pub mod table;
pub mod text;
pub mod warnings;
pub mod width;

/// A number with 4 significant digits (integers up to 1e6 as they are), `-` for none.
pub fn num(v: Option<f64>) -> String {
    let Some(v) = v else {
        return "-".into();
    };
    if !v.is_finite() {
        return v.to_string();
    }
    if v == v.trunc() && v.abs() < 1e6 {
        return format!("{v:.0}");
    }
    let a = v.abs();
    if !(1e-3..1e6).contains(&a) {
        return format!("{v:.3e}");
    }
    let digits = (3 - a.log10().floor() as i32).max(0) as usize;
    format!("{v:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_four_significant_digits() {
        assert_eq!(num(Some(120.0)), "120");
        assert_eq!(num(Some(91.23456)), "91.23");
        assert_eq!(num(Some(1.5)), "1.500");
        assert_eq!(num(Some(0.01234)), "0.01234");
        assert_eq!(num(Some(2.5e9)), "2.500e9");
        assert_eq!(num(None), "-");
    }
}
