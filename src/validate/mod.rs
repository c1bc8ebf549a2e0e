//! The registry+v1 rules and the renderers for their findings.
