//! `vx-test-without landlock|userns PROGRAM ARGS...`: runs PROGRAM as on a
//! kernel without Landlock, or one that forbids unprivileged user
//! namespaces, so the sandbox's refusal to run a task unconfined can be
//! tested on a machine that has both.
//!
//! A seccomp filter (inherited by PROGRAM and everything it starts) answers
//! `landlock_create_ruleset` with `ENOSYS`, what a kernel built without
//! Landlock answers; or `unshare` with `CLONE_NEWUSER` with `EPERM`, what
//! `kernel.unprivileged_userns_clone = 0` or AppArmor's restriction answer.

use std::os::unix::process::CommandExt;

use nix::libc;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: vx-test-without landlock|userns PROGRAM ARGS...";
    let (Some(what), Some(program)) = (args.get(1), args.get(2)) else { panic!("{usage}") };
    let filter = match what.as_str() {
        "landlock" => refuse(libc::SYS_landlock_create_ruleset, None, libc::ENOSYS),
        "userns" => refuse(libc::SYS_unshare, Some(libc::CLONE_NEWUSER as u32), libc::EPERM),
        _ => panic!("{usage}"),
    };
    let prog = libc::sock_fprog { len: filter.len() as u16, filter: filter.as_ptr().cast_mut() };
    // SAFETY: `prog` points at `filter`, alive for the call; a filter needs
    // `no_new_privs` when the caller is not privileged.
    unsafe {
        assert_eq!(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0, "no_new_privs");
        let set = libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, 0, &prog as *const libc::sock_fprog);
        assert_eq!(set, 0, "seccomp: {}", std::io::Error::last_os_error());
    }
    #[expect(clippy::disallowed_methods, reason = "a test helper that becomes the program it runs")]
    let err = std::process::Command::new(program).args(&args[3..]).exec();
    panic!("exec {program}: {err}");
}

/// A filter answering system call `nr` with `errno` (when `flag` is given,
/// only calls whose first argument has that bit), allowing everything else.
fn refuse(nr: i64, flag: Option<u32>, errno: i32) -> Vec<libc::sock_filter> {
    let stmt = |code: u32, k: u32| libc::sock_filter { code: code as u16, jt: 0, jf: 0, k };
    let jump = |k: u32, jt: u8, jf: u8| libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    };
    let allow = stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW);
    let deny = stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ERRNO | errno as u32);
    let load = |offset: u32| stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, offset);
    let mut prog = vec![load(4), jump(AUDIT_ARCH, 1, 0), allow, load(0)];
    match flag {
        None => prog.extend([jump(nr as u32, 0, 1), deny, allow]),
        Some(bit) => prog.extend([
            jump(nr as u32, 0, 4),
            load(16), // the low half of the first argument
            stmt(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, bit),
            jump(bit, 0, 1),
            deny,
            allow,
        ]),
    }
    prog
}
