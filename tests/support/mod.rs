//! What the integration tests share: the one olmpack command builder, the repository's test data, golden comparisons, JSON string lists, a throwaway GnuPG home, the real registry harness,
//! the reference-data locations and the CI policy, bounded child processes, Go as a reference, the template stand-in, umoci-made base images, and the keyless
//! (Sigstore) verify calls.
#![allow(dead_code, unused_imports)]

pub mod cmd;
pub mod fixtures;
pub mod fs;
pub mod go;
pub mod golden;
pub mod gpg;
pub mod hostile;
pub mod json;
pub mod mirror;
pub mod proc;
pub mod registry;
pub mod shared;
pub mod sigstore;
pub mod template_stand_in;
pub mod umoci;
