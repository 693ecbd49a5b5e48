//! Kept measurements that cannot be silently wrong, and one writer per `--out`, tried as a
//! hostile user would: damaged kept files refused by name with nothing under `--out`
//! changed, two experiments on one `--out`, a `--jobs` parent killed outright, and a toy run
//! that must not write into the committed results.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_experiments"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The repository root, read at run time (a target directory shared between clones may run a
/// test binary compiled in another clone).
fn repo_root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
        .join("..")
}

/// Every file under `dir` but the run cache, the logs and the lock, with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_owned();
            let first = rel.components().next().unwrap().as_os_str().to_owned();
            if first == "runs" || first == "logs" || rel.ends_with(".lock") {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn copy_dir(from: &Path, to: &Path) {
    let ok = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap()
        .success();
    assert!(ok, "cp -a {} {}", from.display(), to.display());
}

/// The only file under `dir` matching `pattern` (a path with one `*` in its last part).
fn one(dir: &Path, sub: &str, prefix: &str, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir.join(sub))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with(prefix) && n.ends_with(suffix)
        })
        .collect();
    assert_eq!(found.len(), 1, "{sub}/{prefix}*{suffix}: {found:?}");
    found.into_iter().next().unwrap()
}

fn measured(out: &Path, prefix: &str) -> PathBuf {
    one(out, "measurements", prefix, "")
}

/// The measurement directory a comparison of the study under `out` reads for `model` at `seed`
/// (its `measurements.csv`): a round's models of the same name sit beside the study's.
fn read_by(out: &Path, comparison: &str, model: &str, seed: u64) -> PathBuf {
    let list = std::fs::read_to_string(out.join(comparison).join("measurements.csv")).unwrap();
    let items = list
        .lines()
        .map(|l| l.split(',').collect::<Vec<&str>>())
        .find(|f| f[0] == model && f[1] == seed.to_string())
        .unwrap_or_else(|| panic!("{comparison} lists no {model} seed {seed}"))[2]
        .to_string();
    out.join(items).parent().unwrap().to_path_buf()
}

fn truncate_lines(path: &Path, keep: usize) {
    let text = std::fs::read_to_string(path).unwrap();
    let head: String = text.lines().take(keep).map(|l| format!("{l}\n")).collect();
    std::fs::write(path, head).unwrap();
}

/// A value of a scores file replaced by NaN, its length otherwise unchanged.
fn poison_first_value(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut fields: Vec<String> = lines[2].split(',').map(String::from).collect();
    fields[6] = "NaN".into(); // the `value` column
    lines[2] = fields.join(",");
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// Runs `args` on a copy of `base` damaged by `damage`; the run must fail naming `needle`,
/// and every file under the copy but the damaged ones must be as it was.
fn refused(base: &Path, args: &[&str], damage: impl Fn(&Path), needle: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("out");
    copy_dir(base, &copy);
    damage(&copy);
    let before = files(&copy);
    let o = run(&[args, &["--out", copy.to_str().unwrap()]].concat());
    assert!(!o.status.success(), "a damaged copy ran: {needle}");
    let err = stderr(&o);
    assert!(err.contains(needle), "stderr lacks {needle:?}: {err}");
    assert_eq!(
        files(&copy).keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in files(&copy) {
        assert!(before[&path] == bytes, "{} changed", path.display());
    }
}

/// Spawns a run with its stdout piped (its stderr to `err`: a pipe nobody reads while the run
/// goes on could fill and stall it), and returns it with the first line it printed.
fn start(args: &[&str], err: &Path) -> (Child, BufReader<std::process::ChildStdout>, String) {
    let mut child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(err).unwrap())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    (child, out, first)
}

const TOY: &[&str] = &["--exp", "analogy", "--quick", "--seed", "1", "--jobs", "1"];

/// Two experiments on one `--out`: the second refuses at once naming the first, which ends as
/// one alone does; then each damaged kept file is refused by name, and nothing changes.
#[test]
fn one_writer_per_out_and_damaged_kept_files_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("study");
    let out_s = out.to_str().unwrap();
    let args = [TOY, &["--out", out_s]].concat();

    let err_log = tmp.path().join("first.err");
    let (mut first, mut first_out, line) = start(&args, &err_log);
    assert!(!line.is_empty(), "the first run printed nothing");
    let asked = Instant::now();
    let second = run(&args);
    assert!(
        asked.elapsed() < Duration::from_secs(30),
        "the second run did not refuse at once"
    );
    assert!(!second.status.success());
    let err = stderr(&second);
    assert!(
        err.contains(&format!(
            "--out {out_s} is in use by process {}",
            first.id()
        )),
        "{err}"
    );
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut first_out, &mut rest).unwrap();
    assert!(
        first.wait().unwrap().success(),
        "{line}{rest}{}",
        std::fs::read_to_string(&err_log).unwrap_or_default()
    );
    let written = files(&out);
    assert!(written.contains_key(Path::new("analogy/analogy.csv")));

    // Alone again on a copy: nothing to train, the same CSVs and figures byte for byte.
    let again = tmp.path().join("again");
    copy_dir(&out, &again);
    let o = run(&[TOY, &["--out", again.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("every model's measurements are kept"));
    assert_eq!(files(&again), written);

    // Every kept directory has its manifest.
    let mlm = measured(&out, "mlm-seed1-");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(mlm.join("manifest.json")).unwrap()).unwrap();
    let listed = manifest["files"].as_object().unwrap();
    assert!(listed.contains_key("curve.csv") && listed.contains_key("time.csv"));

    let rel = |p: &Path| p.strip_prefix(&out).unwrap().to_owned();
    let scores = rel(&one(
        &out,
        mlm.strip_prefix(&out).unwrap().to_str().unwrap(),
        "scores-",
        ".csv",
    ));
    let items = rel(&one(
        &out,
        mlm.strip_prefix(&out).unwrap().to_str().unwrap(),
        "items-",
        ".csv.gz",
    ));
    let scores_name = scores.file_name().unwrap().to_string_lossy().into_owned();
    let items_name = items.file_name().unwrap().to_string_lossy().into_owned();

    // The pair list the collocation cosines were kept for is kept and listed beside them; a
    // copy without it (as if kept before fingerprints: the file and its manifest entry gone)
    // is refused where the study reuses the kept scores, naming the items file and the way to
    // record one.
    let pairs_name = items_name
        .replace("items-", "collocation-pairs-")
        .replace(".csv.gz", ".csv");
    assert!(listed.contains_key(pairs_name.as_str()), "{listed:?}");
    let dir = mlm.strip_prefix(&out).unwrap().to_owned();
    // A kept file gone with its manifest entry, as if it had never been kept.
    let unlisted = |c: &Path, name: &str| {
        std::fs::remove_file(c.join(&dir).join(name)).unwrap();
        let path = c.join(&dir).join("manifest.json");
        let mut m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        m["files"].as_object_mut().unwrap().remove(name);
        std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    };
    refused(
        &out,
        TOY,
        |c| unlisted(c, &pairs_name),
        &format!("{items_name}: collocation cosines without"),
    );
    // A measurement cut short before its scores file (the study keeps the fingerprint, the
    // items file, then the scores): the scores file and its entry gone. Not damage: `seal`
    // passes it, and the study measures that model again to the same bytes.
    {
        let tmp = tempfile::tempdir().unwrap();
        let copy = tmp.path().join("out");
        copy_dir(&out, &copy);
        unlisted(&copy, &scores_name);
        let o = run(&["--exp", "seal", "--out", copy.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = run(&[TOY, &["--out", copy.to_str().unwrap()]].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            std::fs::read(copy.join(&dir).join(&scores_name)).unwrap(),
            std::fs::read(out.join(&dir).join(&scores_name)).unwrap()
        );
    }
    // Another list's fingerprint, sealed in (the manifest deleted, as if kept before manifests,
    // and `seal` run): the manifest verifies, and the study refuses the cosines as other pairs'.
    refused(
        &out,
        TOY,
        |c| {
            let path = c.join(&dir).join(&pairs_name);
            let text = std::fs::read_to_string(&path).unwrap();
            let (header, row) = text.split_once('\n').unwrap();
            let fields: Vec<&str> = row.trim_end().split(',').collect();
            assert_eq!(fields.len(), 3, "{text}");
            let other = format!("{header}\n{},{},{}\n", fields[0], fields[1], "0".repeat(64));
            std::fs::write(&path, other).unwrap();
            std::fs::remove_file(c.join(&dir).join("manifest.json")).unwrap();
            let o = run(&["--exp", "seal", "--out", c.to_str().unwrap()]);
            assert!(o.status.success(), "{}", stderr(&o));
        },
        &format!("{pairs_name}: the collocation cosines were kept for other pairs"),
    );
    // `seal --config` records pairs only for that config's models: none of paper.toml's is
    // measured in a toy study.
    let config = repo_root().join("experiments/configs/paper.toml");
    let o = run(&[
        "--exp",
        "seal",
        "--config",
        config.to_str().unwrap(),
        "--out",
        out_s,
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("none of its models is measured under"),
        "{}",
        stderr(&o)
    );

    // The fingerprint kept before fingerprints existed (the file and its manifest entry gone):
    // `seal --config` with the toy's own config records it again, byte for byte the one the
    // study wrote, the directory verifies, and the study reuses the kept scores.
    {
        let tmp = tempfile::tempdir().unwrap();
        let copy = tmp.path().join("out");
        copy_dir(&out, &copy);
        unlisted(&copy, &pairs_name);
        let toy_config = repo_root().join("experiments/configs/analogy.toml");
        let o = run(&[
            "--exp",
            "seal",
            "--quick",
            "--config",
            toy_config.to_str().unwrap(),
            "--out",
            copy.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let said = String::from_utf8_lossy(&o.stdout);
        assert!(
            said.contains(&format!(
                "recorded {}",
                copy.join(&dir).join(&pairs_name).display()
            )),
            "{said}"
        );
        assert!(
            said.contains("collocation pair fingerprints recorded"),
            "{said}"
        );
        assert_eq!(
            std::fs::read(copy.join(&dir).join(&pairs_name)).unwrap(),
            std::fs::read(out.join(&dir).join(&pairs_name)).unwrap()
        );
        let o = run(&[TOY, &["--out", copy.to_str().unwrap()]].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains("every model's measurements are kept"));
    }
    // The items file of a finished measurement gone with its manifest entry: the manifest
    // verifies, so `seal` names what the scores and the fingerprint left behind miss.
    {
        let tmp = tempfile::tempdir().unwrap();
        let copy = tmp.path().join("out");
        copy_dir(&out, &copy);
        unlisted(&copy, &items_name);
        let o = run(&["--exp", "seal", "--out", copy.to_str().unwrap()]);
        assert!(
            !o.status.success(),
            "scores and a fingerprint without their items file were verified"
        );
        for orphan in [&pairs_name, &scores_name] {
            assert!(
                stderr(&o).contains(&format!("{orphan}: kept without {items_name}")),
                "{}",
                stderr(&o)
            );
        }
    }

    // A scores file cut to its first 5 lines.
    refused(
        &out,
        TOY,
        |c| truncate_lines(&c.join(&scores), 5),
        &format!("{scores_name}: changed since it was kept"),
    );
    // A NaN written into a scores file.
    refused(
        &out,
        TOY,
        |c| poison_first_value(&c.join(&scores)),
        &format!("{scores_name}: changed since it was kept"),
    );
    // A NaN in a loss curve with the manifest deleted, as if written before manifests: `seal`
    // refuses it by its line, and the directory stays refused.
    refused(
        &out,
        TOY,
        |c| {
            let curve = c.join(&scores).with_file_name("curve.csv");
            let text = std::fs::read_to_string(&curve).unwrap();
            let mut lines: Vec<String> = text.lines().map(String::from).collect();
            let mut fields: Vec<String> = lines[1].split(',').map(String::from).collect();
            fields[2] = "NaN".into(); // the `loss` column
            lines[1] = fields.join(",");
            std::fs::write(&curve, lines.join("\n") + "\n").unwrap();
            std::fs::remove_file(curve.with_file_name("manifest.json")).unwrap();
            let o = run(&["--exp", "seal", "--out", c.to_str().unwrap()]);
            assert!(!o.status.success(), "a NaN was sealed");
            assert!(
                stderr(&o).contains("curve.csv:2: column loss is NaN"),
                "{}",
                stderr(&o)
            );
        },
        "manifest.json: missing",
    );
    // A per-item file cut in half.
    refused(
        &out,
        TOY,
        |c| {
            let p = c.join(&items);
            let bytes = std::fs::read(&p).unwrap();
            std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
        },
        &format!("{items_name}: changed since it was kept"),
    );
    // A kept file deleted: not measured again in silence.
    refused(
        &out,
        TOY,
        |c| std::fs::remove_file(c.join(&items)).unwrap(),
        &format!("{items_name}: listed in"),
    );
    // A file no manifest lists.
    refused(
        &out,
        TOY,
        |c| std::fs::write(c.join(&scores).with_file_name("notes.csv"), "a\n1\n").unwrap(),
        "notes.csv: not listed in",
    );
}

/// The committed study, damaged as the issue found it: refused by name, nothing changed.
#[test]
fn the_committed_measurements_verify_and_damage_to_them_is_refused() {
    let root = repo_root();
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("results");
    std::fs::create_dir_all(&copy).unwrap();
    for part in ["measurements", "analogy"] {
        copy_dir(&root.join("results").join(part), &copy.join(part));
    }
    // Every committed directory verifies against its committed manifest.
    let committed = std::fs::read_dir(copy.join("measurements"))
        .unwrap()
        .count();
    assert!(committed > 0);
    let o = run(&["--exp", "seal", "--out", copy.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = String::from_utf8_lossy(&o.stdout);
    let expected = format!(
        "{committed} kept directories under {}: {committed} verified against their manifests, 0 checked and sealed",
        copy.display()
    );
    assert!(said.contains(&expected), "{said}");

    let analogy = ["--exp", "analogy", "--jobs", "1"];
    let mlm = read_by(&copy, "analogy", "transformer-mlm", 1);
    let sub = mlm
        .strip_prefix(&copy)
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let scores = one(&copy, &sub, "scores-", ".csv");
    let rel = scores.strip_prefix(&copy).unwrap().to_owned();
    let name = rel.file_name().unwrap().to_string_lossy().into_owned();
    refused(
        &copy,
        &analogy,
        |c| truncate_lines(&c.join(&rel), 5),
        &format!("{name}: changed since it was kept"),
    );
    refused(
        &copy,
        &analogy,
        |c| poison_first_value(&c.join(&rel)),
        &format!("{name}: changed since it was kept"),
    );
    let items = one(&copy, &sub, "items-", ".csv.gz");
    let items_rel = items.strip_prefix(&copy).unwrap().to_owned();
    let items_name = items_rel
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    refused(
        &copy,
        &analogy,
        |c| {
            let p = c.join(&items_rel);
            let bytes = std::fs::read(&p).unwrap();
            std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
        },
        &format!("{items_name}: changed since it was kept"),
    );

    // Sealing a directory written before manifests: the same cut is caught by its siblings'
    // length, and the intact ones are sealed.
    let m = copy.join(&sub).join("manifest.json");
    std::fs::remove_file(&m).unwrap();
    let o = run(&["--exp", "seal", "--out", copy.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(m.is_file());
    std::fs::remove_file(&m).unwrap();
    truncate_lines(&copy.join(&rel), 5);
    let o = run(&["--exp", "seal", "--out", copy.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains(&format!("{name}: 4 rows, where 2 other seeds of mlm have")),
        "{}",
        stderr(&o)
    );
    assert!(!m.exists(), "a damaged directory was sealed");
}

/// `--quick` without `--out` writes to results-quick/, never into results/.
#[test]
fn a_toy_run_without_out_does_not_write_into_the_results() {
    let tmp = tempfile::tempdir().unwrap();
    let o = bin()
        .args(["--exp", "word2vec", "--quick"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!tmp.path().join("results").exists());
    assert!(tmp.path().join("results-quick/word2vec/eval.csv").is_file());
}

fn signal(pid: u32, signal: i32) {
    // SAFETY: kill(2) on a pid this test read from the run's own output.
    let sent = unsafe { libc::kill(pid as libc::pid_t, signal) };
    assert_eq!(sent, 0, "kill({pid}, {signal}) failed");
}

fn alive(pid: u32) -> bool {
    // A zombie has exited; only its parent's wait is missing.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// A `--jobs` parent killed outright takes its children with it, and a rerun resumes cleanly
/// to the results of a run alone.
#[cfg(target_os = "linux")]
#[test]
fn children_die_with_a_killed_parent_and_a_rerun_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("killed");
    let out_s = out.to_str().unwrap();
    let args = [
        "--exp", "frozen", "--quick", "--seed", "1", "--jobs", "2", "--out", out_s,
    ];
    let err_log = tmp.path().join("parent.err");
    let (mut parent, mut lines, _) = start(&args, &err_log);
    let mut children = Vec::new();
    let mut line = String::new();
    while children.len() < 2 {
        line.clear();
        assert!(
            lines.read_line(&mut line).unwrap() > 0,
            "no children started: {}",
            std::fs::read_to_string(&err_log).unwrap_or_default()
        );
        if let Some(pid) = line
            .trim()
            .strip_suffix(')')
            .and_then(|l| l.rsplit_once("(process "))
            .and_then(|(_, pid)| pid.parse::<u32>().ok())
        {
            children.push(pid);
        }
    }
    // Let them get into their work, then stop them there: a stopped child cannot finish on
    // its own before the check below, so only its parent's death can end it (SIGKILL ends a
    // stopped process too).
    std::thread::sleep(Duration::from_millis(1000));
    for c in &children {
        signal(*c, libc::SIGSTOP);
        assert!(alive(*c), "child {c} ended before its parent was killed");
    }
    parent.kill().unwrap(); // SIGKILL
    parent.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while children.iter().any(|&c| alive(c)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let orphans: Vec<u32> = children.iter().copied().filter(|&c| alive(c)).collect();
    for &c in &orphans {
        signal(c, libc::SIGKILL);
    }
    assert!(
        orphans.is_empty(),
        "children {orphans:?} outlived their killed parent"
    );
    let again = run(&args);
    assert!(again.status.success(), "{}", stderr(&again));
    let alone = tmp.path().join("alone");
    let o = run(&[
        "--exp",
        "frozen",
        "--quick",
        "--seed",
        "1",
        "--jobs",
        "2",
        "--out",
        alone.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for file in ["frozen/frozen.csv", "frozen/summary.csv"] {
        assert_eq!(
            std::fs::read_to_string(out.join(file)).unwrap(),
            std::fs::read_to_string(alone.join(file)).unwrap(),
            "{file}"
        );
    }
}

/// The committed study stays readable as code changes: its config's run names and settings
/// hash still name the committed measurement directories and files (a new config key or
/// measure must not move them), so `--exp analogy` finds every model measured and writes the
/// committed table byte for byte.
#[test]
fn the_committed_study_is_found_measured_and_its_table_rewritten_unchanged() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(
        &root.join("results/measurements"),
        &tmp.path().join("measurements"),
    );
    // A moved hash would make it train for hours: give it two minutes, then call it a failure.
    let mut child = Command::new(env!("CARGO_BIN_EXE_experiments"))
        .args(["--exp", "analogy", "--out", tmp.path().to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            let o = child.wait_with_output().unwrap();
            panic!(
                "--exp analogy on the committed measurements did not finish in 2 minutes (is it training?): {}",
                String::from_utf8_lossy(&o.stdout)
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains("every model's measurements are kept"),
        "{said}"
    );
    for f in ["analogy/analogy.csv", "analogy/summary.csv"] {
        assert_eq!(
            std::fs::read(tmp.path().join(f)).unwrap(),
            std::fs::read(root.join("results").join(f)).unwrap(),
            "{f}"
        );
    }
}
