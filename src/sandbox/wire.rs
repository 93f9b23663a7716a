//! The protocol between the harness and the supervisor of a run's sandbox
//! ([`super::supervisor`]): frames on a Unix stream socket, each a 4-byte big-endian length and
//! a JSON message, with the output pipes of a command passed as descriptors (`SCM_RIGHTS`)
//! alongside the frame that spawns it, and the sandbox's network namespace alongside the
//! supervisor's `ready`. The descriptors arrive no later than the first byte of their frame, in
//! order, so a reader queues every descriptor it receives and a `spawn` frame takes the next two.
//!
//! The harness trusts nothing it reads here beyond what a command could say about itself: a
//! frame that does not parse ends the sandbox.
//!
//! Depends on nothing else in the crate.

use std::collections::VecDeque;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::PathBuf;

use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};
use serde::{Deserialize, Serialize};

/// Changes whenever a message changes, the sandbox maker's ([`super::zygote`]) included: the
/// supervisor and the maker are the harness binary itself, and one of another build must not be
/// spoken to (a maker's first sandbox says this protocol, or the maker is not used).
pub const PROTOCOL: &str = "harness-sandbox-5";

/// The largest frame either side accepts (a command's script and environment included).
pub const MAX_FRAME: usize = 64 * 1024 * 1024;

/// The harness's requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// Run `shell -c script` in `cwd` with exactly `env` (plus the tag), in a process group of
    /// its own, its stdout and stderr the two descriptors sent with this frame. A command that
    /// starts gets no reply until [`Reply::Exited`]; one that cannot, [`Reply::SpawnFailed`].
    Spawn {
        id: u64,
        shell: PathBuf,
        script: String,
        cwd: PathBuf,
        env: Vec<(String, String)>,
        tag: String,
    },
    /// Kill the command's process group (Pi's `killProcessTree` on a timeout or an abort).
    KillGroup { id: u64 },
    /// Kill everything the command started (its group, every process carrying its tag, every
    /// orphan that dropped its tag) and answer [`Reply::Cleaned`].
    Clean { id: u64 },
}

/// The supervisor's answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Reply {
    /// The supervisor runs and speaks [`PROTOCOL`]; the frame carries a descriptor of the
    /// sandbox's network namespace (for the harness to release it with others once the sandbox
    /// has ended, `isolated::release_network_namespace`).
    Ready { protocol: String },
    /// The command could not be started: the OS error number when there is one, and its text.
    /// (One that starts is not announced: that reply woke the harness once more per command,
    /// for nothing it used.)
    SpawnFailed {
        id: u64,
        errno: Option<i32>,
        message: String,
    },
    /// The command's shell ended with this raw wait status. `clean`: nothing the command
    /// started was left when it ended, so a `clean` has nothing to do and need not be sent.
    Exited { id: u64, status: i32, clean: bool },
    /// Everything the command started is dead.
    Cleaned { id: u64 },
}

/// `message` as a frame: length, then JSON.
pub fn frame<T: Serialize>(message: &T) -> Vec<u8> {
    let json = serde_json::to_vec(message).expect("protocol messages serialize");
    let mut out = Vec::with_capacity(4 + json.len());
    out.extend_from_slice(&(json.len() as u32).to_be_bytes());
    out.extend_from_slice(&json);
    out
}

/// Sends the start of `bytes` with `fds` attached: how many bytes went (the rest is sent with
/// plain writes; the descriptors went with the first byte).
pub fn send_with_fds(
    socket: BorrowedFd<'_>,
    bytes: &[u8],
    fds: &[BorrowedFd<'_>],
) -> io::Result<usize> {
    if fds.is_empty() {
        return Ok(rustix::net::send(socket, bytes, SendFlags::NOSIGNAL)?);
    }
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
    let mut ancillary = SendAncillaryBuffer::new(&mut space);
    if !ancillary.push(SendAncillaryMessage::ScmRights(fds)) {
        return Err(io::Error::other("too many descriptors for one frame"));
    }
    Ok(rustix::net::sendmsg(
        socket,
        &[io::IoSlice::new(bytes)],
        &mut ancillary,
        SendFlags::NOSIGNAL,
    )?)
}

/// A connected pair of Unix stream sockets (close-on-exec): the two ends of a protocol here.
pub fn socketpair() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::net::socketpair(
        rustix::net::AddressFamily::UNIX,
        rustix::net::SocketType::STREAM,
        rustix::net::SocketFlags::CLOEXEC,
        None,
    )?)
}

/// Sends all of `bytes` on the blocking `socket`, `fds` with the first byte (an interrupted send
/// is retried).
pub fn send_all(socket: BorrowedFd<'_>, bytes: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<()> {
    let mut sent = 0;
    let mut fds = fds;
    while sent < bytes.len() {
        match send_with_fds(socket, &bytes[sent..], fds) {
            Ok(n) => {
                sent += n;
                fds = &[];
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Frames read from a socket, with the descriptors that came along.
#[derive(Default)]
pub struct Reader {
    buf: Vec<u8>,
    fds: VecDeque<OwnedFd>,
    /// What each read lands in: made (and zeroed) once, not at every read.
    chunk: Vec<u8>,
}

/// The most one read takes.
const CHUNK: usize = 64 * 1024;

impl Reader {
    /// Reads once from `socket` (which may be non-blocking): how many bytes came (0 at the end).
    pub fn fill(&mut self, socket: BorrowedFd<'_>) -> io::Result<usize> {
        if self.chunk.is_empty() {
            self.chunk = vec![0; CHUNK];
        }
        let chunk = &mut self.chunk;
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(4))];
        let mut ancillary = RecvAncillaryBuffer::new(&mut space);
        let got = rustix::net::recvmsg(
            socket,
            &mut [io::IoSliceMut::new(chunk)],
            &mut ancillary,
            RecvFlags::CMSG_CLOEXEC,
        )?;
        for message in ancillary.drain() {
            if let RecvAncillaryMessage::ScmRights(fds) = message {
                self.fds.extend(fds);
            }
        }
        self.buf.extend_from_slice(&chunk[..got.bytes]);
        Ok(got.bytes)
    }

    /// The next whole frame read so far, parsed.
    pub fn next_frame<T: for<'de> Deserialize<'de>>(&mut self) -> io::Result<Option<T>> {
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let len = u32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
        if len > MAX_FRAME {
            return Err(io::Error::other(format!("a sandbox frame of {len} bytes")));
        }
        if self.buf.len() < 4 + len {
            return Ok(None);
        }
        let message = serde_json::from_slice(&self.buf[4..4 + len])
            .map_err(|e| io::Error::other(format!("a sandbox frame that does not parse: {e}")));
        self.buf.drain(..4 + len);
        message.map(Some)
    }

    /// The next descriptor received.
    pub fn take_fd(&mut self) -> Option<OwnedFd> {
        self.fds.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::AsFd;

    #[test]
    fn frames_and_descriptors_cross_a_socket_in_order() {
        let (a, b) = socketpair().unwrap();
        let (r1, w1) = rustix::pipe::pipe().unwrap();
        let spawn = Request::Spawn {
            id: 7,
            shell: "/bin/bash".into(),
            script: "echo hi".into(),
            cwd: "/ws".into(),
            env: vec![("PATH".into(), "/bin".into())],
            tag: "t-7".into(),
        };
        let bytes = frame(&spawn);
        let sent = send_with_fds(a.as_fd(), &bytes, &[w1.as_fd(), w1.as_fd()]).unwrap();
        assert_eq!(sent, bytes.len());
        let more = frame(&Request::Clean { id: 7 });
        send_with_fds(a.as_fd(), &more, &[]).unwrap();
        drop(w1);
        let mut reader = Reader::default();
        let mut got: Vec<Request> = Vec::new();
        while got.len() < 2 {
            assert!(reader.fill(b.as_fd()).unwrap() > 0);
            while let Some(m) = reader.next_frame().unwrap() {
                got.push(m);
            }
        }
        assert_eq!(got, vec![spawn, Request::Clean { id: 7 }]);
        let out = reader.take_fd().unwrap();
        let _err = reader.take_fd().unwrap();
        assert!(reader.take_fd().is_none());
        rustix::io::write(&out, b"through").unwrap();
        drop(out);
        drop(_err);
        let mut text = String::new();
        std::fs::File::from(r1).read_to_string(&mut text).unwrap();
        assert_eq!(text, "through");
        // Garbage is an error, not a panic.
        rustix::io::write(&a, &[0, 0, 0, 2, b'{', b'x']).unwrap();
        reader.fill(b.as_fd()).unwrap();
        assert!(reader.next_frame::<Request>().is_err());
    }
}
