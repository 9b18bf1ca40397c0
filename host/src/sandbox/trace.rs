//! Naming what a sandboxed task touched outside its declarations: seccomp
//! user notification, alongside Landlock.
//!
//! Landlock refuses an undeclared access but tells nobody which path it
//! was. So the child also installs a seccomp filter that stops each call
//! that opens, creates, removes or renames a path, and hands it to a
//! thread of vx (the listener descriptor travels back over a socket pair
//! before exec). That thread reads the path from the task's memory,
//! judges it against the same policy, records what falls outside, and lets
//! the call go on (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`): Landlock still
//! decides. Reading the memory races with the task, which is why the
//! tracer only reports and never enforces.
//!
//! A directory opened for reading is a listing: it is judged as Landlock
//! judges it (allowed beneath a read or write rule), not against the input
//! globs, which name files; a refused one is named like a refused file, so
//! a tool that tolerates an unreadable directory (a shell glob that then
//! matches nothing) still fails its task.
//!
//! Not reported: reads of paths that do not exist (runtimes probe for
//! files, and a missing file reads nothing), and reads under `/proc`,
//! which runtimes probe and do without; a refused one shows as the tool's
//! own error.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::policy::{Exact, Policy};
use crate::inputs::{GlobFilter, InputMatcher};
use crate::paths::normalize_lexically;

/// `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP` (uapi/linux/seccomp.h).
const SYNC_WAKE_UP: u64 = 1;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// An access outside the task's declarations.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Violation {
    pub touch: Touch,
    pub path: PathBuf,
}

/// What a call did to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Touch {
    /// Opened a file to read it.
    Read,
    /// Listed a directory (opened it to read its entries).
    List,
    /// Created, wrote, removed or renamed it.
    Write,
}

/// The calls the filter hands to vx.
fn traced_calls() -> Vec<i64> {
    let calls = vec![
        libc::SYS_openat,
        libc::SYS_openat2,
        libc::SYS_mkdirat,
        libc::SYS_unlinkat,
        libc::SYS_renameat,
        libc::SYS_renameat2,
        libc::SYS_truncate,
        libc::SYS_linkat,
        libc::SYS_symlinkat,
    ];
    // x86_64 still has the calls that newer architectures only have as `*at`.
    #[cfg(target_arch = "x86_64")]
    let calls = [
        calls,
        vec![
            libc::SYS_open,
            libc::SYS_creat,
            libc::SYS_mkdir,
            libc::SYS_unlink,
            libc::SYS_rmdir,
            libc::SYS_rename,
            libc::SYS_link,
            libc::SYS_symlink,
        ],
    ]
    .concat();
    calls
}

/// The child's half, made in vx before the fork: the filter program and
/// its end of the socket pair.
#[derive(Debug)]
pub(crate) struct TraceChild {
    filter: Vec<libc::sock_filter>,
    sock: OwnedFd,
}

impl TraceChild {
    /// Installs the filter and sends its listener to vx. Async-signal-safe:
    /// system calls on memory prepared before the fork.
    pub(crate) fn install_in_child(&self) -> std::io::Result<()> {
        let prog = libc::sock_fprog {
            len: u16::try_from(self.filter.len()).unwrap_or(u16::MAX),
            filter: self.filter.as_ptr().cast_mut(),
        };
        // SAFETY: `prog` points at `self.filter`, alive until exec.
        let listener = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
                &prog as *const libc::sock_fprog,
            )
        };
        if listener < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let listener = listener as RawFd;
        let sent = send_fd(self.sock.as_raw_fd(), listener);
        // SAFETY: the child's copy of the listener; vx holds its own now.
        unsafe { libc::close(listener) };
        sent
    }
}

/// The thread in vx that watches one attempt; [`Tracer::finish`] returns
/// what it saw once the task and everything it started are gone.
#[derive(Debug)]
pub(crate) struct Tracer {
    thread: std::thread::JoinHandle<Vec<Violation>>,
}

impl Tracer {
    pub(crate) fn finish(self) -> Vec<Violation> {
        self.thread.join().unwrap_or_default()
    }
}

/// The two halves for one attempt under `policy`.
pub(crate) fn start(judge: Arc<Judge>) -> std::io::Result<(TraceChild, Tracer)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both were just made and are owned here alone.
    let (ours, theirs) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let thread = std::thread::Builder::new().name("vx-sandbox-trace".into()).spawn(move || supervise(&ours, &judge))?;
    Ok((TraceChild { filter: filter(), sock: theirs }, Tracer { thread }))
}

/// Allow everything but the traced calls, which go to the listener.
fn filter() -> Vec<libc::sock_filter> {
    let calls = traced_calls();
    let n = u8::try_from(calls.len()).expect("a few calls");
    // SAFETY: BPF_STMT and BPF_JUMP only build structs.
    unsafe {
        let mut prog = vec![
            libc::BPF_STMT((libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16, 4), // arch
            libc::BPF_JUMP((libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16, AUDIT_ARCH, 1, 0),
            libc::BPF_STMT((libc::BPF_RET | libc::BPF_K) as u16, libc::SECCOMP_RET_ALLOW),
            libc::BPF_STMT((libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16, 0), // nr
        ];
        for (i, &nr) in calls.iter().enumerate() {
            // Jump to the USER_NOTIF return after the remaining tests and the ALLOW.
            let to_notif = n - i as u8;
            prog.push(libc::BPF_JUMP((libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16, nr as u32, to_notif, 0));
        }
        prog.push(libc::BPF_STMT((libc::BPF_RET | libc::BPF_K) as u16, libc::SECCOMP_RET_ALLOW));
        prog.push(libc::BPF_STMT((libc::BPF_RET | libc::BPF_K) as u16, libc::SECCOMP_RET_USER_NOTIF));
        prog
    }
}

/// A one-byte message with room for one descriptor, over `iov` and
/// `control` (the caller's stack: nothing is allocated, so the child may
/// build one after fork). `CMSG_SPACE(4)` is 24 bytes; `u64`s keep the
/// control buffer aligned.
fn fd_message(iov: &mut libc::iovec, control: &mut [u64; 4]) -> libc::msghdr {
    // SAFETY: a zeroed msghdr is valid; the pointers are to the caller's
    // locals, which outlive the message.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(4) as _;
        msg
    }
}

/// Sends `fd` over the socket `sock` (`SCM_RIGHTS`), with stack memory only.
fn send_fd(sock: RawFd, fd: RawFd) -> std::io::Result<()> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
    let mut control = [0u64; 4];
    let msg = fd_message(&mut iov, &mut control);
    // SAFETY: the message and its control buffer live on this stack frame.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(4) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
        if libc::sendmsg(sock, &msg, 0) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Receives one descriptor from `sock`; `None` when the child sent none
/// (it failed before, or closed its end).
fn recv_fd(sock: &OwnedFd) -> Option<OwnedFd> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
    let mut control = [0u64; 4];
    let mut msg = fd_message(&mut iov, &mut control);
    // SAFETY: as in `send_fd`; a received descriptor is owned from here.
    unsafe {
        if libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) <= 0 {
            return None;
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null() || (*cmsg).cmsg_type != libc::SCM_RIGHTS {
            return None;
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
        Some(OwnedFd::from_raw_fd(fd))
    }
}

/// Answers every notification until no process uses the filter any more.
fn supervise(sock: &OwnedFd, judge: &Judge) -> Vec<Violation> {
    let Some(listener) = recv_fd(sock) else { return Vec::new() };
    // Linux 6.6+: the task's CPU switches straight to this thread on each
    // notification, instead of waking it like any sleeper; it halves the
    // cost of a traced call here. Older kernels refuse the flag: no harm.
    // SAFETY: SET_FLAGS takes the flags by value.
    unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS, SYNC_WAKE_UP) };
    let mut found = BTreeSet::new();
    loop {
        let mut pfd = libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one pollfd.
        let ready = unsafe { libc::poll(&mut pfd, 1, -1) };
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        if pfd.revents & libc::POLLIN == 0 {
            break; // POLLHUP: the task and its descendants are gone
        }
        // SAFETY: a zeroed notification is what RECV expects to fill.
        let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: RECV writes one `seccomp_notif`.
        if unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_RECV, &mut notif) } != 0 {
            continue; // the caller died meanwhile (ENOENT), or a signal
        }
        for access in accesses(&notif) {
            if let Some(v) = judge.violation(access) {
                found.insert(v);
            }
        }
        let mut resp = libc::seccomp_notif_resp {
            id: notif.id,
            val: 0,
            error: 0,
            flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
        };
        // SAFETY: SEND reads one `seccomp_notif_resp`; a failure means the
        // caller is gone.
        unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SEND, &mut resp) };
    }
    found.into_iter().collect()
}

/// One path a call names, and what the call does to it.
#[derive(Debug)]
struct Access {
    path: PathBuf,
    touch: Touch,
}

/// The paths `notif`'s call names, resolved against its process's working
/// directory or directory descriptor.
fn accesses(notif: &libc::seccomp_notif) -> Vec<Access> {
    let (pid, a, nr) = (notif.pid, notif.data.args, i64::from(notif.data.nr));
    let at = |dirfd: u64, ptr: u64, touch: Touch| -> Option<Access> {
        let name = read_c_string(pid, ptr)?;
        Some(Access { path: resolve(pid, dirfd as i32, &name)?, touch })
    };
    let cwd = libc::AT_FDCWD as u64;
    let open_flags = |flags: u64| -> Option<Touch> {
        let flags = flags as i32;
        if flags & libc::O_PATH != 0 {
            return None; // opens nothing to read or write
        }
        if flags & libc::O_ACCMODE != libc::O_RDONLY || flags & (libc::O_CREAT | libc::O_TRUNC) != 0 {
            Some(Touch::Write)
        } else if flags & libc::O_DIRECTORY != 0 {
            Some(Touch::List)
        } else {
            Some(Touch::Read)
        }
    };
    let found: Vec<Option<Access>> = match nr {
        n if n == libc::SYS_openat => vec![open_flags(a[2]).and_then(|w| at(a[0], a[1], w))],
        n if n == libc::SYS_openat2 => {
            let flags = read_u64(pid, a[2]).unwrap_or(0);
            vec![open_flags(flags).and_then(|w| at(a[0], a[1], w))]
        }
        n if n == libc::SYS_mkdirat || n == libc::SYS_unlinkat => vec![at(a[0], a[1], Touch::Write)],
        n if n == libc::SYS_renameat || n == libc::SYS_renameat2 => {
            vec![at(a[0], a[1], Touch::Write), at(a[2], a[3], Touch::Write)]
        }
        n if n == libc::SYS_truncate => vec![at(cwd, a[0], Touch::Write)],
        n if n == libc::SYS_linkat => vec![at(a[2], a[3], Touch::Write)],
        n if n == libc::SYS_symlinkat => vec![at(a[1], a[2], Touch::Write)],
        _ => legacy(nr, a, &at, &open_flags),
    };
    found.into_iter().flatten().collect()
}

/// The calls x86-64 still has beside their `*at` forms.
#[cfg(target_arch = "x86_64")]
fn legacy(
    nr: i64,
    a: [u64; 6],
    at: &dyn Fn(u64, u64, Touch) -> Option<Access>,
    open_flags: &dyn Fn(u64) -> Option<Touch>,
) -> Vec<Option<Access>> {
    let cwd = libc::AT_FDCWD as u64;
    match nr {
        n if n == libc::SYS_open => vec![open_flags(a[1]).and_then(|w| at(cwd, a[0], w))],
        n if n == libc::SYS_creat || n == libc::SYS_mkdir || n == libc::SYS_unlink || n == libc::SYS_rmdir => {
            vec![at(cwd, a[0], Touch::Write)]
        }
        n if n == libc::SYS_rename => vec![at(cwd, a[0], Touch::Write), at(cwd, a[1], Touch::Write)],
        n if n == libc::SYS_link || n == libc::SYS_symlink => vec![at(cwd, a[1], Touch::Write)],
        _ => Vec::new(),
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn legacy(
    _: i64,
    _: [u64; 6],
    _: &dyn Fn(u64, u64, Touch) -> Option<Access>,
    _: &dyn Fn(u64) -> Option<Touch>,
) -> Vec<Option<Access>> {
    Vec::new()
}

/// A NUL-terminated string of at most 4 KiB at `addr` in `pid`'s memory,
/// read a page at a time so a string near the end of a mapping still reads.
fn read_c_string(pid: u32, addr: u64) -> Option<OsString> {
    let mut out = Vec::new();
    let mut addr = addr;
    while out.len() < 4096 {
        let room = 4096 - (addr % 4096) as usize;
        let mut buf = vec![0u8; room];
        let n = read_mem(pid, addr, &mut buf)?;
        if let Some(end) = buf[..n].iter().position(|&b| b == 0) {
            out.extend_from_slice(&buf[..end]);
            return Some(OsString::from_vec(out));
        }
        out.extend_from_slice(&buf[..n]);
        addr += n as u64;
    }
    None
}

fn read_u64(pid: u32, addr: u64) -> Option<u64> {
    let mut buf = [0u8; 8];
    (read_mem(pid, addr, &mut buf)? == 8).then(|| u64::from_ne_bytes(buf))
}

fn read_mem(pid: u32, addr: u64, buf: &mut [u8]) -> Option<usize> {
    let local = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: buf.len() };
    // SAFETY: `local` is `buf`; the kernel checks `remote` against `pid`.
    let n = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    usize::try_from(n).ok().filter(|&n| n > 0)
}

/// `name` as the process sees it: absolute, or under its working
/// directory or the directory `dirfd` holds; `.` and `..` folded.
fn resolve(pid: u32, dirfd: i32, name: &OsString) -> Option<PathBuf> {
    let name = Path::new(name);
    let full = if name.is_absolute() {
        name.to_path_buf()
    } else {
        let base = if dirfd == libc::AT_FDCWD { format!("/proc/{pid}/cwd") } else { format!("/proc/{pid}/fd/{dirfd}") };
        std::fs::read_link(base).ok()?.join(name)
    };
    Some(normalize_lexically(&full))
}

/// The policy with its paths as written and as the kernel resolves them,
/// and inside the workspace the globs the key uses. Built once per task
/// (resolving its paths costs a stat per component) and shared by its
/// attempts' tracers.
#[derive(Debug)]
pub(crate) struct Judge {
    reads: Vec<PathBuf>,
    writes: Vec<PathBuf>,
    exact: Option<ExactJudge>,
}

/// Reads inside the workspace, judged as the key judges files.
#[derive(Debug)]
struct ExactJudge {
    roots: Vec<PathBuf>,
    projects: Vec<PathBuf>,
    /// `None`: every file of the project is an input.
    inputs: Option<InputMatcher>,
    globals: Option<GlobFilter>,
    deps: Vec<(Vec<PathBuf>, GlobFilter)>,
    beside: Vec<PathBuf>,
}

/// A path as written and as resolved.
fn spellings(path: &Path) -> Vec<PathBuf> {
    let mut all = vec![path.to_path_buf()];
    all.extend(std::fs::canonicalize(path).ok().filter(|p| p != path));
    all
}

impl ExactJudge {
    fn new(root: &Path, e: &Exact) -> Option<ExactJudge> {
        let inputs = match &e.inputs {
            None => None,
            Some(globs) => Some(InputMatcher::new(Some(globs), &[]).ok()?),
        };
        let globals =
            (!e.global_inputs.is_empty()).then(|| GlobFilter::new(Some(&e.global_inputs), &[])).transpose().ok()?;
        let mut deps = Vec::new();
        for (dir, globs) in &e.dep_outputs {
            deps.push((spellings(dir), GlobFilter::new(Some(globs), &[]).ok()?));
        }
        let beside = e.beside.iter().flat_map(|p| spellings(p)).collect();
        Some(ExactJudge { roots: spellings(root), projects: spellings(&e.project), inputs, globals, deps, beside })
    }

    /// `Some(allowed)` for a path inside the workspace, `None` outside it.
    fn read(&self, path: &Path) -> Option<bool> {
        let in_root = self.roots.iter().find_map(|r| path.strip_prefix(r).ok())?;
        if self.beside.iter().any(|b| path.starts_with(b)) {
            return Some(true);
        }
        let text = |p: &Path| p.to_string_lossy().into_owned();
        let in_project = self.projects.iter().find_map(|p| path.strip_prefix(p).ok()).map(text);
        let input = match &self.inputs {
            None => in_project.is_some(),
            Some(m) => m.matches(in_project.as_deref(), &text(in_root)),
        };
        let global = self.globals.as_ref().is_some_and(|g| g.matches(&text(in_root)));
        let dep = self.deps.iter().any(|(dirs, filter)| {
            dirs.iter().find_map(|d| path.strip_prefix(d).ok()).is_some_and(|rel| filter.matches(&text(rel)))
        });
        Some(input || global || dep)
    }
}

impl Judge {
    pub(crate) fn new(policy: &Policy) -> Judge {
        let both = |paths: &[PathBuf]| {
            let mut all: Vec<PathBuf> = paths.iter().flat_map(|p| spellings(p)).collect();
            all.sort();
            all.dedup();
            all
        };
        Judge {
            reads: both(&policy.reads),
            writes: both(&policy.writes),
            exact: ExactJudge::new(&policy.root, &policy.exact),
        }
    }

    fn allows(&self, path: &Path, touch: Touch) -> bool {
        let beneath = |roots: &[PathBuf]| roots.iter().any(|r| path.starts_with(r));
        match touch {
            Touch::Write => beneath(&self.writes),
            _ if beneath(&self.writes) => true,
            // Landlock's rule for a directory; the input globs name files.
            Touch::List => beneath(&self.reads),
            Touch::Read => match self.exact.as_ref().and_then(|e| e.read(path)) {
                Some(allowed) => allowed,
                None => beneath(&self.reads),
            },
        }
    }

    fn violation(&self, access: Access) -> Option<Violation> {
        // Most paths a task opens are plainly inside its policy: no need to
        // resolve them (a stat per component). A link inside that leads out
        // is refused by Landlock all the same, and shows as the tool's error.
        if self.allows(&access.path, access.touch) {
            return None;
        }
        let write = access.touch == Touch::Write;
        let real = match std::fs::canonicalize(&access.path) {
            Ok(real) => real,
            // Reading a path that is not there reads nothing.
            Err(_) if !write => return None,
            Err(_) => {
                let parent = access.path.parent().and_then(|p| std::fs::canonicalize(p).ok())?;
                parent.join(access.path.file_name()?)
            }
        };
        // A directory opened without `O_DIRECTORY` is listed all the same.
        let touch = if access.touch == Touch::Read && real.is_dir() { Touch::List } else { access.touch };
        if self.allows(&real, touch) || (!write && real.starts_with("/proc")) {
            return None;
        }
        Some(Violation { touch, path: real })
    }
}
