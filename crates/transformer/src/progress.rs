//! A training run's progress on stderr.

use std::time::Instant;

/// How often a run whose stderr is not a terminal prints a progress line.
pub const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// Progress on stderr: indicatif's bar on a terminal; on a file or pipe (where the bar hides
/// itself) a plain line every [`PROGRESS_EVERY`] and at each held-out evaluation.
pub(crate) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    plain: bool,
    steps: usize,
    started: Instant,
    first_step: usize,
    last_line: Instant,
}

impl Progress {
    pub(crate) fn new(enabled: bool, steps: usize, start: usize) -> Progress {
        use std::io::IsTerminal;
        let terminal = std::io::stderr().is_terminal();
        let bar = (enabled && terminal).then(|| {
            let bar = indicatif::ProgressBar::new(steps as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} steps  {msg}  eta {eta}",
                )
                .unwrap(),
            );
            bar.set_position(start as u64);
            bar
        });
        Progress {
            bar,
            plain: enabled && !terminal,
            steps,
            started: Instant::now(),
            first_step: start,
            last_line: Instant::now(),
        }
    }

    pub(crate) fn step(&mut self, done: usize, loss: f32, heldout: Option<f64>, tps: f64, lr: f64) {
        if let Some(bar) = &self.bar {
            bar.set_position(done as u64);
            if let Some(h) = heldout {
                bar.set_message(format!(
                    "loss {loss:.3}  held-out {h:.3}  {tps:.0} tok/s  lr {lr:.2e}"
                ));
            }
        }
        if self.plain && (heldout.is_some() || self.last_line.elapsed() >= PROGRESS_EVERY) {
            let per_step =
                self.started.elapsed().as_secs_f64() / (done - self.first_step).max(1) as f64;
            let eta = per_step * (self.steps - done) as f64;
            let held = heldout.map_or(String::new(), |h| format!(" held-out {h:.4}"));
            eprintln!(
                "step {done}/{} loss {loss:.4}{held} {tps:.0} tok/s lr {lr:.2e} eta {}",
                self.steps,
                clock(eta)
            );
            self.last_line = Instant::now();
        }
    }

    pub(crate) fn abandon(&self) {
        if let Some(bar) = &self.bar {
            bar.abandon();
        }
    }

    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Seconds as `h:mm:ss`.
fn clock(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}
