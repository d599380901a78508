//! The command's own user and network namespace, made in the forked child
//! before bubblewrap starts: the network namespace has only a loopback
//! device, and (when the command may use the network) a listening socket
//! on it that the child hands to mia-code before its exec. mia-code's proxy
//! accepts on that socket: connections from inside arrive there, and the
//! proxy connects out from mia-code's own namespace. Nothing else inside
//! can reach any other network, so a program that ignores the proxy has no
//! network at all.
//!
//! Everything the child does is a system call on data prepared here before
//! the fork (no allocation after it).
#![allow(unsafe_code)]

use std::os::fd::{AsRawFd, OwnedFd};

use crate::SandboxError;

/// The proxy's port inside the command's network namespace: a privileged
/// port, so no program inside could have wanted it (none may bind it).
pub const PROXY_PORT: u16 = 1023;

/// Prepared before the fork.
pub(crate) struct NetNs {
    uid_map: [u8; 64],
    uid_len: usize,
    gid_map: [u8; 64],
    gid_len: usize,
    /// The child's end of the socket pair the listener goes through.
    child: Option<OwnedFd>,
}

fn map_line(id: u32) -> ([u8; 64], usize) {
    let mut buf = [0u8; 64];
    let s = format!("{id} {id} 1\n");
    let n = s.len().min(64);
    buf[..n].copy_from_slice(&s.as_bytes()[..n]);
    (buf, n)
}

fn check(rc: libc::c_int) -> std::io::Result<()> {
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Write `data` to the NUL-terminated `path`.
fn write_file(path: &[u8], data: &[u8]) -> std::io::Result<()> {
    // SAFETY: `path` is NUL-terminated; the descriptor is closed below.
    let fd = unsafe { libc::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC) };
    check(fd)?;
    // SAFETY: `data` is a live buffer of its length.
    let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
    // SAFETY: opened above.
    unsafe { libc::close(fd) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

impl NetNs {
    /// The child's part and mia-code's end of the bridge (when proxied).
    pub(crate) fn new(proxied: bool) -> Result<(Self, Option<Bridge>), SandboxError> {
        // SAFETY: plain credential queries.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let (uid_map, uid_len) = map_line(uid);
        let (gid_map, gid_len) = map_line(gid);
        let (bridge, child) = if proxied {
            let (parent, child) = super::fdpass::pair()?;
            (Some(Bridge { parent }), Some(child))
        } else {
            (None, None)
        };
        Ok((
            Self {
                uid_map,
                uid_len,
                gid_map,
                gid_len,
                child,
            },
            bridge,
        ))
    }

    /// In the forked child: new namespaces, the loopback up, the listener
    /// made and sent.
    pub(crate) fn apply(&self) -> std::io::Result<()> {
        // SAFETY: unshare with namespace flags; the child is single-threaded.
        check(unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) })?;
        write_file(b"/proc/self/setgroups\0", b"deny")?;
        write_file(b"/proc/self/uid_map\0", &self.uid_map[..self.uid_len])?;
        write_file(b"/proc/self/gid_map\0", &self.gid_map[..self.gid_len])?;
        loopback_up()?;
        if let Some(child) = &self.child {
            let l = listen()?;
            let sent = super::fdpass::send(child.as_raw_fd(), l);
            // SAFETY: made by `listen`, closed once.
            unsafe { libc::close(l) };
            sent?;
        }
        Ok(())
    }
}

fn loopback_up() -> std::io::Result<()> {
    // SAFETY: a datagram socket for the interface ioctls, closed below.
    let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    check(s)?;
    // SAFETY: a zeroed ifreq is valid; the name fits IFNAMSIZ.
    let rc = unsafe {
        let mut ifr: libc::ifreq = std::mem::zeroed();
        ifr.ifr_name[0] = b'l' as libc::c_char;
        ifr.ifr_name[1] = b'o' as libc::c_char;
        let mut rc = libc::ioctl(s, libc::SIOCGIFFLAGS, &mut ifr);
        if rc == 0 {
            ifr.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            rc = libc::ioctl(s, libc::SIOCSIFFLAGS, &ifr);
        }
        rc
    };
    let e = std::io::Error::last_os_error();
    // SAFETY: opened above.
    unsafe { libc::close(s) };
    if rc < 0 { Err(e) } else { Ok(()) }
}

/// A TCP socket listening on 127.0.0.1:PROXY_PORT (this namespace's loopback).
fn listen() -> std::io::Result<libc::c_int> {
    // SAFETY: a new socket, closed on every error path.
    unsafe {
        let l = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        check(l)?;
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_port = PROXY_PORT.to_be();
        addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        let rc = libc::bind(
            l,
            (&raw const addr).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        if rc < 0 || libc::listen(l, 1024) < 0 {
            let e = std::io::Error::last_os_error();
            libc::close(l);
            return Err(e);
        }
        Ok(l)
    }
}

/// mia-code's end of the bridge.
pub struct Bridge {
    parent: OwnedFd,
}

impl Bridge {
    /// The listening socket inside the command's network namespace (after
    /// the spawn; `None` if the child sent none).
    pub fn listener(self) -> Option<std::net::TcpListener> {
        super::fdpass::recv(&self.parent, 5_000).map(std::net::TcpListener::from)
    }
}
