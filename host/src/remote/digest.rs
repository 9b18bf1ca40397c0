//! Digest functions and the resource names ByteStream addresses blobs by.

use super::re;

/// The hash a server uses for CAS digests: SHA-256 everywhere, BLAKE3 where
/// the server offers it (vx hashes with BLAKE3 already).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DigestFn {
    Sha256,
    Blake3,
}

impl DigestFn {
    /// The best of the functions a server lists (an empty list means SHA-256,
    /// as REAPI servers that predate the field use).
    pub(crate) fn choose(offered: &[i32]) -> Option<DigestFn> {
        use re::digest_function::Value;
        if offered.contains(&(Value::Blake3 as i32)) {
            Some(DigestFn::Blake3)
        } else if offered.is_empty() || offered.contains(&(Value::Sha256 as i32)) {
            Some(DigestFn::Sha256)
        } else {
            None
        }
    }

    pub(crate) fn proto(self) -> i32 {
        match self {
            DigestFn::Sha256 => re::digest_function::Value::Sha256 as i32,
            DigestFn::Blake3 => re::digest_function::Value::Blake3 as i32,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            DigestFn::Sha256 => "SHA-256",
            DigestFn::Blake3 => "BLAKE3",
        }
    }

    /// The digest of `bytes`.
    pub(crate) fn of(self, bytes: &[u8]) -> re::Digest {
        let hash = match self {
            DigestFn::Sha256 => {
                use sha2::Digest as _;
                hex(&sha2::Sha256::digest(bytes))
            }
            DigestFn::Blake3 => blake3::hash(bytes).to_hex().to_string(),
        };
        re::Digest { hash, size_bytes: bytes.len() as i64 }
    }

    /// The digest of a message, with its encoding (what goes to the CAS).
    pub(crate) fn of_message(self, msg: &impl prost::Message) -> (re::Digest, Vec<u8>) {
        let bytes = msg.encode_to_vec();
        (self.of(&bytes), bytes)
    }

    /// The ByteStream name of a blob to read.
    pub(crate) fn read_name(self, instance: &str, d: &re::Digest) -> String {
        format!("{}blobs/{}{}/{}", prefix(instance), self.path_part(), d.hash, d.size_bytes)
    }

    /// The ByteStream name of an upload (`uuid` makes concurrent uploads distinct).
    pub(crate) fn write_name(self, instance: &str, uuid: &str, d: &re::Digest) -> String {
        format!("{}uploads/{uuid}/blobs/{}{}/{}", prefix(instance), self.path_part(), d.hash, d.size_bytes)
    }

    /// SHA-256 is implied by the hash length; other functions are named.
    fn path_part(self) -> &'static str {
        match self {
            DigestFn::Sha256 => "",
            DigestFn::Blake3 => "blake3/",
        }
    }
}

fn prefix(instance: &str) -> String {
    if instance.is_empty() { String::new() } else { format!("{instance}/") }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// `hash/size`, the way REAPI tools print a digest.
pub(crate) fn show(d: &re::Digest) -> String {
    format!("{}/{}", d.hash, d.size_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_empty_and_names() {
        let d = DigestFn::Sha256.of(b"");
        assert_eq!(d.hash, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(DigestFn::Sha256.read_name("", &d), format!("blobs/{}/0", d.hash));
        assert_eq!(DigestFn::Blake3.read_name("main", &d), format!("main/blobs/blake3/{}/0", d.hash));
        assert!(DigestFn::Sha256.write_name("i", "u", &d).starts_with("i/uploads/u/blobs/"));
    }

    #[test]
    fn chooses_blake3_when_offered() {
        assert_eq!(DigestFn::choose(&[1, 9]), Some(DigestFn::Blake3));
        assert_eq!(DigestFn::choose(&[1]), Some(DigestFn::Sha256));
        assert_eq!(DigestFn::choose(&[]), Some(DigestFn::Sha256));
        assert_eq!(DigestFn::choose(&[2]), None);
    }
}
