//! Writing beneath a directory through directory handles that never
//! follow a symbolic link, so that the kernel, not a string check, keeps
//! every write inside it.
//!
//! The lexical checks of [`super::inside`] come first and give the clear
//! error; this is the second line, and it holds by construction: every
//! path is walked one component at a time from an open directory handle,
//! each directory opened with `O_NOFOLLOW | O_DIRECTORY` and each file
//! created with `O_NOFOLLOW | O_EXCL` after the name is unlinked. A `..`,
//! an absolute path, or a symbolic link anywhere on the way (planted
//! before the write, swapped in between a check and the write, or made by
//! an earlier member of the same archive) fails with an error instead of
//! being followed. Links *inside* the directory are not followed either:
//! a link from `dist/x` to `../src` would keep the write beneath the
//! project and still overwrite its sources. Replacing the name instead of
//! truncating it means a hard link planted at the name is never written
//! through.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path};

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{Mode, fchmod, mkdirat};
use nix::unistd::{UnlinkatFlags, symlinkat, unlinkat};

/// An open directory that writes stay beneath, never through a link.
#[derive(Debug)]
pub(crate) struct Contained {
    dir: OwnedFd,
}

/// A directory reached on the way to a name: the base itself, or one
/// opened beneath it.
enum DirFd<'a> {
    Base(BorrowedFd<'a>),
    Opened(OwnedFd),
}

impl DirFd<'_> {
    fn fd(&self) -> BorrowedFd<'_> {
        match self {
            DirFd::Base(fd) => *fd,
            DirFd::Opened(fd) => fd.as_fd(),
        }
    }
}

fn refused(rel: &str, why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("refused path `{rel}`: {why}"))
}

impl Contained {
    /// Opens `dir` (creating it if needed) as the handle writes go through.
    pub(crate) fn open(dir: &Path) -> io::Result<Contained> {
        std::fs::create_dir_all(dir)?;
        let fd = nix::fcntl::open(dir, OFlag::O_DIRECTORY | OFlag::O_RDONLY | OFlag::O_CLOEXEC, Mode::empty())?;
        Ok(Contained { dir: fd })
    }

    /// Writes a regular file at `rel` with `mode`, creating its parents.
    pub(crate) fn write_file(&self, rel: &str, data: &[u8], mode: u32) -> io::Result<()> {
        self.write_from(rel, &mut &data[..], mode)
    }

    /// Writes the file at `rel` from `data` as it streams in (nothing is
    /// held whole), then gives it `mode`; creates its parents.
    pub(crate) fn write_from(&self, rel: &str, data: &mut dyn io::Read, mode: u32) -> io::Result<()> {
        let mut file = self.create(rel)?;
        io::copy(data, &mut file)?;
        fchmod(file.as_fd(), Mode::from_bits_truncate(mode & 0o7777))?;
        Ok(())
    }

    /// Makes a symbolic link at `rel` pointing at `target` (relative; an
    /// absolute target is refused), creating its parents. An existing
    /// name is not replaced.
    pub(crate) fn symlink(&self, rel: &str, target: &str) -> io::Result<()> {
        if Path::new(target).is_absolute() {
            return Err(refused(rel, "a link with an absolute target"));
        }
        let (dir, name) = self.parent(rel, true)?;
        symlinkat(target, dir.fd(), name)?;
        Ok(())
    }

    /// Writes a new file at `rel` and waits for its data to reach the disk
    /// (what a rename then publishes must be whole after a crash).
    pub(crate) fn write_durable(&self, rel: &str, data: &[u8]) -> io::Result<()> {
        use std::io::Write;
        let mut file = self.create(rel)?;
        file.write_all(data)?;
        file.sync_data()
    }

    /// Renames `from` to `to` (replacing it), creating `to`'s parents.
    pub(crate) fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let (from_dir, from_name) = self.parent(from, false)?;
        let (to_dir, to_name) = self.parent(to, true)?;
        nix::fcntl::renameat(from_dir.fd(), from_name, to_dir.fd(), to_name)?;
        Ok(())
    }

    /// Removes the file or link at `rel` (a link itself, never what it
    /// points at, and never through a link on the way).
    pub(crate) fn remove_file(&self, rel: &str) -> io::Result<()> {
        let (dir, name) = self.parent(rel, false)?;
        unlinkat(dir.fd(), name, UnlinkatFlags::NoRemoveDir)?;
        Ok(())
    }

    /// Removes the directories holding `rel` that are empty now, deepest
    /// first, down to (not including) `keep` and the handle's own
    /// directory: a cleared output's directory must not stay behind, or a
    /// file of that name built next would land inside it. `keep` (an
    /// output glob's literal root, `dist`) stays: a sandbox has granted
    /// writes beneath it already. Stops at the first that is not empty (or
    /// not a directory), never following a link.
    pub(crate) fn remove_empty_parents(&self, rel: &str, keep: &str) {
        let mut dirs: Vec<&str> = Vec::new();
        let mut at = rel;
        while let Some((parent, _)) = at.rsplit_once('/') {
            if parent.len() <= keep.len() {
                break;
            }
            dirs.push(parent);
            at = parent;
        }
        for dir in dirs {
            let Ok((holder, name)) = self.parent(dir, false) else { return };
            if unlinkat(holder.fd(), name, UnlinkatFlags::RemoveDir).is_err() {
                return;
            }
        }
    }

    /// A fresh regular file at `rel`: whatever had the name is unlinked
    /// first (never truncated through), and the create refuses a link.
    fn create(&self, rel: &str) -> io::Result<std::fs::File> {
        let (dir, name) = self.parent(rel, true)?;
        match unlinkat(dir.fd(), name, UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => {}
            Err(e) => return Err(e.into()),
        }
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(dir.fd(), name, flags, Mode::from_bits_truncate(0o600))?;
        Ok(std::fs::File::from(fd))
    }

    /// The directory holding `rel` and its last component, reached without
    /// following a link; missing directories are made when `create`.
    fn parent<'p>(&self, rel: &'p str, create: bool) -> io::Result<(DirFd<'_>, &'p OsStr)> {
        let mut parts = Vec::new();
        for c in Path::new(rel).components() {
            match c {
                Component::Normal(part) => parts.push(part),
                _ => return Err(refused(rel, "not a plain relative path")),
            }
        }
        let Some((name, dirs)) = parts.split_last() else { return Err(refused(rel, "an empty path")) };
        let mut dir = DirFd::Base(self.dir.as_fd());
        for part in dirs {
            dir = DirFd::Opened(open_dir_nofollow(dir.fd(), part, create).map_err(|e| match e {
                Errno::ELOOP | Errno::ENOTDIR => refused(
                    rel,
                    &format!("`{}` on the way is a symbolic link or not a directory", part.to_string_lossy()),
                ),
                e => e.into(),
            })?);
        }
        Ok((dir, name))
    }
}

/// Opens the directory `name` beneath `dir` without following a link,
/// making it first when it is missing and `create`.
fn open_dir_nofollow(dir: BorrowedFd<'_>, name: &OsStr, create: bool) -> Result<OwnedFd, Errno> {
    let flags = OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_RDONLY | OFlag::O_CLOEXEC;
    match openat(dir, name, flags, Mode::empty()) {
        Err(Errno::ENOENT) if create => {
            match mkdirat(dir, name, Mode::from_bits_truncate(0o777)) {
                Ok(()) | Err(Errno::EEXIST) => {}
                Err(e) => return Err(e),
            }
            openat(dir, name, flags, Mode::empty())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lockfile::testutil::ScratchDir;

    /// A directory `inside` to write into and one `outside` beside it.
    fn dirs(name: &str) -> (ScratchDir, std::path::PathBuf, std::path::PathBuf) {
        let scratch = ScratchDir::new(name);
        let inside = scratch.path().join("inside");
        let outside = scratch.path().join("outside");
        std::fs::create_dir_all(&inside).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        (scratch, inside, outside)
    }

    #[test]
    fn writes_files_and_links_beneath_the_directory() {
        let (_s, inside, _) = dirs("contained-ok");
        let c = Contained::open(&inside).unwrap();
        c.write_file("a/b/c.txt", b"c", 0o755).unwrap();
        c.symlink("a/l", "b/c.txt").unwrap();
        assert_eq!(std::fs::read(inside.join("a/l")).unwrap(), b"c");
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(inside.join("a/b/c.txt")).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o755);
        c.remove_file("a/l").unwrap();
        assert!(!inside.join("a/l").exists());
    }

    #[test]
    fn dotdot_and_absolute_paths_never_leave_it() {
        let (_s, inside, outside) = dirs("contained-dotdot");
        let c = Contained::open(&inside).unwrap();
        assert!(c.write_file("../outside/pwned.txt", b"x", 0o644).is_err());
        assert!(c.write_file("a/../../outside/pwned.txt", b"x", 0o644).is_err());
        let absolute = outside.join("abs.txt");
        assert!(c.write_file(&absolute.to_string_lossy(), b"x", 0o644).is_err());
        assert!(c.symlink("l", &absolute.to_string_lossy()).is_err(), "an absolute target");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "nothing was written outside");
    }

    #[test]
    fn a_link_swapped_in_after_the_check_is_not_followed_out() {
        // The lexical check saw a plain directory `dist`; before the write,
        // a hostile process (or an earlier member) replaces it with a link
        // to the outside. The write through the handle must fail.
        let (_s, inside, outside) = dirs("contained-race");
        std::fs::create_dir_all(inside.join("dist")).unwrap();
        crate::paths::check_no_link_on_the_way(&inside, "dist/out.txt").unwrap();
        std::fs::remove_dir(inside.join("dist")).unwrap();
        std::os::unix::fs::symlink(&outside, inside.join("dist")).unwrap();
        let c = Contained::open(&inside).unwrap();
        assert!(c.write_file("dist/out.txt", b"pwned", 0o644).is_err());
        // A relative link that climbs out is refused the same way.
        std::fs::remove_file(inside.join("dist")).unwrap();
        std::os::unix::fs::symlink("../outside", inside.join("dist")).unwrap();
        assert!(c.write_file("dist/out.txt", b"pwned", 0o644).is_err());
        assert!(c.symlink("dist/l", "x").is_err(), "nor is a link made through it");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "nothing was written outside");
    }

    #[test]
    fn a_planted_file_link_is_replaced_not_written_through() {
        let (_s, inside, outside) = dirs("contained-file-link");
        std::fs::write(outside.join("victim.txt"), "safe").unwrap();
        std::os::unix::fs::symlink(outside.join("victim.txt"), inside.join("out.txt")).unwrap();
        let c = Contained::open(&inside).unwrap();
        c.write_file("out.txt", b"new", 0o644).unwrap();
        assert_eq!(std::fs::read_to_string(outside.join("victim.txt")).unwrap(), "safe");
        assert!(std::fs::symlink_metadata(inside.join("out.txt")).unwrap().is_file(), "a file of its own now");
    }

    #[test]
    fn a_link_inside_the_directory_is_not_written_through_either() {
        // `dist/x` → `../src` stays beneath the directory, yet a write of
        // `dist/x/main.ts` through it would overwrite a source.
        let (_s, inside, _) = dirs("contained-inner-link");
        std::fs::create_dir_all(inside.join("src")).unwrap();
        std::fs::write(inside.join("src/main.ts"), "source").unwrap();
        std::fs::create_dir_all(inside.join("dist")).unwrap();
        std::os::unix::fs::symlink("../src", inside.join("dist/x")).unwrap();
        let c = Contained::open(&inside).unwrap();
        let err = c.write_file("dist/x/main.ts", b"pwned", 0o644).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(c.remove_file("dist/x/main.ts").is_err(), "nor removed through it");
        assert_eq!(std::fs::read_to_string(inside.join("src/main.ts")).unwrap(), "source");
    }

    #[test]
    fn a_hard_link_at_the_name_is_replaced_not_written_through() {
        let (_s, inside, outside) = dirs("contained-hard-link");
        std::fs::write(outside.join("victim.txt"), "safe").unwrap();
        std::fs::hard_link(outside.join("victim.txt"), inside.join("out.txt")).unwrap();
        let c = Contained::open(&inside).unwrap();
        c.write_file("out.txt", b"new", 0o644).unwrap();
        assert_eq!(std::fs::read_to_string(inside.join("out.txt")).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(outside.join("victim.txt")).unwrap(), "safe");
    }
}
