//! What a study cost: one row per piece of work on a (model, seed) — training it (or resuming
//! its run) and measuring it — in `time.csv` beside the model's measurements, committed with
//! them. A study completed over several sittings, or in child processes side by side, is
//! costed from these files: the sum over a model's rows is its time, the sum over the study's
//! its total, and no clock outside the code is trusted to have seen all of it.
//!
//! A row is written when its work starts and rewritten every [`HEARTBEAT`] while it runs, so a
//! sitting that ends mid-run (the process killed) still leaves what it spent, to within one
//! heartbeat; that includes any training lost since the run's last checkpoint, which is real
//! cost of a study done in sittings. CPU time is the process's user + system time
//! (`getrusage`), all threads: one model per process under `--jobs`, one model at a time
//! without it, so the difference over a piece of work is that work's.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::kept;

/// How often a running piece of work rewrites its row.
pub const HEARTBEAT: Duration = Duration::from_secs(60);

/// One piece of work on one model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimeRow {
    /// `train` (train or resume a transformer's run; a kept run only loads), `snapshots`
    /// (measure its snapshots), `scores` (the final model measured in full, trained first if
    /// its run is missing), or `dynamics` (both of the first two in one piece: word2vec, the
    /// untrained model, and ledgers written before they were split).
    pub work: String,
    /// Unix seconds when it started: tells the rows of one model apart, in order.
    pub started: u64,
    pub wall_s: f64,
    pub cpu_s: f64,
    /// `false` while running, or when the process was stopped before the end.
    pub finished: bool,
    /// What it ran on (the same CPU model for every row makes the sum meaningful).
    pub cpu: String,
}

/// The ledger file of a model's measurements directory.
pub fn path(measured_dir: &Path) -> PathBuf {
    measured_dir.join("time.csv")
}

/// The rows of one ledger (none when it does not exist yet), checked as a kept file.
pub fn read(path: &Path) -> anyhow::Result<Vec<TimeRow>> {
    if kept::exists(path)? {
        kept::read_csv(path)
    } else {
        Ok(Vec::new())
    }
}

/// Replaces the row that started at `row.started` (or appends it), atomically.
fn put(path: &Path, row: &TimeRow) -> anyhow::Result<()> {
    let mut rows = read(path)?;
    rows.retain(|r| !(r.started == row.started && r.work == row.work));
    rows.push(row.clone());
    rows.sort_by_key(|r| r.started);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    kept::write_csv(path, &rows)
}

/// Times `f` as one row of the ledger at `path`.
pub fn timed<T>(path: &Path, work: &str, f: impl FnOnce() -> T) -> anyhow::Result<T> {
    let start = Instant::now();
    let cpu0 = word2vec::usage::now().cpu_seconds;
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let cpu = crate::device::cpu_name();
    let row = move |finished: bool| TimeRow {
        work: work.to_string(),
        started,
        wall_s: start.elapsed().as_secs_f64(),
        cpu_s: word2vec::usage::now().cpu_seconds - cpu0,
        finished,
        cpu: cpu.clone(),
    };
    put(path, &row(false))?;
    let (stop, stopped) = mpsc::channel::<()>();
    let row = &row;
    let out = std::thread::scope(|s| {
        let beat = s.spawn(move || {
            // A heartbeat that cannot write leaves the last row it wrote; the work goes on.
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(HEARTBEAT) {
                let _ = put(path, &row(false));
            }
        });
        let out = f();
        drop(stop);
        let _ = beat.join();
        out
    });
    put(path, &row(true))?;
    Ok(out)
}

/// One model's cost: the sums over its rows.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cost {
    pub wall_s: f64,
    pub cpu_s: f64,
    pub rows: usize,
    pub unfinished: usize,
}

pub fn cost(rows: &[TimeRow]) -> Cost {
    rows.iter().fold(Cost::default(), |c, r| Cost {
        wall_s: c.wall_s + r.wall_s,
        cpu_s: c.cpu_s + r.cpu_s,
        rows: c.rows + 1,
        unfinished: c.unfinished + usize::from(!r.finished),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_piece_of_work_leaves_one_finished_row_with_its_cpu_time() {
        let dir = tempfile::tempdir().unwrap();
        let p = path(dir.path());
        // Busy until the process has spent 0.2 s more CPU (however loaded the machine is).
        let spend = 0.2;
        let x = timed(&p, "scores", || {
            // Read inside the work: after the ledger's own start reading.
            let before = word2vec::usage::now().cpu_seconds;
            let mut x = 0u64;
            while word2vec::usage::now().cpu_seconds - before < spend {
                for _ in 0..10_000 {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                }
            }
            x
        })
        .unwrap();
        std::hint::black_box(x);
        let rows = read(&p).unwrap();
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert!(r.finished && r.work == "scores");
        // The row's CPU time covers the loop's (process-wide: other test threads may add to
        // it, never take away).
        assert!(r.cpu_s >= spend, "{r:?}");
        assert!(r.wall_s > 0.0 && !r.cpu.is_empty(), "{r:?}");
        // A second piece of work on the same model adds a row; the sums add up.
        let later = TimeRow {
            work: "dynamics".into(),
            started: r.started + 10,
            wall_s: 100.0,
            cpu_s: 90.0,
            finished: false,
            cpu: r.cpu.clone(),
        };
        put(&p, &later).unwrap();
        let c = cost(&read(&p).unwrap());
        assert_eq!((c.rows, c.unfinished), (2, 1));
        assert!((c.wall_s - (100.0 + r.wall_s)).abs() < 1e-9);
        assert!((c.cpu_s - (90.0 + r.cpu_s)).abs() < 1e-9);
    }

    #[test]
    fn a_rewritten_row_replaces_itself() {
        let dir = tempfile::tempdir().unwrap();
        let p = path(dir.path());
        let mut row = TimeRow {
            work: "dynamics".into(),
            started: 5,
            wall_s: 60.0,
            cpu_s: 58.0,
            finished: false,
            cpu: "x".into(),
        };
        put(&p, &row).unwrap();
        row.wall_s = 120.0;
        row.finished = true;
        put(&p, &row).unwrap();
        assert_eq!(read(&p).unwrap(), vec![row]);
    }

    #[test]
    fn a_damaged_ledger_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = path(dir.path());
        std::fs::write(
            &p,
            "work,started,wall_s,cpu_s,finished,cpu\nscores,1,abc,2,true,x\n",
        )
        .unwrap();
        let e = format!("{:#}", read(&p).unwrap_err());
        assert!(e.contains("time.csv"), "{e}");
        assert!(timed(&p, "scores", || ()).is_err());
    }
}
