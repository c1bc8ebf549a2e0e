//! Thin binary: all behaviour lives in the library so tests and benches can call it directly.

/// See `olmpack::alloc` for why small blocks come from mimalloc and large ones from the system.
#[global_allocator]
static GLOBAL: olmpack::alloc::SplitAllocator = olmpack::alloc::SplitAllocator;

fn main() -> std::process::ExitCode {
    olmpack::cli::main()
}
