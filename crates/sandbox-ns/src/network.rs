//! Network namespaces kept from one run's sandbox to the next, one sandbox at a time each.
//!
//! Making a network namespace and tearing it down were the largest part of what a run's sandbox
//! cost (its sysctl tables and loopback device made in the clone, then the kernel's `cleanup_net`
//! worker; `benches/README.md`, `sandbox_overhead`). So the sandbox maker keeps them: it moves
//! into a user namespace of its own ([`Networks::start`]), which owns every network namespace it
//! makes from then on; each sandbox is cloned into one of them ([`super::clone_sandbox`]), and
//! gets it back when the sandbox has ended ([`Networks::give_back`]).
//!
//! What a run could leave there for the next one, and why it cannot:
//! - **Two runs at once never share one**: a namespace is taken by one sandbox and given back
//!   only when every process of that sandbox is gone (the maker reaps its PID 1, which the kernel
//!   lets end only after the rest of its PID namespace).
//! - **Its settings are not the run's to change**: the sandbox's user namespace is a child of the
//!   one that owns the network namespace, so even its root has no capability there (no address,
//!   route, interface, firewall rule or `net.*` sysctl can be changed), and its commands have no
//!   capability at all anyway.
//! - **Sockets are what could outlive a run**: a TCP connection in `TIME_WAIT` on the loopback
//!   (for a minute: the next run's server could not bind its port), or a Unix socket kept in
//!   flight after its processes died (its abstract name taken). A namespace comes back only when
//!   the kernel lists no socket of any family in it ([`Network::is_empty`]); otherwise it is
//!   dropped, and the next sandbox gets a new one.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::{Ids, loopback_up, write_file};

/// What the kernel counts of a network namespace's sockets, under `/proc/thread-self/net`: per
/// protocol, the sockets in use and (TCP) those in `TIME_WAIT`. Counted, not listed: the lists
/// of TCP and UDP sockets (`tcp`, `udp`) walk the machine's whole hash tables, shared by every
/// namespace (262,144 buckets for TCP on a 24 GB machine, milliseconds per read).
const SOCKET_COUNTS: [&str; 2] = ["sockstat", "sockstat6"];

/// The lists of a network namespace's own sockets of the other families (Unix, packet): one
/// header line, then a line per socket.
const SOCKET_LISTS: [&str; 2] = ["unix", "packet"];

/// A network namespace kept for sandboxes: owned by the maker's user namespace, its loopback
/// interface up.
#[derive(Debug)]
pub struct Network {
    fd: OwnedFd,
}

impl Network {
    /// A new network namespace, loopback up. Moves this process into it (it must have one
    /// thread).
    fn new() -> io::Result<Network> {
        // SAFETY: unshare with a flag only; it touches no memory of the process.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } < 0 {
            return Err(io::Error::last_os_error());
        }
        loopback_up().map_err(io::Error::other)?;
        let fd = std::fs::File::open("/proc/thread-self/ns/net")?;
        Ok(Network { fd: fd.into() })
    }

    /// Moves this process (of one thread) into this namespace.
    pub(crate) fn enter(&self) -> io::Result<()> {
        // SAFETY: setns on a descriptor this value owns, with the namespace's own type.
        if unsafe { libc::setns(self.fd.as_raw_fd(), libc::CLONE_NEWNET) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Whether the kernel lists no socket of any family in this namespace. Moves this process
    /// into it to read the lists.
    pub fn is_empty(&self) -> io::Result<bool> {
        self.enter()?;
        lists_no_socket()
    }
}

/// Whether the kernel counts and lists no socket of any family in this thread's network
/// namespace.
fn lists_no_socket() -> io::Result<bool> {
    let read = |name: &str| match std::fs::read_to_string(format!("/proc/thread-self/net/{name}")) {
        Ok(text) => Ok(text),
        // A family this kernel does not have (IPv6 off) holds nothing.
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e),
    };
    for name in SOCKET_COUNTS {
        if counts_a_socket(&read(name)?) {
            return Ok(false);
        }
    }
    for name in SOCKET_LISTS {
        if read(name)?.lines().count() > 1 {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether a `sockstat` file counts a socket of the namespace: in use (`inuse`) or in
/// `TIME_WAIT` (`tw`), in any protocol. Its other figures are the machine's (`sockets: used`,
/// TCP's `orphan`, `alloc` and `mem`) or not sockets (`FRAG`, reassembly queues).
fn counts_a_socket(sockstat: &str) -> bool {
    sockstat.lines().any(|line| {
        let mut words = line.split_whitespace();
        let protocol = words.next().unwrap_or_default();
        if protocol == "sockets:" || protocol.starts_with("FRAG") {
            return false;
        }
        let words: Vec<&str> = words.collect();
        words
            .chunks(2)
            .any(|pair| matches!(pair, ["inuse" | "tw", n] if *n != "0"))
    })
}

/// The network namespaces of one sandbox maker: those idle, ready for the next sandbox.
#[derive(Debug)]
pub struct Networks {
    idle: Vec<Network>,
    keep: usize,
}

impl Networks {
    /// Moves this process into a user namespace of its own, its ids mapped to themselves, which
    /// owns the network namespaces it makes from now on; at most `keep` of them are kept idle.
    /// This process must have one thread and be dumpable (a non-dumpable process may not write
    /// its own id maps).
    ///
    /// `Ok(None)`: no user namespace could be made here, nothing changed, and each sandbox gets a
    /// new network namespace of its own, as [`super::clone_sandbox`] makes without one. `Err`:
    /// the process is in the new user namespace but could not map its ids there, and can make
    /// no sandbox: the caller ends.
    pub fn start(ids: Ids, keep: usize) -> io::Result<Option<Networks>> {
        if super::threads()? != 1 {
            return Ok(None);
        }
        // SAFETY: unshare with a flag only; it touches no memory of the process.
        if unsafe { libc::unshare(libc::CLONE_NEWUSER) } < 0 {
            return Ok(None);
        }
        for (file, text) in [
            ("/proc/self/setgroups", "deny".to_owned()),
            ("/proc/self/uid_map", format!("{0} {0} 1", ids.uid)),
            ("/proc/self/gid_map", format!("{0} {0} 1", ids.gid)),
        ] {
            write_file(file, &text).map_err(io::Error::other)?;
        }
        Ok(Some(Networks {
            idle: Vec::new(),
            keep,
        }))
    }

    /// A network namespace for the next sandbox: one kept, else a new one.
    pub fn take(&mut self) -> io::Result<Network> {
        match self.idle.pop() {
            Some(network) => Ok(network),
            None => Network::new(),
        }
    }

    /// `network` back from a sandbox every process of which has ended: kept for another when
    /// nothing of that sandbox is left in it and fewer than `keep` are idle; dropped otherwise
    /// (the kernel tears it down).
    pub fn give_back(&mut self, network: Network) {
        if self.idle.len() < self.keep && network.is_empty().unwrap_or(false) {
            self.idle.push(network);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_in_use_or_in_time_wait_is_counted() {
        let fresh = "sockets: used 11\nTCP: inuse 0 orphan 3 tw 0 alloc 2 mem 7\n\
                     UDP: inuse 0 mem 0\nUDPLITE: inuse 0\nRAW: inuse 0\nFRAG: inuse 1 memory 9\n";
        assert!(!counts_a_socket(fresh));
        assert!(counts_a_socket(&fresh.replace("tw 0", "tw 50")));
        assert!(counts_a_socket(
            &fresh.replace("UDP: inuse 0", "UDP: inuse 1")
        ));
        assert!(counts_a_socket("TCP6: inuse 2\nUDP6: inuse 0\n"));
        assert!(!counts_a_socket(""));
    }

    #[test]
    fn a_socket_bound_here_is_counted_here() {
        // The test's own namespace (the host's, or a container's) may hold sockets already;
        // one bound here must be counted whatever else is there.
        let _listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        assert!(!lists_no_socket().unwrap());
    }
}
