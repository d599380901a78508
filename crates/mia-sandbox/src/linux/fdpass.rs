//! Handing a descriptor from the forked child to mia-code over a socket
//! pair (SCM_RIGHTS): the tracer's seccomp listener and the proxy's
//! listening socket inside the command's network namespace.
#![allow(unsafe_code)]

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::SandboxError;

/// A connected pair: the parent keeps `.0`, the child uses `.1` before exec
/// (both close-on-exec).
pub(crate) fn pair() -> Result<(OwnedFd, OwnedFd), SandboxError> {
    let mut fds = [0; 2];
    // SAFETY: socketpair fills two descriptors on success.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(SandboxError::Build(format!(
            "socketpair: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: both descriptors are fresh and owned here.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Send `fd` over `sock`. System calls only: safe between fork and exec.
pub(crate) fn send(sock: RawFd, fd: RawFd) -> std::io::Result<()> {
    #[repr(C, align(8))]
    struct Buf([u8; 64]);
    let mut cbuf = Buf([0u8; 64]);
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: msghdr and the control buffer live on this stack frame and
    // are large enough for one descriptor (CMSG_SPACE(4) = 24 on 64-bit).
    let rc = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.0.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null() {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
        libc::sendmsg(sock, &msg, 0)
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Receive a descriptor the child sent before its exec; `None` when none
/// comes within `timeout_ms` (the child failed first, or sent nothing).
pub(crate) fn recv(sock: &OwnedFd, timeout_ms: i32) -> Option<OwnedFd> {
    let mut pfd = libc::pollfd {
        fd: sock.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    if unsafe { libc::poll(&mut pfd, 1, timeout_ms) } <= 0 {
        return None;
    }
    #[repr(C, align(8))]
    struct Buf([u8; 64]);
    let mut cbuf = Buf([0u8; 64]);
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: buffers on this frame; the descriptor read out of the control
    // message is new and owned by us.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.0.as_mut_ptr().cast();
        msg.msg_controllen = cbuf.0.len() as _;
        if libc::recvmsg(
            sock.as_raw_fd(),
            &mut msg,
            libc::MSG_CMSG_CLOEXEC | libc::MSG_DONTWAIT,
        ) <= 0
        {
            return None;
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return None;
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
        Some(OwnedFd::from_raw_fd(fd))
    }
}
