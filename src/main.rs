//! Thin binary: all behaviour lives in the library so tests and benches can call it directly.

fn main() -> std::process::ExitCode {
    olmpack::cli::main()
}
