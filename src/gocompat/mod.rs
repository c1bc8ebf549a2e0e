//! Reproductions of Go standard-library behaviour that opm's and operator-framework's output
//! depends on, byte for byte: `encoding/json` escaping and marshalling, `sort.Slice`,
//! `compress/flate`'s stream length, and runc's `User` resolution (`execuser`). They sit below
//! the bundle and catalog models because both (and the serve cache) need the same
//! reproductions, and none of them knows about OLM.

pub mod decoded;
pub mod escape;
pub mod execuser;
pub mod flate;
pub mod marshal;
pub mod netaddr;
pub mod mmsemver;
pub mod sort;
