//! Talking to OCI registries: references, credentials and the distribution-API client.
