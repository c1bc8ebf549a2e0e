//! Reproductions of Go standard-library behaviour that opm's and operator-framework's output
//! depends on, byte for byte, each written once: `encoding/json` escaping, marshalling and
//! indentation (`escape`, `marshal`, `json`), `%q` (`quote`), go-yaml v2's plain-scalar
//! resolution and emitter (`goyaml`), `archive/tar` and FNV for opm's serve-cache digest (`tar`),
//! `sort.Slice`, `compress/flate`'s stream length, runc's `User` resolution (`execuser`), Go's `net/mail` and
//! `net/url` address checks (`netaddr`), Masterminds semver constraints (`mmsemver`),
//! Kubernetes' `resource.Quantity` text and the base-36 SHA-224 hash Kubernetes tools name
//! objects with. They sit below the bundle and catalog models because several of them (and the
//! serve cache) need the same reproductions, and none of them knows about OLM.

pub mod decoded;
pub mod escape;
pub mod execuser;
pub mod flate;
pub mod goyaml;
pub mod hash;
pub mod json;
pub mod marshal;
pub mod mmsemver;
pub mod netaddr;
pub mod pogreb;
pub mod protowire;
pub mod quantity;
pub mod quote;
pub mod sort;
pub mod tar;
