//! Fleet runs: cxlchar as one rank of a launcher job (`srun`, `mpirun`), every host's
//! params gathered into one fleet file on rank 0, pairwise matrices between hosts.
// Work in progress (issue #20): the launcher, rendezvous and orchestration land next.
#![allow(dead_code)]

pub mod file;
pub mod outliers;
pub mod summary;
