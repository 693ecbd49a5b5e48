//! The study as a library, called the way a user's own program would, without the binary:
//! a (variant, seed) of the study turned into the tidy rows that every figure and report is
//! drawn from.

use std::collections::BTreeMap;

use clap::Parser;
use experiments::exp::settings::{Config, ModelId};
use experiments::exp::study::{Measures, Study};
use experiments::Args;

/// A planted corpus: words from the first WS-353 pairs and from the first analogy section, so
/// some similarity pairs and analogy questions are in the vocabulary, each word with a known
/// count (`120 + 7 i`), in an order shuffled by a fixed linear congruential generator.
fn planted_corpus() -> (String, BTreeMap<String, usize>) {
    let ws = std::fs::read_to_string(experiments::paths::resolve(std::path::Path::new(
        "data/similarity/EN-WS-353-ALL.txt",
    )))
    .unwrap();
    let mut words: Vec<String> = Vec::new();
    for line in ws.lines().take(20) {
        for w in line.split_whitespace().take(2) {
            let w = w.to_lowercase();
            if w.chars().all(|c| c.is_ascii_lowercase()) && !words.contains(&w) {
                words.push(w);
            }
        }
    }
    for w in [
        "athens", "greece", "berlin", "germany", "paris", "france", "rome", "italy",
    ] {
        if !words.iter().any(|x| x == w) {
            words.push(w.to_string());
        }
    }
    let mut counts = BTreeMap::new();
    let mut tokens = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let n = 120 + 7 * i;
        counts.insert(w.clone(), n);
        tokens.extend(std::iter::repeat_n(w.as_str(), n));
    }
    let mut state: u64 = 0x5eed;
    for i in (1..tokens.len()).rev() {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        tokens.swap(i, (state >> 33) as usize % (i + 1));
    }
    (tokens.join(" "), counts)
}

#[test]
fn a_variant_and_seed_become_tidy_rows_through_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let (text, counts) = planted_corpus();
    let corpus = dir.path().join("planted.txt");
    std::fs::write(&corpus, text).unwrap();
    let out = dir.path().join("out");
    let args = Args::parse_from([
        "experiments",
        "--exp",
        "analogy",
        "--quick",
        "--corpus",
        corpus.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let mut cfg = Config::default();
    cfg.quick();
    cfg.seeds = vec![1];
    let study = Study::load(&args, cfg).unwrap();
    assert_eq!(study.corpus.vocab.len(), counts.len());

    let (model, curve) = study.transformer(ModelId::Untrained, 1).unwrap();
    let heldout = curve.last().unwrap().loss;
    let what = Measures {
        pooled: false,
        projected: false,
        pairs: true,
    };
    let (rows, items) = study.measure_transformer(&model, ModelId::Untrained, 1, heldout, what);
    assert!(rows
        .iter()
        .all(|r| r.model == "transformer-untrained" && r.seed == Some(1)));
    let value = |representation: &str, metric: &str| {
        rows.iter()
            .find(|r| r.representation == representation && r.metric == metric)
            .unwrap_or_else(|| panic!("no {representation} {metric} row"))
            .value
    };

    // The entropy the held-out loss is read against, computed here from the planted counts.
    let total: usize = counts.values().sum();
    let entropy: f64 = counts
        .values()
        .map(|&n| {
            let p = n as f64 / total as f64;
            -p * p.ln()
        })
        .sum();
    assert!((value("training", "unigram_entropy") - entropy).abs() < 1e-9);
    assert_eq!(value("training", "heldout_loss"), heldout);

    // The heads' bilinear forms: the untrained model's trained and initial weights are the same
    // draw, so every form score is read twice with the same value; a layer's form of
    // independent Gaussian matrices is about half symmetric.
    let form = |state: &str, layer: usize, bench: &str, metric: &str| {
        rows.iter()
            .find(|r| {
                r.representation == state
                    && r.layer == Some(layer)
                    && r.benchmark == bench
                    && r.metric == metric
            })
            .unwrap_or_else(|| panic!("no {state} {layer} {bench} {metric} row"))
            .value
    };
    for metric in ["qk_symmetry", "qk_directionality", "qk_identity_alignment"] {
        for bench in ["head-0", "all-heads"] {
            let a = form("attention-trained", 1, bench, metric);
            assert!(a.is_finite(), "{bench} {metric}");
            assert_eq!(a, form("attention-initialisation", 1, bench, metric));
        }
    }
    let s = form("attention-initialisation", 1, "all-heads", "qk_symmetry");
    assert!((0.3..0.7).contains(&s), "{s}");
    assert!(form("attention-trained", 2, "head-1", "qk_symmetry_cross_head").is_finite());

    // Every layer read out: the embedding output (layer 0) and the quick model's 2 blocks.
    let layers: std::collections::BTreeSet<usize> = rows
        .iter()
        .filter(|r| r.representation == "contextual")
        .filter_map(|r| r.layer)
        .collect();
    assert_eq!(layers, [0, 1, 2].into_iter().collect());

    // Nothing was trained, so the weights W_Q/W_K/W_V are their initialisation, drawn again for
    // the comparison: both geometries agree value for value.
    let geometry = |state: &str| {
        rows.iter()
            .filter(|r| r.representation == state && r.metric == "cos_q_k")
            .map(|r| (r.layer, r.benchmark.clone(), r.value))
            .collect::<Vec<_>>()
    };
    let trained = geometry("attention-trained");
    assert_eq!(trained.len(), 2 * 2, "2 layers x 2 heads");
    assert_eq!(trained, geometry("attention-initialisation"));

    // The per-item outcomes behind the intervals: WS-353 pairs among the planted words.
    assert!(items.iter().any(|i| i.benchmark == "WS-353-ALL"));

    // The attention forms' pair scores. The untrained model's forms are its W0, so each
    // layer's trained-form items are its W0 items; every item row holds one value per pair of
    // the benchmark file, present for exactly the pairs the rows count, and the rows' rho is
    // Spearman's rho of those values with the file's human scores, recomputed here.
    let ws = experiments::exp::eval::benchmarks(&[])
        .unwrap()
        .similarity
        .into_iter()
        .find(|s| s.name == "WS-353-ALL")
        .unwrap();
    let item = |rep: &str, layer: Option<usize>| {
        items
            .iter()
            .find(|i| i.representation == rep && i.layer == layer && i.benchmark == "WS-353-ALL")
            .unwrap_or_else(|| panic!("no {rep} {layer:?} item"))
    };
    for l in [1, 2] {
        assert_eq!(
            item("form-trained", Some(l)).values,
            item("form-initial", Some(l)).values
        );
    }
    let dot = experiments::output::decode_cosines(&item("dot", None).values).unwrap();
    assert_eq!(dot.len(), ws.pairs.len());
    let (gold, scores): (Vec<f64>, Vec<f64>) = ws
        .pairs
        .iter()
        .zip(&dot)
        .filter_map(|(p, v)| Some((p.2, (*v)?)))
        .unzip();
    assert!(gold.len() >= 3);
    let row = rows
        .iter()
        .find(|r| r.benchmark == "pairs:WS-353-ALL:dot" && r.metric == "spearman_human")
        .unwrap();
    assert_eq!((row.n, row.oov), (gold.len(), ws.pairs.len() - gold.len()));
    // The items keep 9 decimals of each score.
    assert!((row.value - analysis::stats::spearman(&gold, &scores)).abs() < 1e-6);
    // Every layer's heads and whole form, trained and at W0, and none of it in a snapshot.
    for state in ["attention-trained", "attention-initialisation"] {
        for bench in ["pairs:WS-353-ALL:head-0", "pairs:WS-353-ALL:all-heads"] {
            assert!(rows.iter().any(|r| r.representation == state
                && r.layer == Some(2)
                && r.benchmark == bench
                && r.metric == "spearman_cosine"));
        }
    }
    let snapshot = Measures {
        pairs: false,
        ..what
    };
    let (rows, items) = study.measure_transformer(&model, ModelId::Untrained, 1, heldout, snapshot);
    assert!(!rows.iter().any(|r| r.benchmark.starts_with("pairs:")));
    assert!(!items.iter().any(|i| i.representation.starts_with("form-")));
}

/// `[training] lm_head_init` reaches the untied variants only: a tied variant's recipe (and so
/// its run's key) is the one without it, so setting it for the untied heads retrains nothing
/// tied.
#[test]
fn the_untied_heads_start_reaches_only_the_untied_variants() {
    use transformer::training::LmHeadInit;
    let dir = tempfile::tempdir().unwrap();
    let (text, _) = planted_corpus();
    let corpus = dir.path().join("planted.txt");
    std::fs::write(&corpus, text).unwrap();
    let out = dir.path().join("out");
    let args = Args::parse_from([
        "experiments",
        "--exp",
        "analogy",
        "--quick",
        "--corpus",
        corpus.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let mut cfg = Config::default();
    cfg.quick();
    let plain = Study::load(&args, cfg.clone()).unwrap();
    cfg.training.lm_head_init = LmHeadInit::Embedding;
    let copied = Study::load(&args, cfg).unwrap();
    for id in [
        ModelId::Mlm,
        ModelId::Untrained,
        ModelId::ClmMatched,
        ModelId::SharedQk,
        ModelId::SharedQkv,
        ModelId::NoAttention,
    ] {
        let json = |s: &Study| serde_json::to_string(&s.variant(id, 1)).unwrap();
        assert_eq!(json(&copied), json(&plain), "{id:?}");
    }
    for id in [
        ModelId::MlmUntied,
        ModelId::ClmMatchedUntied,
        ModelId::FrozenUntied,
        ModelId::NoAttentionUntied,
    ] {
        let (model, training) = copied.variant(id, 1);
        assert!(!model.tie_lm_head, "{id:?}");
        assert_eq!(training.lm_head_init, LmHeadInit::Embedding, "{id:?}");
        assert_eq!(plain.variant(id, 1).1.lm_head_init, LmHeadInit::Normal);
    }
}
