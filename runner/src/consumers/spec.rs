//! The acceptance spec of `cxlchar check`: a TOML file of bounds on params keys.
//!
//! ```toml
//! required = ["mem_lat_ns"]          # keys that must be measured (no bound)
//!
//! [[bound]]
//! key = "mem_lat_ns"
//! op = "<="                          # <=, <, >=, >
//! value = 120                        # a number ...
//! why = "DDR5 idle latency"          # optional: the rationale, printed on failure
//!
//! [[bound]]
//! key = "cxl_lat_ns"
//! op = "<="
//! expr = "2.5 * mem_lat_ns"          # ... or a linear expression of other keys
//! optional = true                    # not measured is reported but is no failure
//! refuse_noisy = true                # a noisy value (measured only on disturbed
//!                                    # windows) counts as not measured; a top-level
//!                                    # `refuse_noisy = true` sets it for every key
//! ```
//!
//! Every error names the spec file and line.

use super::keys;
use serde::Deserialize;
use std::fmt;
use std::ops::Range;
use toml::Spanned;

/// A spec error with its location.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError {
    /// Spec file name.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for SpecError {}

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `<=`
    Le,
    /// `<`
    Lt,
    /// `>=`
    Ge,
    /// `>`
    Gt,
}

impl Op {
    fn parse(s: &str) -> Option<Op> {
        Some(match s.trim() {
            "<=" => Op::Le,
            "<" => Op::Lt,
            ">=" => Op::Ge,
            ">" => Op::Gt,
            _ => return None,
        })
    }

    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Le => "<=",
            Op::Lt => "<",
            Op::Ge => ">=",
            Op::Gt => ">",
        }
    }

    /// Whether `v op limit` holds.
    pub fn holds(self, v: f64, limit: f64) -> bool {
        match self {
            Op::Le => v <= limit,
            Op::Lt => v < limit,
            Op::Ge => v >= limit,
            Op::Gt => v > limit,
        }
    }

    /// Headroom: positive when the bound holds, in the key's unit.
    pub fn margin(self, v: f64, limit: f64) -> f64 {
        match self {
            Op::Le | Op::Lt => limit - v,
            Op::Ge | Op::Gt => v - limit,
        }
    }
}

/// One term of a linear expression: `coeff` or `coeff * key`.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    /// Coefficient (sign included).
    pub coeff: f64,
    /// The key, if any.
    pub key: Option<String>,
}

/// The limit of a bound.
#[derive(Debug, Clone, PartialEq)]
pub enum Limit {
    /// A number.
    Value(f64),
    /// A linear expression of keys, with its text.
    Expr(String, Vec<Term>),
}

/// One bound.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// The key bounded.
    pub key: String,
    /// The comparison.
    pub op: Op,
    /// The limit.
    pub limit: Limit,
    /// Rationale.
    pub why: String,
    /// Not measured is not a failure.
    pub optional: bool,
    /// A noisy value of its keys counts as not measured.
    pub refuse_noisy: bool,
    /// Line of the `[[bound]]` in the spec.
    pub line: usize,
}

/// A parsed spec.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// Spec name (file stem).
    pub name: String,
    /// Keys that must be measured, with their lines.
    pub required: Vec<(String, usize)>,
    /// The bounds.
    pub bounds: Vec<Bound>,
    /// Required keys measured only noisily count as not measured.
    pub refuse_noisy: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    #[serde(default)]
    #[allow(dead_code)]
    description: Option<String>,
    #[serde(default)]
    required: Vec<Spanned<String>>,
    #[serde(default)]
    bound: Vec<Spanned<RawBound>>,
    #[serde(default)]
    refuse_noisy: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBound {
    key: Spanned<String>,
    op: Spanned<String>,
    #[serde(default)]
    value: Option<Spanned<toml::Value>>,
    #[serde(default)]
    expr: Option<Spanned<String>>,
    #[serde(default)]
    why: Option<String>,
    #[serde(default)]
    optional: bool,
    #[serde(default)]
    refuse_noisy: Option<bool>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|b| *b == b'\n')
        .count()
        + 1
}

/// The spec text and its file name, which every error needs for its location.
struct Parser<'a> {
    text: &'a str,
    file: &'a str,
}

impl Parser<'_> {
    /// An error at `span`'s line (line 1 without a span).
    fn err(&self, span: Option<Range<usize>>, message: String) -> SpecError {
        SpecError {
            file: self.file.into(),
            line: span.map(|s| line_of(self.text, s.start)).unwrap_or(1),
            message,
        }
    }

    /// The trimmed key, or an error at its line saying why it is no params key.
    fn check_key(&self, k: &Spanned<String>, what: &str) -> Result<String, SpecError> {
        let key = k.get_ref().trim();
        match keys::refusal(key) {
            None => Ok(key.to_string()),
            Some(why) => Err(self.err(Some(k.span()), format!("{what} {why}"))),
        }
    }

    /// One `[[bound]]`, checked: its key, operator and limit; `refuse_noisy` the spec's
    /// default.
    fn bound(&self, b: &Spanned<RawBound>, refuse_noisy: bool) -> Result<Bound, SpecError> {
        let span = b.span();
        let rb = b.get_ref();
        let key = self.check_key(&rb.key, "key")?;
        let op = Op::parse(rb.op.get_ref()).ok_or_else(|| {
            self.err(
                Some(rb.op.span()),
                format!("operator `{}` is not one of <=, <, >=, >", rb.op.get_ref()),
            )
        })?;
        let limit = self.limit(rb, &key, span.clone())?;
        Ok(Bound {
            key,
            op,
            limit,
            why: rb.why.clone().unwrap_or_default(),
            optional: rb.optional,
            refuse_noisy: rb.refuse_noisy.unwrap_or(refuse_noisy),
            line: line_of(self.text, span.start),
        })
    }

    /// The bound's limit: exactly one of `value` and `expr`; `span` is the bound's.
    fn limit(&self, rb: &RawBound, key: &str, span: Range<usize>) -> Result<Limit, SpecError> {
        Ok(match (&rb.value, &rb.expr) {
            (Some(_), Some(e)) => {
                return Err(self.err(
                    Some(e.span()),
                    format!("bound on {key} has both value and expr: give one"),
                ))
            }
            (None, None) => {
                return Err(self.err(
                    Some(span),
                    format!("bound on {key} has neither value nor expr"),
                ))
            }
            (Some(v), None) => Limit::Value(self.value(v, key)?),
            (None, Some(e)) if e.get_ref().len() > MAX_EXPR_BYTES => {
                return Err(self.err(
                    Some(e.span()),
                    format!(
                        "expr of the bound on {key} is {} bytes long, more than the \
                         {MAX_EXPR_BYTES} an expression may have",
                        e.get_ref().len()
                    ),
                ))
            }
            (None, Some(e)) => {
                let terms = parse_expr(e.get_ref()).map_err(|m| {
                    self.err(Some(e.span()), format!("expr `{}`: {m}", e.get_ref()))
                })?;
                Limit::Expr(e.get_ref().trim().to_string(), terms)
            }
        })
    }

    /// A bound's `value`: a finite number, or a string that parses as one.
    fn value(&self, v: &Spanned<toml::Value>, key: &str) -> Result<f64, SpecError> {
        let n = match v.get_ref() {
            toml::Value::Integer(i) => *i as f64,
            toml::Value::Float(f) => *f,
            toml::Value::String(s) => s.trim().parse::<f64>().map_err(|_| {
                self.err(
                    Some(v.span()),
                    format!("value `{s}` of the bound on {key} is not a number"),
                )
            })?,
            other => {
                return Err(self.err(
                    Some(v.span()),
                    format!("value `{other}` of the bound on {key} is not a number"),
                ))
            }
        };
        if !n.is_finite() {
            return Err(self.err(
                Some(v.span()),
                format!("value of the bound on {key} is not finite"),
            ));
        }
        Ok(n)
    }
}

/// Parses a spec; `file` is used in errors.
pub fn parse(text: &str, file: &str) -> Result<Spec, SpecError> {
    let p = Parser { text, file };
    let raw: RawSpec = toml::from_str(text).map_err(|e| {
        p.err(
            e.span(),
            format!(
                "{} (see docs/consumers.md for the spec format)",
                e.message().trim()
            ),
        )
    })?;
    if raw.required.len() + raw.bound.len() > MAX_CHECKS {
        return Err(p.err(
            None,
            format!(
                "the spec has {} required keys and bounds, more than the {MAX_CHECKS} a spec may hold",
                raw.required.len() + raw.bound.len()
            ),
        ));
    }
    let mut required = vec![];
    for r in &raw.required {
        required.push((
            p.check_key(r, "required key")?,
            line_of(text, r.span().start),
        ));
    }
    let mut bounds = vec![];
    for b in &raw.bound {
        bounds.push(p.bound(b, raw.refuse_noisy)?);
    }
    if required.is_empty() && bounds.is_empty() {
        return Err(p.err(
            None,
            "the spec has no `required` keys and no [[bound]]".into(),
        ));
    }
    let name = std::path::Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.to_string());
    Ok(Spec {
        name,
        required,
        bounds,
        refuse_noisy: raw.refuse_noisy,
    })
}

#[derive(Debug, PartialEq)]
enum Tok {
    Num(f64),
    Key(String),
    Op(char),
}

fn tokenize(s: &str) -> Result<Vec<Tok>, String> {
    let mut out = vec![];
    let cs: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if "+-*/".contains(c) {
            out.push(Tok::Op(c));
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let st = i;
            while i < cs.len()
                && (cs[i].is_ascii_alphanumeric() || cs[i] == '.' || {
                    // exponent sign: 1e-3
                    (cs[i] == '-' || cs[i] == '+') && matches!(cs[i - 1], 'e' | 'E')
                })
            {
                i += 1;
            }
            let t: String = cs[st..i].iter().collect();
            out.push(Tok::Num(
                t.parse().map_err(|_| format!("`{t}` is not a number"))?,
            ));
        } else if c.is_ascii_lowercase() {
            let st = i;
            while i < cs.len()
                && (cs[i].is_ascii_alphanumeric()
                    || "_@:.-/".contains(cs[i]) && {
                        // '@target' may hold ':', '.', '-', '/'; outside a target those are operators
                        cs[st..i].contains(&'@') || cs[i] == '_' || cs[i] == '@'
                    })
            {
                i += 1;
            }
            let k: String = cs[st..i].iter().collect();
            if let Some(why) = keys::refusal(&k) {
                return Err(why);
            }
            out.push(Tok::Key(k));
        } else {
            return Err(format!("unexpected `{c}`"));
        }
    }
    Ok(out)
}

/// Most bytes a bound's `expr` may have.
pub const MAX_EXPR_BYTES: usize = 1024;

/// Most required keys and bounds, together, in one spec.
pub const MAX_CHECKS: usize = 10_000;

/// Parses a linear expression: terms joined by `+`/`-`, each a product of numbers and at
/// most one key (`2.5 * mem_lat_ns`, `mem_lat_ns + 50`, `0.5 * mem_bw_gbs@anon`).
pub fn parse_expr(s: &str) -> Result<Vec<Term>, String> {
    let toks = tokenize(s)?;
    if toks.is_empty() {
        return Err("empty".into());
    }
    let mut terms = vec![];
    let mut i = 0;
    let mut sign = 1.0;
    loop {
        if let Some(Tok::Op(c @ ('+' | '-'))) = toks.get(i) {
            if *c == '-' {
                sign = -sign;
            }
            i += 1;
        }
        let mut coeff = sign;
        let mut key: Option<String> = None;
        let mut div = false;
        loop {
            match toks.get(i) {
                Some(Tok::Num(n)) => {
                    if div {
                        if *n == 0.0 {
                            return Err("division by zero".into());
                        }
                        coeff /= n;
                    } else {
                        coeff *= n;
                    }
                }
                Some(Tok::Key(k)) => {
                    if div {
                        return Err(format!("division by a key (`/ {k}`) is not supported"));
                    }
                    if key.is_some() {
                        return Err("a product of two keys is not supported".into());
                    }
                    key = Some(k.clone());
                }
                _ => return Err("expected a number or a key".into()),
            }
            i += 1;
            match toks.get(i) {
                Some(Tok::Op('*')) => div = false,
                Some(Tok::Op('/')) => div = true,
                _ => break,
            }
            i += 1;
        }
        if !coeff.is_finite() {
            return Err(format!(
                "a coefficient evaluates to {coeff}, not a finite number"
            ));
        }
        terms.push(Term { coeff, key });
        match toks.get(i) {
            None => break,
            Some(Tok::Op('+')) => sign = 1.0,
            Some(Tok::Op('-')) => sign = -1.0,
            Some(t) => return Err(format!("unexpected {t:?}")),
        }
        i += 1;
        if i >= toks.len() {
            return Err("ends with an operator".into());
        }
    }
    Ok(terms)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
description = "test"
required = ["mem_lat_ns", "cxl_lat_ns@node:1"]

[[bound]]
key = "mem_lat_ns"
op = "<="
value = 120
why = "DDR"

[[bound]]
key = "cxl_lat_ns"
op = "<="
expr = "2.5 * mem_lat_ns + 10"
optional = true

[[bound]]
key = "nt_copy_bw_gbs"
op = ">="
value = 20.5
"#;

    #[test]
    fn good_spec() {
        let s = parse(GOOD, "specs/x.toml").unwrap();
        assert_eq!(s.name, "x");
        assert_eq!(s.required.len(), 2);
        assert_eq!(s.required[0], ("mem_lat_ns".to_string(), 3));
        assert_eq!(s.bounds.len(), 3);
        assert_eq!(s.bounds[0].line, 5);
        assert_eq!(s.bounds[0].op, Op::Le);
        assert_eq!(s.bounds[0].limit, Limit::Value(120.0));
        assert!(s.bounds[1].optional);
        match &s.bounds[1].limit {
            Limit::Expr(_, t) => {
                assert_eq!(
                    t,
                    &vec![
                        Term {
                            coeff: 2.5,
                            key: Some("mem_lat_ns".into())
                        },
                        Term {
                            coeff: 10.0,
                            key: None
                        }
                    ]
                )
            }
            l => panic!("{l:?}"),
        }
        assert_eq!(s.bounds[2].limit, Limit::Value(20.5));
    }

    #[test]
    fn absurd_specs_are_one_error() {
        let b = |expr: &str| {
            format!("[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nexpr = \"{expr}\"\n")
        };
        bad(
            &b(&"1+".repeat(600).replace("+", "+ ")),
            4,
            "more than the 1024",
        );
        bad(&b("1e300 * 1e300 * mem_lat_ns"), 4, "not a finite number");
        bad(
            &b(&format!("{}1{}", "(".repeat(500), ")".repeat(500))),
            4,
            "unexpected `(`",
        );
        let many = b("mem_lat_ns").repeat(MAX_CHECKS + 1);
        bad(&many, 1, "more than the 10000");
        bad("description = 1\ndescription = 2\n", 2, "duplicate key");
        bad(&format!("a = {}", "[".repeat(100_000)), 1, "recurs");
    }

    fn bad(text: &str, line: usize, needle: &str) {
        let e = parse(text, "s.toml").unwrap_err();
        assert_eq!(e.line, line, "{e}");
        let m = e.to_string();
        assert!(m.starts_with(&format!("s.toml:{line}:")), "{m}");
        assert!(m.contains(needle), "{m} lacks {needle}");
    }

    #[test]
    fn bad_specs_name_file_and_line() {
        bad(
            "[[bound]]\nkey = \"memlat\"\nop = \"<=\"\nvalue = 1\n",
            2,
            "not a params key",
        );
        bad(
            "[[bound]]\nkey = \"mem_lat_ns\"\nop = \"=<\"\nvalue = 1\n",
            3,
            "operator `=<`",
        );
        bad(
            "[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalue = \"12x\"\n",
            4,
            "not a number",
        );
        bad(
            "[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalue = 12x\n",
            4,
            "",
        );
        bad(
            "[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalue = true\n",
            4,
            "not a number",
        );
        bad(
            "[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nexpr = \"2.5 * memlat\"\n",
            4,
            "not a params key",
        );
        bad(
            "[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nexpr = \"mem_lat_ns * cxl_lat_ns\"\n",
            4,
            "product of two keys",
        );
        bad(
            "\n\n[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\n",
            3,
            "neither value nor expr",
        );
        bad(
            "[[bound]]\nkey = \"mem_lat_ns\"\nop = \"<=\"\nvalu = 3\n",
            4,
            "unknown field",
        );
        bad("required = [\"ok_ns\", \"Bad\"]\n", 1, "not a params key");
        bad("# nothing\n", 1, "no `required`");
        bad("required = [\"mem_lat_ns\"]\n[[bound]\n", 2, "");
    }

    #[test]
    fn expressions() {
        let t = parse_expr("mem_lat_ns@node:1 - 5 / 2").unwrap();
        assert_eq!(t[0].key.as_deref(), Some("mem_lat_ns@node:1"));
        assert_eq!(t[1].coeff, -2.5);
        assert_eq!(parse_expr("1e-3*mem_lat_ns").unwrap()[0].coeff, 1e-3);
        assert!(parse_expr("").is_err());
        assert!(parse_expr("mem_lat_ns +").is_err());
        assert!(parse_expr("2 / mem_lat_ns").is_err());
        assert!(parse_expr("2 $ 3").is_err());
    }
}
