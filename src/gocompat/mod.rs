//! Reproductions of Go standard-library behaviour that opm's and operator-framework's output
//! depends on, byte for byte: `encoding/json` escaping and marshalling, `sort.Slice`,
//! `compress/flate`'s stream length, runc's `User` resolution (`execuser`), Go's `net/mail` and
//! `net/url` address checks (`netaddr`), Masterminds semver constraints (`mmsemver`),
//! Kubernetes' `resource.Quantity` text and the base-36 SHA-224 hash Kubernetes tools name
//! objects with. They sit below the bundle and catalog models because several of them (and the
//! serve cache) need the same reproductions, and none of them knows about OLM.

pub mod decoded;
pub mod escape;
pub mod execuser;
pub mod flate;
pub mod hash;
pub mod marshal;
pub mod mmsemver;
pub mod netaddr;
pub mod pogreb;
pub mod protowire;
pub mod quantity;
pub mod sort;
