//! `std::io` adapters over the host's blob streams, so artifacts can be
//! copied with `std::io::copy` in bounded chunks.

use std::io;

use crate::bindings::imports::vx::plugin::host::{BlobReader, BlobWriter};

/// Bytes asked of the host per `read` call.
const CHUNK: u32 = 64 * 1024;

/// Reads a [`BlobReader`] as `std::io::Read`.
#[derive(Debug)]
pub struct Reader<'a> {
    blob: &'a BlobReader,
    buffer: Vec<u8>,
    offset: usize,
    done: bool,
}

impl<'a> Reader<'a> {
    pub fn new(blob: &'a BlobReader) -> Self {
        Reader { blob, buffer: Vec::new(), offset: 0, done: false }
    }
}

impl io::Read for Reader<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.offset == self.buffer.len() {
            if self.done || out.is_empty() {
                return Ok(0);
            }
            match self.blob.read(CHUNK).map_err(io::Error::other)? {
                Some(chunk) => {
                    self.buffer = chunk;
                    self.offset = 0;
                }
                None => self.done = true,
            }
        }
        let n = out.len().min(self.buffer.len() - self.offset);
        out[..n].copy_from_slice(&self.buffer[self.offset..self.offset + n]);
        self.offset += n;
        Ok(n)
    }
}

/// Writes into a [`BlobWriter`] as `std::io::Write`; each `write` is one
/// host call, so wrap it in a `BufWriter` for small writes.
#[derive(Debug)]
pub struct Writer<'a> {
    blob: &'a BlobWriter,
}

impl<'a> Writer<'a> {
    pub fn new(blob: &'a BlobWriter) -> Self {
        Writer { blob }
    }
}

impl io::Write for Writer<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.blob.write(data).map_err(io::Error::other)?;
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
