//! The `vx` binary: everything lives in the library; this only maps the
//! outcome of a command to the process exit code.

fn main() -> std::process::ExitCode {
    vx::cli::main()
}
