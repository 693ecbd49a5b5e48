//! Kept measurements that cannot be silently wrong.
//!
//! A study lives in its kept measurements: one directory per model and seed under
//! `<out>/measurements/<run name>/` (`scores-<h>.csv`, `items-<h>.csv.gz`, `curve.csv`,
//! `time.csv`, ...), committed, and read by every figure, report and answer instead of the
//! model. A file cut short, edited, or left behind by a crash would otherwise be read as if it
//! were whole. So every directory carries `manifest.json`, written last and atomically after
//! each file it lists:
//!
//! ```json
//! { "version": 1, "run": "<the directory's name>", "config_hash": "<the hash in it>",
//!   "files": { "scores-<h>.csv": { "rows": <CSV records>, "sha256": "<hex>" }, … } }
//! ```
//!
//! `run` is the directory's name (model, seed and config hash: two models of one config, such as
//! a trained model and its untrained control, share the hash), `config_hash` the model's config
//! hash in it ([`crate::runs`]);
//! the settings a file was measured under are hashed into its own name. Reading a kept file
//! ([`read_csv`], [`read_items`]) checks, before a byte of it is used: that the directory has a
//! manifest naming this directory's hash; that every file the manifest lists is there and no
//! other file is; that this file's SHA-256 and row count are the manifest's; and that no field
//! holds a non-finite number where no measure can produce one. A measure reports "undefined" as
//! NaN in the measurement column (`value`: a correlation over fewer than two pairs or of a
//! constant series, a z-score of an empty group); nothing is infinite, and no other column
//! (counts, losses of a curve, per-item cosines, timings) is ever NaN. Any failure is an error
//! naming the file and saying how to recover: delete the directory to measure the model again,
//! or restore it from git.
//!
//! Writing ([`write_csv`], [`write_csv_gz`], [`write_items`]) refuses non-finite values too, so
//! no such file is ever kept. A process can be killed at any instant (a study is completed over
//! sittings), so a write never leaves a state that reads as damage: the manifest first lists
//! the file's new hash beside what was there before (`writing`: its old entry, or `absent`),
//! then the file is renamed into place, then the manifest drops the old entry. Killed between
//! the steps, the directory holds either version, and each is accepted for what it is.
//! Directories written before manifests existed are checked by what can be checked and sealed
//! once by `--exp seal` ([`crate::exp::seal`], [`seal`]).
//!
//! One process writes into a directory at a time (the `--out` lock, [`crate::lock`]; `--jobs`
//! gives each model to one child); within a process, writes are serialised so that the
//! ledger's heartbeat thread and the measuring thread cannot leave an older listing last.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Context;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::output::{self, ItemRow};

/// The manifest's file name, in each kept directory.
pub const MANIFEST: &str = "manifest.json";

/// What the manifest format means; a manifest of another version is refused.
pub const VERSION: u32 = 1;

/// A kept directory's manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub version: u32,
    /// The directory's name (`<label>-seed<s>-<hash>`): a directory copied or renamed under
    /// another model's name is refused.
    pub run: String,
    /// The model's config hash, as in the directory's name.
    pub config_hash: String,
    /// Every file of the directory but the manifest, by name.
    pub files: BTreeMap<String, Entry>,
}

/// One kept file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// CSV records after the header.
    pub rows: usize,
    /// SHA-256 of the file's bytes as stored (compressed, for `.csv.gz`), in hex.
    pub sha256: String,
    /// Present only while the file is being replaced (or after a process was killed then):
    /// what the file was before, which is accepted as well.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writing: Option<Before>,
}

/// What a file being written was before.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Before {
    /// Not there: the file may be missing.
    Absent,
    /// Its earlier version (rows, SHA-256).
    Was { rows: usize, sha256: String },
}

/// A kept directory's name.
fn name_of(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The config hash a kept directory's name carries (after its last `-`).
pub fn config_hash_of(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .and_then(|n| n.rsplit_once('-').map(|(_, h)| h.to_string()))
        .unwrap_or_default()
}

/// How to recover a damaged directory, for every error message.
fn recovery(dir: &Path) -> String {
    format!(
        "delete {} to measure that model again, or restore it with `git checkout -- {}`",
        dir.display(),
        dir.display()
    )
}

/// The SHA-256 of `bytes` in lower-case hex, as manifests keep it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The file's text: gzip (recognised by its magic bytes) decompressed, whole or not at all.
fn text_of(path: &Path, bytes: &[u8]) -> anyhow::Result<String> {
    let mut text = String::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(bytes)
            .read_to_string(&mut text)
            .with_context(|| format!("{}: not a complete gzip file", path.display()))?;
    } else {
        text = String::from_utf8(bytes.to_vec())
            .with_context(|| format!("{}: not UTF-8 text", path.display()))?;
    }
    Ok(text)
}

/// The column in which a measure may report "undefined" as NaN (the module docs).
const MAY_BE_UNDEFINED: &str = "value";

/// The number of CSV records in `text`, after checking that no field is a non-finite number
/// where no measure can produce one.
fn count_finite_rows(path: &Path, text: &str) -> anyhow::Result<usize> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader
        .headers()
        .with_context(|| format!("{}: no CSV header", path.display()))?
        .clone();
    let mut rows = 0;
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            anyhow::anyhow!("{}:{line}: {e}", path.display())
        })?;
        for (i, field) in record.iter().enumerate() {
            if let Ok(v) = field.trim().parse::<f64>() {
                let column = header.get(i).unwrap_or("?");
                if v.is_infinite() || (v.is_nan() && column != MAY_BE_UNDEFINED) {
                    let line = record.position().map_or(0, |p| p.line());
                    anyhow::bail!(
                        "{}:{line}: column {column} is {field}, which no kept measure can be",
                        path.display()
                    );
                }
            }
        }
        rows += 1;
    }
    Ok(rows)
}

/// The regular files of a kept directory, by name, without the manifest, hidden files (such
/// as the temporary files of an atomic write) and anything else that is not a plain file.
fn listing(dir: &Path) -> anyhow::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in
        std::fs::read_dir(dir).with_context(|| format!("{}: cannot list", dir.display()))?
    {
        let entry = entry.with_context(|| format!("{}: cannot list", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == MANIFEST || name.starts_with('.') || !entry.path().is_file() {
            continue;
        }
        names.push(name);
    }
    names.sort();
    Ok(names)
}

/// Serialises the writes of manifests within the process.
static WRITING: Mutex<()> = Mutex::new(());

fn write_manifest(dir: &Path, manifest: &Manifest) -> anyhow::Result<()> {
    let path = dir.join(MANIFEST);
    let json = serde_json::to_string_pretty(manifest).expect("manifests serialise to JSON");
    corpus::io::write_atomic(&path, |w| w.write_all(format!("{json}\n").as_bytes()))
        .with_context(|| format!("{}: cannot write", path.display()))
}

/// Writes `dir`'s manifest over every file now in it (atomically, so a reader sees the old
/// manifest or the new one). Refuses a file with a non-finite number or that does not parse as
/// CSV, naming it: what cannot be read back is not kept.
pub fn seal(dir: &Path) -> anyhow::Result<Manifest> {
    let _guard = WRITING.lock().unwrap_or_else(|p| p.into_inner());
    let mut files = BTreeMap::new();
    for name in listing(dir)? {
        let path = dir.join(&name);
        let bytes =
            std::fs::read(&path).with_context(|| format!("{}: cannot read", path.display()))?;
        let rows = count_finite_rows(&path, &text_of(&path, &bytes)?)?;
        files.insert(
            name,
            Entry {
                rows,
                sha256: sha256_hex(&bytes),
                writing: None,
            },
        );
    }
    let manifest = Manifest {
        version: VERSION,
        run: name_of(dir),
        config_hash: config_hash_of(dir),
        files,
    };
    write_manifest(dir, &manifest)?;
    Ok(manifest)
}

/// `dir`'s manifest, checked against the directory's name and listing: every file it lists is
/// there, and no other. `None` for a directory that does not exist or holds no file yet.
pub fn manifest(dir: &Path) -> anyhow::Result<Option<Manifest>> {
    if !dir.is_dir() {
        return Ok(None);
    }
    let names = listing(dir)?;
    let path = dir.join(MANIFEST);
    if !path.is_file() {
        if names.is_empty() {
            return Ok(None);
        }
        anyhow::bail!(
            "{}: missing, so {} cannot be checked; {} (`--exp seal` is only for a directory written before manifests existed: it cannot tell an edit from a measurement)",
            path.display(),
            names.join(", "),
            recovery(dir)
        );
    }
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let m: Manifest = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a manifest; {}", path.display(), recovery(dir)))?;
    if m.version != VERSION {
        anyhow::bail!(
            "{}: manifest version {}, this program reads {VERSION}",
            path.display(),
            m.version
        );
    }
    let run = name_of(dir);
    if m.run != run {
        anyhow::bail!(
            "{}: written for {}, but this directory is {run} (copied or renamed from another model?); {}",
            path.display(),
            m.run,
            recovery(dir)
        );
    }
    let hash = config_hash_of(dir);
    if m.config_hash != hash {
        anyhow::bail!(
            "{}: written for config hash {}, but the directory's name says {hash} (copied or renamed from another model?); {}",
            path.display(),
            m.config_hash,
            recovery(dir)
        );
    }
    for (name, entry) in &m.files {
        if !names.contains(name) && entry.writing != Some(Before::Absent) {
            anyhow::bail!(
                "{}: listed in {} but missing; {}",
                dir.join(name).display(),
                path.display(),
                recovery(dir)
            );
        }
    }
    for name in &names {
        if !m.files.contains_key(name) {
            anyhow::bail!(
                "{}: not listed in {} (written after the directory was sealed, by hand or by a process that stopped before sealing); {}",
                dir.join(name).display(),
                path.display(),
                recovery(dir)
            );
        }
    }
    Ok(Some(m))
}

/// Whether `path` is a kept file: `false` when neither it nor its directory's manifest has it
/// yet, an error when the directory is damaged ([`manifest`]).
pub fn exists(path: &Path) -> anyhow::Result<bool> {
    let (dir, name) = split(path)?;
    Ok(manifest(&dir)?.is_some_and(|m| m.files.contains_key(&name)) && path.is_file())
}

fn split(path: &Path) -> anyhow::Result<(PathBuf, String)> {
    let dir = path
        .parent()
        .with_context(|| format!("{}: a kept file has a directory", path.display()))?;
    let name = path
        .file_name()
        .with_context(|| format!("{}: a kept file has a name", path.display()))?;
    Ok((dir.to_owned(), name.to_string_lossy().into_owned()))
}

/// The text of a kept file, after every check the module docs list.
pub fn verified_text(path: &Path) -> anyhow::Result<String> {
    let (dir, name) = split(path)?;
    let m = manifest(&dir)?.with_context(|| {
        format!(
            "{}: missing (no kept measurements in {})",
            path.display(),
            dir.display()
        )
    })?;
    let entry = m.files.get(&name).with_context(|| {
        format!(
            "{}: missing (not listed in {})",
            path.display(),
            dir.join(MANIFEST).display()
        )
    })?;
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let sha = sha256_hex(&bytes);
    // A write cut short by a kill leaves the old version or the new one, both listed.
    let expected_rows = match &entry.writing {
        _ if sha == entry.sha256 => entry.rows,
        Some(Before::Was { rows, sha256 }) if sha == *sha256 => *rows,
        _ => anyhow::bail!(
            "{}: changed since it was kept (SHA-256 {sha}, the manifest's {}; cut short, edited or replaced); {}",
            path.display(),
            entry.sha256,
            recovery(&dir)
        ),
    };
    let text = text_of(path, &bytes)?;
    let rows = count_finite_rows(path, &text).with_context(|| recovery(&dir))?;
    if rows != expected_rows {
        anyhow::bail!(
            "{}: {rows} rows, the manifest says {expected_rows}; {}",
            path.display(),
            recovery(&dir)
        );
    }
    Ok(text)
}

/// Every check of the module docs on every file of `dir` (what `--exp seal` does to a sealed
/// directory).
pub fn verify(dir: &Path) -> anyhow::Result<Manifest> {
    let m = manifest(dir)?.with_context(|| format!("{}: no kept files", dir.display()))?;
    for (name, entry) in &m.files {
        let path = dir.join(name);
        // A first write of this file was cut short before its rename: not kept yet.
        if entry.writing == Some(Before::Absent) && !path.is_file() {
            continue;
        }
        verified_text(&path)?;
    }
    Ok(m)
}

/// Reads a kept CSV (plain or gzip) after [`verified_text`]'s checks; errors name the file and
/// line.
pub fn read_csv<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<Vec<T>> {
    let text = verified_text(path)?;
    output::parse_csv(path, &text)
}

/// Reads a kept items file ([`output::read_items`]'s checks after [`verified_text`]'s).
pub fn read_items(path: &Path) -> anyhow::Result<Vec<ItemRow>> {
    let text = verified_text(path)?;
    output::check_items(path, output::parse_csv(path, &text)?)
}

/// Keeps `stored` (the file's bytes as written: compressed for `.csv.gz`) as `path`, in the
/// three steps the module docs give. Refuses a file with a non-finite number before anything
/// is written.
fn keep(path: &Path, stored: Vec<u8>) -> anyhow::Result<()> {
    let (dir, name) = split(path)?;
    let rows = count_finite_rows(path, &text_of(path, &stored)?).context("not kept")?;
    let _guard = WRITING.lock().unwrap_or_else(|p| p.into_inner());
    std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let mut m = manifest(&dir)?.unwrap_or_else(|| Manifest {
        version: VERSION,
        run: name_of(&dir),
        config_hash: config_hash_of(&dir),
        files: BTreeMap::new(),
    });
    // What is on disk now, checked: after an earlier write was cut short, either version.
    let before = if m.files.contains_key(&name) && path.is_file() {
        let text = verified_text(path)?;
        let bytes =
            std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
        Before::Was {
            rows: count_finite_rows(path, &text)?,
            sha256: sha256_hex(&bytes),
        }
    } else {
        Before::Absent
    };
    let entry = Entry {
        rows,
        sha256: sha256_hex(&stored),
        writing: Some(before),
    };
    m.files.insert(name.clone(), entry);
    write_manifest(&dir, &m)?;
    corpus::io::write_atomic(path, |w| w.write_all(&stored))
        .with_context(|| format!("{}: cannot write", path.display()))?;
    if let Some(e) = m.files.get_mut(&name) {
        e.writing = None;
    }
    write_manifest(&dir, &m)
}

/// Writes `rows` as the kept CSV `path` (atomically) and lists it in its directory's manifest.
pub fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> anyhow::Result<()> {
    keep(path, output::csv_bytes(path, rows)?)
}

/// [`write_csv`], gzip-compressed.
pub fn write_csv_gz<T: Serialize>(path: &Path, rows: &[T]) -> anyhow::Result<()> {
    keep(path, output::gzip(&output::csv_bytes(path, rows)?)?)
}

/// Writes a kept items file ([`output::write_items`]) and seals its directory.
pub fn write_items(path: &Path, rows: &[ItemRow]) -> anyhow::Result<()> {
    write_csv_gz(path, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Row {
        name: String,
        loss: f64,
    }

    fn rows(n: usize) -> Vec<Row> {
        (0..n)
            .map(|i| Row {
                name: format!("r{i}"),
                loss: i as f64 / 4.0,
            })
            .collect()
    }

    /// A tidy row's shape: a measure's `value` may be NaN (undefined), never infinite.
    #[derive(Debug, Serialize, Deserialize)]
    struct Measured {
        metric: String,
        value: f64,
        n: f64,
    }

    /// A kept directory as the study names them, with two files written through this module.
    fn kept_dir() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("measurements/mlm-seed1-0123456789ab");
        write_csv(&dir.join("scores-aaaaaaaaaaaa.csv"), &rows(10)).unwrap();
        write_csv_gz(&dir.join("items-aaaaaaaaaaaa.csv.gz"), &rows(3)).unwrap();
        (tmp, dir)
    }

    fn err_of<T: std::fmt::Debug>(r: anyhow::Result<T>) -> String {
        format!("{:#}", r.unwrap_err())
    }

    #[test]
    fn what_is_written_is_listed_with_rows_and_hash_and_reads_back() {
        let (_tmp, dir) = kept_dir();
        let m = manifest(&dir).unwrap().unwrap();
        assert_eq!(m.config_hash, "0123456789ab");
        assert_eq!(m.files.len(), 2);
        assert_eq!(m.files["scores-aaaaaaaaaaaa.csv"].rows, 10);
        assert_eq!(m.files["items-aaaaaaaaaaaa.csv.gz"].rows, 3);
        // The hash is of the bytes as stored: checked here against an independent digest.
        let bytes = std::fs::read(dir.join("scores-aaaaaaaaaaaa.csv")).unwrap();
        assert_eq!(
            m.files["scores-aaaaaaaaaaaa.csv"].sha256,
            format!("{:x}", Sha256::digest(&bytes))
        );
        assert_eq!(
            read_csv::<Row>(&dir.join("scores-aaaaaaaaaaaa.csv")).unwrap(),
            rows(10)
        );
        assert_eq!(
            read_csv::<Row>(&dir.join("items-aaaaaaaaaaaa.csv.gz")).unwrap(),
            rows(3)
        );
        assert!(exists(&dir.join("scores-aaaaaaaaaaaa.csv")).unwrap());
        assert!(!exists(&dir.join("curve.csv")).unwrap());
        assert!(!exists(&dir.parent().unwrap().join("other-seed1-ab/curve.csv")).unwrap());
        verify(&dir).unwrap();
    }

    #[test]
    fn a_truncated_file_is_refused_naming_it_and_the_way_back() {
        let (_tmp, dir) = kept_dir();
        let path = dir.join("scores-aaaaaaaaaaaa.csv");
        let text = std::fs::read_to_string(&path).unwrap();
        let first5: String = text.lines().take(5).map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, first5).unwrap();
        let msg = err_of(read_csv::<Row>(&path));
        assert!(
            msg.contains("scores-aaaaaaaaaaaa.csv: changed since it was kept")
                && msg.contains("delete")
                && msg.contains("git checkout"),
            "{msg}"
        );
        assert!(verify(&dir).is_err());
    }

    #[test]
    fn a_nan_is_refused_on_reading_and_never_written() {
        let (_tmp, dir) = kept_dir();
        let path = dir.join("scores-aaaaaaaaaaaa.csv");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("r2,0.5", "r2,NaN")).unwrap();
        assert!(text.contains("r2,0.5"));
        let msg = err_of(read_csv::<Row>(&path));
        assert!(msg.contains("changed since it was kept"), "{msg}");
        // Even with the manifest resealed over it (a hand edit, then `seal`), the value is
        // refused: resealing fails, naming the line.
        let msg = err_of(seal(&dir));
        assert!(
            msg.contains("scores-aaaaaaaaaaaa.csv:4: column loss is NaN"),
            "{msg}"
        );
        // And a writer cannot keep one.
        let bad = vec![Row {
            name: "x".into(),
            loss: f64::INFINITY,
        }];
        let msg = err_of(write_csv(&dir.join("curve.csv"), &bad));
        assert!(msg.contains("column loss is inf"), "{msg}");
        assert!(!dir.join("curve.csv").exists());
        assert!(!manifest(&dir)
            .unwrap()
            .unwrap()
            .files
            .contains_key("curve.csv"));
    }

    #[test]
    fn an_undefined_measure_is_kept_as_nan_but_an_infinite_one_is_not() {
        let (_tmp, dir) = kept_dir();
        let undefined = |value: f64, n: f64| Measured {
            metric: "spearman".into(),
            value,
            n,
        };
        let path = dir.join("dynamics-aaaaaaaaaaaa.csv.gz");
        write_csv_gz(&path, &[undefined(0.5, 10.0), undefined(f64::NAN, 1.0)]).unwrap();
        let back = read_csv::<Measured>(&path).unwrap();
        assert!(back[0].value == 0.5 && back[1].value.is_nan());
        let msg = err_of(write_csv_gz(&path, &[undefined(f64::NEG_INFINITY, 3.0)]));
        assert!(msg.contains("column value is -inf"), "{msg}");
        let msg = err_of(write_csv_gz(&path, &[undefined(0.1, f64::NAN)]));
        assert!(msg.contains("column n is NaN"), "{msg}");
        // The refused writes left the kept version.
        assert_eq!(read_csv::<Measured>(&path).unwrap().len(), 2);
    }

    #[test]
    fn a_manifest_that_does_not_parse_is_of_another_version_or_miscounts_is_refused() {
        let (_tmp, dir) = kept_dir();
        let path = dir.join("scores-aaaaaaaaaaaa.csv");
        let good = std::fs::read_to_string(dir.join(MANIFEST)).unwrap();
        std::fs::write(dir.join(MANIFEST), &good[..good.len() / 2]).unwrap();
        let msg = err_of(read_csv::<Row>(&path));
        assert!(msg.contains("manifest.json: not a manifest"), "{msg}");
        std::fs::write(
            dir.join(MANIFEST),
            good.replace("\"version\": 1", "\"version\": 9"),
        )
        .unwrap();
        let msg = err_of(read_csv::<Row>(&path));
        assert!(
            msg.contains("manifest version 9, this program reads 1"),
            "{msg}"
        );
        // The right hash with the wrong count: a manifest edited by hand.
        let mut m: Manifest = serde_json::from_str(&good).unwrap();
        m.files.get_mut("scores-aaaaaaaaaaaa.csv").unwrap().rows = 11;
        write_manifest(&dir, &m).unwrap();
        let msg = err_of(read_csv::<Row>(&path));
        assert!(msg.contains("10 rows, the manifest says 11"), "{msg}");
        // A NaN outside `value` whose hash was put into the manifest by hand: refused by line.
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("r2,0.5", "r2,NaN")).unwrap();
        let mut m: Manifest = serde_json::from_str(&good).unwrap();
        m.files.get_mut("scores-aaaaaaaaaaaa.csv").unwrap().sha256 =
            format!("{:x}", Sha256::digest(std::fs::read(&path).unwrap()));
        write_manifest(&dir, &m).unwrap();
        let msg = err_of(read_csv::<Row>(&path));
        assert!(
            msg.contains("scores-aaaaaaaaaaaa.csv:4: column loss is NaN"),
            "{msg}"
        );
    }

    #[test]
    fn a_missing_or_unlisted_file_or_manifest_is_refused() {
        let (_tmp, dir) = kept_dir();
        std::fs::remove_file(dir.join("items-aaaaaaaaaaaa.csv.gz")).unwrap();
        let msg = err_of(exists(&dir.join("scores-aaaaaaaaaaaa.csv")));
        assert!(
            msg.contains("items-aaaaaaaaaaaa.csv.gz: listed in") && msg.contains("but missing"),
            "{msg}"
        );
        let (_tmp, dir) = kept_dir();
        std::fs::write(dir.join("curve.csv"), "step,loss\n1,2.0\n").unwrap();
        let msg = err_of(read_csv::<Row>(&dir.join("scores-aaaaaaaaaaaa.csv")));
        assert!(msg.contains("curve.csv: not listed in"), "{msg}");
        // The temporary file of an interrupted atomic write is not a kept file.
        std::fs::remove_file(dir.join("curve.csv")).unwrap();
        std::fs::write(dir.join(".tmp-x.tmp"), "half").unwrap();
        verify(&dir).unwrap();
        std::fs::remove_file(dir.join(MANIFEST)).unwrap();
        let msg = err_of(read_csv::<Row>(&dir.join("scores-aaaaaaaaaaaa.csv")));
        assert!(
            msg.contains("manifest.json: missing")
                && msg.contains("git checkout")
                && msg.contains("only for a directory written before manifests"),
            "{msg}"
        );
    }

    #[test]
    fn a_directory_copied_under_another_models_name_is_refused() {
        let (tmp, dir) = kept_dir();
        let other = tmp.path().join("measurements/mlm-seed1-ba9876543210");
        std::fs::rename(&dir, &other).unwrap();
        let msg = err_of(read_csv::<Row>(&other.join("scores-aaaaaaaaaaaa.csv")));
        assert!(
            msg.contains("written for mlm-seed1-0123456789ab")
                && msg.contains("this directory is mlm-seed1-ba9876543210"),
            "{msg}"
        );
        // Another model of the same config (the untrained control shares its trained
        // model's hash): the name tells them apart.
        let sibling = tmp.path().join("measurements/untrained-seed1-ba9876543210");
        std::fs::rename(&other, &sibling).unwrap();
        let msg = err_of(read_csv::<Row>(&sibling.join("scores-aaaaaaaaaaaa.csv")));
        assert!(
            msg.contains("this directory is untrained-seed1-ba9876543210"),
            "{msg}"
        );
        // With only the hash edited to match, the hash check still stands behind the name.
        let mut m: Manifest =
            serde_json::from_str(&std::fs::read_to_string(sibling.join(MANIFEST)).unwrap())
                .unwrap();
        m.run = "untrained-seed1-ba9876543210".into();
        write_manifest(&sibling, &m).unwrap();
        let msg = err_of(read_csv::<Row>(&sibling.join("scores-aaaaaaaaaaaa.csv")));
        assert!(
            msg.contains("written for config hash 0123456789ab"),
            "{msg}"
        );
    }

    #[test]
    fn a_write_killed_between_its_steps_leaves_either_version_readable() {
        let (_tmp, dir) = kept_dir();
        let path = dir.join("scores-aaaaaaaaaaaa.csv");
        let old = std::fs::read(&path).unwrap();
        let m0 = manifest(&dir).unwrap().unwrap();
        write_csv(&path, &rows(4)).unwrap();
        let m1 = manifest(&dir).unwrap().unwrap();
        assert_eq!(m1.files["scores-aaaaaaaaaaaa.csv"].writing, None);
        // Killed after the first manifest write, before the rename: the old bytes, listed as
        // what was there before.
        let mut mid = m1.clone();
        mid.files
            .get_mut("scores-aaaaaaaaaaaa.csv")
            .unwrap()
            .writing = Some(Before::Was {
            rows: 10,
            sha256: m0.files["scores-aaaaaaaaaaaa.csv"].sha256.clone(),
        });
        write_manifest(&dir, &mid).unwrap();
        std::fs::write(&path, &old).unwrap();
        assert_eq!(read_csv::<Row>(&path).unwrap(), rows(10));
        // Killed after the rename, before the last manifest write: the new bytes.
        write_csv(&path, &rows(4)).unwrap();
        write_manifest(&dir, &mid).unwrap();
        assert_eq!(read_csv::<Row>(&path).unwrap(), rows(4));
        // Anything else is still damage.
        let new = std::fs::read(&path).unwrap();
        truncate(&path);
        assert!(read_csv::<Row>(&path).is_err());
        std::fs::write(&path, new).unwrap();
        // A new file killed before its rename: not there, and not kept.
        let curve = dir.join("curve.csv");
        let mut m = manifest(&dir).unwrap().unwrap();
        m.files.insert(
            "curve.csv".into(),
            Entry {
                rows: 1,
                sha256: "0".repeat(64),
                writing: Some(Before::Absent),
            },
        );
        write_manifest(&dir, &m).unwrap();
        assert!(!exists(&curve).unwrap());
        verify(&dir).unwrap();
        write_csv(&curve, &rows(1)).unwrap();
        assert!(exists(&curve).unwrap());
    }

    fn truncate(path: &Path) {
        let bytes = std::fs::read(path).unwrap();
        std::fs::write(path, &bytes[..bytes.len() - 3]).unwrap();
    }

    #[test]
    fn a_gzip_file_cut_in_half_is_refused() {
        let (_tmp, dir) = kept_dir();
        let path = dir.join("items-aaaaaaaaaaaa.csv.gz");
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let msg = err_of(read_csv::<Row>(&path));
        assert!(msg.contains("items-aaaaaaaaaaaa.csv.gz: changed"), "{msg}");
        let msg = err_of(seal(&dir));
        assert!(msg.contains("not a complete gzip file"), "{msg}");
    }
}
