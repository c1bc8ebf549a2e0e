//! The gRPC codec of the registry services: prost's, except that an answer's buffer is
//! reserved at the message's encoded size before the message is written into it.
//!
//! Why: tonic encodes each answer into an 8 KiB buffer that grows by doubling as the message is
//! written, so a GetBundle answer of a package with a large icon (400-500 KB: the CSV twice,
//! `csvJson` and `object`) was copied through 16, 32 ... 512 KiB blocks, each one fresh memory
//! (the server hands freed pages back at once, `server::purge_freed_memory_now`), about 1 MB
//! of copies and page faults per call for a 0.5 MB answer. Reserved once, it is one block of
//! the answer's size, written once. Decoding is prost's own.

use prost::Message;
use std::marker::PhantomData;
use tonic::Status;
use tonic::codec::{BufferSettings, Codec, EncodeBuf, Encoder};

/// prost's codec with each message's buffer reserved at its encoded size (the generated
/// registry stubs use it, `build.rs`).
#[derive(Debug, Clone)]
pub struct SizedCodec<T, U> {
    _pd: PhantomData<(T, U)>,
}

impl<T, U> Default for SizedCodec<T, U> {
    fn default() -> Self {
        SizedCodec { _pd: PhantomData }
    }
}

impl<T, U> Codec for SizedCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = SizedEncoder<T>;
    type Decoder = tonic_prost::ProstDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        SizedEncoder { _pd: PhantomData }
    }

    fn decoder(&mut self) -> Self::Decoder {
        tonic_prost::ProstCodec::<T, U>::raw_decoder(BufferSettings::default())
    }
}

/// Encodes a message into a buffer first grown to the message's encoded size.
#[derive(Debug, Clone)]
pub struct SizedEncoder<T> {
    _pd: PhantomData<T>,
}

impl<T: Message> Encoder for SizedEncoder<T> {
    type Item = T;
    type Error = Status;

    fn encode(&mut self, item: T, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        buf.reserve(item.encoded_len());
        item.encode(buf)
            .map_err(|e| Status::internal(format!("Error encoding: {e}")))
    }
}
