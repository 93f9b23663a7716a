//! Bounded capture of what the agent's commands print: a file that stops growing at a cap
//! ([`CappedFile`], bash's full-output file) and a rolling tail ([`Tail`], a check's output).
//! Whatever a command prints, the harness's memory and disk use stay bounded.
//!
//! Depends on nothing else in the crate.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The most a full-output file keeps: 32 MiB. `yes` for a few seconds writes gigabytes.
pub const FULL_OUTPUT_CAP: u64 = 32 * 1024 * 1024;

/// A file that keeps the first `cap` bytes written to it and counts the rest. [`CappedFile::finish`]
/// appends a notice line naming how much was dropped.
pub struct CappedFile {
    path: PathBuf,
    file: BufWriter<std::fs::File>,
    cap: u64,
    written: u64,
    dropped: u64,
}

impl CappedFile {
    /// Creates (truncates) `path`.
    pub fn create(path: &Path, cap: u64) -> io::Result<CappedFile> {
        let file = std::fs::File::create(path)?;
        Ok(CappedFile {
            path: path.to_path_buf(),
            file: BufWriter::with_capacity(64 * 1024, file),
            cap,
            written: 0,
            dropped: 0,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes what fits under the cap; the rest is only counted.
    pub fn write(&mut self, data: &[u8]) -> io::Result<()> {
        let room = self.cap.saturating_sub(self.written);
        let keep = (data.len() as u64).min(room) as usize;
        if keep > 0 {
            self.file.write_all(&data[..keep])?;
            self.written += keep as u64;
        }
        self.dropped += (data.len() - keep) as u64;
        Ok(())
    }

    /// Bytes not saved because of the cap.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Flushes; when bytes were dropped, ends the file with [`cap_notice`]. Returns the bytes
    /// dropped.
    pub fn finish(mut self) -> io::Result<u64> {
        if self.dropped > 0 {
            let notice = format!("\n{}\n", cap_notice(self.cap, self.dropped));
            self.file.write_all(notice.as_bytes())?;
        }
        self.file.flush()?;
        Ok(self.dropped)
    }
}

/// The notice for a capped file: `[harness: full output capped at 32 MiB; 123 more bytes were
/// not saved]`.
pub fn cap_notice(cap: u64, dropped: u64) -> String {
    format!(
        "[harness: full output capped at {} MiB; {dropped} more bytes were not saved]",
        cap / (1024 * 1024)
    )
}

/// The last `max` bytes of a stream.
#[derive(Debug, Clone)]
pub struct Tail {
    max: usize,
    bytes: Vec<u8>,
    dropped: bool,
}

impl Tail {
    /// An empty tail keeping at most `max` bytes.
    pub fn new(max: usize) -> Self {
        Tail {
            max,
            bytes: Vec::new(),
            dropped: false,
        }
    }

    /// Appends `data`, dropping the oldest bytes past the limit.
    pub fn push(&mut self, data: &[u8]) {
        self.bytes.extend_from_slice(data);
        if self.bytes.len() > self.max {
            let cut = self.bytes.len() - self.max;
            self.bytes.drain(..cut);
            self.dropped = true;
        }
    }

    /// The tail as text (lossy UTF-8), with a first line saying earlier output was cut if it was.
    pub fn text(&self) -> String {
        let text = String::from_utf8_lossy(&self.bytes).into_owned();
        if self.dropped {
            format!(
                "[... earlier output cut, last {} bytes kept ...]\n{text}",
                self.max
            )
        } else {
            text
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_stops_at_the_cap_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.log");
        let mut f = CappedFile::create(&path, 10).unwrap();
        f.write(b"0123456").unwrap();
        f.write(b"789abc").unwrap();
        f.write(b"def").unwrap();
        assert_eq!(f.dropped(), 6);
        assert_eq!(f.finish().unwrap(), 6);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "0123456789\n[harness: full output capped at 0 MiB; 6 more bytes were not saved]\n"
        );
    }

    #[test]
    fn an_uncapped_file_is_exactly_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.log");
        let mut f = CappedFile::create(&path, 100).unwrap();
        f.write(b"abc").unwrap();
        assert_eq!(f.finish().unwrap(), 0);
        assert_eq!(std::fs::read(&path).unwrap(), b"abc");
    }

    #[test]
    fn the_tail_keeps_the_end() {
        let mut t = Tail::new(4);
        t.push(b"ab");
        assert_eq!(t.text(), "ab");
        t.push(b"cdef");
        assert_eq!(
            t.text(),
            "[... earlier output cut, last 4 bytes kept ...]\ncdef"
        );
    }
}
