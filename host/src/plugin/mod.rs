//! WebAssembly plugins behind the WIT interfaces in `wit/` (DESIGN §7):
//! executors, cache backends, reporters. The only module that will name
//! wasmtime types. Not built yet; tasks whose `executor` is not `local` are
//! refused with an error that says so.
