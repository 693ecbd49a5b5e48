//! Result files: CSV written atomically (complete or absent, never half-written).

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use serde::Serialize;

/// Writes `rows` as CSV with a header row, atomically.
pub fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> anyhow::Result<()> {
    let bytes = csv_bytes(path, rows)?;
    corpus::io::write_atomic(path, |w| w.write_all(&bytes))
        .with_context(|| format!("{}: cannot write", path.display()))
}

/// `rows` as CSV text with a header row (`path` names the file in errors).
pub fn csv_bytes<T: Serialize>(path: &Path, rows: &[T]) -> anyhow::Result<Vec<u8>> {
    let mut csv = csv::Writer::from_writer(Vec::new());
    for row in rows {
        csv.serialize(row)
            .with_context(|| format!("{}: cannot write", path.display()))?;
    }
    csv.into_inner()
        .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))
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

    /// One row per `(metric, value)`: copies of this template with `benchmark` and the sample
    /// size `n` set.
    pub fn measures<'a>(
        &'a self,
        benchmark: &'a str,
        n: usize,
        values: &'a [(&'a str, f64)],
    ) -> impl Iterator<Item = TidyRow> + 'a {
        values.iter().map(move |&(metric, value)| TidyRow {
            benchmark: benchmark.into(),
            metric: metric.into(),
            value,
            n,
            ..self.clone()
        })
    }
}

/// One representation's outcome on every item of one benchmark (questions or word pairs, in
/// file order): what the report resamples for intervals, paired tests, chance bands and the
/// dev/test choice of a best layer. `values` is [`encode_outcomes`]' or [`encode_cosines`]'
/// text, according to `kind`.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct ItemRow {
    pub model: String,
    pub representation: String,
    pub layer: Option<usize>,
    pub benchmark: String,
    /// `3CosAdd` (analogy outcomes) or `cosine` (similarity pairs).
    pub kind: String,
    pub seed: Option<u64>,
    pub values: String,
}

/// Whether an item row of `kind` holds cosines (a similarity pair's, `cosine`; a collocated
/// or frequency-matched word pair's, `collocated` and `matched` under benchmark `collocation`)
/// rather than analogy outcomes.
pub fn holds_cosines(kind: &str) -> bool {
    matches!(kind, "cosine" | "collocated" | "matched")
}

/// Analogy outcomes as one character per question: `1` right, `0` wrong, `.` skipped (OOV).
pub fn encode_outcomes(outcomes: &[Option<bool>]) -> String {
    outcomes
        .iter()
        .map(|o| match o {
            Some(true) => '1',
            Some(false) => '0',
            None => '.',
        })
        .collect()
}

pub fn decode_outcomes(text: &str) -> anyhow::Result<Vec<Option<bool>>> {
    text.chars()
        .map(|c| match c {
            '1' => Ok(Some(true)),
            '0' => Ok(Some(false)),
            '.' => Ok(None),
            other => anyhow::bail!("analogy outcome {other:?} is not 1, 0 or ."),
        })
        .collect()
}

/// Cosines of word pairs, space-separated with 9 decimals, `.` for an OOV pair. Six decimals,
/// used until the seventh sitting of 2026-11-26 (files written before read alike), tied
/// cosines that were distinct, so a Spearman recomputed from the file could differ from the
/// table's in the fifth decimal; at 9 decimals ties by rounding are rare.
pub fn encode_cosines(cosines: &[Option<f64>]) -> String {
    let parts: Vec<String> = cosines
        .iter()
        .map(|c| c.map_or(".".into(), |c| format!("{c:.9}")))
        .collect();
    parts.join(" ")
}

pub fn decode_cosines(text: &str) -> anyhow::Result<Vec<Option<f64>>> {
    text.split(' ')
        .map(|t| match t {
            "." => Ok(None),
            t => match t.parse::<f64>() {
                Ok(c) if c.is_finite() => Ok(Some(c)),
                _ => anyhow::bail!("cosine {t:?} is not a finite number"),
            },
        })
        .collect()
}

/// Writes item rows as gzip-compressed CSV, atomically (the outcomes compress 5-10x).
pub fn write_items(path: &Path, rows: &[ItemRow]) -> anyhow::Result<()> {
    write_csv_gz(path, rows)
}

/// [`write_csv`], gzip-compressed (for the larger committed measurement files).
pub fn write_csv_gz<T: Serialize>(path: &Path, rows: &[T]) -> anyhow::Result<()> {
    write_bytes_gz(path, &csv_bytes(path, rows)?)
}

/// Writes `bytes` gzip-compressed, atomically.
pub fn write_bytes_gz(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let stored = gzip(bytes).with_context(|| format!("{}: cannot write", path.display()))?;
    corpus::io::write_atomic(path, |w| w.write_all(&stored))
        .with_context(|| format!("{}: cannot write", path.display()))
}

/// `bytes` gzip-compressed.
pub fn gzip(bytes: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes)?;
    Ok(gz.finish()?)
}

/// Reads a CSV written by [`write_csv`] or [`write_csv_gz`] (gzip is recognised by its magic
/// bytes); errors name the file and the line.
pub fn read_csv<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<Vec<T>> {
    let text = corpus::read::read_text(path)?;
    parse_csv(path, &text)
}

/// The rows of CSV `text` read from `path` (named in errors, with the line).
pub fn parse_csv<T: serde::de::DeserializeOwned>(
    path: &Path,
    text: &str,
) -> anyhow::Result<Vec<T>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
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

/// Reads [`write_items`]' files; errors name the file and line.
pub fn read_items(path: &Path) -> anyhow::Result<Vec<ItemRow>> {
    check_items(path, read_csv::<ItemRow>(path)?)
}

/// Item rows read from `path`, each one's values checked to decode.
pub fn check_items(path: &Path, rows: Vec<ItemRow>) -> anyhow::Result<Vec<ItemRow>> {
    for row in &rows {
        let check = if holds_cosines(&row.kind) {
            decode_cosines(&row.values).map(|_| ())
        } else {
            decode_outcomes(&row.values).map(|_| ())
        };
        check.with_context(|| {
            format!(
                "{}: {} {} {}",
                path.display(),
                row.model,
                row.representation,
                row.benchmark
            )
        })?;
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_copy_the_template_once_per_metric() {
        let t = TidyRow {
            layer: Some(2),
            oov: 3,
            ..TidyRow::template("x", "m", "contextual")
        };
        let rows: Vec<TidyRow> = t.measures("b", 7, &[("a", 1.0), ("c", 2.0)]).collect();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[1].metric.as_str(), rows[1].value), ("c", 2.0));
        assert!(rows
            .iter()
            .all(|r| r.benchmark == "b" && r.n == 7 && r.oov == 3 && r.layer == Some(2)));
    }

    #[test]
    fn items_survive_a_round_trip_through_a_gzip_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("items.csv.gz");
        let rows = vec![
            ItemRow {
                model: "m".into(),
                representation: "aggregated".into(),
                layer: Some(2),
                benchmark: "questions-words".into(),
                kind: "3CosAdd".into(),
                seed: Some(1),
                values: encode_outcomes(&[Some(true), None, Some(false)]),
            },
            ItemRow {
                model: "m".into(),
                representation: "static".into(),
                layer: None,
                benchmark: "WS-353-ALL".into(),
                kind: "cosine".into(),
                seed: None,
                values: encode_cosines(&[Some(0.25), None, Some(-1.0)]),
            },
        ];
        write_items(&path, &rows).unwrap();
        let back = read_items(&path).unwrap();
        assert_eq!(back, rows);
        assert_eq!(back[0].values, "1.0");
        assert_eq!(
            decode_outcomes(&back[0].values).unwrap(),
            vec![Some(true), None, Some(false)]
        );
        assert_eq!(
            decode_cosines(&back[1].values).unwrap(),
            vec![Some(0.25), None, Some(-1.0)]
        );
    }

    #[test]
    fn cosines_a_millionth_apart_stay_apart() {
        // 0.5000001 and 0.5000004 both read 0.500000 at 6 decimals: a tie in Spearman's ranks.
        let text = encode_cosines(&[Some(0.5000001), Some(0.5000004), None]);
        assert_eq!(text, "0.500000100 0.500000400 .");
        let back = decode_cosines(&text).unwrap();
        assert!(back[0].unwrap() < back[1].unwrap());
        // Files written with 6 decimals read as before.
        assert_eq!(
            decode_cosines("0.250000 .").unwrap(),
            vec![Some(0.25), None]
        );
    }

    #[test]
    fn a_damaged_items_file_names_file_and_problem() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("items.csv");
        std::fs::write(
            &path,
            "model,representation,layer,benchmark,kind,seed,values\nm,static,,WS,cosine,1,0.5 nan\n",
        )
        .unwrap();
        let msg = format!("{:#}", read_items(&path).unwrap_err());
        assert!(
            msg.contains("items.csv") && msg.contains("not a finite number"),
            "{msg}"
        );
        std::fs::write(
            &path,
            "model,representation,layer,benchmark,kind,seed,values\nm,static,,q,3CosAdd,1,10x\n",
        )
        .unwrap();
        let msg = format!("{:#}", read_items(&path).unwrap_err());
        assert!(msg.contains("'x'"), "{msg}");
    }
}
