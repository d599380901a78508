//! A minimal pack writer for bulk captures: objects are zlib-compressed
//! into one in-memory pack (no deltas, so reading them back stays cheap) and
//! handed to libgit2's pack indexer. Thousands of loose-object files would
//! otherwise dominate a first snapshot.

use std::io::Write as _;

use git2::{ObjectType, Oid};
use sha1::{Digest, Sha1};

use crate::cache::FastMap;

#[derive(Default)]
pub(crate) struct PackBuf {
    body: Vec<u8>,
    count: u32,
    seen: FastMap<Oid, ()>,
}

fn type_code(kind: ObjectType) -> u8 {
    match kind {
        ObjectType::Commit => 1,
        ObjectType::Tree => 2,
        ObjectType::Tag => 4,
        _ => 3,
    }
}

impl PackBuf {
    /// Queue an object; returns its id.
    pub fn add(&mut self, kind: ObjectType, data: &[u8]) -> Result<Oid, git2::Error> {
        let oid = Oid::hash_object(kind, data)?;
        if self.seen.insert(oid, ()).is_some() {
            return Ok(oid);
        }
        let mut size = data.len() as u64;
        let mut byte = (type_code(kind) << 4) | (size & 0x0f) as u8;
        size >>= 4;
        while size > 0 {
            self.body.push(byte | 0x80);
            byte = (size & 0x7f) as u8;
            size >>= 7;
        }
        self.body.push(byte);
        let mut enc = flate2::write::ZlibEncoder::new(&mut self.body, flate2::Compression::fast());
        enc.write_all(data)
            .and_then(|_| enc.finish().map(|_| ()))
            .map_err(|e| git2::Error::from_str(&format!("compressing an object: {e}")))?;
        self.count += 1;
        Ok(oid)
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Bytes queued so far (compressed).
    pub fn len(&self) -> usize {
        self.body.len()
    }

    /// The complete pack (header, objects, SHA-1 trailer); resets the buffer.
    pub fn take_pack(&mut self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.body.len() + 32);
        out.extend_from_slice(b"PACK");
        out.extend_from_slice(&2u32.to_be_bytes());
        out.extend_from_slice(&self.count.to_be_bytes());
        out.append(&mut self.body);
        let digest = Sha1::digest(&out);
        out.extend_from_slice(&digest);
        self.count = 0;
        self.seen.clear();
        out
    }
}

/// Write a pack into the repo's object store (indexed by libgit2).
pub(crate) fn store_pack(odb: &git2::Odb<'_>, pack: &[u8]) -> Result<(), git2::Error> {
    let mut pw = odb.packwriter()?;
    pw.write_all(pack)
        .map_err(|e| git2::Error::from_str(&format!("writing a pack: {e}")))?;
    pw.commit()?;
    odb.refresh()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_are_readable_by_libgit2() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init_bare(dir.path()).unwrap();
        let mut p = PackBuf::default();
        let big = "line\n".repeat(5000);
        let a = p.add(ObjectType::Blob, b"hello\n").unwrap();
        let b = p.add(ObjectType::Blob, big.as_bytes()).unwrap();
        assert_eq!(
            p.add(ObjectType::Blob, b"hello\n").unwrap(),
            a,
            "deduplicated"
        );
        let odb = repo.odb().unwrap();
        store_pack(&odb, &p.take_pack()).unwrap();
        assert_eq!(repo.find_blob(a).unwrap().content(), b"hello\n");
        assert_eq!(repo.find_blob(b).unwrap().content(), big.as_bytes());
        assert!(p.is_empty());
    }
}
