//! What an index database holds, in memory, and what opm makes of it: the catalog.
//!
//! Why a model of the *tables* rather than of the catalog: opm's meaning of a legacy catalog is
//! defined by two pieces of its code, the sqlite loader (which fills the tables: channel entries
//! walked from each channel head, synthesized entries for `skips`, a package property per
//! bundle) and the conversion of those tables to a catalog (`sqlite.ToModel`, whose recursive
//! `listBundlesQuery` turns the entries back into `replaces`/`skips` edges, then
//! `declcfg.ConvertFromModel`). Keeping the rows lets both producers share one conversion:
//! [`crate::legacy::sqlite`] reads them from a database file, and the package-manifest reader
//! fills them as the loader would (the `add_*` methods mirror the loader's `INSERT`s), so both
//! print exactly what `opm render` prints.
//!
//! Columns that are nullable in the database and whose `NULL` changes the outcome are
//! `Option`s (a bundle without a `version` or `bundlepath` is skipped by opm's listing query,
//! for example); the rest are plain strings (`NULL` reads as `""`, as opm's `sql.NullString`
//! does).
//!
//! The conversion ([`IndexDb::to_declarative_config`]) reproduces operator-registry v1.73.0
//! (`pkg/sqlite/conversion.go`, `query.go`, `pkg/api/api_to_model.go`,
//! `alpha/declcfg/model_to_declcfg.go`, `alpha/action/render.go` `populateDBRelatedImages`),
//! which v1.26.5 matches on every point that reaches the output except the order of the
//! `olm.bundle.object` properties (see [`IndexDb::to_declarative_config`]).
//!
//! The jobs, one module each: `tables` (the rows), `api_bundle` (opm's `api.Bundle` and the
//! conversion's error), `loader` (the loader's `INSERT`s, for the
//! package-manifest reader), `convert` (the query layer and the conversion), `model` (opm's
//! in-memory package model), `check` (opm's `model.Validate`, replaces chains included) and
//! `to_fbc` (the model as a catalog).

mod api_bundle;
mod check;
mod convert;
mod loader;
mod model;
mod tables;
mod to_fbc;

#[cfg(test)]
mod tests;

pub use api_bundle::ConvertError;
pub use tables::{
    ApiBundleRow, ApiRow, BundleValueRow, ChannelEntryRow, ChannelRow, DEPRECATED_PROPERTY,
    IndexDb, OperatorBundleRow, PackageRow, RelatedImageRow, ValueTable,
};
