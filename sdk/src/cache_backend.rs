//! World `cache-backend`: a remote store for task artifacts. vx computes
//! the keys; the plugin moves bytes, streamed through the host's blob
//! resources (see [`crate::blob`] for `std::io` adapters).

use serde::de::DeserializeOwned;

use crate::bindings::imports::vx::plugin::types::Error as WitError;
use crate::{Describe, Error, config, panic};

pub use crate::bindings::imports::vx::plugin::host::{BlobReader, BlobWriter};

/// A cache-backend plugin. Export it with
/// [`export_cache_backend!`](crate::export_cache_backend).
pub trait CacheBackend: Describe {
    /// Deserialized from the plugin's `config` table on every call.
    type Config: DeserializeOwned;

    /// One bool per key, in order.
    fn exists(config: &Self::Config, keys: &[String]) -> Result<Vec<bool>, Error>;

    /// Streams the artifact into `sink`; `Ok(false)` on a miss.
    fn get(config: &Self::Config, key: &str, sink: &BlobWriter) -> Result<bool, Error>;

    /// Stores the `size` bytes of `source` under `key`.
    fn put(config: &Self::Config, key: &str, size: u64, source: &BlobReader) -> Result<(), Error>;
}

#[doc(hidden)]
pub fn __exists<T: CacheBackend>(keys: Vec<String>) -> Result<Vec<bool>, WitError> {
    panic::install();
    let config = config::load::<T::Config>()?;
    let found = T::exists(&config, &keys)?;
    Ok(check_one_per_key(keys.len(), found)?)
}

#[doc(hidden)]
pub fn __get<T: CacheBackend>(key: String, sink: &BlobWriter) -> Result<bool, WitError> {
    panic::install();
    let config = config::load::<T::Config>()?;
    Ok(T::get(&config, &key, sink)?)
}

#[doc(hidden)]
pub fn __put<T: CacheBackend>(key: String, size: u64, source: &BlobReader) -> Result<(), WitError> {
    panic::install();
    let config = config::load::<T::Config>()?;
    Ok(T::put(&config, &key, size, source)?)
}

/// vx pairs answers with keys by position, so a wrong count would mark the
/// wrong artifacts present; refuse it here instead.
fn check_one_per_key(keys: usize, found: Vec<bool>) -> Result<Vec<bool>, Error> {
    if found.len() == keys {
        Ok(found)
    } else {
        Err(Error::failed(format!("exists returned {} answers for {keys} keys", found.len())))
    }
}

/// Exports a [`CacheBackend`] as the component's `vx:plugin/cache` interface.
/// Use it once, at the root of a `cdylib` crate.
#[macro_export]
macro_rules! export_cache_backend {
    ($plugin:ty) => {
        #[doc(hidden)]
        struct __VxCacheBackend;

        impl $crate::bindings::cache_backend::exports::vx::plugin::cache::Guest for __VxCacheBackend {
            fn info() -> $crate::__private::WitPluginInfo {
                $crate::__private::info::<$plugin>()
            }

            fn exists(
                keys: ::std::vec::Vec<::std::string::String>,
            ) -> ::core::result::Result<::std::vec::Vec<bool>, $crate::__private::WitError> {
                $crate::cache_backend::__exists::<$plugin>(keys)
            }

            fn get(
                key: ::std::string::String,
                sink: &$crate::cache_backend::BlobWriter,
            ) -> ::core::result::Result<bool, $crate::__private::WitError> {
                $crate::cache_backend::__get::<$plugin>(key, sink)
            }

            fn put(
                key: ::std::string::String,
                size: u64,
                source: &$crate::cache_backend::BlobReader,
            ) -> ::core::result::Result<(), $crate::__private::WitError> {
                $crate::cache_backend::__put::<$plugin>(key, size, source)
            }
        }

        $crate::bindings::cache_backend::__vx_export_cache_backend_world!(
            __VxCacheBackend with_types_in $crate::bindings::cache_backend
        );
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exists_answers_must_match_the_keys() {
        assert_eq!(check_one_per_key(2, vec![true, false]).unwrap(), vec![true, false]);
        let error = check_one_per_key(3, vec![true]).unwrap_err();
        assert_eq!(error, Error::failed("exists returned 1 answers for 3 keys"));
    }
}
