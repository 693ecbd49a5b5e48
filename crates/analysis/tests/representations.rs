//! Word vectors drawn from a transformer, and its attention geometry, on small models whose
//! answers can be computed by hand.

use std::path::Path;

use analysis::geometry::{activation_geometry, attention_geometry};
use analysis::representations::{
    aggregated, decontextualized, embedding_table, hidden_states, Readout,
};
use burn::tensor::Device;
use corpus::{Corpus, CorpusConfig, Preset};
use transformer::model::QkvTying;
use transformer::{Transformer, TransformerConfig};

fn corpus() -> Corpus {
    let text: String = (0..2000)
        .map(|i| format!("w{} ", (i * 7 + i / 13) % 30))
        .collect();
    corpus_of(&text)
}

/// `text` encoded with every word kept (min_count 1), text8-style.
fn corpus_of(text: &str) -> Corpus {
    let cfg = CorpusConfig {
        path: "planted".into(),
        preset: Preset::Text8,
        lowercase: false,
        drop_punctuation: false,
        min_count: 1,
        max_size: None,
        chunk_len: 1000,
        fraction: None,
    };
    Corpus::from_text(text, Path::new("planted"), &cfg).unwrap()
}

fn model(vocab: usize, qkv: QkvTying) -> Transformer {
    let device = Device::flex();
    device.seed(3);
    TransformerConfig::new(vocab)
        .with_d_model(16)
        .with_n_layers(2)
        .with_n_heads(2)
        .with_d_ff(32)
        .with_max_len(10)
        .with_dropout(0.0)
        .with_qkv(qkv)
        .init(&device)
}

fn floats(t: burn::tensor::Tensor<2>) -> Vec<f32> {
    t.into_data().try_into_vec::<f32>().unwrap()
}

#[test]
fn tied_matrices_have_cosine_one_and_shared_qk_is_symmetric() {
    let _serial = serial();
    for (qkv, qk, qv) in [
        (QkvTying::SharedQkv, true, true),
        (QkvTying::SharedQk, true, false),
        (QkvTying::Untied, false, false),
    ] {
        let rows = attention_geometry(&model(40, qkv));
        assert_eq!(rows.len(), 2 * 2);
        for r in rows {
            let one = |c: f64| (c - 1.0).abs() < 1e-6;
            assert_eq!(one(r.cos_q_k), qk, "{qkv:?} {r:?}");
            assert_eq!(one(r.cos_q_v), qv, "{qkv:?} {r:?}");
            assert_eq!(one(r.cka_q_k), qk, "{qkv:?} {r:?}");
            assert_eq!(one(r.cka_q_v), qv, "{qkv:?} {r:?}");
            if !qk {
                // Independent random matrices: nearly orthogonal, and Q K^T nearly as far from
                // symmetric as a random matrix (1/sqrt 2).
                assert!(r.cos_q_k.abs() < 0.2, "{r:?}");
                assert!((r.qk_symmetric_share - 0.5f64.sqrt()).abs() < 0.15, "{r:?}");
            } else {
                assert!((r.qk_symmetric_share - 1.0).abs() < 1e-9, "{r:?}");
            }
        }
    }
}

#[test]
fn projected_activations_of_tied_matrices_are_identical_and_untied_sit_near_their_null() {
    let _serial = serial();
    let c = corpus();
    let seqs = transformer::data::Sequences::new(&c, 10, 0.1).unwrap();
    let n_words = c.vocab.len() as u32;
    let device = Device::flex();
    let readout = Readout {
        causal: false,
        final_norm: false,
    };
    for qkv in [QkvTying::SharedQkv, QkvTying::SharedQk, QkvTying::Untied] {
        let m = model(c.vocab.len_with_specials(), qkv);
        let rows = activation_geometry(&m, &seqs.train, 10, 40, n_words, 200, 5, readout, &device);
        assert_eq!(rows.len(), 2);
        for r in rows {
            // 40 sequences of 8 words: 320 real tokens, 200 of them sampled.
            assert_eq!(r.tokens, 200);
            let one = |x: f64| (x - 1.0).abs() < 1e-5;
            assert_eq!(one(r.cka_q_k), qkv != QkvTying::Untied, "{qkv:?} {r:?}");
            assert_eq!(one(r.cka_q_v), qkv == QkvTying::SharedQkv, "{qkv:?} {r:?}");
            // Nulls: what unrelated activations of these shapes give, far below 1.
            assert!(r.cka_q_k_null > 0.0 && r.cka_q_k_null < 0.5, "{r:?}");
            if qkv == QkvTying::Untied {
                // Two independent random projections of the same inputs share the inputs'
                // geometry, so their CKA is above the null, but below 1.
                assert!(r.cka_q_k > r.cka_q_k_null && r.cka_q_k < 0.999, "{r:?}");
            }
        }
    }
}

#[test]
fn layer_zero_vectors_are_token_plus_position_embeddings() {
    let _serial = serial();
    let c = corpus();
    let specials = c.vocab.specials();
    let m = model(c.vocab.len_with_specials(), QkvTying::Untied);
    let words: Vec<String> = c.vocab.words()[..10].to_vec();
    let emb = floats(m.token_embedding_matrix());
    let pos = floats(m.position_embedding.weight.val());
    let d = 16;

    let table = embedding_table(&m, &words);
    assert_eq!(table.data(), &emb[..10 * d]);

    // Decontextualized: the word sits at position 1 of [CLS] w [SEP].
    let dec = decontextualized(&m, &words, specials, Readout::default(), &Device::flex(), 4);
    assert_eq!(dec.len(), 3);
    for w in 0..10 {
        for j in 0..d {
            let expected = emb[w * d + j] + pos[d + j];
            assert!((dec[0].row(w)[j] - expected).abs() < 1e-6);
        }
    }
    // Deeper layers differ from layer 0 (the blocks do something).
    assert_ne!(dec[1].data(), dec[0].data());

    // Aggregated: sequences of 6 tokens; with N above every word's count, the layer-0 mean of
    // a word is its embedding plus the mean of the position embeddings it occurred at.
    let seq_len = 6;
    let seqs: Vec<u32> = c.encoded.ids[..60 * seq_len].to_vec();
    let n_max = 1000;
    let mut calls = 0;
    let agg = aggregated(
        &m,
        &words,
        &seqs,
        seq_len,
        n_max,
        7,
        Readout::default(),
        1,
        &Device::flex(),
        |_, _| calls += 1,
    );
    assert!(calls > 0);
    for w in 0..10u32 {
        let positions: Vec<usize> = seqs
            .iter()
            .enumerate()
            .filter(|(_, &id)| id == w)
            .map(|(i, _)| i % seq_len)
            .take(n_max as usize)
            .collect();
        assert_eq!(agg.occurrences[w as usize] as usize, positions.len());
        assert!(!positions.is_empty());
        for j in 0..d {
            let mean_pos: f32 =
                positions.iter().map(|p| pos[p * d + j]).sum::<f32>() / positions.len() as f32;
            let expected = emb[w as usize * d + j] + mean_pos;
            let got = agg.tables[0].row(w as usize)[j];
            assert!(
                (got - expected).abs() < 1e-5,
                "word {w} dim {j}: {got} vs {expected}"
            );
        }
    }
}

/// `m` read as the study reads a whole-word model: the raw residual stream, no padding.
fn raw_reader<'a>(
    m: &'a transformer::Transformer,
    c: &Corpus,
    device: &'a Device,
) -> analysis::representations::WholeWord<'a> {
    analysis::representations::WholeWord {
        model: m,
        n_words: c.vocab.len() as u32,
        readout: Readout::default(),
        pad: None,
        device,
    }
}

#[test]
fn a_word_in_identical_contexts_has_self_similarity_one() {
    let _serial = serial();
    use analysis::geometry::{contextuality, first_component_share};
    // Every sequence is the same: "x" always sits in the same context at the same position,
    // so all its occurrence vectors are equal in every layer.
    let text = "a b x c d ".repeat(200);
    let c = corpus_of(&text);
    let m = model(c.vocab.len_with_specials(), QkvTying::Untied);
    let seqs: Vec<u32> = c.encoded.ids[..50 * 5].to_vec();
    let x = c.vocab.words().iter().position(|w| w == "x").unwrap() as u32;
    let device = Device::flex();
    let reader = raw_reader(&m, &c, &device);
    let rows = contextuality(&reader, &seqs, 5, 50, &[x], 10, 100, 1);
    assert_eq!(rows.len(), 3);
    for r in &rows {
        assert_eq!(r.words, 1);
        assert!((r.self_similarity - 1.0).abs() < 1e-6, "{r:?}");
        assert!((r.max_explainable_variance - 1.0).abs() < 1e-6, "{r:?}");
        assert!(r.anisotropy < 1.0 && r.anisotropy > -1.0, "{r:?}");
    }
    // Rank-one check by hand: rows (1,0) and (0,1) share variance equally.
    let e1 = [1.0f32, 0.0];
    let e2 = [0.0f32, 1.0];
    assert!((first_component_share(&[&e1, &e2]) - 0.5).abs() < 1e-9);
    assert!((first_component_share(&[&e1, &e1, &e2]) - 2.0 / 3.0).abs() < 1e-9);
}

/// Two word classes used interchangeably within their own contexts: "pK aJ pL" and "qK bJ qL".
fn planted_classes() -> Corpus {
    let mut s = 0x2545F4914F6CDD1Du64;
    let mut next = |n: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % n
    };
    let mut text = String::new();
    for _ in 0..6000 {
        let (ctx, word) = if next(2) == 0 { ("p", "a") } else { ("q", "b") };
        text += &format!("{ctx}{} {word}{} {ctx}{} ", next(3), next(4), next(3));
    }
    corpus_of(&text)
}

/// For each class word, is its nearest other class word (cosine) of its own class? The share.
fn nearest_neighbour_purity(table: &word2vec::WordVectors, words: &[(usize, char)]) -> f64 {
    let cos = |i: usize, j: usize| analysis::geometry::cosine(table.row(i), table.row(j));
    let hits = words
        .iter()
        .filter(|&&(i, class)| {
            let best = words
                .iter()
                .filter(|&&(j, _)| j != i)
                .max_by(|x, y| cos(i, x.0).total_cmp(&cos(i, y.0)))
                .unwrap();
            best.1 == class
        })
        .count();
    hits as f64 / words.len() as f64
}

#[test]
fn pooled_vectors_of_a_trained_model_separate_planted_classes_untrained_do_not() {
    let _serial = serial();
    use transformer::data::Sequences;
    use transformer::training::{train, RunControl, TrainingConfig};
    let c = planted_classes();
    let seqs = Sequences::new(&c, 16, 0.1).unwrap();
    let words: Vec<String> = c.vocab.words().to_vec();
    let class_words: Vec<(usize, char)> = words
        .iter()
        .enumerate()
        .filter_map(|(i, w)| {
            let k = w.chars().next().unwrap();
            (k == 'a' || k == 'b').then_some((i, k))
        })
        .collect();
    assert_eq!(class_words.len(), 8);
    let cfg = TransformerConfig::new(c.vocab.len_with_specials())
        .with_d_model(32)
        .with_n_layers(2)
        .with_n_heads(2)
        .with_d_ff(64)
        .with_max_len(16)
        .with_dropout(0.0);
    let training = TrainingConfig {
        steps: 300,
        batch_size: 16,
        seq_len: 16,
        lr: 3e-3,
        warmup_steps: 20,
        eval_every: 300,
        eval_batches: Some(1),
        checkpoint_every: 1000,
        heldout_fraction: 0.1,
        seed: 5,
        ..TrainingConfig::default()
    };
    let device = Device::flex();
    let dir = tempfile::tempdir().unwrap();
    let trained = train(
        &cfg,
        &training,
        &seqs,
        &device,
        dir.path(),
        &RunControl::default(),
    )
    .unwrap()
    .model;
    use burn::module::Module;
    let trained = trained.valid();
    device.seed(5);
    let untrained = cfg.init(&device);
    let purity = |m: &Transformer| -> Vec<f64> {
        aggregated(
            m,
            &words,
            &seqs.train,
            16,
            50,
            32,
            Readout::default(),
            1,
            &device,
            |_, _| {},
        )
        .tables
        .iter()
        .map(|t| nearest_neighbour_purity(t, &class_words))
        .collect()
    };
    let (t, u) = (purity(&trained), purity(&untrained));
    eprintln!("nearest-neighbour purity per layer: trained {t:?}, untrained {u:?}");
    // Trained: in some encoder layer every class word's nearest class word is of its own class
    // (seeds 5-8 measured: layers 1 and 2 reach 1.0, one of them at least).
    assert_eq!(t[1].max(t[2]), 1.0, "trained {t:?} untrained {u:?}");
    // Untrained: the pooled vectors are the random token embeddings plus near-uniform attention
    // over the whole sequence, so the classes are not separated beyond chance in any layer
    // (chance: 3 of the 7 other words share the class).
    assert!(u.iter().all(|&p| p < 1.0), "untrained {u:?}");
    assert!(u.iter().sum::<f64>() / 3.0 < 0.75, "untrained {u:?}");
}

#[test]
fn a_causal_lm_is_read_causally_its_vectors_blind_to_later_tokens() {
    let _serial = serial();
    let c = corpus();
    let m = model(c.vocab.len_with_specials(), QkvTying::Untied);
    let d = 16;
    // Two sequences equal up to position 2, different after it.
    let a: Vec<u32> = vec![1, 2, 3, 4, 5, 6];
    let b: Vec<u32> = vec![1, 2, 3, 9, 8, 7];
    let causal = Readout {
        causal: true,
        final_norm: false,
    };
    for readout in [
        causal,
        Readout {
            causal: true,
            final_norm: true,
        },
    ] {
        let (ha, hb) = (
            hidden_states(&m, &a, 6, readout, &Device::flex()),
            hidden_states(&m, &b, 6, readout, &Device::flex()),
        );
        for l in 0..3 {
            // Positions 0..=2 see only the shared prefix.
            assert_eq!(ha[l][..3 * d], hb[l][..3 * d], "layer {l} {readout:?}");
            assert_ne!(ha[l][3 * d..4 * d], hb[l][3 * d..4 * d]);
        }
    }
    // Read bidirectionally (how a CLM was probed before), position 2 depends on what follows.
    let (ha, hb) = (
        hidden_states(&m, &a, 6, Readout::default(), &Device::flex()),
        hidden_states(&m, &b, 6, Readout::default(), &Device::flex()),
    );
    assert_ne!(ha[1][2 * d..3 * d], hb[1][2 * d..3 * d]);
    // The normalised readout is the final LayerNorm of the raw one: unit variance per vector.
    let norm = hidden_states(
        &m,
        &a,
        6,
        Readout {
            causal: false,
            final_norm: true,
        },
        &Device::flex(),
    );
    let v = &norm[2][..d];
    let mean = v.iter().sum::<f32>() / d as f32;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f32>() / d as f32;
    assert!(
        mean.abs() < 1e-4 && (var - 1.0).abs() < 1e-2,
        "mean {mean} var {var}"
    );
}

#[test]
fn pooling_samples_the_whole_split_uniformly_and_unseen_words_are_oov() {
    let _serial = serial();
    // "x" sits at position 1 in the first 100 sequences and at position 4 in the last 100;
    // "z" is in the vocabulary but never in the sequences pooled.
    let mut text = String::new();
    for i in 0..200 {
        let s = if i < 100 {
            "a x b c d e "
        } else {
            "a b c d x e "
        };
        text += s;
    }
    text += "z z z z z ";
    let c = corpus_of(&text);
    let m = model(c.vocab.len_with_specials(), QkvTying::Untied);
    let id = |w: &str| c.vocab.words().iter().position(|v| v == w).unwrap();
    let words: Vec<String> = c.vocab.words().to_vec();
    let seq_len = 6;
    let seqs: Vec<u32> = c.encoded.ids[..200 * seq_len].to_vec();
    let agg = aggregated(
        &m,
        &words,
        &seqs,
        seq_len,
        20,
        16,
        Readout::default(),
        3,
        &Device::flex(),
        |_, _| {},
    );
    let (x, z) = (id("x"), id("z"));
    assert_eq!(agg.occurrences[x], 20);
    assert_eq!(agg.occurrences[z], 0);
    // "z" has no row: it is OOV for every benchmark, not a zero vector.
    assert_eq!(agg.tables[0].len(), words.len() - 1);
    assert!(!agg.tables[0].words().contains(&"z".to_string()));
    assert_eq!(
        agg.words_at_max(),
        words.len() - 1,
        "a..e and x occur 200 times"
    );
    assert_eq!(agg.words_below(5), 1);
    // Layer 0 of "x" is E[x] + the mean position embedding of its sampled occurrences: the
    // share f sampled from the second half solves row = E[x] + (1 - f) P[1] + f P[4].
    let d = 16;
    let emb = floats(m.token_embedding_matrix());
    let pos = floats(m.position_embedding.weight.val());
    let row = agg.tables[0].row(agg.tables[0].words().iter().position(|w| w == "x").unwrap());
    let (mut num, mut den) = (0f64, 0f64);
    for j in 0..d {
        let r = (row[j] - emb[x * d + j] - pos[d + j]) as f64;
        let span = (pos[4 * d + j] - pos[d + j]) as f64;
        num += r * span;
        den += span * span;
    }
    let f = num / den;
    // The first 20 occurrences (the old rule) would give f = 0; a uniform sample of 20 from
    // 100 + 100 gives 0.5 on average (hypergeometric sd 0.11).
    assert!(f > 0.2 && f < 0.8, "share from the second half {f}");
    assert!(
        (f * 20.0 - (f * 20.0).round()).abs() < 1e-3,
        "f = k/20: {f}"
    );
}

#[test]
fn the_intra_sentence_null_is_the_bag_statistic_not_the_anisotropy() {
    use analysis::geometry::mean_cosine_to_mean;
    // 62 independent random directions in 128 dimensions: pairwise cosines ~0 (anisotropy 0),
    // yet each vector's cosine with their mean is about sqrt(1/62) = 0.127.
    let mut s = 0x9E3779B97F4A7C15u64;
    let mut gauss = || {
        let mut u = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let (a, b) = (u().max(1e-12), u());
        ((-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()) as f32
    };
    let vecs: Vec<Vec<f32>> = (0..62)
        .map(|_| (0..128).map(|_| gauss()).collect())
        .collect();
    let refs: Vec<&[f32]> = vecs.iter().map(|v| v.as_slice()).collect();
    let got = mean_cosine_to_mean(&refs);
    let a = analysis::geometry::mean_pairwise_cosine(&refs);
    let predicted = ((1.0 + 61.0 * a) / 62.0).sqrt();
    assert!(a.abs() < 0.02, "{a}");
    assert!((got - predicted).abs() < 0.01, "{got} vs {predicted}");
    assert!((got - 0.127).abs() < 0.015, "{got}");
}

#[test]
fn an_untrained_models_intra_sentence_similarity_sits_at_its_null() {
    let _serial = serial();
    use analysis::geometry::contextuality;
    let c = corpus();
    let m = model(c.vocab.len_with_specials(), QkvTying::Untied);
    let seq_len = 10;
    let n_seq = c.encoded.ids.len() / seq_len;
    let seqs: Vec<u32> = c.encoded.ids[..n_seq * seq_len].to_vec();
    let device = Device::flex();
    let reader = raw_reader(&m, &c, &device);
    let rows = contextuality(&reader, &seqs, seq_len, n_seq, &[0, 1, 2], 20, 20_000, 4);
    for r in &rows {
        eprintln!("{r:?}");
        // The raw statistic is far above the anisotropy (the old, wrong null) ...
        assert!(r.intra_sentence - r.anisotropy > 0.15, "{r:?}");
        // ... and at the empirical null.
        assert!(r.intra_sentence_excess.abs() < 0.03, "{r:?}");
        assert!(
            r.max_explainable_variance_null > 0.0 && r.max_explainable_variance_null < 1.0,
            "{r:?}"
        );
        // The items the intervals resample are what the statistics average.
        let it = &r.items;
        let mean = |xs: &mut dyn Iterator<Item = f64>| {
            let v: Vec<f64> = xs.collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        assert_eq!(it.self_similarity.len(), r.words);
        assert!((mean(&mut it.self_similarity.iter().copied()) - r.self_similarity).abs() < 1e-12);
        assert_eq!(it.token_cosines.len(), it.tokens * (it.tokens - 1) / 2);
        assert!((mean(&mut it.token_cosines.iter().copied()) - r.anisotropy).abs() < 1e-12);
        assert_eq!(it.intra_sentence.len(), n_seq);
        assert!(
            (mean(&mut it.intra_sentence.iter().map(|p| p.0)) - r.intra_sentence).abs() < 1e-12
        );
        let excess = mean(&mut it.intra_sentence.iter().map(|p| p.0 - p.1));
        assert!((excess - r.intra_sentence_excess).abs() < 1e-12);
        let iv = r.intervals(500, 1);
        for i in [iv.self_similarity, iv.anisotropy, iv.intra_sentence_excess] {
            assert!(i.lo <= i.estimate && i.estimate <= i.hi, "{iv:?}");
        }
    }
}

/// burn's random number generator is one per backend, shared by every thread: a test that seeds
/// it and then initialises a model gets other values when another test draws in between. The
/// tests in this file that seed (and those that draw) therefore run one at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn a_padded_sentence_reads_as_the_same_sentence_alone() {
    let _serial = serial();
    use analysis::representations::{hidden_states, hidden_states_padded};
    let c = corpus();
    let m = model(c.vocab.len_with_specials(), QkvTying::Untied);
    let sp = c.vocab.specials();
    let alone = [sp.cls, 0, 1, 2, sp.sep];
    let padded = [sp.cls, 0, 1, 2, sp.sep, sp.pad, sp.pad, sp.pad];
    let device = Device::flex();
    for readout in [
        Readout::default(),
        Readout {
            causal: false,
            final_norm: true,
        },
    ] {
        let a = hidden_states(&m, &alone, 5, readout, &device);
        let p = hidden_states_padded(&m, &padded, 8, readout, Some(sp.pad), &device);
        let unmasked = hidden_states(&m, &padded, 8, readout, &device);
        let d = a[0].len() / 5;
        for (l, ((a, p), u)) in a.iter().zip(&p).zip(&unmasked).enumerate() {
            let gap = a
                .iter()
                .zip(&p[..5 * d])
                .map(|(x, y)| (x - y).abs())
                .fold(0f32, f32::max);
            assert!(gap < 1e-5, "layer {l}: {gap}");
            // Attending to the padding would change every layer after the embedding.
            let moved = a
                .iter()
                .zip(&u[..5 * d])
                .map(|(x, y)| (x - y).abs())
                .fold(0f32, f32::max);
            assert!(
                l == 0 || moved > 1e-4,
                "layer {l}: the padding mask changed nothing ({moved})"
            );
        }
    }
}

#[test]
fn both_readouts_from_one_pass_give_each_readout_read_alone() {
    let _serial = serial();
    use analysis::geometry::{contextuality, LayerContextuality};
    use analysis::representations::{BothReadouts, WholeWord};
    let c = corpus();
    let m = model(c.vocab.len_with_specials(), QkvTying::Untied);
    let device = Device::flex();
    // More rows than the per-position reservoirs hold (64), so that their replacement draws run.
    let (seq_len, n_seq) = (8, 120);
    let pad = c.vocab.specials().pad;
    let full: Vec<u32> = c.encoded.ids[..n_seq * seq_len].to_vec();
    // Rows of 5 words and 3 pads: the form the sentences are read in.
    let padded: Vec<u32> = c.encoded.ids[..n_seq * 5]
        .chunks(5)
        .flat_map(|w| w.iter().copied().chain([pad; 3]))
        .collect();
    let track = [0, 1, 2, 5];
    for (rows, pad) in [(&full, None), (&padded, Some(pad))] {
        for causal in [false, true] {
            let reader = |final_norm| WholeWord {
                pad,
                readout: Readout { causal, final_norm },
                ..raw_reader(&m, &c, &device)
            };
            let both = BothReadouts {
                inner: reader(false),
            };
            let got = contextuality(&both, rows, seq_len, n_seq, &track, 10, 500, 3);
            let n = m.blocks.len() + 1;
            assert_eq!(got.len(), 2 * n);
            for (half, final_norm) in [(&got[..n], false), (&got[n..], true)] {
                let alone = contextuality(
                    &reader(final_norm),
                    rows,
                    seq_len,
                    n_seq,
                    &track,
                    10,
                    500,
                    3,
                );
                assert_eq!(alone.len(), n);
                for (g, a) in half.iter().zip(&alone) {
                    assert_eq!(g.layer % n, a.layer);
                    assert!(a.words > 0 && a.self_similarity.is_finite(), "{a:?}");
                    let g = LayerContextuality {
                        layer: a.layer,
                        ..g.clone()
                    };
                    // Debug prints every f64 exactly: equal text is equal bits.
                    assert_eq!(format!("{g:?}"), format!("{a:?}"));
                }
            }
            // The two halves are two readouts, not one read twice.
            assert_ne!(got[n - 1].anisotropy, got[2 * n - 1].anisotropy);
        }
    }
}
