//! Result files: CSV written atomically (complete or absent, never half-written).

use std::path::Path;

use anyhow::Context;
use serde::Serialize;

/// Writes `rows` as CSV with a header row, atomically.
pub fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> anyhow::Result<()> {
    corpus::io::write_atomic(path, |w| {
        let mut csv = csv::Writer::from_writer(w);
        for row in rows {
            csv.serialize(row).map_err(std::io::Error::other)?;
        }
        csv.flush()
    })
    .with_context(|| format!("{}: cannot write", path.display()))
}

/// Reads a CSV written by [`write_csv`]; errors name the file and the line.
pub fn read_csv<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<Vec<T>> {
    let mut reader =
        csv::Reader::from_path(path).with_context(|| format!("{}: cannot read", path.display()))?;
    reader
        .deserialize()
        .map(|r| {
            r.map_err(|e| {
                let line = e.position().map_or(0, |p| p.line());
                anyhow::anyhow!("{}:{line}: {e}", path.display())
            })
        })
        .collect()
}

/// One measurement, in the tidy layout every experiment writes: one row per
/// (model, representation, layer, benchmark, metric), with the sample size and the OOV count.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct TidyRow {
    pub experiment: String,
    pub model: String,
    pub representation: String,
    pub layer: Option<usize>,
    pub benchmark: String,
    pub metric: String,
    pub value: f64,
    pub n: usize,
    pub oov: usize,
    pub seed: Option<u64>,
    pub backend: Option<String>,
}

impl TidyRow {
    /// A row with its labels set and its measurement empty, for an experiment to fill in.
    pub fn template(experiment: &str, model: &str, representation: &str) -> TidyRow {
        TidyRow {
            experiment: experiment.into(),
            model: model.into(),
            representation: representation.into(),
            layer: None,
            benchmark: String::new(),
            metric: String::new(),
            value: f64::NAN,
            n: 0,
            oov: 0,
            seed: None,
            backend: None,
        }
    }
}
