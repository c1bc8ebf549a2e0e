//! The formats file-based catalogs replaced, read so their users can move on: package-manifest
//! folders (`<package>.package.yaml` plus one folder per version) and sqlite index databases
//! (`/database/index.db` of OpenShift 4.6–4.10 index images). Read-only: nothing here ever
//! writes to a user's input.

pub mod index;
pub mod packagemanifest;
pub mod sqlite;
