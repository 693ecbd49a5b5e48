//! What the transformer tests share: a planted corpus, a tiny model, and the lock that keeps
//! tests which seed burn's random number generator (one per backend, shared by the threads of
//! a test binary) from drawing each other's numbers.
#![allow(dead_code)]

use std::path::Path;

use corpus::{Corpus, CorpusConfig, Preset};
use transformer::TransformerConfig;

/// 3,000 tokens over 40 words in a fixed pattern.
pub fn small_corpus() -> Corpus {
    let text: String = (0..3000)
        .map(|i| format!("w{} ", (i * 7 + i / 13) % 40))
        .collect();
    let cfg = CorpusConfig {
        path: "m".into(),
        preset: Preset::Text8,
        lowercase: false,
        drop_punctuation: false,
        min_count: 1,
        max_size: None,
        chunk_len: 1000,
        fraction: None,
    };
    Corpus::from_text(&text, Path::new("m"), &cfg).unwrap()
}

/// 2 layers of width 16, 2 heads, sequences of up to 12 tokens.
pub fn tiny_model(vocab: usize, dropout: f64) -> TransformerConfig {
    TransformerConfig::new(vocab)
        .with_d_model(16)
        .with_n_layers(2)
        .with_n_heads(2)
        .with_d_ff(32)
        .with_max_len(12)
        .with_dropout(dropout)
}

/// Tests that seed burn's random number generator take turns.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}
