//! One process at a time writes under an `--out` directory.
//!
//! Two experiments on one `--out` would train the same runs, rewrite the same kept
//! measurements and child logs, and each read the other's half-written state. So every
//! experiment that writes takes an exclusive advisory lock (`flock`) on `<out>/.lock` before
//! any work, and a second one stops at once, naming the first ("in use by process N"). The
//! lock goes with the process: the kernel releases it when the holder exits or is killed, so
//! a stale lock cannot outlive a crash. The file records the holder's process id and command
//! line for the message; it is never deleted (deleting it would let two processes lock two
//! different files of the same name).
//!
//! `--jobs`' children run under their parent's lock: they are started by the holder, which
//! waits for them, and each writes only its own model's directories (guarded by the run
//! directory's own lock, `transformer::checkpoint::lock`).

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::Path;

use anyhow::Context;

/// The lock file's name under `--out`.
pub const LOCK_FILE: &str = ".lock";

/// Held while this process writes under an `--out`; released when dropped or at exit.
pub struct OutLock {
    _file: File,
}

/// Who holds a lock, as its file records it: (process id, command line).
fn holder(file: &mut File) -> (Option<u32>, String) {
    let mut text = String::new();
    let _ = file.rewind();
    let _ = file.read_to_string(&mut text);
    let mut lines = text.lines();
    let pid = lines.next().and_then(|l| l.trim().parse().ok());
    (pid, lines.next().unwrap_or("").trim().to_string())
}

/// Takes `out`'s lock, or answers at once with "in use by process N". `parent_may_hold`: a
/// `--jobs` child, which runs when the lock is its parent's.
pub fn lock_out(out: &Path, parent_may_hold: bool) -> anyhow::Result<Option<OutLock>> {
    std::fs::create_dir_all(out)
        .with_context(|| format!("--out {}: cannot create the directory", out.display()))?;
    let path = out.join(LOCK_FILE);
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("{}: cannot open", path.display()))?;
    // std's `try_lock` is flock(LOCK_EX | LOCK_NB) on Unix: the kernel frees it with the
    // descriptor, at exit or kill.
    if file.try_lock().is_err() {
        let (mut pid, mut command) = holder(&mut file);
        // The holder writes its id just after taking the lock: what is read in between is
        // the previous holder's (or nothing). Read again until it names a live process.
        for _ in 0..20 {
            if pid.is_some_and(running) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            (pid, command) = holder(&mut file);
        }
        if parent_may_hold && pid.is_some() && pid == parent_pid() {
            return Ok(None);
        }
        let who = match pid {
            Some(pid) => format!("process {pid}"),
            None => "another process".to_string(),
        };
        let what = if command.is_empty() {
            String::new()
        } else {
            format!(" ({command})")
        };
        anyhow::bail!(
            "--out {} is in use by {who}{what}: wait for it to finish, or give this run another --out",
            out.display()
        );
    }
    let command: Vec<String> = std::env::args().collect();
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = writeln!(file, "{}\n{}", std::process::id(), command.join(" "));
    let _ = file.flush();
    Ok(Some(OutLock { _file: file }))
}

/// Whether a process of this id exists (Linux: its /proc entry; elsewhere assumed).
fn running(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new(&format!("/proc/{pid}")).exists()
    } else {
        true
    }
}

#[cfg(unix)]
fn parent_pid() -> Option<u32> {
    Some(std::os::unix::process::parent_id())
}

#[cfg(not(unix))]
fn parent_pid() -> Option<u32> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_one_out_is_refused_naming_the_holder_and_freed_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let held = lock_out(dir.path(), false).unwrap();
        assert!(held.is_some());
        // flock locks belong to the open file description, so a second open in this process
        // conflicts just as another process's would.
        let msg = format!("{:#}", lock_out(dir.path(), false).err().unwrap());
        assert!(
            msg.contains(&format!("in use by process {}", std::process::id()))
                && msg.contains("another --out"),
            "{msg}"
        );
        drop(held);
        let held = lock_out(dir.path(), false).unwrap();
        assert!(held.is_some());
        // A lock file that names nobody (a holder between taking the lock and writing its id).
        std::fs::write(dir.path().join(LOCK_FILE), "").unwrap();
        let msg = format!("{:#}", lock_out(dir.path(), false).err().unwrap());
        assert!(msg.contains("in use by another process:"), "{msg}");
    }
}
