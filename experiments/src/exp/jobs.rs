//! `--jobs N`: independent models of a study trained and measured side by side, one child
//! process each (`--exp measure-model` / `measure-snapshots`, hidden from `--help`).
//!
//! Processes rather than threads: burn keeps one random number generator per backend, shared
//! by every thread, so two trainings in one process would draw each other's initialisation
//! and dropout. A child is the same binary with the same config, corpus, backend and output
//! directory, asked for one (model, seed); it leaves the model's measurements where the
//! parent then reads them, so the parent's views run as if it had measured everything itself.
//! Each child's output goes to `<out>/logs/<model>-seed<s>.log`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::ValueEnum;

use super::study::ModelId;
use crate::Args;

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
            println!("  started {} seed {seed}", id.name());
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
                        failed.push(format!("{} seed {seed} (see {})", id.name(), log.display()));
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
    cmd.stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .spawn()
        .with_context(|| format!("cannot start a child for {} seed {seed}", id.name()))
}

/// The model named by `--model` (a `model` column name).
pub fn model_arg(args: &Args) -> anyhow::Result<ModelId> {
    let name = args.model.as_deref().context("--model is required")?;
    ModelId::from_name(name).with_context(|| format!("--model: unknown model {name:?}"))
}
