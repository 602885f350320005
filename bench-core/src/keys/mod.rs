//! The registry of params keys: every key a cxlchar benchmark can write into
//! `params`, every key the runner derives from them, and every key the seed models
//! read that cxlchar does not measure.
//!
//! One [`KeyDef`] per key, or per key family whose name carries a variant
//! (`flush_{method}_{size}_ns`, `nt_copy_threshold_p{N}_bytes`): its [`Unit`] (the
//! name's suffix and the unit written in `param_info`), a one-line meaning, how it is
//! derived, the benchmark and command that produce it, its far-memory name (the name the
//! runner gives it on a memory-only node or a dax device), the seed papers it serves and
//! the `cxlchar model` models that read it.
//!
//! Producers name their keys through it ([`crate::bench::Param::new`] takes the unit
//! from here), the runner renames far-memory keys and derives the factors from it, and
//! the consumers (`check`, `model --what-if`, `plot`) refuse a key it does not know.
//! `docs/params.md` holds its rendering ([`markdown`]); a test fails when they differ.

pub mod parameters;
mod table;

pub use table::REGISTRY;

/// The unit of a key: its name ends in [`Unit::suffix`], `param_info` records
/// [`Unit::symbol`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unit {
    /// Nanoseconds (`_ns`).
    Nanoseconds,
    /// Gigabytes per second, GB = 10^9 bytes (`_gbs`).
    GigabytesPerSecond,
    /// Bytes (`_bytes`).
    Bytes,
    /// A dimensionless ratio of two keys (`_factor`).
    Factor,
    /// A dimensionless ratio (`_ratio`).
    Ratio,
    /// Millions of messages per second (`_mps`).
    MegamessagesPerSecond,
    /// A count of address ranges (`_ranges`).
    Ranges,
    /// A count of things found degraded (`_degraded`: PCIe links below their capability).
    Count,
}

impl Unit {
    /// Every unit.
    pub const ALL: [Unit; 8] = [
        Unit::Nanoseconds,
        Unit::GigabytesPerSecond,
        Unit::Bytes,
        Unit::Factor,
        Unit::Ratio,
        Unit::MegamessagesPerSecond,
        Unit::Ranges,
        Unit::Count,
    ];

    /// The suffix of every key in this unit (`_ns`).
    pub fn suffix(self) -> &'static str {
        match self {
            Unit::Nanoseconds => "_ns",
            Unit::GigabytesPerSecond => "_gbs",
            Unit::Bytes => "_bytes",
            Unit::Factor => "_factor",
            Unit::Ratio => "_ratio",
            Unit::MegamessagesPerSecond => "_mps",
            Unit::Ranges => "_ranges",
            Unit::Count => "_degraded",
        }
    }

    /// The unit as written in `param_info` and in tables (`ns`, `GB/s`).
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::Nanoseconds => "ns",
            Unit::GigabytesPerSecond => "GB/s",
            Unit::Bytes => "bytes",
            Unit::Factor | Unit::Ratio => "ratio",
            Unit::MegamessagesPerSecond => "Mmsg/s",
            Unit::Ranges => "ranges",
            Unit::Count => "count",
        }
    }

    /// The unit whose suffix ends `name` (qualifier `@target` ignored).
    pub fn of_name(name: &str) -> Option<Unit> {
        let base = base_name(name);
        Unit::ALL
            .into_iter()
            .find(|u| base.ends_with(u.suffix()) && base.len() > u.suffix().len())
    }
}

/// Where a key's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A benchmark measures it.
    Measured,
    /// The runner renames the local key `local` to this name on far memory (a
    /// memory-only NUMA node or a dax device).
    Far {
        /// The key as the benchmark produces it (`mem_lat_ns`).
        local: &'static str,
    },
    /// The runner derives it as `num / den` when both are in the file.
    Ratio {
        /// Numerator key.
        num: &'static str,
        /// Denominator key.
        den: &'static str,
    },
    /// Not measured by cxlchar: a model input supplied with `--what-if KEY=VALUE`.
    External,
    /// Read from the file's `environment` when the file has no such key.
    Environment,
}

/// The values a placeholder of a key family's name takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Values {
    /// One of these words (`""` allowed).
    OneOf(&'static [&'static str]),
    /// A positive decimal number without leading zeros.
    Count,
}

/// A placeholder `{name}` in a key family's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// Fields named for what they hold.
#[allow(missing_docs)]
pub struct Var {
    /// The placeholder's name, as written between braces.
    pub name: &'static str,
    pub values: Values,
    /// What it stands for (one phrase).
    pub meaning: &'static str,
}

/// One key, or one family of keys whose name carries placeholders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyDef {
    /// The key (`mem_lat_ns`) or the family's pattern (`flush_{method}_{size}_ns`).
    pub name: &'static str,
    /// The placeholders of a pattern (empty for a single key).
    pub vars: &'static [Var],
    /// Its unit (the name ends in the unit's suffix).
    pub unit: Unit,
    /// What it means, in one line.
    pub meaning: &'static str,
    /// How its value is derived, in one line.
    pub method: &'static str,
    /// Where the value comes from.
    pub origin: Origin,
    /// The benchmark that produces it (`mem.latency`), `external` or `environment`.
    pub benchmark: &'static str,
    /// The command that produces it, or what to run instead for an external key.
    pub command: &'static str,
    /// Its name on far memory (same placeholders), when the runner renames it there.
    pub far: Option<&'static str>,
    /// The seed papers it serves, and for what (`000 (MEM_LAT)`); empty when none.
    pub papers: &'static str,
    /// The `cxlchar model` models that read it (`000-transfer`).
    pub models: &'static [&'static str],
}

impl KeyDef {
    /// Whether this is a family (its name has placeholders).
    pub fn is_pattern(&self) -> bool {
        !self.vars.is_empty()
    }

    /// The placeholder values of `name` if `name` (qualifier ignored) is this key or a
    /// member of this family.
    pub fn bind(&self, name: &str) -> Option<Vec<(&'static str, String)>> {
        let base = base_name(name);
        if !self.is_pattern() {
            return (base == self.name).then(Vec::new);
        }
        let mut out = Vec::new();
        match_tokens(&tokens(self.name), self.vars, base, &mut out).then_some(out)
    }

    /// Whether `name` (qualifier ignored) is this key or a member of this family.
    pub fn matches(&self, name: &str) -> bool {
        self.bind(name).is_some()
    }

    /// The far-memory name of `name` (a member of this definition), when it has one.
    pub fn far_name_of(&self, name: &str) -> Option<String> {
        let far = self.far?;
        let bound = self.bind(name)?;
        Some(render(far, &bound))
    }

    /// Every concrete name of this definition (a count placeholder takes 1, 2, 4, 8).
    pub fn examples(&self) -> Vec<String> {
        let mut names = vec![String::new()];
        for t in tokens(self.name) {
            let choices: Vec<String> = match t {
                Token::Lit(l) => vec![l.to_string()],
                Token::Var(v) => match self.var(v).map(|v| v.values) {
                    Some(Values::OneOf(vals)) => vals.iter().map(|s| s.to_string()).collect(),
                    Some(Values::Count) => ["1", "2", "4", "8"].map(String::from).to_vec(),
                    None => vec![],
                },
            };
            names = names
                .iter()
                .flat_map(|n| choices.iter().map(move |c| format!("{n}{c}")))
                .collect();
        }
        names
    }

    fn var(&self, name: &str) -> Option<&'static Var> {
        self.vars.iter().find(|v| v.name == name)
    }
}

/// `name` without its `@target` qualifier.
pub fn base_name(name: &str) -> &str {
    split_target(name).0
}

/// `name` split at its `@target` qualifier: (`mem_lat_ns`, `Some("node:1")`) of
/// `mem_lat_ns@node:1`, (`mem_lat_ns`, `None`) of the bare key.
pub fn split_target(name: &str) -> (&str, Option<&str>) {
    match name.split_once('@') {
        Some((b, t)) => (b, Some(t)),
        None => (name, None),
    }
}

/// Every registered definition.
pub fn all() -> &'static [KeyDef] {
    REGISTRY
}

/// The definition of `name` (an `@target` qualifier is ignored): a single key of that
/// name first, else the family whose pattern it matches.
pub fn lookup(name: &str) -> Option<&'static KeyDef> {
    let base = base_name(name);
    REGISTRY
        .iter()
        .find(|d| !d.is_pattern() && d.name == base)
        .or_else(|| REGISTRY.iter().find(|d| d.is_pattern() && d.matches(base)))
}

/// The name `key` takes on far memory (`mem_lat_ns` -> `cxl_lat_ns`, `gpu_reg_*` ->
/// `gpu_pool_*`), when the registry gives it one.
pub fn far_name(key: &str) -> Option<String> {
    lookup(key)?.far_name_of(key)
}

/// The keys the runner derives as a ratio of two other keys: (name, numerator,
/// denominator), in registry order.
pub fn ratios() -> impl Iterator<Item = (&'static str, &'static str, &'static str)> {
    REGISTRY.iter().filter_map(|d| match d.origin {
        Origin::Ratio { num, den } => Some((d.name, num, den)),
        _ => None,
    })
}

/// Whether `name` has the shape of a params key: lowercase snake case ending in a unit
/// suffix, optionally qualified by a non-empty `@target` without spaces. Says nothing
/// about whether the key is registered ([`lookup`]).
pub fn well_formed(name: &str) -> bool {
    let (base, target) = split_target(name);
    if let Some(t) = target {
        if t.is_empty() || t.chars().any(char::is_whitespace) {
            return false;
        }
    }
    base.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && base
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && Unit::of_name(base).is_some()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    Lit(&'a str),
    Var(&'a str),
}

fn tokens(pattern: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut rest = pattern;
    while !rest.is_empty() {
        match rest.find('{') {
            Some(0) => {
                let end = rest.find('}').unwrap_or(rest.len());
                out.push(Token::Var(&rest[1..end]));
                rest = rest.get(end + 1..).unwrap_or("");
            }
            Some(i) => {
                out.push(Token::Lit(&rest[..i]));
                rest = &rest[i..];
            }
            None => {
                out.push(Token::Lit(rest));
                rest = "";
            }
        }
    }
    out
}

fn match_tokens(
    toks: &[Token<'_>],
    vars: &'static [Var],
    s: &str,
    out: &mut Vec<(&'static str, String)>,
) -> bool {
    let Some((first, rest)) = toks.split_first() else {
        return s.is_empty();
    };
    match first {
        Token::Lit(l) => s
            .strip_prefix(l)
            .is_some_and(|r| match_tokens(rest, vars, r, out)),
        Token::Var(name) => {
            let Some(var) = vars.iter().find(|v| v.name == *name) else {
                return false;
            };
            let candidates: Vec<&str> = match var.values {
                Values::OneOf(vals) => vals.iter().filter(|v| s.starts_with(*v)).copied().collect(),
                Values::Count => {
                    let n = s.bytes().take_while(u8::is_ascii_digit).count();
                    if n == 0 || s.starts_with('0') {
                        vec![]
                    } else {
                        vec![&s[..n]]
                    }
                }
            };
            for c in candidates {
                out.push((var.name, c.to_string()));
                if match_tokens(rest, vars, &s[c.len()..], out) {
                    return true;
                }
                out.pop();
            }
            false
        }
    }
}

fn render(pattern: &str, bound: &[(&'static str, String)]) -> String {
    tokens(pattern)
        .into_iter()
        .map(|t| match t {
            Token::Lit(l) => l.to_string(),
            Token::Var(v) => bound
                .iter()
                .find(|(n, _)| *n == v)
                .map_or_else(|| format!("{{{v}}}"), |(_, val)| val.clone()),
        })
        .collect()
}

/// The marker line before the generated key reference in `docs/params.md`.
pub const DOC_BEGIN: &str =
    "<!-- BEGIN KEY REFERENCE: generated from bench-core/src/keys/table.rs; do not edit by hand -->";
/// The marker line after it.
pub const DOC_END: &str = "<!-- END KEY REFERENCE -->";

fn cell(s: &str) -> String {
    if s.is_empty() {
        "-".into()
    } else {
        s.replace('|', "\\|")
    }
}

/// The key reference as Markdown: one table per producing benchmark, in registry order,
/// each headed by the command that produces its keys.
pub fn markdown() -> String {
    let mut groups: Vec<(&str, &str, Vec<&KeyDef>)> = Vec::new();
    for d in REGISTRY {
        match groups.iter_mut().find(|g| g.0 == d.benchmark) {
            Some(g) => g.2.push(d),
            None => groups.push((d.benchmark, d.command, vec![d])),
        }
    }
    let mut s = String::new();
    for (bench, first_command, defs) in groups {
        let (heading, command) = match bench {
            "external" => (
                "### Model inputs that cxlchar does not measure (`external`)".to_string(),
                "",
            ),
            "environment" => (
                "### Read from the file's environment (`environment`)".to_string(),
                "",
            ),
            _ => (format!("### `{bench}`: `{first_command}`"), first_command),
        };
        s.push_str(&heading);
        s.push_str("\n\n");
        s.push_str("| key | unit | meaning | method | seed papers | read by `cxlchar model` |\n");
        s.push_str("|---|---|---|---|---|---|\n");
        for d in defs {
            let mut name = format!("`{}`", d.name);
            if let Some(f) = d.far {
                name.push_str(&format!(" (far memory: `{f}`)"));
            }
            let mut meaning = d.meaning.to_string();
            for v in d.vars {
                let vals = match v.values {
                    Values::OneOf(vals) => vals
                        .iter()
                        .map(|x| {
                            if x.is_empty() {
                                "(empty)".to_string()
                            } else {
                                format!("`{x}`")
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(", "),
                    Values::Count => "a positive number".into(),
                };
                meaning.push_str(&format!("; `{}` = {}: {vals}", v.name, v.meaning));
            }
            if command.is_empty() {
                meaning.push_str(&format!("; source: {}", d.command));
            } else if d.command != command {
                meaning.push_str(&format!(" (run: `{}`)", d.command));
            }
            let models: Vec<String> = d.models.iter().map(|m| format!("`{m}`")).collect();
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                name,
                d.unit.symbol(),
                cell(&meaning),
                cell(d.method),
                cell(d.papers),
                cell(&models.join(", "))
            ));
        }
        s.push('\n');
    }
    s
}

/// `text` (a `docs/params.md`) with the part between [`DOC_BEGIN`] and [`DOC_END`]
/// replaced by [`markdown`]; `None` when a marker is missing.
pub fn splice_markdown(text: &str) -> Option<String> {
    let b = text.find(DOC_BEGIN)? + DOC_BEGIN.len();
    let e = text[b..].find(DOC_END)? + b;
    Some(format!("{}\n\n{}{}", &text[..b], markdown(), &text[e..]))
}

#[cfg(test)]
mod tests;
