//! File names as text without losing bytes. Git trees and Unix file names
//! are bytes; the records, the protocol and the UI carry `String`s. A name
//! that is not UTF-8 keeps its valid runs as they are and maps each invalid
//! byte `b` to the private-use character U+10FF00 + `b`, so it round-trips
//! exactly: shown, stored in a step record, restored under the same name.
//! (A real name containing those private-use characters would read back as
//! bytes; none is expected in practice.)

use std::path::{Path, PathBuf};

const BASE: u32 = 0x0010_FF00;

/// Bytes of a project-relative name as lossless text.
pub fn enc(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (ok, bad) = rest.split_at(e.valid_up_to());
                // `ok` is valid by construction.
                out.push_str(std::str::from_utf8(ok).unwrap_or_default());
                let n = e.error_len().unwrap_or(bad.len()).max(1);
                for b in &bad[..n] {
                    out.push(char::from_u32(BASE + u32::from(*b)).unwrap_or('\u{FFFD}'));
                }
                rest = &bad[n..];
            }
        }
    }
}

/// The bytes [`enc`] made text of.
pub fn dec(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        let u = c as u32;
        if (BASE + 0x80..=BASE + 0xFF).contains(&u) {
            out.push((u - BASE) as u8);
        } else {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    out
}

/// A path component as lossless text.
pub fn os_enc(name: &std::ffi::OsStr) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        enc(name.as_bytes())
    }
    #[cfg(not(unix))]
    {
        name.to_string_lossy().into_owned()
    }
}

/// A relative path (`/`-separated) as lossless text.
pub fn path_enc(rel: &Path) -> String {
    enc(&crate::capture::rel_bytes(rel))
}

/// The path of a `/`-separated relative name, for the file system.
pub fn path_of(rel: &str) -> PathBuf {
    crate::capture::bytes_to_path(&dec(rel))
}

/// `root` joined with a relative name.
pub fn abs(root: &Path, rel: &str) -> PathBuf {
    root.join(path_of(rel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_any_bytes() {
        for b in [
            &b"plain.txt"[..],
            b"caf\xe9.txt",
            b"\xff\xfe",
            "déjà vu/ü.rs".as_bytes(),
            b"a\xc3",
            b"\xe2\x82",
        ] {
            assert_eq!(dec(&enc(b)), b, "{b:?}");
        }
        assert_eq!(enc(b"ok/name"), "ok/name");
    }
}
