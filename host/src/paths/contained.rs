//! Writing beneath a directory through a `cap-std` handle, so that the
//! kernel, not a string check, keeps every write inside it.
//!
//! The lexical checks of [`super::inside`] come first and give the clear
//! error; this is the second line. Every path is resolved relative to an
//! open directory handle (`openat2` with `RESOLVE_BENEATH` on Linux, or
//! cap-std's own component-by-component walk where that is missing): a
//! `..`, an absolute path, or a symbolic link that leads out, planted before
//! the write or swapped in between a check and the write (a race), fails
//! with an error instead of reaching outside.

use std::io;
use std::path::Path;

use cap_std::ambient_authority;
use cap_std::fs::{Dir, Permissions, PermissionsExt};

/// An open directory that writes stay beneath.
#[derive(Debug)]
pub struct Contained {
    dir: Dir,
}

impl Contained {
    /// Opens `dir` (creating it if needed) as the handle writes go through.
    pub fn open(dir: &Path) -> io::Result<Contained> {
        std::fs::create_dir_all(dir)?;
        Ok(Contained { dir: Dir::open_ambient_dir(dir, ambient_authority())? })
    }

    /// Writes a regular file at `rel` with `mode`, creating its parents.
    pub fn write_file(&self, rel: &str, data: &[u8], mode: u32) -> io::Result<()> {
        self.parents(rel)?;
        self.dir.write(rel, data)?;
        self.dir.set_permissions(rel, Permissions::from_mode(mode))
    }

    /// Writes the file at `rel` from `data` as it streams in (nothing is
    /// held whole), then gives it `mode`; creates its parents.
    pub fn write_from(&self, rel: &str, data: &mut dyn std::io::Read, mode: u32) -> io::Result<()> {
        self.parents(rel)?;
        let mut file = self.dir.create(rel)?;
        std::io::copy(data, &mut file)?;
        drop(file);
        self.dir.set_permissions(rel, Permissions::from_mode(mode))
    }

    /// Makes a symbolic link at `rel` pointing at `target` (relative; an
    /// absolute target is refused), creating its parents.
    pub fn symlink(&self, rel: &str, target: &str) -> io::Result<()> {
        self.parents(rel)?;
        self.dir.symlink(target, rel)
    }

    /// Writes a new file at `rel` and waits for its data to reach the disk
    /// (what a rename then publishes must be whole after a crash).
    pub fn write_durable(&self, rel: &str, data: &[u8]) -> io::Result<()> {
        use std::io::Write;
        self.parents(rel)?;
        let mut file = self.dir.create(rel)?;
        file.write_all(data)?;
        file.sync_data()
    }

    /// Renames `from` to `to` (replacing it), creating `to`'s parents.
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.parents(to)?;
        self.dir.rename(from, &self.dir, to)
    }

    /// Removes the file or link at `rel`.
    pub fn remove_file(&self, rel: &str) -> io::Result<()> {
        self.dir.remove_file(rel)
    }

    fn parents(&self, rel: &str) -> io::Result<()> {
        match Path::new(rel).parent() {
            Some(parent) if !parent.as_os_str().is_empty() => self.dir.create_dir_all(parent),
            _ => Ok(()),
        }
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
    fn a_planted_file_link_is_not_written_through() {
        let (_s, inside, outside) = dirs("contained-file-link");
        std::fs::write(outside.join("victim.txt"), "safe").unwrap();
        std::os::unix::fs::symlink(outside.join("victim.txt"), inside.join("out.txt")).unwrap();
        let c = Contained::open(&inside).unwrap();
        assert!(c.write_file("out.txt", b"pwned", 0o644).is_err());
        assert_eq!(std::fs::read_to_string(outside.join("victim.txt")).unwrap(), "safe");
    }
}
