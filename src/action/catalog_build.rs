//! Placeholder; filled by the catalog build step.
