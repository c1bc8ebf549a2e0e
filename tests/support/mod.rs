//! What the integration tests share: the one olmpack command builder, the repository's test data, golden comparisons, the real registry harness,
//! the reference-data locations and the CI policy, bounded child processes, Go as a reference, and the template stand-in.
#![allow(dead_code, unused_imports)]

pub mod cmd;
pub mod fixtures;
pub mod fs;
pub mod go;
pub mod golden;
pub mod hostile;
pub mod mirror;
pub mod proc;
pub mod registry;
pub mod shared;
pub mod template_stand_in;
