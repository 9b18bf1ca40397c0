//! Applying a [`Policy`] to a task's process: a Landlock ruleset built in
//! vx, and a hook that runs in the child between fork and exec.
//!
//! Everything that allocates or opens paths happens in vx, before the
//! fork: the ruleset (one `O_PATH` descriptor per path), the uid and gid
//! maps. The hook only makes system calls, as a hook after `fork` in a
//! threaded program must: `unshare` into a user and network namespace of
//! its own (no network), writes the maps, then `no_new_privs` and
//! `landlock_restrict_self`. Every process the task starts inherits both,
//! grandchildren included; nothing can lift them.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;

use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr,
};

use super::policy::Policy;
use super::trace::{self, Judge, TraceChild, Tracer};

/// Why a task cannot be sandboxed here; it fails with this, never runs
/// unconfined.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SandboxError {
    #[error(
        "`sandbox` needs Landlock (Linux 5.13 or later, with `landlock` in the kernel's LSM list), which this kernel does not offer; run the task without `sandbox`, or on such a kernel"
    )]
    NoLandlock,
    #[error("could not build the task's sandbox: {0}")]
    Ruleset(String),
}

/// The Landlock ABI this kernel speaks, 0 when it has none.
pub(crate) fn landlock_abi() -> i32 {
    // SAFETY: the version query takes no pointer (NULL, size 0).
    let v = unsafe {
        libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, 1u32 /* VERSION */)
    };
    i32::try_from(v).unwrap_or(0).max(0)
}

/// A policy made ready for a child: the ruleset, the namespace maps when
/// it has no network, and for one attempt the tracer's half
/// ([`Confinement::for_attempt`]).
#[derive(Debug)]
pub(crate) struct Confinement {
    pub policy: Arc<Policy>,
    judge: Arc<Judge>,
    /// `None` when the task is only observed (`--verify=inputs`).
    ruleset: Option<Arc<OwnedFd>>,
    netns: Option<Arc<Maps>>,
    /// `network = "loopback"`: the namespace's own `lo` is brought up.
    loopback: bool,
    trace: Option<TraceChild>,
    /// Where an observed task's report goes, instead of failing it.
    pub observed: Option<Arc<Observed>>,
}

/// `--verify=inputs`: each observed task's dependencies' outputs (from
/// the whole plan; the traced run holds the requested tasks alone), and
/// what each touched outside its declarations, `(task id, paths)`.
#[derive(Debug, Default)]
pub(crate) struct Observed {
    pub deps: std::collections::HashMap<String, Vec<(std::path::PathBuf, Vec<String>)>>,
    pub seen: std::sync::Mutex<Vec<(String, Vec<super::Violation>)>>,
}

#[derive(Debug)]
struct Maps {
    uid_map: CString,
    gid_map: CString,
    uid_line: Vec<u8>,
    gid_line: Vec<u8>,
    setgroups: CString,
}

impl Confinement {
    /// Builds the ruleset for `policy`. A path that does not exist opens
    /// nothing (an output directory is created by the caller first).
    pub(crate) fn new(policy: Policy) -> Result<Confinement, SandboxError> {
        let version = landlock_abi();
        if version < 1 {
            return Err(SandboxError::NoLandlock);
        }
        let abi = ABI::from(version);
        let fail = |e: &dyn std::fmt::Display| SandboxError::Ruleset(e.to_string());
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(abi))
            .map_err(|e| fail(&e))?
            .create()
            .map_err(|e| fail(&e))?;
        let rules = [(&policy.reads, AccessFs::from_read(abi)), (&policy.writes, AccessFs::from_all(abi))];
        for (paths, access) in rules {
            for path in paths.iter() {
                let Some(rule) = rule(path, access, abi) else { continue };
                ruleset = ruleset.add_rule(rule).map_err(|e| fail(&format!("{}: {e}", path.display())))?;
            }
        }
        let ruleset = Option::<OwnedFd>::from(ruleset).ok_or(SandboxError::NoLandlock)?;
        let netns = (policy.network != crate::config::Network::Host).then(|| Arc::new(Maps::here()));
        let loopback = policy.network == crate::config::Network::Loopback;
        Ok(Confinement {
            judge: Arc::new(Judge::new(&policy)),
            policy: Arc::new(policy),
            ruleset: Some(Arc::new(ruleset)),
            netns,
            loopback,
            trace: None,
            observed: None,
        })
    }

    /// Watches a task without confining it: every path it touches outside
    /// `policy` is reported to `observed`, and the task runs as it would.
    pub(crate) fn observe(policy: Policy, observed: Arc<Observed>) -> Confinement {
        Confinement {
            judge: Arc::new(Judge::new(&policy)),
            policy: Arc::new(policy),
            ruleset: None,
            netns: None,
            loopback: false,
            trace: None,
            observed: Some(observed),
        }
    }

    /// The confinement of one attempt: the same ruleset, and a tracer of
    /// its own that names what the attempt touched outside the policy.
    pub(crate) fn for_attempt(&self) -> std::io::Result<(Confinement, Tracer)> {
        let (child, tracer) = trace::start(self.judge.clone())?;
        let attempt = Confinement {
            policy: self.policy.clone(),
            judge: self.judge.clone(),
            ruleset: self.ruleset.clone(),
            netns: self.netns.clone(),
            loopback: self.loopback,
            trace: Some(child),
            observed: self.observed.clone(),
        };
        Ok((attempt, tracer))
    }

    /// The hook for `pre_exec`: enter the namespaces, then restrict.
    /// Async-signal-safe: system calls on data prepared in [`new`].
    ///
    /// [`new`]: Confinement::new
    pub(crate) fn apply_in_child(&self) -> std::io::Result<()> {
        if let Some(maps) = &self.netns {
            // SAFETY: plain system calls on memory owned by `self`, which
            // the child's copy of the parent keeps alive until exec.
            unsafe {
                if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) != 0 {
                    return Err(Step::UserNamespace.failed(std::io::Error::last_os_error()));
                }
                let maps_written = write_file(&maps.setgroups, b"deny")
                    .and_then(|()| write_file(&maps.uid_map, &maps.uid_line))
                    .and_then(|()| write_file(&maps.gid_map, &maps.gid_line));
                maps_written.map_err(|e| Step::IdMaps.failed(e))?;
            }
            if self.loopback {
                loopback_up().map_err(|e| Step::Loopback.failed(e))?;
            }
        }
        // SAFETY: as above; the ruleset descriptor is open in the child.
        // `no_new_privs` is what an unprivileged seccomp filter needs too.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(Step::NoNewPrivs.failed(std::io::Error::last_os_error()));
            }
            if let Some(ruleset) = &self.ruleset
                && libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32) != 0
            {
                return Err(Step::Landlock.failed(std::io::Error::last_os_error()));
            }
        }
        // Last: from here on every open is reported to vx, which must hold
        // the listener before the first one.
        match &self.trace {
            Some(trace) => trace.install_in_child().map_err(|e| Step::Tracer.failed(e)),
            None => Ok(()),
        }
    }
}

/// The step of [`Confinement::apply_in_child`] that failed. The hook runs
/// after fork, where nothing may allocate, and std's spawn carries only a
/// raw errno back to vx; so the step rides in that number, above every
/// errno (which are all below 4096), and [`spawn_failure`] takes it apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    UserNamespace = 1,
    IdMaps,
    Loopback,
    NoNewPrivs,
    Landlock,
    Tracer,
}

const STEP_UNIT: i32 = 1 << 12;
const STEPS: [Step; 6] =
    [Step::UserNamespace, Step::IdMaps, Step::Loopback, Step::NoNewPrivs, Step::Landlock, Step::Tracer];

impl Step {
    /// `e`, marked with this step. Allocation-free.
    fn failed(self, e: std::io::Error) -> std::io::Error {
        let errno = e.raw_os_error().unwrap_or(libc::EINVAL) % STEP_UNIT;
        std::io::Error::from_raw_os_error(self as i32 * STEP_UNIT + errno)
    }

    /// What failed, the call that said so, and (after its cause) how to
    /// mend it.
    fn what(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Step::UserNamespace => (
                "could not make a user and network namespace of its own",
                "unshare",
                ", which a task without `network = true` needs: this kernel or its policy forbids unprivileged user namespaces (`user.max_user_namespaces`, `kernel.unprivileged_userns_clone`, AppArmor's `kernel.apparmor_restrict_unprivileged_userns`); allow them, or set `network = true` on the task",
            ),
            Step::IdMaps => ("could not map its user into its namespace", "/proc/self/uid_map", ""),
            Step::Loopback => ("could not bring up the loopback of its network namespace", "SIOCSIFFLAGS", ""),
            Step::NoNewPrivs => ("could not set `no_new_privs`", "prctl", ""),
            Step::Landlock => ("could not restrict itself with Landlock", "landlock_restrict_self", ""),
            Step::Tracer => (
                "could not install the seccomp filter that names refused paths",
                "seccomp",
                ": it needs seccomp user notification (Linux 5.0 or later)",
            ),
        }
    }
}

/// What a failed spawn of a sandboxed task means, when the sandbox's hook
/// failed: the step, its cause, and how to mend it.
pub(crate) fn spawn_failure(e: &std::io::Error) -> Option<String> {
    let raw = e.raw_os_error()?;
    let step = *STEPS.get(usize::try_from(raw / STEP_UNIT).ok()?.checked_sub(1)?)?;
    let cause = std::io::Error::from_raw_os_error(raw % STEP_UNIT);
    let (action, call, remedy) = step.what();
    Some(format!("its sandbox {action} (`{call}`: {cause}){remedy}"))
}

impl Maps {
    /// Maps vx's own uid and gid onto themselves in the new namespace, so
    /// files keep their owner and the guard can still signal the task.
    fn here() -> Maps {
        // SAFETY: getuid and getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let c = |s: &str| CString::new(s).expect("no NUL in a /proc path");
        Maps {
            uid_map: c("/proc/self/uid_map"),
            gid_map: c("/proc/self/gid_map"),
            setgroups: c("/proc/self/setgroups"),
            uid_line: format!("{uid} {uid} 1").into_bytes(),
            gid_line: format!("{gid} {gid} 1").into_bytes(),
        }
    }
}

/// Brings up `lo` in the task's new network namespace (vx's uid owns the
/// namespace, so it may): a loopback of its own, for servers it starts.
fn loopback_up() -> std::io::Result<()> {
    // SAFETY: a zeroed `ifreq` is valid; the calls take stack memory.
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if sock < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut ifr: libc::ifreq = std::mem::zeroed();
        for (dst, src) in ifr.ifr_name.iter_mut().zip(b"lo") {
            *dst = *src as libc::c_char;
        }
        ifr.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_LOOPBACK | libc::IFF_RUNNING) as libc::c_short;
        // The request's type is the C library's (`c_ulong` in glibc, `c_int` in
        // musl), and libc spells this constant as glibc's.
        let done = libc::ioctl(sock, libc::SIOCSIFFLAGS as libc::Ioctl, &ifr);
        libc::close(sock);
        if done != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Writes `data` to the file at `path` with raw system calls.
///
/// # Safety
/// Async-signal-safe; `path` and `data` must outlive the call.
unsafe fn write_file(path: &CString, data: &[u8]) -> std::io::Result<()> {
    // SAFETY: the caller's contract.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let written = libc::write(fd, data.as_ptr().cast(), data.len());
        libc::close(fd);
        if written < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The rule for `path`: `access` beneath a directory, its file rights on a
/// file; none when the path is missing.
fn rule(path: &Path, access: BitFlags<AccessFs>, abi: ABI) -> Option<PathBeneath<PathFd>> {
    let meta = std::fs::metadata(path).ok()?;
    let access = if meta.is_dir() { access } else { access & AccessFs::from_file(abi) };
    let fd = PathFd::new(path).ok()?;
    Some(PathBeneath::new(fd, access))
}

impl crate::guard::PreExec for Confinement {
    fn apply_in_child(&self) -> std::io::Result<()> {
        Confinement::apply_in_child(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_step_travels_in_the_errno_and_is_told_with_its_cause() {
        let e = Step::UserNamespace.failed(std::io::Error::from_raw_os_error(libc::EPERM));
        let told = spawn_failure(&e).expect("a sandbox step");
        assert!(told.starts_with("its sandbox could not make a user and network namespace"), "{told}");
        assert!(told.contains(&std::io::Error::from_raw_os_error(libc::EPERM).to_string()), "{told}");
        assert!(told.ends_with("or set `network = true` on the task"), "{told}");
        for step in STEPS {
            let e = step.failed(std::io::Error::from_raw_os_error(libc::EACCES));
            let told = spawn_failure(&e).unwrap_or_else(|| panic!("{step:?} is told"));
            assert!(told.starts_with(&format!("its sandbox {}", step.what().0)), "{step:?}: {told}");
        }
        assert_eq!(spawn_failure(&std::io::Error::from_raw_os_error(libc::ENOENT)), None, "a plain errno is no step");
        assert_eq!(spawn_failure(&std::io::Error::from_raw_os_error(99 * STEP_UNIT)), None);
    }
}
