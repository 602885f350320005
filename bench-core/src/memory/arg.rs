//! What `--target` takes: a memory target ([`TargetSpec`]), or a CXL region or memory
//! device by its kernel name (`cxl:regionN`, `cxl:memN`). A name is not a target: it
//! stands for the `dax:` device or `node:` behind it on one machine, and becomes that
//! target ([`TargetArg::resolve`]) before anything is placed or measured.

use super::TargetSpec;
use crate::error::CoreError;
use crate::topology::Topology;
use std::fmt;
use std::str::FromStr;

/// A CXL region (`region1`) or memory device (`mem0`) by its kernel name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CxlName(String);

impl CxlName {
    /// The name, checked: `regionN` or `memN`.
    pub fn new(name: &str) -> Result<CxlName, CoreError> {
        let numbered = |p: &str| {
            name.strip_prefix(p)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        };
        if numbered("region") || numbered("mem") {
            Ok(CxlName(name.to_string()))
        } else {
            Err(CoreError::TargetSpec {
                spec: format!("cxl:{name}"),
                reason: "cxl: takes a CXL region or memory device by its kernel name: cxl:regionN or cxl:memN (`cxlchar targets` lists them)".into(),
            })
        }
    }

    /// The `dax:` or `node:` target this name stands for on this machine. A region resolves to its one devdax device, else to the NUMA node
    /// its memory was onlined into (`daxctl reconfigure-device --mode=system-ram`), which
    /// must hold CXL memory only; a memory device to its one region. Anything else is
    /// the user's mistake, named with the remedy.
    pub fn resolve(&self, topo: &Topology) -> Result<TargetSpec, CoreError> {
        let name = &self.0;
        let err = |reason: String| CoreError::TargetSpec {
            spec: self.to_string(),
            reason,
        };
        let cxl = &topo.cxl;
        fn list<T: fmt::Display>(v: impl IntoIterator<Item = T>) -> String {
            let v: Vec<String> = v.into_iter().map(|x| x.to_string()).collect();
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        }
        let region = if name.starts_with("mem") {
            if cxl.memdev(name).is_none() {
                return Err(err(format!(
                    "no CXL memory device {name} (memory devices: {})",
                    list(cxl.memdevs.iter().map(|m| &m.name))
                )));
            }
            match cxl.regions_of(name).as_slice() {
                [one] => one.name.clone(),
                [] => {
                    return Err(err(format!(
                        "{name} is in no CXL region: create one (e.g. cxl create-region -m -t pmem -d decoder0.0 -w 1 {name})"
                    )))
                }
                many => {
                    return Err(err(format!(
                        "{name} is in {} regions ({}): name one as cxl:regionN",
                        many.len(),
                        list(many.iter().map(|r| &r.name))
                    )))
                }
            }
        } else {
            name.clone()
        };
        if cxl.region(&region).is_none() {
            return Err(err(format!(
                "no CXL region {region} (regions: {}; `cxl list -R` shows them)",
                list(cxl.regions.iter().map(|r| &r.name))
            )));
        }
        let in_region = |b: &crate::cxl::Backing| matches!(b, crate::cxl::Backing::CxlRegion { region: r, .. } if *r == region);
        let devdax: Vec<&crate::topology::DaxDevice> = topo
            .dax
            .iter()
            .filter(|d| d.is_devdax() && d.backing.as_ref().is_some_and(in_region))
            .collect();
        match devdax.as_slice() {
            [one] => return Ok(TargetSpec::Dax(one.path.clone())),
            [] => {}
            many => {
                return Err(err(format!(
                    "{region} has {} devdax devices ({}): name one as dax:/dev/daxX.Y",
                    many.len(),
                    list(many.iter().map(|d| &d.name))
                )))
            }
        }
        let nodes: Vec<&crate::topology::NumaNode> = topo
            .nodes
            .iter()
            .filter(|n| n.backing.iter().any(|s| in_region(&s.backing)))
            .collect();
        match nodes.as_slice() {
            [one] if one.is_cxl() => Ok(TargetSpec::Node(one.id)),
            [one] => Err(err(format!(
                "node {} holds {region} and other memory ({}): its placement would not prove CXL; measure node:{} knowingly",
                one.id,
                crate::cxl::describe_shares(&one.backing),
                one.id
            ))),
            [] => Err(err(format!(
                "{region} has neither a devdax device nor a NUMA node: create a devdax namespace on it (ndctl create-namespace -m devdax -r <its nd region>) or online it (daxctl reconfigure-device --mode=system-ram daxX.Y)"
            ))),
            many => Err(err(format!(
                "{region} is spread over nodes {}: name one as node:N",
                list(many.iter().map(|n| n.id))
            ))),
        }
    }
}

impl fmt::Display for CxlName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cxl:{}", self.0)
    }
}

/// One `--target`: a memory target, or a CXL name that resolves to one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TargetArg {
    /// A memory target as given.
    Target(TargetSpec),
    /// A CXL region or memory device, resolved on the machine that measures.
    Cxl(CxlName),
}

impl TargetArg {
    /// The target on this machine: the one given, or the one a CXL name stands for.
    pub fn resolve(&self, topo: &Topology) -> Result<TargetSpec, CoreError> {
        match self {
            TargetArg::Target(t) => Ok(t.clone()),
            TargetArg::Cxl(n) => n.resolve(topo),
        }
    }
}

impl From<TargetSpec> for TargetArg {
    fn from(t: TargetSpec) -> TargetArg {
        TargetArg::Target(t)
    }
}

impl fmt::Display for TargetArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetArg::Target(t) => t.fmt(f),
            TargetArg::Cxl(n) => n.fmt(f),
        }
    }
}

impl FromStr for TargetArg {
    type Err = CoreError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.strip_prefix("cxl:").or((s == "cxl").then_some("")) {
            Some(name) => CxlName::new(name).map(TargetArg::Cxl),
            None => s.parse().map(TargetArg::Target),
        }
    }
}
