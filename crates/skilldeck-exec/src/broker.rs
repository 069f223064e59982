//! The parent's side of a run's descriptor channel: the sandbox's setup
//! processes hand over the proxy port's listener (made inside the run's
//! network namespace) and the seccomp notification listener; the broker
//! serves each on a thread of its own (the proxy, the refusal supervisor)
//! until the run ends, and collects what they refused.

use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use rustix::event::{PollFd, PollFlags};

use crate::proxy::{self, ProxyRules};
use crate::refusals::{Refusals, syscall_class};
use crate::sandbox::{CHANNEL_TAG_NOTIFY, CHANNEL_TAG_PROXY};
use crate::writes::{Judge, Verdict, WriteRules, call_name, is_write_call};

/// A connected `SOCK_SEQPACKET` pair, close-on-exec: `(parent, child)`.
pub(crate) fn channel() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `socketpair` writes two descriptors into `fds`, which this
    // function then owns.
    #[allow(unsafe_code)]
    unsafe {
        if libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        ) < 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}

/// One message: its tag and the descriptor it carried (`None`: the
/// channel ended).
fn recv_fd(channel: &OwnedFd) -> io::Result<Option<(u8, Option<OwnedFd>)>> {
    #[repr(C, align(8))]
    struct Control([u8; 64]);
    // SAFETY: `msghdr` points at stack buffers alive for the call; the
    // kernel writes at most `msg_controllen` bytes of control data; a
    // descriptor read from an `SCM_RIGHTS` message is new and owned here.
    #[allow(unsafe_code)]
    unsafe {
        let mut data = [0u8; 1];
        let mut iov = libc::iovec {
            iov_base: data.as_mut_ptr().cast(),
            iov_len: 1,
        };
        let mut control = Control([0; 64]);
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.0.as_mut_ptr().cast();
        msg.msg_controllen = control.0.len();
        let n = libc::recvmsg(channel.as_raw_fd(), &raw mut msg, libc::MSG_CMSG_CLOEXEC);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n == 0 {
            return Ok(None);
        }
        let mut fd = None;
        let mut cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let raw = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
                if raw >= 0 && fd.is_none() {
                    fd = Some(OwnedFd::from_raw_fd(raw));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&raw const msg, cmsg);
        }
        Ok(Some((data[0], fd)))
    }
}

/// Waits until `fd` or `stop` is readable (or hung up); true for `fd`.
fn wait_readable(fd: &impl AsFd, stop: &OwnedFd) -> bool {
    wait_events(fd, stop).is_some()
}

/// Waits until `fd` or `stop` is readable (or hung up): `fd`'s events, or
/// `None` when `stop` fired (or polling failed).
fn wait_events(fd: &impl AsFd, stop: &OwnedFd) -> Option<PollFlags> {
    loop {
        let mut fds = [
            PollFd::new(fd, PollFlags::IN),
            PollFd::new(stop, PollFlags::IN),
        ];
        match rustix::event::poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return None,
        }
        if !fds[1].revents().is_empty() {
            return None;
        }
        let events = fds[0].revents();
        if !events.is_empty() {
            return Some(events);
        }
    }
}

/// The broker of one run.
pub(crate) struct Broker {
    stop: Option<OwnedFd>,
    thread: Option<JoinHandle<()>>,
    refusals: Arc<Mutex<Refusals>>,
}

impl Broker {
    /// Starts serving `channel` (the parent's end); `rules`: the proxy's,
    /// with a host-list grant; `writes`: what the run may write, when its
    /// write-intent calls come with the seccomp notifications (native).
    pub(crate) fn start(
        channel: OwnedFd,
        rules: Option<ProxyRules>,
        writes: Option<WriteRules>,
    ) -> io::Result<Broker> {
        let (stop_read, stop_write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        let refusals = Arc::new(Mutex::new(Refusals::default()));
        let shared = refusals.clone();
        let thread = std::thread::Builder::new()
            .name("skilldeck-exec-broker".to_owned())
            .spawn(move || broker(&channel, &stop_read, rules, writes, &shared))?;
        Ok(Broker {
            stop: Some(stop_write),
            thread: Some(thread),
            refusals,
        })
    }

    /// Ends the run's proxy and supervisor (the run is over) and returns
    /// what they refused.
    pub(crate) fn finish(mut self) -> Refusals {
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.refusals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn broker(
    channel: &OwnedFd,
    stop: &OwnedFd,
    rules: Option<ProxyRules>,
    writes: Option<WriteRules>,
    refusals: &Arc<Mutex<Refusals>>,
) {
    let mut rules = rules;
    let mut writes = writes;
    std::thread::scope(|scope| {
        while wait_readable(channel, stop) {
            match recv_fd(channel) {
                Ok(Some((CHANNEL_TAG_PROXY, Some(listener)))) => {
                    if let Some(rules) = rules.take() {
                        let refusals = refusals.clone();
                        scope.spawn(move || proxy::serve(listener, stop, rules, refusals));
                    }
                }
                Ok(Some((CHANNEL_TAG_NOTIFY, Some(notify)))) => {
                    let judge = writes.take().map(Judge::new);
                    {
                        let mut r = refusals.lock().unwrap_or_else(|e| e.into_inner());
                        r.syscalls_observed = true;
                        r.writes_observed = judge.is_some();
                    }
                    let refusals = refusals.clone();
                    scope.spawn(move || supervise(&notify, stop, judge, &refusals));
                }
                Ok(Some(_)) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Ok(None) | Err(_) => break,
            }
        }
        // The channel ended (every setup process is past it): wait for the
        // run's end; the scoped threads end with it.
        let _ = wait_readable(stop, stop);
    });
}

/// Answers the run's seccomp notifications: a write-intent call is
/// judged (`crate::writes`): a write outside the allowed paths is counted
/// and failed as Landlock would fail it, anything else goes on to
/// Landlock; any other notification is a refused system call, counted by
/// class and answered `EPERM`, as the filter did before it notified.
fn supervise(
    notify: &OwnedFd,
    stop: &OwnedFd,
    mut judge: Option<Judge>,
    refusals: &Mutex<Refusals>,
) {
    // Readable: a notification waits. Hung up without one: no process of
    // the run is left under the filter.
    while wait_events(notify, stop).is_some_and(|e| e.contains(PollFlags::IN)) {
        // SAFETY: `seccomp_notif` is plain data the kernel fills; it must
        // be zeroed before `SECCOMP_IOCTL_NOTIF_RECV`.
        #[allow(unsafe_code)]
        let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: the ioctl writes one `seccomp_notif` into `req`.
        #[allow(unsafe_code)]
        let got = unsafe {
            libc::ioctl(
                notify.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV,
                &raw mut req,
            )
        };
        if got < 0 {
            match io::Error::last_os_error().raw_os_error() {
                // The caller died meanwhile, or a signal: go on.
                Some(libc::ENOENT | libc::EINTR) => continue,
                _ => return,
            }
        }
        let nr = i64::from(req.data.nr);
        let error = if is_write_call(nr) {
            let verdict = match judge.as_mut() {
                Some(j) => {
                    let v = j.judge(req.pid, nr, req.data.args, || {
                        notification_valid(notify, req.id)
                    });
                    if j.blind() {
                        // Counting failed for a live caller: say so.
                        refusals
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .writes_observed = false;
                    }
                    v
                }
                None => Verdict::Continue,
            };
            match verdict {
                Verdict::Continue => None,
                Verdict::Refuse { path, errno } => {
                    // Counted before the answer, as below.
                    refusals
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .write_outside(&path, call_name(nr));
                    Some(errno)
                }
            }
        } else {
            let class = syscall_class(nr, req.data.args[0], req.data.args[1]);
            // Counted before the answer: once the script sees its EPERM,
            // the count holds it.
            refusals
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .syscall(class);
            Some(libc::EPERM)
        };
        let resp = match error {
            Some(errno) => libc::seccomp_notif_resp {
                id: req.id,
                val: 0,
                error: -errno,
                flags: 0,
            },
            // The call goes on as if never notified: Landlock and the
            // rest of the kernel decide.
            None => libc::seccomp_notif_resp {
                id: req.id,
                val: 0,
                error: 0,
                flags: u32::try_from(libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE).unwrap_or(1),
            },
        };
        // SAFETY: the ioctl reads one `seccomp_notif_resp`; ENOENT (the
        // caller is gone) needs no answer.
        #[allow(unsafe_code)]
        unsafe {
            libc::ioctl(
                notify.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SEND,
                &raw const resp,
            );
        }
    }
}

/// True while notification `id` still stands (its caller alive, blocked
/// in the call): what was read of its `/proc` files was that process's.
fn notification_valid(notify: &OwnedFd, id: u64) -> bool {
    // SAFETY: the ioctl reads one `u64`, alive for the call.
    #[allow(unsafe_code)]
    let rc = unsafe {
        libc::ioctl(
            notify.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
            &raw const id,
        )
    };
    rc == 0
}
