//! `--exp seal`: every kept measurement directory under `--out` checked, and the ones written
//! before manifests existed ([`crate::kept`]) sealed once.
//!
//! A sealed directory is checked against its manifest ([`kept::verify`]) and, for each
//! finished measurement (its scores file kept), for a file kept without the one it belongs with
//! (scores and per-item outcomes of one settings hash, a collocation pair fingerprint and its
//! items file), which a manifest does not say. One without a
//! manifest has nothing to compare with, so it is checked by what can be checked before its
//! manifest is written: every file is one the study keeps and parses as its rows (scores,
//! per-item outcomes, loss curve, ledger, held-out split, snapshot measurements), item values
//! decode, no number is non-finite where no measure can produce one, scores and per-item files
//! come in pairs as above, and a file has the same number of rows as the same file
//! of the same model's other seeds (a scores file cut short at a line boundary parses; it does
//! not have its siblings' length). That last check needs two other seeds that agree, so a model
//! kept at one or two seeds goes without it. Any problem is listed with its file, and no
//! directory with one is sealed.
//!
//! With `--config`, and no problem found, it also records the collocation pairs' fingerprint
//! (`collocation-pairs-<h>.csv`, [`super::evidence::PairsFingerprint`]) of every model of that
//! config measured under `--out` whose cosines were kept before fingerprints existed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use transformer::training::CurvePoint;

use super::ledger::TimeRow;
use super::study::DynamicsRow;
use crate::cli::Args;
use crate::kept;
use crate::output::{self, TidyRow};
use analysis::context_gain::SequenceRow;

/// The kept measurement directories of a study at `out` and of the studies right under it.
pub fn kept_dirs(out: &Path) -> Vec<PathBuf> {
    let mut roots = vec![out.join("measurements")];
    if let Ok(entries) = std::fs::read_dir(out) {
        for e in entries.flatten() {
            let m = e.path().join("measurements");
            if m.is_dir() {
                roots.push(m);
            }
        }
    }
    let mut dirs: Vec<PathBuf> = roots
        .iter()
        .filter_map(|r| std::fs::read_dir(r).ok())
        .flat_map(|entries| entries.flatten().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// The file's name with its settings hash taken out (`scores-<h>.csv` -> `scores.csv`), and
/// the hash.
fn kind_of(name: &str) -> (String, Option<String>) {
    for (prefix, suffix) in [
        ("scores-", ".csv"),
        ("items-", ".csv.gz"),
        ("collocation-pairs-", ".csv"),
        ("dynamics-items-", ".csv.gz"),
        ("dynamics-", ".csv.gz"),
    ] {
        if let Some(h) = name
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(suffix))
        {
            return (
                format!("{}{suffix}", prefix.trim_end_matches('-')),
                Some(h.into()),
            );
        }
    }
    (name.to_string(), None)
}

/// The rows of one file of an unsealed directory, parsed as the study reads it.
fn parse(path: &Path) -> anyhow::Result<usize> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A measure may report "undefined" as NaN, but in a directory without a manifest a NaN
    // cannot be told from a damaged value, so none is sealed: such a model is measured again.
    let defined = |values: Vec<f64>| -> anyhow::Result<usize> {
        match values.iter().position(|v| !v.is_finite()) {
            Some(i) => anyhow::bail!(
                "{}: row {} has value {}; a directory without a manifest is sealed only with every value defined (delete it to measure again)",
                path.display(),
                i + 1,
                values[i]
            ),
            None => Ok(values.len()),
        }
    };
    Ok(match kind_of(&name).0.as_str() {
        "scores.csv" => defined(
            output::read_csv::<TidyRow>(path)?
                .iter()
                .map(|r| r.value)
                .collect(),
        )?,
        "items.csv.gz" => output::read_items(path)?.len(),
        "collocation-pairs.csv" => {
            output::read_csv::<super::evidence::PairsFingerprint>(path)?.len()
        }
        "dynamics.csv.gz" => defined(
            output::read_csv::<DynamicsRow>(path)?
                .iter()
                .map(|r| r.value)
                .collect(),
        )?,
        "dynamics-items.csv.gz" => output::read_csv::<super::study::SnapshotItemRow>(path)?.len(),
        "curve.csv" => output::read_csv::<CurvePoint>(path)?.len(),
        "time.csv" => output::read_csv::<TimeRow>(path)?.len(),
        "heldout-by-input.csv.gz" => output::read_csv::<SequenceRow>(path)?.len(),
        _ => anyhow::bail!("{}: not a file the study keeps", path.display()),
    })
}

/// The model a directory holds, without its seed and hash (`mlm-untied-head`).
fn label_of(dir: &Path) -> String {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match name.rsplit_once("-seed") {
        Some((label, _)) => label.to_string(),
        None => name,
    }
}

/// The files of `dir` (named by `names`) kept without the file they belong with: scores and
/// per-item outcomes of one settings hash each need the other, and a collocation pair
/// fingerprint needs the items file whose cosines it names (one left behind when its items file
/// was deleted would otherwise pass as a kept file of its own).
///
/// `finished_only`, for a sealed directory: only the measurements whose scores file is kept
/// are checked. The study keeps a measurement's fingerprint, then its items file, then its
/// scores file, in a directory already sealed by its loss curve, so one killed between them
/// leaves a fingerprint or an items file without scores: not damage, since without the scores
/// file the model counts as unmeasured and is measured again over them.
fn unpaired(dir: &Path, names: &[String], finished_only: bool) -> Vec<String> {
    let mut problems = Vec::new();
    for name in names {
        let (kind, hash) = kind_of(name);
        let Some(h) = hash else { continue };
        if finished_only && !names.contains(&format!("scores-{h}.csv")) {
            continue;
        }
        let partner = match kind.as_str() {
            "scores.csv" => format!("items-{h}.csv.gz"),
            "items.csv.gz" => format!("scores-{h}.csv"),
            "collocation-pairs.csv" => format!("items-{h}.csv.gz"),
            _ => continue,
        };
        if !names.contains(&partner) {
            problems.push(format!(
                "{}: kept without {partner}",
                dir.join(name).display()
            ));
        }
    }
    problems
}

/// [`unpaired`] for a sealed directory whose manifest has verified: its files that are there.
/// An entry whose first write was cut short before its rename (`writing: absent`) lists a file
/// that is not, and verifies; counted as kept, it would pair with scores that need it.
fn unpaired_sealed(dir: &Path, m: &kept::Manifest) -> Vec<String> {
    let names: Vec<String> = m
        .files
        .keys()
        .filter(|n| dir.join(n).is_file())
        .cloned()
        .collect();
    unpaired(dir, &names, true)
}

/// Checks an unsealed directory as the module docs say; returns its files' row counts.
fn check_unsealed(dir: &Path) -> Result<BTreeMap<String, usize>, Vec<String>> {
    let mut problems = Vec::new();
    let mut rows = BTreeMap::new();
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && n != kept::MANIFEST)
        .collect();
    names.sort();
    for name in &names {
        let path = dir.join(name);
        match parse(&path) {
            Ok(n) => {
                rows.insert(name.clone(), n);
            }
            Err(e) => problems.push(format!("{e:#}")),
        }
    }
    problems.extend(unpaired(dir, &names, false));
    if problems.is_empty() {
        Ok(rows)
    } else {
        Err(problems)
    }
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let dirs = kept_dirs(&args.out);
    let mut problems = Vec::new();
    let mut unsealed: Vec<(PathBuf, BTreeMap<String, usize>)> = Vec::new();
    let mut verified = 0;
    for dir in &dirs {
        if dir.join(kept::MANIFEST).is_file() {
            match kept::verify(dir) {
                Ok(m) => {
                    let unpaired = unpaired_sealed(dir, &m);
                    if unpaired.is_empty() {
                        verified += 1;
                    }
                    problems.extend(unpaired);
                }
                Err(e) => problems.push(format!("{e:#}")),
            }
            continue;
        }
        match check_unsealed(dir) {
            Ok(rows) if rows.is_empty() => {}
            Ok(rows) => unsealed.push((dir.clone(), rows)),
            Err(p) => problems.extend(p),
        }
    }
    // Row counts against the same file of the same model's other seeds (sealed ones
    // included): a count that is not the most common one is refused.
    let mut counts: BTreeMap<(String, String), BTreeMap<usize, usize>> = BTreeMap::new();
    let mut all_rows: Vec<(PathBuf, BTreeMap<String, usize>)> = unsealed.clone();
    for dir in &dirs {
        if let Ok(Some(m)) = kept::manifest(dir) {
            all_rows.push((
                dir.clone(),
                m.files.iter().map(|(k, v)| (k.clone(), v.rows)).collect(),
            ));
        }
    }
    for (dir, rows) in &all_rows {
        for (name, &n) in rows {
            if name == "time.csv" || name == "curve.csv" {
                // Their lengths differ between seeds by design (sittings, a stopped run).
                continue;
            }
            *counts
                .entry((label_of(dir), name.clone()))
                .or_default()
                .entry(n)
                .or_default() += 1;
        }
    }
    let mut to_seal = Vec::new();
    for (dir, rows) in &unsealed {
        let mut ok = true;
        for (name, &n) in rows {
            let Some(seen) = counts.get(&(label_of(dir), name.clone())) else {
                continue;
            };
            let (&usual, &times) = seen.iter().max_by_key(|(_, &c)| c).expect("counted");
            if n != usual && times > 1 {
                problems.push(format!(
                    "{}: {n} rows, where {times} other seeds of {} have {usual}",
                    dir.join(name).display(),
                    label_of(dir)
                ));
                ok = false;
            }
        }
        if ok {
            to_seal.push(dir.clone());
        }
    }
    let mut sealed = 0;
    for dir in &to_seal {
        match kept::seal(dir) {
            Ok(_) => {
                sealed += 1;
                println!("sealed {}", dir.display());
            }
            Err(e) => problems.push(format!("{e:#}")),
        }
    }
    println!(
        "{} kept directories under {}: {verified} verified against their manifests, {sealed} checked and sealed",
        dirs.len(),
        args.out.display()
    );
    if args.config.is_some() && problems.is_empty() {
        let (checked, recorded) = record_pairs(args)?;
        println!(
            "{checked} measured models of the config under {}: {recorded} collocation pair fingerprints recorded",
            args.out.display()
        );
    }
    if !problems.is_empty() {
        if args.config.is_some() {
            println!("no collocation pair fingerprints recorded: problems were found");
        }
        anyhow::bail!(
            "{} problems (nothing sealed where one was found; delete a damaged directory to measure that model again, or restore it from git):\n  {}",
            problems.len(),
            problems.join("\n  ")
        );
    }
    Ok(())
}

/// With `--config`: the collocation pairs' fingerprint ([`super::evidence::record_pairs`]) of
/// every model that config measures under `--out` whose cosines were kept before fingerprints
/// existed. Only the models of that config (their directories are named by a hash of its
/// corpus and recipe), so that another config's measurements under the same `--out` never get
/// this corpus's pairs; a config that measures none of them is an error. The names do not
/// record a `--corpus` given on the command line: measurements made with one are this
/// config's only by name, and get this config's corpus's pairs (the count check catches
/// another corpus's only where the matched pairs' number differs). Returns (models measured,
/// fingerprints recorded).
fn record_pairs(args: &Args) -> anyhow::Result<(usize, usize)> {
    let cfg = super::settings::load_config(args, "seal")?;
    let study = super::study::Study::load(args, cfg)?;
    let (mut checked, mut recorded) = (0, 0);
    for id in super::settings::ModelId::ALL {
        for seed in study.cfg.seeds_of(id) {
            if !study.is_measured(id, seed)? {
                continue;
            }
            checked += 1;
            let path = study.items_path(id, seed);
            let rows = kept::read_items(&path)?;
            if super::evidence::record_pairs(&path, &rows, study.collocation_pairs())? {
                recorded += 1;
                println!("recorded {}", super::evidence::pairs_path(&path).display());
            }
        }
    }
    if checked == 0 {
        anyhow::bail!(
            "--config {}: none of its models is measured under {} (a model measured with other settings than the config's is kept under another directory name): no collocation pairs recorded",
            args.config.as_deref().unwrap_or(Path::new("?")).display(),
            args.out.display()
        );
    }
    Ok((checked, recorded))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One score row of the reference model's embedding.
    fn score(value: f64) -> TidyRow {
        TidyRow {
            value,
            n: 4,
            ..TidyRow::template("", "transformer-mlm", "embedding")
        }
    }

    /// An empty kept directory named as the study names one.
    fn model_dir(tmp: &Path) -> PathBuf {
        let dir = tmp.join("mlm-seed1-0123456789ab");
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn an_unsealed_directory_with_a_stray_or_unpaired_file_is_not_sealed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = model_dir(tmp.path());
        let row = score(0.25);
        output::write_csv(&dir.join("scores-aaaaaaaaaaaa.csv"), &[row]).unwrap();
        std::fs::write(dir.join("notes.txt"), "by hand\n").unwrap();
        let problems = check_unsealed(&dir).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("notes.txt: not a file the study keeps"));
        assert!(
            problems[1].contains("scores-aaaaaaaaaaaa.csv: kept without items-aaaaaaaaaaaa.csv.gz")
        );
        std::fs::remove_file(dir.join("notes.txt")).unwrap();
        output::write_items(&dir.join("items-aaaaaaaaaaaa.csv.gz"), &[]).unwrap();
        let rows = check_unsealed(&dir).unwrap();
        assert_eq!(rows["scores-aaaaaaaaaaaa.csv"], 1);
        // An undefined value: a measure may write one, but unsealed it reads as damage.
        let nan = TidyRow {
            value: f64::NAN,
            n: 1,
            ..TidyRow::template("", "transformer-mlm", "embedding")
        };
        output::write_csv(&dir.join("scores-aaaaaaaaaaaa.csv"), &[nan]).unwrap();
        let problems = check_unsealed(&dir).unwrap_err();
        assert!(
            problems[0].contains("scores-aaaaaaaaaaaa.csv: row 1 has value NaN"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_pair_fingerprint_without_its_items_file_is_refused_where_its_scores_were_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = model_dir(tmp.path());
        let row = score(0.25);
        let fingerprint = super::super::evidence::PairsFingerprint {
            collocated: 2,
            matched: 2,
            sha256: "0".repeat(64),
        };
        output::write_csv(&dir.join("scores-aaaaaaaaaaaa.csv"), &[row]).unwrap();
        output::write_items(&dir.join("items-aaaaaaaaaaaa.csv.gz"), &[]).unwrap();
        output::write_csv(
            &dir.join("collocation-pairs-aaaaaaaaaaaa.csv"),
            std::slice::from_ref(&fingerprint),
        )
        .unwrap();
        let rows = check_unsealed(&dir).unwrap();
        assert_eq!(rows["collocation-pairs-aaaaaaaaaaaa.csv"], 1);
        // Another hash's fingerprint, its items file gone: refused unsealed...
        output::write_csv(
            &dir.join("collocation-pairs-bbbbbbbbbbbb.csv"),
            &[fingerprint],
        )
        .unwrap();
        let problems = check_unsealed(&dir).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].contains(
                "collocation-pairs-bbbbbbbbbbbb.csv: kept without items-bbbbbbbbbbbb.csv.gz"
            ),
            "{problems:?}"
        );
        // Sealed, the same files read as a measurement cut short (a fingerprint without
        // scores: the study measures that hash again), so they pass; so does an items file
        // without scores. Scores without their items file do not.
        let m = kept::seal(&dir).unwrap();
        assert!(
            unpaired_sealed(&dir, &m).is_empty(),
            "{:?}",
            unpaired_sealed(&dir, &m)
        );
        let row = score(0.5);
        kept::write_items(&dir.join("items-cccccccccccc.csv.gz"), &[]).unwrap();
        kept::write_csv(&dir.join("scores-dddddddddddd.csv"), &[row]).unwrap();
        let m = kept::verify(&dir).unwrap();
        let problems = unpaired_sealed(&dir, &m);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].contains("scores-dddddddddddd.csv: kept without items-dddddddddddd.csv.gz"),
            "{problems:?}"
        );
        // The fingerprint of a finished measurement whose items file went is named too.
        kept::write_csv(
            &dir.join("collocation-pairs-dddddddddddd.csv"),
            &[super::super::evidence::PairsFingerprint {
                collocated: 2,
                matched: 2,
                sha256: "1".repeat(64),
            }],
        )
        .unwrap();
        let m = kept::verify(&dir).unwrap();
        let problems = unpaired_sealed(&dir, &m);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].contains(
                "collocation-pairs-dddddddddddd.csv: kept without items-dddddddddddd.csv.gz"
            ),
            "{problems:?}"
        );
    }

    #[test]
    fn a_listed_file_whose_first_write_never_landed_is_not_taken_as_kept() {
        // Scores on disk, their items file listed as being written for the first time
        // (`writing: absent`) and not there: the manifest verifies, and the scores are refused.
        let tmp = tempfile::tempdir().unwrap();
        let dir = model_dir(tmp.path());
        let row = score(0.25);
        kept::write_items(&dir.join("items-eeeeeeeeeeee.csv.gz"), &[]).unwrap();
        kept::write_csv(&dir.join("scores-eeeeeeeeeeee.csv"), &[row]).unwrap();
        let path = dir.join(kept::MANIFEST);
        let mut m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        m["files"]["items-eeeeeeeeeeee.csv.gz"]["writing"] = "absent".into();
        std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
        std::fs::remove_file(dir.join("items-eeeeeeeeeeee.csv.gz")).unwrap();
        let m = kept::verify(&dir).unwrap();
        assert!(m.files.contains_key("items-eeeeeeeeeeee.csv.gz"));
        let problems = unpaired_sealed(&dir, &m);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].contains("scores-eeeeeeeeeeee.csv: kept without items-eeeeeeeeeeee.csv.gz"),
            "{problems:?}"
        );
    }

    #[test]
    fn file_kinds_and_labels_are_read_from_names() {
        assert_eq!(
            kind_of("scores-a797664ab038.csv"),
            ("scores.csv".into(), Some("a797664ab038".into()))
        );
        assert_eq!(
            kind_of("items-a797664ab038.csv.gz"),
            ("items.csv.gz".into(), Some("a797664ab038".into()))
        );
        assert_eq!(
            kind_of("dynamics-items-a797664ab038.csv.gz"),
            ("dynamics-items.csv.gz".into(), Some("a797664ab038".into()))
        );
        assert_eq!(
            kind_of("dynamics-a797664ab038.csv.gz"),
            ("dynamics.csv.gz".into(), Some("a797664ab038".into()))
        );
        assert_eq!(
            kind_of("collocation-pairs-a797664ab038.csv"),
            ("collocation-pairs.csv".into(), Some("a797664ab038".into()))
        );
        assert_eq!(kind_of("curve.csv"), ("curve.csv".into(), None));
        assert_eq!(
            label_of(Path::new("m/mlm-untied-head-seed12-0123456789ab")),
            "mlm-untied-head"
        );
    }
}
