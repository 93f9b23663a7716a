//! Bounded capture of what the agent's commands print: a file that stops growing at a cap
//! ([`CappedFile`], bash's full-output file) and a rolling tail ([`Tail`], a check's output).
//! Whatever a command prints, the harness's memory and disk use stay bounded. And the pipe it
//! prints into ([`LazyPipe`]), watched by the runtime only once the command has run a while.
//!
//! Depends on nothing else in the crate.

use std::io::{self, BufWriter, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long after a command's spawn its output pipe is first watched by the runtime. A command
/// that ends sooner (most of an agent's: `ls`, `cat`, `git status`) has its output read in one
/// go at its end, and does not wake the harness at each write; a longer one is read as it
/// writes from then on. A command that fills the pipe (64 KiB) before then waits at most this
/// long for the first read.
pub const WATCH_OUTPUT_AFTER: Duration = Duration::from_millis(10);

/// A pipe for a command's output: its read end, for the harness, and its write end, blocking as
/// a pipe is for any program, for the command.
pub fn output_pipe() -> io::Result<(LazyPipe, OwnedFd)> {
    let (read, write) = rustix::pipe::pipe_with(
        rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK,
    )?;
    rustix::io::ioctl_fionbio(&write, false)?;
    Ok((LazyPipe::Unwatched(read), write))
}

/// The read end of a command's output pipe: not watched by the runtime at first, then watched
/// ([`LazyPipe::watch`]), then read to its end.
///
/// Watched from the start, every write of the command (`ls`, then `cat`) woke the harness's
/// worker to read it, a switch each, on a core the command's next process wants too
/// (`benches/README.md`, `sandbox_overhead`). Unwatched, what a short command writes waits in
/// the pipe for its end.
#[derive(Debug)]
pub enum LazyPipe {
    Unwatched(OwnedFd),
    Watched(tokio::net::unix::pipe::Receiver),
    /// Read to its end (every writer gone), or given up.
    Ended,
}

impl LazyPipe {
    pub fn is_unwatched(&self) -> bool {
        matches!(self, LazyPipe::Unwatched(_))
    }

    pub fn is_ended(&self) -> bool {
        matches!(self, LazyPipe::Ended)
    }

    /// Reads through the runtime's watch; never ready unless watched. At its end, or at a read
    /// that fails, the pipe is [`LazyPipe::Ended`] (given up).
    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use tokio::io::AsyncReadExt;
        match self {
            LazyPipe::Watched(pipe) => {
                let read = pipe.read(buf).await;
                if matches!(read, Ok(0) | Err(_)) {
                    *self = LazyPipe::Ended;
                }
                read
            }
            _ => std::future::pending().await,
        }
    }

    /// Reads what the pipe holds now, at most `reads` times into `buf`, each read given to
    /// `sink`, from the descriptor itself (non-blocking): the runtime's record of a watched
    /// pipe's readiness may lag behind what the kernel holds. Bounded, so a process left behind
    /// that writes on cannot keep the caller. Whether the pipe reached its end.
    pub fn read_now<E>(
        &mut self,
        buf: &mut [u8],
        reads: usize,
        mut sink: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<bool, E> {
        let fd = match &*self {
            LazyPipe::Unwatched(fd) => fd.as_fd(),
            LazyPipe::Watched(pipe) => pipe.as_fd(),
            LazyPipe::Ended => return Ok(true),
        };
        let mut ended = false;
        for _ in 0..reads {
            match rustix::io::read(fd, &mut *buf) {
                Ok(0) => {
                    ended = true;
                    break;
                }
                Ok(n) => sink(&buf[..n])?,
                Err(_) => break,
            }
        }
        if ended {
            *self = LazyPipe::Ended;
        }
        Ok(ended)
    }

    /// Has the runtime watch the pipe from now on, if it is not already (or ended).
    pub fn watch(&mut self) -> io::Result<()> {
        match std::mem::replace(self, LazyPipe::Ended) {
            LazyPipe::Unwatched(fd) => {
                // Made non-blocking by `output_pipe`: nothing to check or change.
                *self = LazyPipe::Watched(
                    tokio::net::unix::pipe::Receiver::from_owned_fd_unchecked(fd)?,
                );
            }
            other => *self = other,
        }
        Ok(())
    }
}

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
    #[test]
    fn an_unwatched_pipe_is_read_at_once_and_watched_only_while_a_writer_holds_it() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .unwrap();
        let _entered = runtime.enter();
        let mut buf = vec![0u8; 4096];
        let read_now = |pipe: &mut LazyPipe, buf: &mut [u8]| {
            let mut got = Vec::new();
            let ended = pipe
                .read_now(buf, 16, |data| {
                    got.extend_from_slice(data);
                    Ok::<_, ()>(())
                })
                .unwrap();
            (ended, got)
        };

        // Its writer gone: read to its end, never watched.
        let (mut pipe, write) = output_pipe().unwrap();
        let mut writer = std::fs::File::from(write);
        writer.write_all(b"a.txt\nb.txt\n").unwrap();
        drop(writer);
        assert!(pipe.is_unwatched());
        assert_eq!(
            read_now(&mut pipe, &mut buf),
            (true, b"a.txt\nb.txt\n".to_vec())
        );
        assert!(pipe.is_ended());
        pipe.watch().unwrap();
        assert!(pipe.is_ended());

        // Its writer still there (a process the command left): what is there is read, and the
        // rest comes through the runtime's watch.
        let (mut pipe, write) = output_pipe().unwrap();
        let mut writer = std::fs::File::from(write);
        writer.write_all(b"first\n").unwrap();
        assert_eq!(read_now(&mut pipe, &mut buf), (false, b"first\n".to_vec()));
        assert!(pipe.is_unwatched());
        pipe.watch().unwrap();
        assert!(matches!(pipe, LazyPipe::Watched(_)));
        writer.write_all(b"second\n").unwrap();
        drop(writer);
        let n = runtime.block_on(pipe.read(&mut buf)).unwrap();
        assert_eq!(&buf[..n], b"second\n");
        assert_eq!(runtime.block_on(pipe.read(&mut buf)).unwrap(), 0);
        assert!(pipe.is_ended());
    }

    #[test]
    fn the_command_s_end_of_the_pipe_blocks_and_the_harness_s_does_not() {
        let (pipe, write) = output_pipe().unwrap();
        let flags = |fd: std::os::fd::BorrowedFd<'_>| rustix::fs::fcntl_getfl(fd).unwrap();
        assert!(!flags(write.as_fd()).contains(rustix::fs::OFlags::NONBLOCK));
        let LazyPipe::Unwatched(read) = &pipe else {
            panic!("{pipe:?}")
        };
        assert!(flags(read.as_fd()).contains(rustix::fs::OFlags::NONBLOCK));
    }
}
