//! blang/semver v4 range expressions, as OLM uses them for `olm.package` dependencies.
