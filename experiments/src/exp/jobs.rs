//! `--jobs N`: independent models of a study trained and measured side by side, one child
//! process each (`--exp measure-model` / `measure-snapshots`, hidden from `--help`).
//!
//! Processes rather than threads: burn keeps one random number generator per backend, shared
//! by every thread, so two trainings in one process would draw each other's initialisation
//! and dropout. A child is the same binary with the same config, corpus, backend and output
//! directory, asked for one (model, seed); it leaves the model's measurements where the
//! parent then reads them, so the parent's views run as if it had measured everything itself.
//! Each child's output goes to `<out>/logs/<model>-seed<s>.log`, its own: only the process
//! holding `<out>`'s lock ([`crate::lock`]) starts children there, one per (model, seed).
//!
//! A child dies with its parent (Linux: `PR_SET_PDEATHSIG`): a parent killed outright (`kill
//! -9`, out of memory) would otherwise leave its children training and writing under `--out`
//! while a rerun, which the kernel let take the lock, trains the same models beside them. The
//! signal is tied to the thread that started the child, so children are started from the
//! thread that waits for them ([`run_pending`]). Killing a child is safe: every file it keeps
//! is written atomically, and its run resumes exactly from its last checkpoint.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::ValueEnum;

use super::settings::ModelId;
use crate::cli::Args;

/// What a child measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// [`super::study::Study::scores`]: a final model, as the paper's experiments read it.
    Scores,
    /// [`super::study::Study::follow`]: every snapshot of a run, then its final model in full.
    Snapshots,
}

/// Runs `pending` (model, seed) pairs in up to `args.jobs` child processes, at most one per
/// pair; returns once all have finished, with an error naming every pair that failed and its
/// log. `config` is the config file the parent loaded (none: the defaults).
pub fn run_pending(
    args: &Args,
    config: Option<&Path>,
    pending: &[(ModelId, u64)],
    work: Work,
) -> anyhow::Result<()> {
    if args.jobs == 0 {
        anyhow::bail!("--jobs must be at least 1 (1: one model after another)");
    }
    if args.jobs == 1 || pending.len() <= 1 {
        return Ok(());
    }
    let logs = args.out.join("logs");
    std::fs::create_dir_all(&logs).with_context(|| format!("{}: cannot create", logs.display()))?;
    // The children read the config as the parent read it, not the file as it is when each one
    // starts: a study runs for hours, and an edit of its config (or of a file it extends) in
    // the meantime would otherwise reach the children started after it (and a key the running
    // program does not know would fail every one of them).
    let frozen = match config {
        Some(path) => {
            let frozen = logs.join(format!("config-{}.toml", std::process::id()));
            let text = crate::config::merged_text(path)?;
            corpus::io::write_atomic(&frozen, |w| w.write_all(text.as_bytes()))
                .with_context(|| format!("{}: cannot write", frozen.display()))?;
            Some(frozen)
        }
        None => None,
    };
    let config = frozen.as_deref();
    println!(
        "{} models in up to {} processes side by side (--jobs); their output in {}",
        pending.len(),
        args.jobs,
        logs.display()
    );
    let mut queue = pending.iter().copied();
    let mut running: Vec<(ModelId, u64, PathBuf, Child, Instant)> = Vec::new();
    let mut failed = Vec::new();
    loop {
        while running.len() < args.jobs {
            let Some((id, seed)) = queue.next() else {
                break;
            };
            let log = logs.join(format!("{}-seed{seed}.log", id.name()));
            let child = spawn(args, config, id, seed, work, &log)?;
            println!(
                "  started {} seed {seed} (process {})",
                id.name(),
                child.id()
            );
            running.push((id, seed, log, child, Instant::now()));
        }
        if running.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
        let mut still = Vec::new();
        for (id, seed, log, mut child, started) in running {
            match child.try_wait() {
                Ok(Some(status)) => {
                    println!(
                        "  {} {} seed {seed} after {:.1} min",
                        if status.success() {
                            "finished"
                        } else {
                            "FAILED"
                        },
                        id.name(),
                        started.elapsed().as_secs_f64() / 60.0
                    );
                    if !status.success() {
                        failed.push(format!(
                            "{} seed {seed} ({status}; see {}){}",
                            id.name(),
                            log.display(),
                            last_error(&log)
                        ));
                    }
                }
                Ok(None) => still.push((id, seed, log, child, started)),
                Err(e) => failed.push(format!(
                    "{} seed {seed}: cannot wait for it: {e}",
                    id.name()
                )),
            }
        }
        running = still;
    }
    if !failed.is_empty() {
        anyhow::bail!(
            "{} of the side-by-side runs failed: {}",
            failed.len(),
            failed.join("; ")
        );
    }
    Ok(())
}

fn spawn(
    args: &Args,
    config: Option<&Path>,
    id: ModelId,
    seed: u64,
    work: Work,
    log: &Path,
) -> anyhow::Result<Child> {
    let exe = std::env::current_exe().context("cannot find this program to start a child")?;
    let mut cmd = Command::new(exe);
    cmd.arg("--exp")
        .arg(match work {
            Work::Scores => "measure-model",
            Work::Snapshots => "measure-snapshots",
        })
        .args(["--model", id.name()])
        .args(["--seed", &seed.to_string()])
        .arg("--out")
        .arg(&args.out);
    if let Some(c) = config {
        cmd.arg("--config").arg(c);
    }
    if let Some(c) = &args.corpus {
        cmd.arg("--corpus").arg(c);
    }
    if let Some(b) = args.backend.and_then(|b| b.to_possible_value()) {
        cmd.args(["--backend", b.get_name()]);
    }
    if args.quick {
        cmd.arg("--quick");
    }
    for s in &args.similarity {
        cmd.arg("--similarity").arg(s);
    }
    let out =
        std::fs::File::create(log).with_context(|| format!("{}: cannot create", log.display()))?;
    let err = out.try_clone()?;
    cmd.stdout(Stdio::from(out)).stderr(Stdio::from(err));
    die_with_parent(&mut cmd);
    cmd.spawn()
        .with_context(|| format!("cannot start a child for {} seed {seed}", id.name()))
}

/// The child gets SIGKILL when the thread that started it ends (the parent's death included).
#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec the closure calls only async-signal-safe functions
    // (prctl, getppid, _exit) and allocates nothing.
    let parent = unsafe { libc::getpid() };
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died before the line above took effect: the signal will not come.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

/// The error a failed child printed last (the binary's `error: ...` line), for the parent's
/// message.
fn last_error(log: &Path) -> String {
    std::fs::read_to_string(log)
        .ok()
        .and_then(|text| {
            text.lines()
                .rev()
                .find(|l| l.starts_with("error: "))
                .map(|l| format!(": {}", l.trim()))
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_childs_message_carries_its_last_error_line() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("m-seed1.log");
        std::fs::write(
            &log,
            "training m seed 1\nwarning: no error here\nerror: first\nerror: /x/scores.csv: changed since it was kept\n",
        )
        .unwrap();
        assert_eq!(
            last_error(&log),
            ": error: /x/scores.csv: changed since it was kept"
        );
        std::fs::write(&log, "killed before it said why\n").unwrap();
        assert_eq!(last_error(&log), "");
        assert_eq!(last_error(&dir.path().join("none.log")), "");
    }
}

/// The model named by `--model` (a `model` column name).
pub fn model_arg(args: &Args) -> anyhow::Result<ModelId> {
    let name = args.model.as_deref().context("--model is required")?;
    ModelId::from_name(name).with_context(|| format!("--model: unknown model {name:?}"))
}
