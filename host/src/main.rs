//! The `vx` binary: everything lives in the library; this only maps the
//! outcome of a command to the process exit code.

/// mimalloc rather than the system allocator: see `Cargo.toml`.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // First, while vx has one thread: the npm launcher's parent-death request.
    vx::die_with_launcher();
    vx::main()
}
