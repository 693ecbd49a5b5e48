//! `--exp pretrained` end to end on a tiny BERT checkpoint saved by transformers
//! (crates/pretrained/tests/fixtures/tiny-bert, with a 60-piece WordPiece tokenizer.json) and a
//! planted corpus: the three CSVs, their rows, the references beside each measure; and the
//! refusals, each naming what is missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_experiments"))
        .args(args)
        .output()
        .unwrap()
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/pretrained/tests/fixtures/tiny-bert")
}

/// Each layer's W_Q, W_K, W_V as the reader loads them (burn's `[d_in, d_out]`; the reader's
/// layout is checked against transformers in crates/pretrained/tests), with its head count.
fn tiny_bert_qkv() -> Vec<([Vec<f32>; 3], usize, usize)> {
    let ckpt = pretrained::load(&fixture(), &burn::tensor::Device::flex()).unwrap();
    ckpt.model
        .qkv_weights()
        .into_iter()
        .map(|(w, n_heads)| {
            let d_out = w[0].dims()[1];
            (
                w.map(|t| t.into_data().iter::<f32>().collect()),
                d_out,
                n_heads,
            )
        })
        .collect()
}

/// Head `h`'s columns of a `[d_in, d_out]` projection whose heads sit side by side.
fn head_of(w: &[f32], d_out: usize, n_heads: usize, h: usize) -> Vec<Vec<f64>> {
    let d_k = d_out / n_heads;
    w.chunks_exact(d_out)
        .map(|row| {
            row[h * d_k..(h + 1) * d_k]
                .iter()
                .map(|&x| x as f64)
                .collect()
        })
        .collect()
}

/// Linear CKA (Kornblith et al. 2019) of two matrices with the same rows: with each column
/// centred, ||Y^T X||_F^2 / (||X^T X||_F ||Y^T Y||_F).
fn cka(x: &[Vec<f64>], y: &[Vec<f64>]) -> f64 {
    let centre = |m: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let k = m[0].len();
        let means: Vec<f64> = (0..k)
            .map(|c| m.iter().map(|r| r[c]).sum::<f64>() / m.len() as f64)
            .collect();
        m.iter()
            .map(|r| r.iter().zip(&means).map(|(v, mu)| v - mu).collect())
            .collect()
    };
    let (x, y) = (centre(x), centre(y));
    let gram = |a: &[Vec<f64>], b: &[Vec<f64>]| -> f64 {
        let (ka, kb) = (a[0].len(), b[0].len());
        let mut s = 0.0;
        for i in 0..ka {
            for j in 0..kb {
                let e: f64 = a.iter().zip(b).map(|(ra, rb)| ra[i] * rb[j]).sum();
                s += e * e;
            }
        }
        s
    };
    gram(&x, &y) / (gram(&x, &x) * gram(&y, &y)).sqrt()
}

/// `dir/planted.txt`: `n` of `words`, the i-th being `words[(i a + i / b) % len]`.
fn planted(dir: &Path, words: &[&str], n: usize, (a, b): (usize, usize)) -> PathBuf {
    let corpus = dir.join("planted.txt");
    let text: Vec<&str> = (0..n)
        .map(|i| words[(i * a + i / b) % words.len()])
        .collect();
    std::fs::write(&corpus, text.join(" ")).unwrap();
    corpus
}

fn rows(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let headers = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            headers
                .iter()
                .zip(rec.unwrap().iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn a_checkpoint_directory_becomes_scores_heads_and_pairs() {
    let dir = tempfile::tempdir().unwrap();
    // Words of WS-353's first pairs, so some pairs are scored.
    let corpus = planted(
        dir.path(),
        &[
            "love", "sex", "tiger", "cat", "book", "paper", "computer", "keyboard", "the",
        ],
        3000,
        (7, 9),
    );
    let out = dir.path().join("out");
    let o = run(&[
        "--exp",
        "pretrained",
        "--model",
        fixture().to_str().unwrap(),
        "--corpus",
        corpus.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The pooling's cost is said before it starts.
    let said = String::from_utf8_lossy(&o.stdout);
    let (estimate, pooled) = (
        said.find("pooling reads").unwrap(),
        said.find("pooled ").unwrap(),
    );
    assert!(estimate < pooled, "{said}");
    // A corpus other than the default config's: the directory names it, and its record says
    // which config and corpus wrote it.
    let base = out.join("pretrained/tiny-bert@planted");
    let source = std::fs::read_to_string(base.join("source.toml")).unwrap();
    assert!(
        source.contains("config = \"experiments/configs/pretrained.toml\"")
            && source.contains("planted.txt"),
        "{source}"
    );
    // Another config reading the same corpus falls on the same name: refused before any work,
    // the measurements kept.
    let other = dir.path().join("other.toml");
    std::fs::write(
        &other,
        format!(
            "extends = {:?}\n",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/pretrained.toml")
        ),
    )
    .unwrap();
    let scores = std::fs::read(base.join("scores.csv")).unwrap();
    let refused = run(&[
        "--exp",
        "pretrained",
        "--model",
        fixture().to_str().unwrap(),
        "--config",
        other.to_str().unwrap(),
        "--corpus",
        corpus.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let e = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && e.contains("would overwrite them") && e.contains("other.toml"),
        "{e}"
    );
    assert!(!String::from_utf8_lossy(&refused.stdout).contains("pooling reads"));
    assert_eq!(std::fs::read(base.join("scores.csv")).unwrap(), scores);
    let heads = rows(&base.join("heads.csv"));
    // 2 layers x (2 heads x 9 measures + 3 measures of the whole layer's form).
    assert_eq!(heads.len(), 2 * (2 * 9 + 3));
    // Each head's linear CKA of W_Q, W_K, W_V pairwise against an f64 computation here from
    // the checkpoint's weights; V's Gaussian band is Q with K's, to within its draws.
    let layers = tiny_bert_qkv();
    for r in heads.iter().filter(|r| r["measure"].starts_with("cka_")) {
        let (l, h): (usize, usize) = (r["layer"].parse().unwrap(), r["head"].parse().unwrap());
        let m = &r["measure"];
        let (w, d_out, n_heads) = &layers[l - 1];
        let matrix = |c: char| head_of(&w["qkv".find(c).unwrap()], *d_out, *n_heads, h);
        let (a, b) = (m.as_bytes()[4] as char, m.as_bytes()[6] as char);
        let want = cka(&matrix(a), &matrix(b));
        let v: f64 = r["value"].parse().unwrap();
        assert!((v - want).abs() < 1e-6, "{r:?}: here {want}");
        if m != "cka_q_k" {
            let qk = heads
                .iter()
                .find(|q| {
                    q["measure"] == "cka_q_k" && q["layer"] == r["layer"] && q["head"] == r["head"]
                })
                .unwrap();
            let (g, g_qk, sd): (f64, f64, f64) = (
                r["gaussian"].parse().unwrap(),
                qk["gaussian"].parse().unwrap(),
                qk["gaussian_sd"].parse().unwrap(),
            );
            assert!((g - g_qk).abs() < 2.0 * sd, "{r:?} against {qk:?}");
            assert_eq!(r["cross_head"], "", "{r:?}");
        }
    }
    for m in ["cka_q_k", "cka_q_v", "cka_k_v"] {
        assert_eq!(
            heads.iter().filter(|r| r["measure"] == m).count(),
            2 * 2,
            "{m}"
        );
    }
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture().join("expected.json")).unwrap())
            .unwrap();
    for r in &heads {
        let v: f64 = r["value"].parse().unwrap();
        let init: f64 = r["gaussian"].parse().unwrap();
        if r["measure"] == "symmetry" {
            // Independent Gaussian matrices of these shapes: about 1/2.
            assert!((init - 0.5).abs() < 0.1, "{r:?}");
            if r["head"] != "all" {
                let (l, h): (usize, usize) =
                    (r["layer"].parse().unwrap(), r["head"].parse().unwrap());
                let torch = expected["forms"][l - 1][h]["symmetry"].as_f64().unwrap();
                assert!((v - torch).abs() < 1e-5, "{r:?} vs torch {torch}");
                assert!(r["cross_head"].parse::<f64>().unwrap().is_finite());
            } else {
                let l: usize = r["layer"].parse().unwrap();
                let torch = expected["forms"][l - 1][2]["all_symmetry"]
                    .as_f64()
                    .unwrap();
                assert!((v - torch).abs() < 1e-5, "{r:?} vs torch {torch}");
                assert_eq!(r["cross_head"], "", "{r:?}");
            }
        }
    }
    let scores = rows(&base.join("scores.csv"));
    assert!(scores.iter().all(|r| r["model"] == "tiny-bert"
        && ["embedding", "aggregated", "decontextualized"]
            .contains(&r["representation"].as_str())));
    let ws = scores
        .iter()
        .find(|r| {
            r["benchmark"] == "WS-353-ALL"
                && r["metric"] == "spearman"
                && r["representation"] == "embedding"
        })
        .unwrap();
    // Every layer pooled over the corpus (0 = embedding output, then 2 layers), each scored on
    // the same pairs: every word of the planted corpus occurs.
    for layer in ["0", "1", "2"] {
        let pooled = scores
            .iter()
            .find(|r| {
                r["benchmark"] == "WS-353-ALL"
                    && r["metric"] == "spearman"
                    && r["representation"] == "aggregated"
                    && r["layer"] == layer
            })
            .unwrap_or_else(|| panic!("no aggregated layer {layer} row"));
        assert_eq!(pooled["n"], ws["n"]);
        let v: f64 = pooled["value"].parse().unwrap();
        assert!(v.is_finite());
        if layer == "2" {
            // Contextual vectors, not the embedding's again.
            assert_ne!(v, ws["value"].parse::<f64>().unwrap());
        }
    }
    // Each word alone, every layer, on the same pairs (every word is read).
    for layer in ["0", "1", "2"] {
        let alone = scores
            .iter()
            .find(|r| {
                r["benchmark"] == "WS-353-ALL"
                    && r["metric"] == "spearman"
                    && r["representation"] == "decontextualized"
                    && r["layer"] == layer
            })
            .unwrap_or_else(|| panic!("no decontextualized layer {layer} row"));
        assert_eq!(alone["n"], ws["n"]);
    }
    // Contextuality per layer, on the corpus's rows and on WikiText-2's sentences (the
    // config's), as the study's CSVs name its measures.
    let ctx = rows(&base.join("contextuality.csv"));
    for benchmark in ["contextuality", "contextuality-sentences"] {
        for layer in ["0", "1", "2"] {
            let of = |metric: &str| -> f64 {
                ctx.iter()
                    .find(|r| {
                        r["benchmark"] == benchmark && r["layer"] == layer && r["metric"] == metric
                    })
                    .unwrap_or_else(|| panic!("no {benchmark} {metric} at layer {layer}"))["value"]
                    .parse()
                    .unwrap()
            };
            let (s, a) = (of("self_similarity"), of("anisotropy"));
            assert!(
                s > -1.0 && s <= 1.0 + 1e-9 && a > -1.0 && a < 1.0,
                "{s} {a}"
            );
            assert!((of("self_similarity_adjusted") - (s - a)).abs() < 1e-12);
        }
    }
    // Collocation rows for every table, as the study's.
    for (rep, layer) in [
        ("embedding", ""),
        ("aggregated", "2"),
        ("decontextualized", "2"),
    ] {
        assert!(
            scores.iter().any(|r| r["benchmark"] == "collocation"
                && r["metric"] == "collocated_cosine"
                && r["representation"] == rep
                && r["layer"] == layer),
            "{rep} {layer}"
        );
    }
    // Item intervals: the embedding's WS-353 score as in scores.csv, inside its interval, on
    // the same pairs; every layer's difference from the embedding.
    let intervals = rows(&base.join("intervals.csv"));
    let row = intervals
        .iter()
        .find(|r| {
            r["benchmark"] == "WS-353-ALL"
                && r["representation"] == "embedding"
                && r["metric"] == "spearman"
        })
        .unwrap();
    let (e, lo, hi): (f64, f64, f64) = (
        row["estimate"].parse().unwrap(),
        row["lo"].parse().unwrap(),
        row["hi"].parse().unwrap(),
    );
    assert!(
        (e - ws["value"].parse::<f64>().unwrap()).abs() < 1e-12,
        "{row:?}"
    );
    assert!(lo < e && e < hi, "{row:?}");
    assert_eq!(row["items"], ws["n"]);
    let chance: (f64, f64) = (
        row["chance_lo"].parse().unwrap(),
        row["chance_hi"].parse().unwrap(),
    );
    assert!(chance.0 < 0.0 && chance.1 > 0.0, "{row:?}");
    for rep in ["aggregated", "decontextualized"] {
        let diffs = intervals
            .iter()
            .filter(|r| {
                r["benchmark"] == "WS-353-ALL"
                    && r["representation"] == rep
                    && r["metric"] == "minus_embedding"
            })
            .count();
        assert_eq!(diffs, 3, "{rep}");
    }
    // The collocation gap's interval: its estimate is collocated minus matched cosine of
    // scores.csv, for every table.
    let value = |rows: &[std::collections::HashMap<String, String>],
                 f: &dyn Fn(&std::collections::HashMap<String, String>) -> bool|
     -> f64 {
        rows.iter().find(|r| f(r)).unwrap()["value"]
            .parse()
            .unwrap()
    };
    for (rep, layer) in [
        ("embedding", ""),
        ("aggregated", "2"),
        ("decontextualized", "1"),
    ] {
        let of = |metric: &str| {
            value(&scores, &|r| {
                r["benchmark"] == "collocation"
                    && r["metric"] == metric
                    && r["representation"] == rep
                    && r["layer"] == layer
            })
        };
        let gap = intervals
            .iter()
            .find(|r| {
                r["benchmark"] == "collocation"
                    && r["metric"] == "collocated_minus_matched"
                    && r["representation"] == rep
                    && r["layer"] == layer
            })
            .unwrap();
        // The planted corpus's words all meet within the window, so there are no matched
        // pairs: a gap with no controls is NaN, as in scores.csv (the bootstrap's numbers are
        // checked in analysis::collocation's tests).
        let e: f64 = gap["estimate"].parse().unwrap();
        let want = of("collocated_cosine") - of("matched_cosine");
        assert_eq!(e.is_nan(), want.is_nan(), "{gap:?}");
        if want.is_finite() {
            assert!((e - want).abs() < 1e-9, "{gap:?}");
        }
        // Its pairs are the collocated pairs scores.csv counts for the table.
        let n = &scores
            .iter()
            .find(|r| {
                r["benchmark"] == "collocation"
                    && r["metric"] == "collocated_cosine"
                    && r["representation"] == rep
                    && r["layer"] == layer
            })
            .unwrap()["n"];
        assert_eq!(&gap["items"], n);
    }
    // Contextuality's intervals: every layer of both passes, estimates as in contextuality.csv.
    let ctx = rows(&base.join("contextuality.csv"));
    for bench in ["contextuality", "contextuality-sentences"] {
        for layer in ["0", "1", "2"] {
            for metric in ["self_similarity_adjusted", "intra_sentence_excess"] {
                let iv = intervals
                    .iter()
                    .find(|r| {
                        r["benchmark"] == bench
                            && r["representation"] == "contextual"
                            && r["layer"] == layer
                            && r["metric"] == metric
                    })
                    .unwrap_or_else(|| panic!("{bench} {layer} {metric}"));
                let want = value(&ctx, &|r| {
                    r["benchmark"] == bench && r["layer"] == layer && r["metric"] == metric
                });
                let e: f64 = iv["estimate"].parse().unwrap();
                assert!((e - want).abs() < 1e-12, "{iv:?}");
                let (lo, hi): (f64, f64) = (iv["lo"].parse().unwrap(), iv["hi"].parse().unwrap());
                assert!(lo <= e && e <= hi && hi > lo, "{iv:?}");
            }
        }
    }
    // Each statistic drawn beside the published BERT-base and GPT-2 rows.
    for stem in ["self-similarity", "intra-sentence", "anisotropy"] {
        for ext in ["svg", "png"] {
            let f = base.join(format!("contextuality-{stem}.{ext}"));
            assert!(
                std::fs::metadata(&f).unwrap().len() > 1000,
                "{}",
                f.display()
            );
        }
        let svg = std::fs::read_to_string(base.join(format!("contextuality-{stem}.svg"))).unwrap();
        assert!(
            svg.contains("gpt2, STS sentences")
                && svg.contains("tiny-bert, wikitext-2-valid sentences")
        );
    }
    let used: usize = ws["n"].parse().unwrap();
    assert!(used >= 3, "{ws:?}");
    let pairs = rows(&base.join("pairs.csv"));
    let ws_pairs: Vec<_> = pairs
        .iter()
        .filter(|r| r["benchmark"] == "WS-353-ALL")
        .collect();
    // The dot product (M = I), then 2 layers x (2 heads + the layer), each on the pairs the
    // similarity score used.
    assert_eq!(ws_pairs.len(), 7);
    assert_eq!(
        (ws_pairs[0]["layer"].as_str(), ws_pairs[0]["head"].as_str()),
        ("0", "dot")
    );
    assert!(ws_pairs
        .iter()
        .all(|r| r["pairs"].parse::<usize>().unwrap() == used));
    // Every row's rho inside its interval over the pairs; the dot row carries the null for the
    // best of the 4 single heads (the largest of 4 Gaussian heads' rho, per draw), which is at
    // least the Gaussian mean of any one head.
    for r in &ws_pairs {
        let (rho, lo, hi): (f64, f64, f64) = (
            r["spearman_human"].parse().unwrap(),
            r["spearman_human_lo"].parse().unwrap(),
            r["spearman_human_hi"].parse().unwrap(),
        );
        assert!(lo <= rho + 1e-12 && rho <= hi + 1e-12, "{r:?}");
    }
    let best: f64 = ws_pairs[0]["gaussian_best_head_human"].parse().unwrap();
    for r in ws_pairs[1..].iter().filter(|r| r["head"] != "all") {
        assert!(r["gaussian_best_head_human"].is_empty(), "{r:?}");
        let g: f64 = r["gaussian_spearman_human"].parse().unwrap();
        assert!(best >= g - 1e-12, "{best} {r:?}");
    }
    // --heads-only: the same heads.csv and pairs.csv from the weights alone, no corpus pass,
    // the corpus measures left as they were.
    let (heads_csv, pairs_csv, scores_csv) = (
        std::fs::read(base.join("heads.csv")).unwrap(),
        std::fs::read(base.join("pairs.csv")).unwrap(),
        std::fs::read(base.join("scores.csv")).unwrap(),
    );
    std::fs::remove_file(base.join("heads.csv")).unwrap();
    std::fs::remove_file(base.join("pairs.csv")).unwrap();
    let o = run(&[
        "--exp",
        "pretrained",
        "--model",
        fixture().to_str().unwrap(),
        "--corpus",
        corpus.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--heads-only",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        !said.contains("pooling reads") && said.contains("--heads-only: wrote"),
        "{said}"
    );
    assert_eq!(std::fs::read(base.join("heads.csv")).unwrap(), heads_csv);
    assert_eq!(std::fs::read(base.join("pairs.csv")).unwrap(), pairs_csv);
    assert_eq!(std::fs::read(base.join("scores.csv")).unwrap(), scores_csv);
}

#[test]
fn an_estimate_says_the_cost_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = planted(
        dir.path(),
        &["love", "sex", "tiger", "cat", "book", "the"],
        2000,
        (5, 7),
    );
    let out = dir.path().join("out");
    let o = run(&[
        "--exp",
        "pretrained",
        "--model",
        fixture().to_str().unwrap(),
        "--corpus",
        corpus.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--estimate",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("pooling reads"), "{said}");
    // Six corpus words alone, each with its pieces and two special tokens.
    let alone = said
        .lines()
        .find(|l| l.starts_with("the decontextualized pass reads 6 words alone ("))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(alone.contains("not estimated"), "{alone}");
    // Memory said before anything is pooled (its arithmetic is pooling_memory's unit test).
    let memory = said.lines().find(|l| l.starts_with("memory: ")).unwrap();
    assert!(
        memory.contains("running sums") && memory.contains("in all"),
        "{memory}"
    );
    assert!(said.contains("--estimate: stopping here"), "{said}");
    assert!(!said.contains("pooled "), "{said}");
    assert!(!out.exists(), "--estimate created {}", out.display());
    // --heads-only reads no corpus: nothing to estimate, refused before anything is written.
    let o = run(&[
        "--exp",
        "pretrained",
        "--model",
        fixture().to_str().unwrap(),
        "--corpus",
        corpus.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--estimate",
        "--heads-only",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("--heads-only") && err.contains("--estimate"),
        "{err}"
    );
    assert!(
        !out.exists(),
        "--estimate --heads-only created {}",
        out.display()
    );
}

#[test]
fn a_missing_model_or_tokenizer_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(&["--exp", "pretrained", "--out", dir.path().to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        !o.status.success() && err.contains("--exp pretrained needs --model DIR"),
        "{err}"
    );
    let ckpt = dir.path().join("ckpt");
    std::fs::create_dir(&ckpt).unwrap();
    for f in ["config.json", "model.safetensors"] {
        std::fs::copy(fixture().join(f), ckpt.join(f)).unwrap();
    }
    let o = run(&[
        "--exp",
        "pretrained",
        "--model",
        ckpt.to_str().unwrap(),
        "--out",
        dir.path().join("out").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        !o.status.success()
            && err.contains(&format!(
                "{}: cannot read",
                ckpt.join("tokenizer.json").display()
            )),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn the_forward_benchmark_server_times_passes_and_refuses_other_requests() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_experiments"))
        .args(["--exp", "bench-pretrained-steps", "--model"])
        .arg(fixture())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"forward\n\nbackward\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let lines: Vec<&str> = out.lines().collect();
    // The tiny checkpoint has 16 positions: the batch is cut to them.
    assert_eq!(lines[0], "ready 32 16");
    let seconds: f64 = lines[1].strip_prefix("forward ").unwrap().parse().unwrap();
    assert!(seconds > 0.0 && seconds.is_finite());
    assert_eq!(lines.len(), 2, "{out}");
    assert!(!o.status.success());
    assert!(
        err.contains("stdin line 3: unknown request `backward` (expected `forward`)"),
        "{err}"
    );
}
