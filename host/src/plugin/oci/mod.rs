//! Plugins in OCI registries: `vx plugin add oci://REGISTRY/NS/NAME:TAG`
//! (or `@sha256:DIGEST`) and `vx plugin publish FILE oci://…`, in the Wasm
//! OCI artifact layout that wkg, wasm-pkg-tools, Spin and wasmCloud use.
//!
//! The distribution API is spoken directly over ureq (rustls), the HTTP
//! client vx already has: the crates that implement it (oci-client,
//! oci-wasm) bring reqwest, a second HTTP stack, native-tls by default
//! and, for oci-wasm, a second copy of the wasm-tools crates; the few
//! calls a plugin needs are less code than that configuration.
//!
//! | file        | owns |
//! |-------------|------|
//! | `reference` | parsing `oci://…` |
//! | `manifest`  | the Wasm artifact layout: media types, manifest and config JSON |
//! | `client`    | the distribution API calls, challenges answered, blobs checked against digests |
//! | `auth`      | credentials: `VX_REGISTRY_TOKEN`, user/password, the Docker credential file |
//! | `tls`       | the agent: system roots plus `VX_REGISTRY_CA_FILE` |
//! | `pull`      | manifest, media types, layer, each digest checked |
//! | `add`       | `vx plugin add oci://…`: pull, then the local install, then the source in `vx.lock` |
//! | `publish`   | `vx plugin publish`: check, config, layer, manifest |
//! | `error`     | [`OciError`] and its hints |

mod add;
mod auth;
mod client;
mod error;
mod manifest;
mod publish;
mod pull;
mod reference;
mod tls;

pub(crate) use add::add;
pub(crate) use publish::publish;
pub(crate) use reference::is_reference;
