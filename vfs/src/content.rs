//! A file's bytes held in memory as sparse pages, so durable copies of large
//! preallocated files (etcd's 64 MiB WAL segments) cost only their data.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Bytes per page; pages that would be all zeros are never stored.
const PAGE: u64 = 4096;

/// The contents of one file. Invariant: bytes at or past `len` are zero in
/// every stored page, so growing the file exposes zeros as on a real fs.
#[derive(Debug, Default)]
pub(crate) struct Content {
    len: u64,
    pages: BTreeMap<u64, Box<[u8]>>,
}

impl Content {
    /// Reads a host file, for the state found when the disk is opened.
    pub fn load(path: &Path) -> io::Result<Content> {
        let mut content = Content::default();
        content.write(0, &fs::read(path)?);
        Ok(content)
    }

    /// File size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Overwrites `data` at `offset`, growing the file as a `pwrite` would.
    pub fn write(&mut self, offset: u64, data: &[u8]) {
        let mut pos = offset;
        let mut rest = data;
        while !rest.is_empty() {
            let within = (pos % PAGE) as usize;
            let n = rest.len().min(PAGE as usize - within);
            let (chunk, tail) = rest.split_at(n);
            match self.pages.entry(pos / PAGE) {
                Entry::Occupied(page) => page.into_mut()[within..within + n].copy_from_slice(chunk),
                Entry::Vacant(slot) => {
                    if chunk.iter().any(|&b| b != 0) {
                        let mut page = vec![0; PAGE as usize].into_boxed_slice();
                        page[within..within + n].copy_from_slice(chunk);
                        slot.insert(page);
                    }
                }
            }
            pos += n as u64;
            rest = tail;
        }
        self.len = self.len.max(offset + data.len() as u64);
    }

    /// The byte at `offset` (zero past the end or in a hole).
    pub fn byte(&self, offset: u64) -> u8 {
        self.pages
            .get(&(offset / PAGE))
            .map_or(0, |p| p[(offset % PAGE) as usize])
    }

    /// Sets the size as `ftruncate` does: shrinking discards bytes, growing adds zeros.
    pub fn set_len(&mut self, len: u64) {
        if len < self.len {
            self.pages.split_off(&len.div_ceil(PAGE));
            if let Some(page) = self.pages.get_mut(&(len / PAGE)) {
                page[(len % PAGE) as usize..].fill(0);
            }
        }
        self.len = len;
    }

    /// Writes these contents to a new host file at `path`, leaving zero pages as holes.
    pub fn store(&self, path: &Path) -> io::Result<()> {
        let file = File::create(path)?;
        file.set_len(self.len)?;
        for (&index, page) in &self.pages {
            let start = index * PAGE;
            let end = (start + PAGE).min(self.len);
            file.write_all_at(&page[..(end - start) as usize], start)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(content: &Content) -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        content.store(&path).unwrap();
        fs::read(path).unwrap()
    }

    #[test]
    fn writes_across_pages_read_back() {
        let mut c = Content::default();
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8 + 1).collect();
        c.write(100, &data);
        let mut expected = vec![0; 100];
        expected.extend_from_slice(&data);
        assert_eq!(bytes(&c), expected);
    }

    #[test]
    fn shrink_then_grow_exposes_zeros() {
        let mut c = Content::default();
        c.write(0, &[7; 5000]);
        c.set_len(10);
        c.set_len(6000);
        let mut expected = vec![7; 10];
        expected.resize(6000, 0);
        assert_eq!(bytes(&c), expected);
    }

    #[test]
    fn zero_writes_and_growth_store_no_pages() {
        let mut c = Content::default();
        c.write(0, &[0; 3 * PAGE as usize]);
        c.set_len(64 << 20);
        assert!(c.pages.is_empty());
        assert_eq!(c.len(), 64 << 20);
    }
}
