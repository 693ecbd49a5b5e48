//! The command line as a user meets it: each bad input is a clear error naming the file (and
//! line or offset), a non-zero exit, and no result file left behind.

use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_experiments"))
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn corpus_stats(corpus: &Path, out: &Path) -> Output {
    run(&[
        "--exp",
        "corpus-stats",
        "--corpus",
        corpus.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
}

#[test]
fn corpus_stats_counts_a_small_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("c.txt");
    // "a" x6, "b" x5, "c" x1: two words reach min_count 5.
    std::fs::write(&corpus, "a b a b a b a b a b a c").unwrap();
    let o = corpus_stats(&corpus, dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(dir.path().join("corpus-stats.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "corpus,preset,tokens,types,min_count,vocab_size,coverage,chunks"
    );
    let fields: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&fields[1..6], ["text8", "12", "3", "5", "2"]);
    assert!((fields[6].parse::<f64>().unwrap() - 11.0 / 12.0).abs() < 1e-12);
}

fn assert_fails_cleanly(o: &Output, out: &Path, needles: &[&str]) {
    assert!(!o.status.success());
    let err = stderr(o);
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}: {err}");
    }
    assert!(
        !out.join("corpus-stats.csv").exists(),
        "partial output left behind"
    );
}

#[test]
fn missing_corpus_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = corpus_stats(&dir.path().join("nope.txt"), dir.path());
    assert_fails_cleanly(&o, dir.path(), &["nope.txt", "cannot read"]);
}

#[test]
fn empty_corpus_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("empty.txt");
    std::fs::write(&corpus, " \n\n").unwrap();
    let o = corpus_stats(&corpus, dir.path());
    assert_fails_cleanly(&o, dir.path(), &["empty.txt", "empty"]);
}

#[test]
fn corpus_without_frequent_words_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("rare.txt");
    std::fs::write(&corpus, "every word here is different").unwrap();
    let o = corpus_stats(&corpus, dir.path());
    assert_fails_cleanly(&o, dir.path(), &["rare.txt", "no word reaches min_count 5"]);
}

#[test]
fn invalid_utf8_names_line_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("latin1.txt");
    std::fs::write(&corpus, b"fine text\ncaf\xe9 au lait\n").unwrap();
    let o = corpus_stats(&corpus, dir.path());
    assert_fails_cleanly(&o, dir.path(), &["latin1.txt", "line 2", "byte offset 13"]);
}

#[test]
fn unknown_experiment_lists_the_valid_ones() {
    let o = run(&["--exp", "nonsense"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("possible values") && err.contains("corpus-stats") && err.contains("eval"),
        "{err}"
    );
}

#[test]
fn config_with_unknown_key_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("typo.toml");
    std::fs::write(&cfg, "[corpus]\nmin_cont = 3\n").unwrap();
    let o = run(&[
        "--exp",
        "corpus-stats",
        "--config",
        cfg.to_str().unwrap(),
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_fails_cleanly(&o, dir.path(), &["typo.toml", "min_cont"]);
}

#[test]
fn eval_reports_malformed_vectors_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let vecs = dir.path().join("bad.txt");
    std::fs::write(&vecs, "2 3\nking 1 2 3\nqueen 1 2\n").unwrap();
    let o = run(&[
        "--exp",
        "eval",
        "--vectors",
        vecs.to_str().unwrap(),
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("bad.txt:3:"), "{}", stderr(&o));
    assert!(!dir.path().join("eval").exists());
}

#[test]
fn eval_and_neighbours_on_the_conformance_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let vecs = manifest_dir().join("../data/conformance/vectors-10k-50d.bin");
    let o = run(&[
        "--exp",
        "eval",
        "--vectors",
        vecs.to_str().unwrap(),
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(dir.path().join("eval/vectors-10k-50d.bin.csv")).unwrap();
    // gensim: 3CosAdd total accuracy 402 / 4566 on these vectors (restrict_vocab >= 10,000).
    let total = csv
        .lines()
        .find(|l| l.contains("questions-words:total,3CosAdd,"))
        .unwrap();
    assert!(
        total.contains(&format!("{},4566,14978", 402.0 / 4566.0)),
        "{total}"
    );
    // Chance: one of the 10,000 - 3 candidate rows, uniformly.
    let chance = csv
        .lines()
        .find(|l| l.contains("questions-words:total,3CosAdd_chance,"))
        .unwrap();
    assert!(chance.contains(&format!(",{},", 1.0 / 9997.0)), "{chance}");
    // Each similarity score has its chance band, symmetric about 0 and inside (-1, 1).
    let band = |m: &str| -> f64 {
        let l = csv
            .lines()
            .find(|l| l.contains(&format!(",WS-353-ALL,{m},")))
            .unwrap();
        l.split(',').nth(6).unwrap().parse().unwrap()
    };
    let (lo, hi) = (band("spearman_null_lo"), band("spearman_null_hi"));
    assert!(
        lo < -0.05 && hi > 0.05 && (lo + hi).abs() < 0.05,
        "{lo} {hi}"
    );
    assert!(csv.lines().any(|l| l.contains(",WS-353-ALL,spearman,")));
    let o = run(&[
        "--exp",
        "neighbours",
        "--vectors",
        vecs.to_str().unwrap(),
        "--word",
        "king",
        "--topn",
        "3",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.lines().count(), 3);
    assert!(out.lines().any(|l| l.starts_with("prince")), "{out}");
    let o = run(&[
        "--exp",
        "neighbours",
        "--vectors",
        vecs.to_str().unwrap(),
        "--word",
        "qwertyuiop",
    ]);
    assert!(!o.status.success() && stderr(&o).contains("qwertyuiop"));
}

#[test]
fn wgpu_without_an_adapter_is_a_clear_error_not_a_panic_or_hang() {
    // Hide every Vulkan driver and every EGL (OpenGL) vendor: wgpu finds no adapter at all.
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("c.txt");
    std::fs::write(&corpus, "a b a b a b a b a b a c ".repeat(50)).unwrap();
    let started = std::time::Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_experiments"))
        .args(["--exp", "train", "--quick", "--backend", "wgpu", "--corpus"])
        .arg(&corpus)
        .arg("--out")
        .arg(dir.path())
        .env("VK_ICD_FILENAMES", dir.path().join("no-such-icd.json"))
        .env(
            "__EGL_VENDOR_LIBRARY_FILENAMES",
            dir.path().join("no-such-egl.json"),
        )
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!o.status.success());
    assert!(err.contains("no usable wgpu adapter"), "{err}");
    assert!(err.contains("--backend flex"), "{err}");
    assert!(err.contains("mesa-vulkan-drivers"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // Failing fast is the point; generous bound so a loaded machine cannot make this flaky.
    assert!(started.elapsed().as_secs() < 120);
    assert!(!dir.path().join("train").exists());
}

#[test]
fn backends_quick_writes_agreement_curves_and_throughput() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(&[
        "--exp",
        "backends",
        "--quick",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = dir.path().join("backends");
    let agreement = std::fs::read_to_string(b.join("agreement.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(agreement.as_bytes());
    let header = rows.headers().unwrap().clone();
    let backend = header.iter().position(|h| h == "backend").unwrap();
    let rel = header.iter().position(|h| h == "max_rel_diff").unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for r in rows.records() {
        let r = r.unwrap();
        seen.insert(r[backend].to_string());
        // Same tolerance as crates/transformer/tests/backends.rs (justified there).
        assert!(r[rel].parse::<f64>().unwrap() <= 1e-4, "{r:?}");
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
    for f in [
        "loss-curves.csv",
        "loss-curves.svg",
        "loss-curves.png",
        "throughput.csv",
        "throughput-training.svg",
        "throughput-training.png",
        "throughput-inference.png",
    ] {
        let bytes = std::fs::read(b.join(f)).unwrap();
        assert!(bytes.len() > 100, "{f}");
    }
    let png = std::fs::read(b.join("loss-curves.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `--exp layers --quick` three seeds: every layer and representation scored per seed, a
/// summary over seeds, figures; a second run reuses the cached models, a changed config trains
/// anew; the report names what was not run.
#[test]
fn paper_layers_quick_scores_every_layer_caches_models_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    // One model after another, in this process (the default trains two side by side).
    let o = run(&["--exp", "layers", "--quick", "--out", out, "--jobs", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("training transformer-mlm seed 3"));
    // The plan comes first: what will be trained, and an estimate.
    let plan = stdout(&o);
    assert!(
        plan.contains("to train and measure (6 models") && plan.contains("estimated training time"),
        "{plan}"
    );
    let d = dir.path().join("layers");
    let text = std::fs::read_to_string(d.join("layers.csv")).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let h = r.headers().unwrap().clone();
    assert_eq!(
        h.iter().collect::<Vec<_>>(),
        [
            "experiment",
            "model",
            "representation",
            "layer",
            "benchmark",
            "metric",
            "value",
            "n",
            "oov",
            "seed",
            "backend"
        ]
    );
    let mut seen = std::collections::BTreeSet::new();
    for row in r.records() {
        let row = row.unwrap();
        if &row[1] == "transformer-mlm" && &row[4] == "WS-353-ALL" && &row[5] == "spearman" {
            seen.insert(format!("{}:{}:{}", &row[2], &row[3], &row[9]));
        }
    }
    // --quick: 2 layers, so hidden states 0..=2 for both pooled representations, plus the
    // embedding matrix, for each of the 3 seeds.
    let mut expected = std::collections::BTreeSet::new();
    for seed in 1..=3 {
        expected.insert(format!("embedding::{seed}"));
        for l in 0..=2 {
            expected.insert(format!("aggregated:{l}:{seed}"));
            expected.insert(format!("decontextualized:{l}:{seed}"));
        }
    }
    assert_eq!(seen, expected);
    let summary = std::fs::read_to_string(d.join("summary.csv")).unwrap();
    assert!(summary
        .lines()
        .next()
        .unwrap()
        .contains("mean,sd,min,max,seeds"));
    for f in ["layers-analogy.png", "layers-ws353.svg"] {
        assert!(std::fs::metadata(d.join(f)).unwrap().len() > 100, "{f}");
    }

    // Cached: nothing is trained a second time, and the numbers are the same.
    let again = run(&["--exp", "layers", "--quick", "--out", out]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(!stdout(&again).contains("training "), "{}", stdout(&again));
    assert_eq!(text, std::fs::read_to_string(d.join("layers.csv")).unwrap());

    // A fresh clone has the kept measurements but no run cache: still nothing is trained or
    // measured, and the numbers are the same.
    std::fs::remove_dir_all(dir.path().join("runs")).unwrap();
    let kept = run(&["--exp", "layers", "--quick", "--out", out]);
    assert!(kept.status.success(), "{}", stderr(&kept));
    let said = stdout(&kept);
    assert!(
        said.contains("nothing to train")
            && !said.contains("training ")
            && !said.contains("measuring "),
        "{said}"
    );
    assert_eq!(text, std::fs::read_to_string(d.join("layers.csv")).unwrap());
    let items = std::fs::read_dir(dir.path().join("measurements"))
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read_dir(e.path())
                .unwrap()
                .flatten()
                .any(|f| f.file_name().to_string_lossy().starts_with("items-"))
        })
        .count();
    assert_eq!(
        items, 6,
        "3 MLM seeds and 3 SGNS seeds keep their per-item outcomes"
    );

    // A changed config is a different run.
    let paper = manifest_dir().join("configs/paper.toml");
    let cfg = dir.path().join("changed.toml");
    std::fs::write(
        &cfg,
        format!(
            "extends = {:?}\nseeds = [1]\n[training]\nlr = 2e-3\n",
            paper.to_str().unwrap()
        ),
    )
    .unwrap();
    let changed = run(&[
        "--exp",
        "layers",
        "--quick",
        "--out",
        out,
        "--config",
        cfg.to_str().unwrap(),
    ]);
    assert!(changed.status.success(), "{}", stderr(&changed));
    // Only the MLM is new (word2vec's measurements are kept): one model, trained in this
    // process whatever --jobs says.
    assert!(
        stdout(&changed).contains("training transformer-mlm seed 1"),
        "{}",
        stdout(&changed)
    );

    let report = run(&["--exp", "report", "--quick", "--out", out]);
    assert!(report.status.success(), "{}", stderr(&report));
    let md = std::fs::read_to_string(dir.path().join("REPORT.md")).unwrap();
    assert!(md.contains("Not measured yet: run `cargo run -p experiments -- --exp qkv`"));
    // What the models are, from the config that trained them (--quick: d_model 32, 2 layers,
    // 2 heads, d_ff 64, 32-token context; 5 epochs of 8 steps of 8 x 30 corpus tokens).
    assert!(
        md.contains(
            "**The models** (experiments/configs/paper.toml). The study's masked LM (tied head) has "
        ) && md.contains(" parameters: d_model 32, 2 layers, 2 heads, d_ff 64, a 32-token context")
            && md.contains("Each trains up to 40 steps of 240 tokens (the plateau rule")
            && md.contains("), 9600 tokens seen, 0.0046 passes over the ")
            && md.contains("word2vec on the same corpus and vocabulary: skip-gram: ")
            && md.contains(", starting rate 0.025 (word2vec.c's default), "),
        "{md}"
    );
}

#[test]
fn check_outputs_names_missing_and_broken_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("analogy");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("analogy.csv"), "a,b\n1,2\n").unwrap();
    std::fs::write(d.join("summary.csv"), "a,b\n").unwrap();
    std::fs::write(d.join("analogy-3cosadd.svg"), "<svg>half").unwrap();
    let o = run(&[
        "--exp",
        "check-outputs",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("summary.csv: no rows"), "{err}");
    assert!(
        err.contains("analogy-3cosadd.svg: not a complete SVG document"),
        "{err}"
    );
    assert!(err.contains("REPORT.md: missing"), "{err}");
    assert!(!err.contains("analogy.csv: "), "{err}");
}

/// This package's directory, read at run time (cargo test sets it): a target directory shared
/// between clones may run a test binary compiled in another clone.
fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
}

#[test]
fn flags_an_experiment_does_not_use_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(&[
        "--exp",
        "corpus-stats",
        "--vectors",
        "x.bin",
        "--threads",
        "0",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("--exp corpus-stats does not use --vectors, --threads"),
        "{err}"
    );
    assert!(
        err.contains("it reads only --config, --corpus, --out"),
        "{err}"
    );
    assert!(!dir.path().join("corpus-stats.csv").exists());
}

/// `--init-seed`: a crossed run (one seed's weights on another's batches) is its own run, its
/// config records both seeds, and an experiment that does not take it refuses it.
#[test]
fn init_seed_makes_a_crossed_run_of_its_own_and_only_train_takes_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let train = |extra: &[&str]| {
        let mut args = vec!["--exp", "train", "--quick", "--out", out, "--seed", "1"];
        args.extend(extra);
        let o = run(&args);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    train(&["--init-seed", "2"]);
    train(&[]);
    // The diagonal is the plain run: found finished, not trained again under another name.
    train(&["--init-seed", "1"]);
    let mut names: Vec<String> = std::fs::read_dir(dir.path().join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names[0].starts_with("mlm-seed1-") && !names[0].contains("init"),
        "{names:?}"
    );
    assert!(names[1].starts_with("mlm-seed1-init2-"), "{names:?}");
    let mut configs: Vec<serde_json::Value> = names
        .iter()
        .map(|n| {
            let path = dir.path().join("runs").join(n).join("config.json");
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
        })
        .collect();
    configs.sort_by_key(|c| c["training"].get("init_seed").is_some());
    assert_eq!(configs[0]["training"]["seed"], 1);
    assert!(
        configs[0]["training"].get("init_seed").is_none(),
        "{}",
        configs[0]
    );
    assert_eq!(configs[1]["training"]["seed"], 1);
    assert_eq!(configs[1]["training"]["init_seed"], 2);
    let o = run(&[
        "--exp",
        "sweep",
        "--quick",
        "--init-seed",
        "2",
        "--out",
        out,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--exp sweep does not use --init-seed"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_out_that_cannot_hold_results_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("results.txt");
    std::fs::write(&file, "not a directory").unwrap();
    let o = run(&[
        "--exp",
        "word2vec",
        "--quick",
        "--out",
        file.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(!o.status.success());
    assert!(
        err.contains(&format!("--out {}: is a file", file.display())),
        "{err}"
    );
    assert!(
        !err.contains("epoch"),
        "trained before checking --out: {err}"
    );
    let under_file = file.join("sub");
    let o = run(&[
        "--exp",
        "train",
        "--quick",
        "--out",
        under_file.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(!o.status.success());
    assert!(err.contains("cannot create the directory"), "{err}");
}

#[test]
fn config_values_burn_cannot_take_are_refused_naming_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    for (body, needle) in [
        (
            "[model]\ndropout = 1.5\n",
            "[model] dropout must be in [0, 1), got 1.5",
        ),
        (
            "[model]\nn_heads = 3\n",
            "[model] n_heads (3) must divide d_model",
        ),
        (
            "[training]\nadam_epsilon = 0.0\n",
            "[training] adam_epsilon must be a finite number > 0",
        ),
        (
            "[training]\ngrad_clip = -1.0\n",
            "[training] grad_clip must be a finite number > 0",
        ),
        (
            "[training]\nclm_target_fraction = 0.15\n",
            "[training] clm_target_fraction is for objective = \"clm\" only",
        ),
        (
            "[training]\nobjective = \"clm\"\nclm_target_fraction = 1.5\n",
            "[training] clm_target_fraction must be in (0, 1], got 1.5",
        ),
        (
            "[training]\nlm_head_init = \"zero\"\n",
            "lm_head_init = \"zero\" is for an untied LM head",
        ),
        (
            "[training]\nlm_head_init = \"copy\"\n",
            "unknown variant `copy`, expected one of `normal`, `zero`, `embedding`",
        ),
    ] {
        let config = dir.path().join("bad.toml");
        std::fs::write(&config, body).unwrap();
        let out = dir.path().join("out");
        let o = run(&[
            "--exp",
            "train",
            "--config",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let err = stderr(&o);
        assert!(!o.status.success(), "{body}");
        assert!(
            err.contains("bad.toml: ") && err.contains(needle),
            "{body}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            !out.join("runs").exists(),
            "{body}: a run directory was created"
        );
    }
}

#[test]
fn word2vec_settings_are_checked_before_either_model_trains() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("w2v.toml");
    std::fs::write(&config, "[cbow]\nnegative = 0\n").unwrap();
    let o = run(&[
        "--exp",
        "word2vec",
        "--quick",
        "--config",
        config.to_str().unwrap(),
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("w2v.toml: [cbow] negative must be at least 1"),
        "{err}"
    );
    // SGNS comes first in the run: it must not have trained and written its vectors.
    assert!(!dir.path().join("word2vec").exists());
}

#[test]
fn resume_says_what_it_continues_and_a_cpu_run_never_touches_vulkan() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    // Every Vulkan driver and EGL vendor hidden: a flex run, resumed or not, must not care.
    let train = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_experiments"))
            .args(["--exp", "train", "--quick", "--out", out])
            .args(extra)
            .env("VK_ICD_FILENAMES", dir.path().join("no-such-icd.json"))
            .env(
                "__EGL_VENDOR_LIBRARY_FILENAMES",
                dir.path().join("no-such-egl.json"),
            )
            .output()
            .unwrap()
    };
    let o = train(&[]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    // Output piped, not a terminal: plain progress lines at each evaluation.
    assert!(
        err.contains("step 10/20 loss") && err.contains("step 20/20 loss"),
        "{err}"
    );
    assert!(err.contains("tok/s") && err.contains("eta 0:00:"), "{err}");
    // A crash between the checkpoint swap's two renames leaves only `checkpoint.old`.
    let run_dir = std::fs::read_dir(dir.path().join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("checkpoint").is_dir())
        .unwrap();
    std::fs::rename(run_dir.join("checkpoint"), run_dir.join("checkpoint.old")).unwrap();
    let o = train(&["--resume"]);
    let (err, text) = (stderr(&o), stdout(&o));
    assert!(o.status.success(), "{err}");
    assert!(
        text.contains("--resume: recovered the checkpoint from"),
        "{text}"
    );
    assert!(
        text.contains("--resume: continuing from the checkpoint at step 20"),
        "{text}"
    );
    assert!(
        !err.contains("XDG_RUNTIME_DIR") && !err.contains("panicked"),
        "{err}"
    );
    // A changed config is another run: --resume says there is nothing to resume, and where
    // the checkpoint of the other config is.
    let config = dir.path().join("lr.toml");
    std::fs::write(&config, "[training]\nlr = 0.002\n").unwrap();
    let o = train(&["--resume", "--config", config.to_str().unwrap()]);
    let text = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        text.contains("--resume: no checkpoint for this config in"),
        "{text}"
    );
    assert!(
        text.contains("a checkpoint of another config of this model and seed"),
        "{text}"
    );
}

/// `--exp dynamics --quick`: the run's snapshots are its own model at those steps (the
/// held-out loss measured on a snapshot is the loss the run logged at that step, and on the
/// last step the final loss), word2vec is trained on each snapshot's token count, the
/// untrained model sits at 0 tokens, and a second run measures nothing again.
#[test]
fn dynamics_quick_measures_snapshots_at_matched_token_counts() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("dynamics.toml");
    let base = manifest_dir().join("configs/dynamics.toml");
    std::fs::write(
        &cfg,
        format!(
            "extends = {:?}\n[dynamics]\nmodels = [\"transformer-mlm\", \"transformer-untrained\", \"word2vec-sgns\"]\nfindings = false\n",
            base.to_str().unwrap()
        ),
    )
    .unwrap();
    let out_arg = dir.path().join("out");
    let out = out_arg.clone();
    let args = [
        "--exp",
        "dynamics",
        "--quick",
        "--seed",
        "1",
        "--config",
        cfg.to_str().unwrap(),
        "--out",
        out_arg.to_str().unwrap(),
    ];
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(!out.join("REPORT.md").exists(), "findings = false");
    // --quick: an epoch of 8 steps, 5 epochs, snapshots at 1/8 .. 5 epochs.
    assert!(
        text.contains("up to 40 steps")
            && text.contains("snapshots at steps [1, 2, 4, 8, 16, 24, 32, 40]"),
        "{text}"
    );
    let rows: Vec<csv::StringRecord> = csv::Reader::from_path(out.join("dynamics/dynamics.csv"))
        .unwrap()
        .records()
        .map(|r| r.unwrap())
        .collect();
    let col = |name: &str| {
        let h = csv::Reader::from_path(out.join("dynamics/dynamics.csv"))
            .unwrap()
            .headers()
            .unwrap()
            .clone();
        h.iter().position(|c| c == name).unwrap()
    };
    let (model, step, tokens, metric, value) = (
        col("model"),
        col("step"),
        col("tokens_seen"),
        col("metric"),
        col("value"),
    );
    // Corpus tokens per step under --quick: batch 8 x (32 - 2) words.
    let per_step = 8 * 30;
    let mlm_loss: Vec<(usize, f64)> = rows
        .iter()
        .filter(|r| &r[model] == "transformer-mlm" && &r[metric] == "heldout_loss")
        .map(|r| (r[step].parse().unwrap(), r[value].parse().unwrap()))
        .collect();
    let last = mlm_loss.iter().map(|p| p.0).max().unwrap();
    let expected: Vec<usize> = [1, 2, 4, 8, 16, 24, 32, 40]
        .into_iter()
        .filter(|&s| s < last)
        .chain([last])
        .collect();
    assert_eq!(mlm_loss.iter().map(|p| p.0).collect::<Vec<_>>(), expected);
    for r in rows.iter().filter(|r| &r[model] == "transformer-mlm") {
        let s: u64 = r[step].parse().unwrap();
        assert_eq!(r[tokens].parse::<u64>().unwrap(), s * per_step);
    }
    // The run's own curve: held-out rows every 2 steps (4 an epoch of 8).
    let curve_dir = std::fs::read_dir(out.join("measurements"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("mlm-seed1-")
        })
        .unwrap();
    let curve: Vec<csv::StringRecord> = csv::Reader::from_path(curve_dir.join("curve.csv"))
        .unwrap()
        .records()
        .map(|r| r.unwrap())
        .collect();
    let logged = |s: usize| {
        curve
            .iter()
            .find(|r| &r[1] == "heldout" && r[0].parse::<usize>().unwrap() == s)
            .map(|r| r[2].parse::<f64>().unwrap())
    };
    let mut compared = 0;
    for &(s, loss) in &mlm_loss {
        if let Some(l) = logged(s) {
            assert!(
                (l - loss).abs() < 1e-9,
                "step {s}: logged {l}, snapshot {loss}"
            );
            compared += 1;
        }
    }
    assert!(compared >= 3, "{mlm_loss:?}");
    // word2vec at every snapshot's token count and at the full schedule's; untrained at 0.
    let w2v: std::collections::BTreeSet<u64> = rows
        .iter()
        .filter(|r| &r[model] == "word2vec-sgns")
        .map(|r| r[tokens].parse().unwrap())
        .collect();
    let budgets: Vec<u64> = [1, 2, 4, 8, 16, 24, 32, 40]
        .iter()
        .map(|s| s * per_step)
        .collect();
    assert_eq!(w2v.into_iter().collect::<Vec<_>>(), budgets);
    assert!(rows
        .iter()
        .filter(|r| &r[model] == "transformer-untrained")
        .all(|r| &r[tokens] == "0"));
    for fig in [
        "dynamics-ws353.svg",
        "dynamics-heldout-loss.png",
        "dynamics-analogy.svg",
    ] {
        assert!(out.join("dynamics").join(fig).is_file(), "{fig}");
    }
    // Each followed model's final model was measured in full as soon as its run ended (so the
    // findings need not train it again once the run cache is gone): the paper's scores and
    // per-item outcomes sit beside its snapshot rows.
    for prefix in ["mlm-seed1-", "untrained-seed1-", "word2vec-sgns-seed1-"] {
        let dir = std::fs::read_dir(out.join("measurements"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
            .unwrap_or_else(|| panic!("no measurements for {prefix}"));
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        for kind in ["dynamics-", "dynamics-items-", "scores-", "items-"] {
            assert!(
                names.iter().any(|n| n.starts_with(kind)),
                "{prefix}: {names:?}"
            );
        }
        // Each snapshot keeps the per-item outcomes of the tables the similarity answer reads,
        // with its step: the MLM's embedding at every snapshot step.
        let items = names
            .iter()
            .find(|n| n.starts_with("dynamics-items-"))
            .unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::GzDecoder::new(std::fs::File::open(dir.join(items)).unwrap()),
            &mut text,
        )
        .unwrap();
        assert!(
            !text.contains(",collocation,"),
            "{prefix}: snapshots keep no pairs"
        );
        let mut lines = text.lines();
        assert_eq!(
            lines.next().unwrap(),
            "step,tokens_seen,model,representation,layer,benchmark,kind,seed,values"
        );
        // The final model's items: each collocated and frequency-matched pair's cosine, for
        // the tables whose gap the report states (the embedding, word2vec's vectors), one
        // value per pair of the scores' pair count.
        let full = names.iter().find(|n| n.starts_with("items-")).unwrap();
        let mut kept = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::GzDecoder::new(std::fs::File::open(dir.join(full)).unwrap()),
            &mut kept,
        )
        .unwrap();
        let table = if prefix == "word2vec-sgns-seed1-" {
            "static"
        } else {
            "embedding"
        };
        for kind in ["collocated", "matched"] {
            let rows: Vec<&str> = kept
                .lines()
                .filter(|l| l.contains(&format!(",collocation,{kind},")))
                .collect();
            assert_eq!(rows.len(), 1, "{prefix} {kind}: {rows:?}");
            assert!(
                rows[0].contains(&format!(",{table},,collocation,")),
                "{}",
                rows[0]
            );
            let values = rows[0].rsplit(',').next().unwrap().split(' ').count();
            assert!(values > 10, "{prefix} {kind}: {values} pairs");
        }
        if prefix == "mlm-seed1-" {
            let steps: std::collections::BTreeSet<&str> = lines
                .filter(|l| l.contains(",embedding,,WS-353-ALL,cosine,"))
                .map(|l| l.split(',').next().unwrap())
                .collect();
            assert_eq!(steps.len(), 8, "{steps:?}");
        }
    }
    // What it cost, summed into cost.csv: a transformer's ledger keeps its training, its
    // snapshots' measuring and its final model's scores apart; word2vec and the untrained
    // model train and measure in one `dynamics` piece, then their scores.
    let cost = || -> Vec<(String, f64, f64, usize, usize)> {
        csv::Reader::from_path(out.join("cost.csv"))
            .unwrap()
            .records()
            .map(|r| {
                let r = r.unwrap();
                (
                    r[0].to_string(),
                    r[2].parse().unwrap(),
                    r[3].parse().unwrap(),
                    r[4].parse().unwrap(),
                    r[5].parse().unwrap(),
                )
            })
            .collect()
    };
    let first = cost();
    assert_eq!(
        first.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
        ["transformer-mlm", "transformer-untrained", "word2vec-sgns"]
    );
    for (m, wall, cpu, pieces, unfinished) in &first {
        assert!(*wall > 0.0 && *cpu > 0.0, "{m}: {wall} s wall, {cpu} s CPU");
        let want = if m == "transformer-mlm" { 3 } else { 2 };
        assert_eq!((*pieces, *unfinished), (want, 0), "{m}");
    }
    // By piece: each model's pieces add up to its total, and each is where its work was.
    let mut by_piece = csv::Reader::from_path(out.join("cost.csv")).unwrap();
    let header = by_piece.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for r in by_piece.records() {
        let r = r.unwrap();
        let v = |name: &str| r[col(name)].parse::<f64>().unwrap();
        let parts = ["train", "snapshots", "scores", "dynamics"].map(|p| v(&format!("{p}_wall_s")));
        assert!(
            (parts.iter().sum::<f64>() - v("wall_s")).abs() < 1e-6,
            "{r:?}"
        );
        assert!(v("scores_wall_s") > 0.0, "{r:?}");
        if &r[0] == "transformer-mlm" {
            assert!(
                v("train_wall_s") > 0.0 && v("snapshots_wall_s") > 0.0,
                "{r:?}"
            );
            assert_eq!(v("dynamics_wall_s"), 0.0, "{r:?}");
        } else {
            assert!(
                v("dynamics_wall_s") > 0.0 && v("train_wall_s") == 0.0,
                "{r:?}"
            );
        }
    }
    assert!(
        text.contains("cost (") && text.contains("3 models"),
        "{text}"
    );
    let again = run(&args);
    assert!(again.status.success(), "{}", stderr(&again));
    let text = stdout(&again);
    assert!(
        !text.contains("measuring") && !text.contains("training"),
        "{text}"
    );
    // Nothing was redone, so nothing was added to the cost.
    assert_eq!(cost(), first);

    // The run cache lost (it is not committed) before the final model's full measurement: the
    // run trains again, and says that it retraced its kept curve to the last digit.
    // Its directory as it was before that measurement: no scores or per-item files, and a
    // manifest that does not list them.
    std::fs::remove_dir_all(out.join("runs")).unwrap();
    let manifest_path = curve_dir.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    for e in std::fs::read_dir(&curve_dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("scores-") || name.starts_with("items-") {
            std::fs::remove_file(&p).unwrap();
            manifest["files"].as_object_mut().unwrap().remove(&name);
        }
    }
    std::fs::write(&manifest_path, manifest.to_string()).unwrap();
    let retrained = run(&args);
    assert!(retrained.status.success(), "{}", stderr(&retrained));
    let text = stdout(&retrained);
    assert!(
        text.contains("transformer-mlm seed 1 trained again: it retraced the kept curve ("),
        "{text}"
    );

    // A model name the study does not know is refused, naming the key and the known names.
    std::fs::write(
        &cfg,
        format!(
            "extends = {:?}\n[dynamics]\nmodels = [\"transformer-mlmm\"]\n",
            base.to_str().unwrap()
        ),
    )
    .unwrap();
    let bad = run(&args);
    assert!(!bad.status.success());
    let err = stderr(&bad);
    assert!(
        err.contains("[dynamics] models: unknown model \"transformer-mlmm\"")
            && err.contains("transformer-clm-matched"),
        "{err}"
    );
}

/// `--jobs 2`: the models train and measure in two child processes, with what a sequential
/// run writes (the same CSV byte for byte: each child is the same deterministic run), each
/// child's output in <out>/logs/; `--jobs 0` is refused.
#[test]
fn jobs_train_models_side_by_side_with_the_sequential_results() {
    let dir = tempfile::tempdir().unwrap();
    let (seq, par) = (dir.path().join("seq"), dir.path().join("par"));
    let base = ["--exp", "frozen", "--quick", "--seed", "1", "--out"];
    let one = run(&[&base[..], &[seq.to_str().unwrap(), "--jobs", "1"]].concat());
    assert!(one.status.success(), "{}", stderr(&one));
    let two = run(&[&base[..], &[par.to_str().unwrap(), "--jobs", "2"]].concat());
    assert!(two.status.success(), "{}", stderr(&two));
    let text = stdout(&two);
    assert!(
        text.contains("2 models in up to 2 processes side by side")
            && text.contains("finished transformer-mlm-frozen-embedding-untied-head seed 1"),
        "{text}"
    );
    let log =
        std::fs::read_to_string(par.join("logs/transformer-mlm-untied-head-seed1.log")).unwrap();
    assert!(
        log.contains("measuring transformer-mlm-untied-head seed 1"),
        "{log}"
    );
    // The children read the parent's config as it was read, frozen beside their logs with the
    // `extends` chain merged in (an edit of experiments/configs/ meanwhile cannot reach them).
    let frozen: Vec<std::path::PathBuf> = std::fs::read_dir(par.join("logs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    assert_eq!(frozen.len(), 1, "{frozen:?}");
    let text = std::fs::read_to_string(&frozen[0]).unwrap();
    assert!(
        !text.contains("extends") && text.contains("[training]"),
        "{text}"
    );
    assert!(
        log.contains(&format!("config {}", frozen[0].display())),
        "{log}"
    );
    for file in ["frozen/frozen.csv", "frozen/summary.csv"] {
        assert_eq!(
            std::fs::read_to_string(seq.join(file)).unwrap(),
            std::fs::read_to_string(par.join(file)).unwrap(),
            "{file}"
        );
    }
    let zero = run(&[&base[..], &[par.to_str().unwrap(), "--jobs", "0"]].concat());
    assert!(!zero.status.success());
    assert!(
        stderr(&zero).contains("--jobs must be at least 1"),
        "{}",
        stderr(&zero)
    );
}

/// `[roles]`: the study reads the frozen input against the untied masked LM, so
/// `--exp frozen` trains and compares exactly those two, the report names them, and a role
/// given a model that is not a trained transformer is refused, naming the key.
#[test]
fn roles_choose_the_models_a_comparison_reads() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let cfg = manifest_dir().join("configs/dynamics.toml");
    let (cfg_s, out_s) = (cfg.to_str().unwrap(), out.to_str().unwrap());
    let args = |exp| {
        [
            "--exp", exp, "--quick", "--seed", "1", "--config", cfg_s, "--out", out_s,
        ]
    };
    let o = run(&args("frozen"));
    assert!(o.status.success(), "{}", stderr(&o));
    let mut r = csv::Reader::from_path(out.join("frozen/frozen.csv")).unwrap();
    let col = r
        .headers()
        .unwrap()
        .iter()
        .position(|c| c == "model")
        .unwrap();
    let models: std::collections::BTreeSet<String> =
        r.records().map(|x| x.unwrap()[col].to_string()).collect();
    assert_eq!(
        models.into_iter().collect::<Vec<_>>(),
        [
            "transformer-mlm-frozen-embedding-untied-head",
            "transformer-mlm-untied-head"
        ]
    );
    let o = run(&[
        "--exp", "report", "--quick", "--config", cfg_s, "--out", out_s,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
    assert!(
        report.contains("MLM frozen input, untied head against MLM untied head."),
        "{report}"
    );
    // The objective is read on the untied pair too, and the causal LM tied against untied.
    let o = run(&args("objective"));
    assert!(o.status.success(), "{}", stderr(&o));
    let mut r = csv::Reader::from_path(out.join("objective/objective.csv")).unwrap();
    let models: std::collections::BTreeSet<String> =
        r.records().map(|x| x.unwrap()[col].to_string()).collect();
    assert_eq!(
        models.into_iter().collect::<Vec<_>>(),
        [
            "transformer-clm-matched",
            "transformer-clm-matched-untied-head",
            "transformer-mlm",
            "transformer-mlm-no-attention",
            "transformer-mlm-untied-head",
            "transformer-untrained",
            "word2vec-sgns",
        ]
    );
    let o = run(&[
        "--exp", "report", "--quick", "--config", cfg_s, "--out", out_s,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
    for line in [
        "- MLM untied head embedding matrix: z ",
        "- CLM matched, untied head embedding matrix: z ",
    ] {
        assert!(report.contains(line), "{line}\n{report}");
    }

    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        format!(
            "extends = {:?}\n[roles]\nfrozen = \"word2vec-sgns\"\n",
            cfg.to_str().unwrap()
        ),
    )
    .unwrap();
    let o = run(&[
        "--exp",
        "frozen",
        "--quick",
        "--config",
        bad.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("bad.toml")
            && err.contains("[roles] frozen: \"word2vec-sgns\" is not a trained transformer")
            && err.contains("transformer-mlm-untied-head"),
        "{err}"
    );
}

/// `--devices 2`: the quick run trains through burn-train's MultiDevice (two flex devices, one
/// shard of each step's batch each) and reports its curve; `--devices 0` and `--ddp` (no
/// backend of this build can all-reduce) are refused with the reason, not a panic.
#[test]
fn devices_train_data_parallel_and_ddp_is_refused_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let o = run(&["--exp", "train", "--quick", "--devices", "2", "--out", out]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("step 20/20 loss") && err.contains("held-out"),
        "{err}"
    );
    for (flag, says) in [
        (vec!["--devices", "0"], "--devices must be at least 1, got 0"),
        (
            vec!["--ddp"],
            "--ddp: distributed data parallel (burn-train's ExecutionStrategy::ddp) needs an all-reduce",
        ),
    ] {
        let mut args = vec!["--exp", "train", "--quick", "--out", out];
        args.extend(flag);
        let o = run(&args);
        let err = stderr(&o);
        assert!(!o.status.success());
        assert!(err.contains(says) && !err.contains("panicked"), "{err}");
    }
}

/// `--exp bench-transformer --quick` on flex: one row per benchmark with the CPU's AVX-512 and
/// the load average, and every timed training step in `transformer-rounds.csv`, the three
/// objectives alternating within each round (what makes their ratio a paired one).
#[test]
fn bench_transformer_alternates_the_objectives_within_each_round() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let o = run(&[
        "--exp",
        "bench-transformer",
        "--quick",
        "--backend",
        "flex",
        "--out",
        out,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let read = |file: &str| -> (csv::StringRecord, Vec<csv::StringRecord>) {
        let mut r = csv::Reader::from_path(dir.path().join("bench").join(file)).unwrap();
        let h = r.headers().unwrap().clone();
        (h, r.records().map(|r| r.unwrap()).collect())
    };
    let (h, rows) = read("transformer.csv");
    let col = |h: &csv::StringRecord, name: &str| h.iter().position(|c| c == name).unwrap();
    let benchmarks: Vec<&str> = rows.iter().map(|r| &r[col(&h, "benchmark")]).collect();
    assert_eq!(
        benchmarks,
        [
            "forward-backward",
            "mlm-step",
            "clm-step",
            "clm-matched-step"
        ]
    );
    for r in &rows {
        assert!(["true", "false"].contains(&&r[col(&h, "avx512")]));
        assert!(r[col(&h, "load_1min")].parse::<f64>().unwrap() >= 0.0);
    }
    let (h, rounds) = read("transformer-rounds.csv");
    // --quick: 2 timed rounds of the three steps, in order within each round.
    let seen: Vec<(String, String)> = rounds
        .iter()
        .map(|r| {
            (
                r[col(&h, "round")].to_string(),
                r[col(&h, "benchmark")].to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = ["0", "1"]
        .iter()
        .flat_map(|round| {
            ["mlm-step", "clm-step", "clm-matched-step"]
                .iter()
                .map(move |b| (round.to_string(), b.to_string()))
        })
        .collect();
    assert_eq!(seen, expected);
    assert!(rounds
        .iter()
        .all(|r| r[col(&h, "seconds")].parse::<f64>().unwrap() > 0.0));
    assert!(
        stdout(&o).contains("clm-matched-step / mlm-step cost, paired by round: median"),
        "{}",
        stdout(&o)
    );
}

/// `bench-transformer-steps` with `stdin` piped in: its stdout and its exit.
fn serve_steps(stdin: &str) -> Output {
    serve_steps_with(&[], stdin)
}

/// [`serve_steps`] with more flags.
fn serve_steps_with(flags: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_experiments"))
        .args([
            "--exp",
            "bench-transformer-steps",
            "--quick",
            "--backend",
            "flex",
        ])
        .args(flags)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// The step server scripts/bench_transformer.sh interleaves with PyTorch: `ready`, then one
/// answer per benchmark named on stdin, in order, with the step's seconds; blank lines skipped.
#[test]
fn bench_transformer_steps_answers_each_request_with_its_seconds() {
    let o = serve_steps(
        "forward-backward\nmlm-step\n\nclm-step\nclm-matched-step\nmlm-step\nforward\n\
         identity\nembedding\nlayer-norm\nattention\nfeed-forward\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "ready");
    let answered: Vec<&str> = lines[1..]
        .iter()
        .map(|l| {
            let (name, seconds) = l.split_once(' ').unwrap();
            let seconds: f64 = seconds.parse().unwrap();
            assert!(seconds > 0.0 && seconds < 60.0, "{l}");
            name
        })
        .collect();
    assert_eq!(
        answered,
        [
            "forward-backward",
            "mlm-step",
            "clm-step",
            "clm-matched-step",
            "mlm-step",
            "forward",
            "identity",
            "embedding",
            "layer-norm",
            "attention",
            "feed-forward"
        ]
    );
}

/// `--layers` sets the benchmark model's depth (scripts/bench_depth.py): one block serves
/// steps; zero blocks is refused before `ready`, naming the flag.
#[test]
fn bench_transformer_steps_takes_the_depth_and_refuses_zero_layers() {
    let o = serve_steps_with(&["--layers", "1"], "forward-backward\nlayer-norm\n");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let names: Vec<&str> = out.lines().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(names, ["ready", "forward-backward", "layer-norm"], "{out}");

    let o = serve_steps_with(&["--layers", "0"], "forward-backward\n");
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("--layers 0: n_layers must be at least 1, got 0") && !err.contains("panicked"),
        "{err}"
    );
    assert!(!stdout(&o).contains("ready"), "{}", stdout(&o));
}

/// A name that is no benchmark stops the server with its stdin line; what came before was
/// answered.
#[test]
fn bench_transformer_steps_refuses_an_unknown_benchmark_naming_its_line() {
    let o = serve_steps("mlm-step\nmlm_step\nforward-backward\n");
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("stdin line 2: unknown benchmark `mlm_step`")
            && err.contains("forward, forward-backward, mlm-step, clm-step, clm-matched-step")
            && !err.contains("panicked"),
        "{err}"
    );
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(
        out.lines().nth(1).unwrap().starts_with("mlm-step "),
        "{out}"
    );
}

/// The value of (model, representation, layer, benchmark, metric) in a tidy CSV.
fn tidy_value(
    path: &std::path::Path,
    model: &str,
    representation: &str,
    layer: &str,
    benchmark: &str,
    metric: &str,
) -> f64 {
    let mut r = csv::Reader::from_path(path).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let cols = [
        col("model"),
        col("representation"),
        col("layer"),
        col("benchmark"),
        col("metric"),
    ];
    let want = [model, representation, layer, benchmark, metric];
    let rows: Vec<f64> = r
        .records()
        .map(|x| x.unwrap())
        .filter(|x| {
            cols.iter()
                .zip(want)
                .all(|(&c, w)| w == "*" || x.get(c).unwrap() == w)
        })
        .map(|x| x.get(col("value")).unwrap().parse().unwrap())
        .collect();
    assert_eq!(rows.len(), 1, "{}: {want:?}", path.display());
    rows[0]
}

/// `--exp export`: the table the study scores, written as word2vec vectors and read back. The
/// exported embedding matrix and decontextualized layer, and word2vec's vectors, evaluated by
/// `--exp eval`, give the study's own WS-353 and SimLex values; the text and binary files hold
/// one table; what a model does not have is refused, naming what it has.
#[test]
fn export_writes_the_tables_the_study_scores() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out_s = out.to_str().unwrap();
    let o = run(&[
        "--exp", "layers", "--quick", "--seed", "1", "--out", out_s, "--jobs", "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let export = |model: &str, rep: &str, layer: Option<&str>, file: &str| {
        let path = dir.path().join(file);
        let mut a = vec![
            "--exp",
            "export",
            "--quick",
            "--seed",
            "1",
            "--out",
            out_s,
            "--model",
            model,
            "--representation",
            rep,
            "--vectors",
            path.to_str().unwrap(),
        ];
        if let Some(l) = layer {
            a.extend(["--layer", l]);
        }
        (run(&a), path)
    };
    let layers_csv = out.join("layers/layers.csv");
    for (model, rep, layer, file) in [
        ("transformer-mlm", "embedding", None, "mlm-embedding.bin"),
        (
            "transformer-mlm",
            "decontextualized",
            Some("1"),
            "mlm-dec-1.bin",
        ),
        ("transformer-mlm", "aggregated", Some("1"), "mlm-agg-1.bin"),
        ("word2vec-sgns", "static", None, "sgns.bin"),
    ] {
        let (o, path) = export(model, rep, layer, file);
        assert!(o.status.success(), "{}", stderr(&o));
        // Nothing was trained again: the layers run's weights were used.
        assert!(!stdout(&o).contains("training "), "{}", stdout(&o));
        let eval_out = dir.path().join(format!("eval-{file}"));
        let e = run(&[
            "--exp",
            "eval",
            "--vectors",
            path.to_str().unwrap(),
            "--out",
            eval_out.to_str().unwrap(),
        ]);
        assert!(e.status.success(), "{}", stderr(&e));
        let eval_csv = eval_out.join(format!("eval/{file}.csv"));
        for bench in ["WS-353-ALL", "SIMLEX-999"] {
            let study = tidy_value(
                &layers_csv,
                model,
                rep,
                layer.unwrap_or(""),
                bench,
                "spearman",
            );
            let read_back = tidy_value(&eval_csv, "*", "static", "", bench, "spearman");
            assert!(
                (study - read_back).abs() < 1e-9,
                "{model} {rep} {bench}: study {study}, exported {read_back}"
            );
        }
    }
    // Text and binary: one table (text to the printed precision).
    let (o, text) = export("transformer-mlm", "embedding", None, "mlm-embedding.txt");
    assert!(o.status.success(), "{}", stderr(&o));
    let a = word2vec::format::read(&dir.path().join("mlm-embedding.bin")).unwrap();
    let b = word2vec::format::read(&text).unwrap();
    assert_eq!(a.words(), b.words());
    assert_eq!((a.len(), a.dim()), (b.len(), b.dim()));
    assert_eq!(a.dim(), 32, "--quick: d_model 32");
    for (x, y) in a.data().iter().zip(b.data()) {
        assert!((x - y).abs() <= 1e-5 * x.abs().max(1.0), "{x} vs {y}");
    }
    // On a clone without the run cache, export trains the model again: the kept curve (the
    // run the kept measurements came from) is left byte for byte, the new run retracing it.
    let curves: Vec<std::path::PathBuf> = std::fs::read_dir(out.join("measurements"))
        .unwrap()
        .map(|e| e.unwrap().path().join("curve.csv"))
        .filter(|p| p.is_file())
        .collect();
    assert!(!curves.is_empty());
    let before: Vec<Vec<u8>> = curves.iter().map(|p| std::fs::read(p).unwrap()).collect();
    std::fs::remove_dir_all(out.join("runs")).unwrap();
    let (o, _) = export("transformer-mlm", "embedding", None, "again.bin");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("it retraced the kept curve"),
        "{}",
        stdout(&o)
    );
    let after: Vec<Vec<u8>> = curves.iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert!(before == after, "a kept curve.csv changed");
    // An untied head's output matrix: another table than its input embedding, same shape.
    let (o, head) = export(
        "transformer-mlm-untied-head",
        "lm_head",
        None,
        "untied-head.bin",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let (o, input) = export(
        "transformer-mlm-untied-head",
        "embedding",
        None,
        "untied-in.bin",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let (head, input) = (
        word2vec::format::read(&head).unwrap(),
        word2vec::format::read(&input).unwrap(),
    );
    assert_eq!((head.len(), head.dim()), (input.len(), input.dim()));
    assert_eq!(head.words(), input.words());
    assert_ne!(head.data(), input.data());
    // What the command line lacks, or a file that cannot be written, is named.
    let bad = |extra: &[&str], needle: &str| {
        let base = ["--exp", "export", "--quick", "--seed", "1", "--out", out_s];
        let o = run(&[&base[..], extra].concat());
        assert!(!o.status.success(), "{needle}");
        assert!(stderr(&o).contains(needle), "{needle}: {}", stderr(&o));
    };
    let v = dir.path().join("x.bin");
    let v = v.to_str().unwrap();
    let (mlm, emb) = ("transformer-mlm", "embedding");
    bad(
        &["--model", mlm, "--vectors", v],
        "--representation is required",
    );
    bad(
        &["--model", mlm, "--representation", emb],
        "--vectors FILE is required",
    );
    bad(
        &["--representation", emb, "--vectors", v],
        "--model is required",
    );
    bad(
        &[
            "--model",
            "transformer-mlmm",
            "--representation",
            emb,
            "--vectors",
            v,
        ],
        "--model: unknown model \"transformer-mlmm\"",
    );
    // Under a file, where no directory can be made.
    let nowhere = dir.path().join("sgns.bin/x.bin");
    let nowhere_s = nowhere.to_str().unwrap();
    bad(
        &[
            "--model",
            mlm,
            "--representation",
            emb,
            "--vectors",
            nowhere_s,
        ],
        "cannot write the vectors",
    );
    assert!(!std::path::Path::new(v).exists());
    for (args, needle) in [
        (("transformer-mlm", "lm_head", None), "has a tied head"),
        (
            ("transformer-mlm", "decontextualized", Some("9")),
            "has layers 0 to 2",
        ),
        (("transformer-mlm", "aggregated", None), "--layer goes with"),
        (
            ("word2vec-sgns", "embedding", None),
            "has one representation, static",
        ),
        (
            ("transformer-mlm", "attention", None),
            "a transformer's representations are",
        ),
    ] {
        let (model, rep, layer) = args;
        let (o, path) = export(model, rep, layer, "refused.bin");
        assert!(!o.status.success());
        assert!(stderr(&o).contains(needle), "{needle}: {}", stderr(&o));
        assert!(!path.exists());
    }
}

/// A sweep config extending ten-seeds.toml with `sweep` as its `[sweep]` table, in `dir`, and
/// the output folder beside it.
fn sweep_setup(dir: &tempfile::TempDir, sweep: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let cfg = dir.path().join("sweep.toml");
    let base = manifest_dir().join("../experiments/configs/ten-seeds.toml");
    std::fs::write(&cfg, format!("extends = {base:?}\n[sweep]\n{sweep}")).unwrap();
    (cfg, dir.path().join("out"))
}

/// `--exp sweep --quick` with `cfg` into `out`, and `extra` arguments.
fn run_sweep(cfg: &std::path::Path, out: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let mut a = vec![
        "--exp",
        "sweep",
        "--quick",
        "--config",
        cfg.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    a.extend_from_slice(extra);
    run(&a)
}

#[test]
fn word2vec_sweep_scores_the_dev_block_by_its_own_objective_and_chooses_like_the_transformers() {
    let dir = tempfile::tempdir().unwrap();
    // CBOW at half, twice and 64 times word2vec.c's default rate (0.05), one epoch of the
    // training split, one sweep seed: complete after one file. The factors multiply the rate
    // ten-seeds.toml configures, twice the default: a quarter, once and 32 times it. The last
    // rate diverges.
    let (cfg, out) = sweep_setup(
        &dir,
        "epochs = 1.0\nseeds = [1001]\nmodels = [\"word2vec-cbow\"]\nword2vec_alpha_factors = [0.25, 1.0, 32.0]\n",
    );
    let sweep = || run_sweep(&cfg, &out, &[]);
    let o = sweep();
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = out.join("sweep/word2vec-cbow-seed1001.csv");
    let rows = std::fs::read_to_string(&kept).unwrap();
    let lines: Vec<Vec<&str>> = rows
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(lines.len(), 3, "{rows}");
    // model,seed,lr,epochs,steps,warmup_steps,dev_loss,dev_loss_first,context_free_dev_loss,
    // left_plateau,embedding_std,embedding_std_by_frequency,backend,seconds,run
    let col = |r: &[&str], i: usize| -> f64 { r[i].parse().unwrap() };
    for (r, lr) in lines[..2].iter().zip([0.025, 0.1]) {
        assert_eq!(
            (r[0], col(r, 2), r[12]),
            ("word2vec-cbow", lr, "cpu"),
            "{rows}"
        );
        let (dev, first, free) = (col(r, 6), col(r, 7), col(r, 8));
        // At the start every score is 0: ln 2 per term, six terms but for noise draws equal to
        // the target; training goes below it, and the context-free level is below it too.
        assert!(
            first > 5.9 * 2f64.ln() && first < 6.0 * 2f64.ln() + 1e-9,
            "{rows}"
        );
        assert!(dev < first && free < first, "{rows}");
        assert_eq!(r[9] == "true", dev < free, "{rows}");
        assert!(r[14].starts_with("sweep-word2vec-cbow-seed1001-"), "{rows}");
    }
    // At this toy size (32 dimensions) one epoch at 0.1 goes below the context-free level and
    // one at 0.025 does not: the plateau column reads both ways.
    assert_eq!((lines[0][9], lines[1][9]), ("false", "true"), "{rows}");
    // A run whose loss became non-finite is kept as a row with an infinite dev loss and no
    // steps, and the sweep goes on.
    let diverged = &lines[2];
    assert_eq!((col(diverged, 2), diverged[4]), (3.2, "0"), "{rows}");
    assert!(
        col(diverged, 6).is_infinite() && diverged[9] == "false",
        "{rows}"
    );
    let best = if col(&lines[0], 6) <= col(&lines[1], 6) {
        "0.025"
    } else {
        "0.1"
    };
    let chosen = std::fs::read_to_string(out.join("sweep/chosen.csv")).unwrap();
    assert!(
        chosen
            .lines()
            .nth(1)
            .unwrap()
            .starts_with(&format!("word2vec-cbow,{best},")),
        "{chosen}"
    );
    assert!(
        stdout(&o).contains(&format!(
            "[cbow]   # word2vec-cbow (chosen)\nalpha = {best}"
        )),
        "{}",
        stdout(&o)
    );
    // Run again: read, not trained; a kept row of another config (its name's hash) is refused.
    let again = sweep();
    assert!(
        again.status.success() && stdout(&again).contains(": kept"),
        "{}",
        stdout(&again)
    );
    std::fs::write(
        &kept,
        rows.replace(
            "sweep-word2vec-cbow-seed1001-",
            "sweep-word2vec-cbow-seed1001-0",
        ),
    )
    .unwrap();
    let o = sweep();
    assert!(
        !o.status.success() && stderr(&o).contains("of another run"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn sweep_quick_trains_each_rate_chooses_once_complete_and_refuses_what_it_cannot_use() {
    let dir = tempfile::tempdir().unwrap();
    let root = manifest_dir().join("..");
    // One variant, one seed, two rates: the sweep is complete after one (variant, seed).
    let (cfg, out) = sweep_setup(
        &dir,
        "lrs = [3e-3, 1.2e-2]\nseeds = [1001]\nmodels = [\"transformer-mlm\"]\n",
    );
    let sweep = |extra: &[&str]| run_sweep(&cfg, &out, extra);
    let o = sweep(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = std::fs::read_to_string(out.join("sweep/transformer-mlm-seed1001.csv")).unwrap();
    let lines: Vec<&str> = rows.lines().collect();
    assert_eq!(lines.len(), 3, "{rows}");
    assert!(lines[0].starts_with("model,seed,lr,epochs,steps,warmup_steps,dev_loss,"));
    let dev: Vec<f64> = lines[1..]
        .iter()
        .map(|l| l.split(',').nth(6).unwrap().parse().unwrap())
        .collect();
    assert!(dev.iter().all(|d| d.is_finite() && *d > 0.0), "{dev:?}");
    // The choice is the rate with the lower dev loss, and the table to paste is printed.
    let chosen = std::fs::read_to_string(out.join("sweep/chosen.csv")).unwrap();
    let best = if dev[0] <= dev[1] { "0.003" } else { "0.012" };
    assert!(
        chosen
            .lines()
            .nth(1)
            .unwrap()
            .starts_with(&format!("transformer-mlm,{best},")),
        "{chosen}"
    );
    assert!(stdout(&o).contains("[learning_rates]"), "{}", stdout(&o));
    // Run again: the kept file is read, nothing trained.
    let again = sweep(&[]);
    assert!(
        again.status.success() && stdout(&again).contains(": kept"),
        "{}",
        stdout(&again)
    );
    // The grid widened by a rate between the two: only it is trained, the kept rows stay as
    // they were, the new one takes its place in the grid's order, and the choice is made again
    // over all three.
    let wider_dir = tempfile::tempdir().unwrap();
    let (wider, _) = sweep_setup(
        &wider_dir,
        "lrs = [3e-3, 6e-3, 1.2e-2]\nseeds = [1001]\nmodels = [\"transformer-mlm\"]\n",
    );
    let o = run_sweep(&wider, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stdout(&o);
    assert!(
        said.contains("transformer-mlm-seed1001.csv: 2 of 3 rates kept, [0.006] to run")
            && said.matches("sweep: transformer-mlm seed 1001 lr").count() == 1
            && said.contains("(3 of 3 rates)"),
        "{said}"
    );
    let widened = std::fs::read_to_string(out.join("sweep/transformer-mlm-seed1001.csv")).unwrap();
    let wl: Vec<&str> = widened.lines().collect();
    assert_eq!(wl.len(), 4, "{widened}");
    assert_eq!((wl[1], wl[3]), (lines[1], lines[2]), "{widened}");
    assert!(
        wl[2].starts_with("transformer-mlm,1001,0.006,"),
        "{widened}"
    );
    // The choice is made again over the three rates: the lowest of their dev losses.
    let dev3: Vec<(f64, &str)> = wl[1..]
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[6].parse().unwrap(), f[2])
        })
        .collect();
    let best3 = dev3.iter().min_by(|a, b| a.0.total_cmp(&b.0)).unwrap().1;
    let chosen3 = std::fs::read_to_string(out.join("sweep/chosen.csv")).unwrap();
    assert!(
        said.contains("[learning_rates]")
            && chosen3
                .lines()
                .nth(1)
                .unwrap()
                .starts_with(&format!("transformer-mlm,{best3},")),
        "{said}\n{chosen3}"
    );
    // A file holding one rate of the grid (as an interrupted sweep leaves it) counts as
    // missing for the choice, and the next call runs the rate it lacks.
    std::fs::write(
        out.join("sweep/transformer-mlm-seed1001.csv"),
        format!("{}\n{}\n", lines[0], lines[1]),
    )
    .unwrap();
    // With a second seed in the config, a call for that seed alone leaves seed 1001's file
    // partial: no choice is made, the earlier chosen.csv is said to be no longer this config's.
    let two_dir = tempfile::tempdir().unwrap();
    let (two, _) = sweep_setup(
        &two_dir,
        "lrs = [3e-3, 1.2e-2]\nseeds = [1001, 1002]\nmodels = [\"transformer-mlm\"]\n",
    );
    let before = std::fs::read_to_string(out.join("sweep/chosen.csv")).unwrap();
    let o = run_sweep(&two, &out, &["--seed", "1002"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stdout(&o);
    assert!(
        said.contains(
            "runs still to do (transformer-mlm seed 1001 at [0.012]); nothing chosen yet"
        ) && said.contains("chosen.csv is an earlier choice, not this config's")
            && !said.contains("[learning_rates]"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("sweep/chosen.csv")).unwrap(),
        before
    );
    let o = run_sweep(&cfg, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stdout(&o);
    assert!(
        said.contains("1 of 2 rates kept, [0.012] to run")
            && said.matches("sweep: transformer-mlm seed 1001 lr").count() == 1,
        "{said}"
    );
    // Its run directory was kept, so the rate trains nothing: the same row again.
    let back = std::fs::read_to_string(out.join("sweep/transformer-mlm-seed1001.csv")).unwrap();
    let bl: Vec<&str> = back.lines().collect();
    let no_seconds = |l: &str| {
        let mut f: Vec<&str> = l.split(',').collect();
        f.remove(13);
        f.join(",")
    };
    assert_eq!(no_seconds(bl[2]), no_seconds(lines[2]), "{back}");
    // A study seed is not a sweep seed; a variant the sweep does not train is refused.
    let o = sweep(&["--seed", "1"]);
    assert!(
        !o.status.success() && stderr(&o).contains("not a sweep seed"),
        "{}",
        stderr(&o)
    );
    let o = sweep(&["--model", "transformer-clm-matched"]);
    assert!(
        !o.status.success() && stderr(&o).contains("not among the variants"),
        "{}",
        stderr(&o)
    );
    // A kept file of another run (another backend here; a --quick file read by a full run
    // differs in its steps the same way) is refused, naming it; so is one whose run names
    // another config.
    let kept = out.join("sweep/transformer-mlm-seed1001.csv");
    std::fs::write(&kept, rows.replace(",flex,", ",wgpu,")).unwrap();
    let o = sweep(&[]);
    assert!(
        !o.status.success() && stderr(&o).contains("of another run"),
        "{}",
        stderr(&o)
    );
    std::fs::write(
        &kept,
        rows.replace(
            "sweep-transformer-mlm-seed1001-",
            "sweep-transformer-mlm-seed1001-0",
        ),
    )
    .unwrap();
    let o = sweep(&[]);
    assert!(
        !o.status.success() && stderr(&o).contains("of another run"),
        "{}",
        stderr(&o)
    );
    // A kept file from another grid is refused, naming it.
    std::fs::write(&kept, rows.replace("0.012,", "0.024,")).unwrap();
    let o = sweep(&[]);
    assert!(
        !o.status.success() && stderr(&o).contains("transformer-mlm-seed1001.csv"),
        "{}",
        stderr(&o)
    );
    // Without a dev split there is nothing to choose on; sweep seeds must not be study seeds.
    let plain = dir.path().join("plain.toml");
    std::fs::write(
        &plain,
        format!(
            "extends = {:?}\n",
            root.join("experiments/configs/paper.toml")
        ),
    )
    .unwrap();
    let o = run(&[
        "--exp",
        "sweep",
        "--quick",
        "--config",
        plain.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        !o.status.success() && stderr(&o).contains("dev_split = true"),
        "{}",
        stderr(&o)
    );
    let clash = dir.path().join("clash.toml");
    std::fs::write(
        &clash,
        format!(
            "extends = {:?}\n[sweep]\nseeds = [2]\n",
            root.join("experiments/configs/ten-seeds.toml")
        ),
    )
    .unwrap();
    let o = run(&[
        "--exp",
        "sweep",
        "--quick",
        "--config",
        clash.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        !o.status.success() && stderr(&o).contains("also a study seed"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_corpus_size_plan_that_cannot_be_read_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let plan = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let out = dir.path().join("out");
    let go = |p: &Path| {
        run(&[
            "--exp",
            "corpus-size",
            "--config",
            p.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let cases = [
        (plan("empty.toml", "arms = []\n"), "`arms` is empty"),
        (
            plan(
                "typo.toml",
                "[[arms]]\nlabel = \"all\"\nconfig = \"x.toml\"\nout = \".\"\nfraction = 1\n",
            ),
            "unknown field `fraction`",
        ),
        (
            plan(
                "missing.toml",
                "[[arms]]\nlabel = \"all\"\nconfig = \"no-such-study.toml\"\nout = \".\"\n",
            ),
            "no-such-study.toml",
        ),
    ];
    for (p, needle) in cases {
        let o = go(&p);
        assert!(!o.status.success(), "{}", p.display());
        let err = stderr(&o);
        assert!(err.contains(needle), "{}: {err}", p.display());
        assert!(
            !out.join("corpus-size").exists(),
            "{}: output left behind",
            p.display()
        );
    }
    // The first two errors name the plan's file.
    assert!(stderr(&go(&dir.path().join("typo.toml"))).contains("typo.toml"));
}

/// The read path end to end: two arms (half the corpus and all of it) trained at toy scale
/// into their own `--out`s by `--exp dynamics`, then read by `--exp corpus-size` from their
/// kept measurements alone (the run cache removed first, so nothing can be trained or
/// measured again): a score for each size, each trained embedding against the untrained model
/// of its size, and the change from one size to the other, at the plan's two seeds.
#[test]
fn corpus_size_reads_each_arms_kept_measurements() {
    let dir = tempfile::tempdir().unwrap();
    let base = manifest_dir().join("configs/dynamics.toml");
    let arm = |name: &str, fraction: Option<f64>| {
        let p = dir.path().join(name);
        let corpus = fraction.map_or(String::new(), |f| format!("[corpus]\nfraction = {f}\n"));
        std::fs::write(
            &p,
            format!(
                "extends = {:?}\nseeds = [1, 2]\n{corpus}[dynamics]\nmodels = [\"transformer-mlm\", \"transformer-untrained\"]\nfindings = false\n",
                base.to_str().unwrap()
            ),
        )
        .unwrap();
        p
    };
    let (half, all) = (arm("half.toml", Some(0.5)), arm("all.toml", None));
    let out = dir.path().join("out");
    for (cfg, sub) in [(&half, "corpus-half"), (&all, ".")] {
        let o = run(&[
            "--exp",
            "dynamics",
            "--quick",
            "--config",
            cfg.to_str().unwrap(),
            "--out",
            out.join(sub).to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    for runs in [out.join("runs"), out.join("corpus-half/runs")] {
        std::fs::remove_dir_all(runs).unwrap();
    }
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        "seeds = [1, 2]\n[[arms]]\nlabel = \"a half\"\nconfig = \"half.toml\"\nout = \"corpus-half\"\n[[arms]]\nlabel = \"all\"\nconfig = \"all.toml\"\nout = \".\"\n",
    )
    .unwrap();
    let o = run(&[
        "--exp",
        "corpus-size",
        "--quick",
        "--config",
        plan.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        !text.contains("training") && !text.contains("no model measured"),
        "{text}"
    );
    let rows: Vec<csv::StringRecord> = csv::Reader::from_path(out.join("corpus-size/summary.csv"))
        .unwrap()
        .records()
        .map(|r| r.unwrap())
        .collect();
    let find = |arm: &str, model: &str, quantity: &str| {
        rows.iter()
            .find(|r| &r[0] == arm && &r[3] == model && &r[5] == "WS-353-ALL" && &r[6] == quantity)
            .unwrap_or_else(|| panic!("no {model} {quantity} at arm {arm}: {rows:?}"))
    };
    // The half corpus has fewer tokens than the whole, each arm named by its label.
    let tokens = |arm: &str| -> u64 {
        rows.iter()
            .find(|r| &r[0] == arm && &r[6] == "corpus_tokens")
            .unwrap()[2]
            .parse()
            .unwrap()
    };
    let (t0, t1) = (tokens("0"), tokens("1"));
    assert!(t0 * 2 >= t1 - 2 && t0 * 2 <= t1 + 2, "{t0} {t1}");
    for (arm, label) in [("0", "a half"), ("1", "all")] {
        for q in ["spearman", "spearman_minus_untrained"] {
            let r = find(arm, "transformer-mlm", q);
            assert_eq!((&r[1], &r[10]), (label, "2"), "{r:?}");
            let (v, lo, hi): (f64, f64, f64) = (
                r[7].parse().unwrap(),
                r[8].parse().unwrap(),
                r[9].parse().unwrap(),
            );
            assert!(lo <= v && v <= hi && hi > lo, "{r:?}");
        }
    }
    let change = find("0", "transformer-mlm", "largest_minus_this");
    assert_eq!(&change[10], "2", "{change:?}");
    assert!(out.join("corpus-size/summary.csv").is_file());
    assert!(text.contains("| all - a half |"), "{text}");
}

/// `[seed_counts]`: a model named there trains and is read at the first that many seeds, the
/// others at every seed; a second run finds nothing missing.
#[test]
fn seed_counts_train_a_model_at_fewer_seeds() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("counts.toml");
    std::fs::write(
        &cfg,
        format!(
            "extends = {:?}\nseeds = [3, 1]\n[seed_counts]\n\"word2vec-sgns\" = 1\n[dynamics]\nmodels = [\"transformer-untrained\", \"word2vec-sgns\"]\nfindings = false\n",
            manifest_dir().join("configs/dynamics.toml").to_str().unwrap()
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let args = [
        "--exp",
        "dynamics",
        "--quick",
        "--config",
        cfg.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("3 models"), "{}", stdout(&o));
    let mut measured: Vec<String> = std::fs::read_dir(out.join("measurements"))
        .unwrap()
        .map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name[..name.rfind('-').unwrap()].to_string()
        })
        .collect();
    measured.sort();
    assert_eq!(
        measured,
        ["untrained-seed1", "untrained-seed3", "word2vec-sgns-seed3"]
    );
    let again = run(&args);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(!stdout(&again).contains("training"), "{}", stdout(&again));
}

/// `--exp dynamics` with a round's config writes its curves under `<out>/round/dynamics/` and
/// its cost table as `<out>/round/cost.csv`, never over the study's (read by the committed
/// report); with its comparisons on (`findings = true`) a round refuses `--seed`, which would
/// draw them from one seed.
#[test]
fn dynamics_of_a_round_writes_under_round_and_refuses_a_seed_with_findings() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, findings: bool| {
        let p = dir.path().join(name);
        std::fs::write(
            &p,
            format!(
                "extends = {:?}\nround = true\nseeds = [1]\n[training]\ndev_split = true\n[dynamics]\nmodels = [\"transformer-untrained\", \"word2vec-sgns\"]\nfindings = {findings}\n",
                manifest_dir().join("configs/dynamics.toml").to_str().unwrap()
            ),
        )
        .unwrap();
        p
    };
    let (quiet, with_findings) = (write("round.toml", false), write("findings.toml", true));
    let out = dir.path().join("out");
    let args = |cfg: &std::path::Path, seed: bool| {
        let mut a = vec![
            "--exp".to_string(),
            "dynamics".into(),
            "--quick".into(),
            "--config".into(),
            cfg.to_str().unwrap().into(),
            "--out".into(),
            out.to_str().unwrap().into(),
        ];
        if seed {
            a.extend(["--seed".to_string(), "1".into()]);
        }
        a
    };
    let o = run(&args(&with_findings, true)
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--seed 1: this config is a round in progress"),
        "{}",
        stderr(&o)
    );
    // Refused before anything is trained: the output directory holds its lock file alone.
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, [".lock"], "refused before anything is trained");
    let o = run(&args(&quiet, false)
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["dynamics/dynamics.csv", "dynamics/budget.csv", "cost.csv"] {
        let p = out.join("round").join(f);
        assert!(p.is_file(), "{}", p.display());
    }
    let cost = std::fs::read_to_string(out.join("round/cost.csv")).unwrap();
    assert!(
        cost.contains("transformer-untrained,1,") && cost.contains("word2vec-sgns,1,"),
        "{cost}"
    );
    assert!(
        !out.join("dynamics").exists() && !out.join("cost.csv").exists(),
        "the study's curves and cost table are left alone"
    );
    assert!(!out.join("REPORT.md").exists());
}

/// `round = true`: a round in progress writes its comparisons into `<out>/round/` beside the
/// committed study's (which it leaves as they were), each with the roles, seeds and models it
/// was drawn with, and the report gives them a section of their own, headed apart and with the
/// round's figures. A round refuses `--seed` (a partial comparison) and `--exp report` (the
/// report is the study's); a round description the report cannot read is refused, naming the
/// file and what is wrong.
#[test]
fn a_round_writes_its_comparisons_beside_the_study_and_the_report_reads_them_apart() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let cfg = manifest_dir().join("configs/dynamics.toml");
    let round = dir.path().join("round.toml");
    // The round reads the frozen input against another model than the study does.
    std::fs::write(
        &round,
        format!(
            "extends = {:?}\nround = true\nseeds = [1]\n[training]\ndev_split = true\n[roles]\nfrozen_reference = \"transformer-mlm\"\nno_attention_untied = \"transformer-mlm-no-attention-untied-head\"\n",
            cfg.to_str().unwrap()
        ),
    )
    .unwrap();
    let out_s = out.to_str().unwrap();
    let run_with = |exp: &str, config: &std::path::Path, extra: &[&str]| {
        let mut a = vec![
            "--exp",
            exp,
            "--quick",
            "--config",
            config.to_str().unwrap(),
            "--out",
            out_s,
        ];
        a.extend_from_slice(extra);
        run(&a)
    };
    let o = run_with("frozen", &cfg, &["--seed", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let study: Vec<Vec<u8>> = ["summary.csv", "frozen.csv", "measurements.csv"]
        .iter()
        .map(|f| std::fs::read(out.join("frozen").join(f)).unwrap())
        .collect();
    // A round reads its losses on the test half, so it needs a dev split; no config names a
    // seed twice.
    for (text, want) in [
        (
            "round = true\n",
            "round = true needs [training] dev_split = true",
        ),
        ("seeds = [1, 1]\n", "`seeds` names a seed twice"),
    ] {
        let bad = dir.path().join("bad.toml");
        std::fs::write(
            &bad,
            format!("extends = {:?}\n{text}", cfg.to_str().unwrap()),
        )
        .unwrap();
        let o = run_with("frozen", &bad, &[]);
        assert!(!o.status.success());
        assert!(
            stderr(&o).contains("bad.toml") && stderr(&o).contains(want),
            "{}",
            stderr(&o)
        );
    }
    let o = run_with("frozen", &round, &["--seed", "1"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--seed 1: this config is a round in progress"),
        "{}",
        stderr(&o)
    );
    assert!(!out.join("round").exists());
    let o = run_with("frozen", &round, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    for (f, bytes) in ["summary.csv", "frozen.csv", "measurements.csv"]
        .iter()
        .zip(&study)
    {
        assert_eq!(
            &std::fs::read(out.join("frozen").join(f)).unwrap(),
            bytes,
            "{f}"
        );
    }
    for f in [
        "summary.csv",
        "measurements.csv",
        "frozen-loss.svg",
        "round.json",
    ] {
        assert!(out.join("round/frozen").join(f).is_file(), "{f}");
    }
    // The gain at [MASK] of the frozen model: the study (no dev split) reads it on every
    // held-out sequence; the round, whose dev half chose what was chosen, on a tail of them
    // only (the test block), both from the same per-sequence file's layout.
    let gain_targets = |comparison: &std::path::Path| -> (usize, Vec<usize>) {
        let frozen = "transformer-mlm-frozen-embedding-untied-head";
        let csv = std::fs::read_to_string(comparison.join("frozen.csv")).unwrap();
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let n = lines
            .map(|l| l.split(',').collect::<Vec<&str>>())
            .find(|f| f[col("model")] == frozen && f[col("metric")] == "context_gain_at_mask")
            .map(|f| f[col("n")].parse::<usize>().unwrap())
            .unwrap_or_else(|| panic!("no gain row in {}", comparison.display()));
        let listed = std::fs::read_to_string(comparison.join("measurements.csv")).unwrap();
        let items = listed
            .lines()
            .find(|l| l.starts_with(frozen))
            .and_then(|l| l.split(',').nth(2))
            .unwrap();
        let measured = out.join(items).parent().unwrap().to_path_buf();
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::GzDecoder::new(
                std::fs::File::open(measured.join("heldout-by-input.csv.gz")).unwrap(),
            ),
            &mut text,
        )
        .unwrap();
        let mut rows = text.lines();
        let header: Vec<&str> = rows.next().unwrap().split(',').collect();
        let at = header.iter().position(|h| *h == "mask_targets").unwrap();
        let per_sequence = rows
            .map(|l| l.split(',').nth(at).unwrap().parse::<usize>().unwrap())
            .collect();
        (n, per_sequence)
    };
    let (n, per_sequence) = gain_targets(&out.join("frozen"));
    assert_eq!(n, per_sequence.iter().sum::<usize>());
    let (n, per_sequence) = gain_targets(&out.join("round/frozen"));
    let tail = |k: usize| per_sequence[k..].iter().sum::<usize>();
    assert!(
        n < tail(0) && (1..per_sequence.len()).any(|k| tail(k) == n),
        "{n} of {per_sequence:?}"
    );
    // The round's per-item outcomes are the study's kept measurements, not copies; with an
    // untied no-attention control in its roles, the frozen comparison reads it too.
    let listed = std::fs::read_to_string(out.join("round/frozen/measurements.csv")).unwrap();
    assert!(
        listed.contains("transformer-mlm-no-attention-untied-head,1,"),
        "{listed}"
    );
    assert!(
        !std::fs::read_to_string(out.join("frozen/measurements.csv"))
            .unwrap()
            .contains("no-attention"),
        "the study's frozen comparison has no such role"
    );
    assert!(listed.contains("measurements/"), "{listed}");
    assert!(!out.join("round/measurements").exists());
    let o = run_with("report", &round, &[]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("round.toml: a round in progress"),
        "{}",
        stderr(&o)
    );
    let report = || run_with("report", &cfg, &[]);
    let o = report();
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
    let (study_part, round_part) = md
        .split_once("## The round in progress: comparisons complete so far")
        .unwrap_or_else(|| panic!("no round section\n{md}"));
    assert!(
        study_part.contains("MLM frozen input, untied head against MLM untied head.")
            && study_part.contains("(frozen/frozen-loss.svg)"),
        "{study_part}"
    );
    assert!(
        round_part.contains("**The models** (")
            && round_part.contains("round.toml)")
            && round_part.contains("### Round: Would frozen random embeddings do?\n\nRead at: transformer-mlm seeds 1; transformer-mlm-frozen-embedding-untied-head seeds 1; transformer-mlm-no-attention-untied-head seeds 1.\n")
            && round_part.contains("MLM frozen input, untied head against MLM.")
            && round_part.contains("(round/frozen/frozen-loss.svg)")
            && round_part.contains("Not written yet: analogy, similarity, qkv, objective, contextuality.")
            && !round_part.contains("### Would"),
        "{round_part}"
    );
    // A description without every role (an older version's) or not one at all.
    let info = out.join("round/frozen/round.json");
    let text = std::fs::read_to_string(&info).unwrap();
    std::fs::write(&info, text.replace("\"no_attention_untied\"", "\"gone\"")).unwrap();
    let o = report();
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("round/frozen/round.json")
            && err.contains("its roles lack no_attention_untied"),
        "{err}"
    );
    // A description with every role but a field of the wrong kind.
    std::fs::write(
        &info,
        text.replace("\"seeds\": [", "\"seeds\": 3, \"was\": ["),
    )
    .unwrap();
    let o = report();
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("round.json") && err.contains("written by an older version?"),
        "{err}"
    );
    std::fs::write(&info, "{\"config\": 3}").unwrap();
    let o = report();
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("round.json") && err.contains("not a round's description"),
        "{err}"
    );
    // A summary without its description (as a run stopped before its end leaves it) is
    // refused too ...
    std::fs::remove_file(&info).unwrap();
    let o = report();
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("round/frozen") && err.contains("without its description"),
        "{err}"
    );
    // ... and a run of the comparison replaces a stale description with its own.
    std::fs::write(&info, "stale").unwrap();
    let o = run_with("frozen", &round, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&info).unwrap(), text);
    let o = report();
    assert!(o.status.success(), "{}", stderr(&o));
}
