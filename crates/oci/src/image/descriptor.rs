//! What a manifest points at: the OCI content descriptor, named by the parser, the verifying
//! reader and the model alike.

/// A content descriptor as the OCI image spec defines it: what a manifest points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descriptor {
    /// Media type of the referenced content.
    pub media_type: String,
    /// `sha256:<64 hex>` digest of the content bytes.
    pub digest: String,
    /// Length of the content in bytes.
    pub size: u64,
}
