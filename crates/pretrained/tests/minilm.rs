//! The one real checkpoint this machine can get, all-MiniLM-L6-v2 (scripts/fetch_pretrained.sh
//! writes it; scripts/test.sh runs that first), against Hugging Face transformers' hidden states
//! on two sentences tokenized by its own tokenizer (tests/fixtures/minilm-expected.json: every
//! layer, every position's first 8 coordinates and its norm; tests/fixtures/minilm-hidden.f32:
//! every coordinate; scripts/pretrained_fixtures.py writes both).

use std::path::Path;

use burn::tensor::{Bool, DType, Device, Int, Tensor, TensorData};
use pretrained::{load, Architecture};
use serde_json::Value;

#[test]
fn minilm_reads_as_transformers_reads_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = root.join("data/pretrained/all-MiniLM-L6-v2");
    assert!(
        dir.join("model.safetensors").is_file(),
        "{}: missing; scripts/fetch_pretrained.sh fetches it (scripts/test.sh runs it)",
        dir.display()
    );
    let device = Device::flex();
    let ckpt = load(&dir, &device).unwrap();
    assert_eq!(ckpt.stored_dtype, DType::F32);
    match &ckpt.architecture {
        Architecture::Bert(c) => assert_eq!(
            (
                c.vocab_size,
                c.hidden_size,
                c.num_hidden_layers,
                c.num_attention_heads
            ),
            (30522, 384, 6, 12)
        ),
        other => panic!("{other:?}"),
    }
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/minilm-expected.json");
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let rows = |key: &str| -> Vec<Vec<i64>> {
        expected[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_i64().unwrap())
                    .collect()
            })
            .collect()
    };
    let (tokens, mask) = (rows("tokens"), rows("mask"));
    let (b, t) = (tokens.len(), tokens[0].len());
    let ids = Tensor::<2, Int>::from_data(TensorData::new(tokens.concat(), [b, t]), &device);
    let pad = Tensor::<2, Bool>::from_data(
        TensorData::new(
            mask.concat().iter().map(|&m| m == 0).collect::<Vec<_>>(),
            [b, t],
        ),
        &device,
    );
    let hidden = ckpt.model.hidden_states(ids, Some(pad));
    assert_eq!(hidden.len(), 7);
    // Every coordinate of every layer, [layer, row, position, coordinate] as float32.
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/minilm-hidden.f32");
    let full: Vec<f32> = std::fs::read(&full)
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let shape: Vec<usize> = expected["hidden_shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect();
    assert_eq!(shape, [7, b, t, 384]);
    assert_eq!(full.len(), shape.iter().product::<usize>());
    let mut worst = 0f64;
    let mut worst_coordinate = 0f64;
    let mut worst_absolute = 0f64;
    for (l, h) in hidden.into_iter().enumerate() {
        let [_, _, d] = h.dims();
        let v: Vec<f32> = h.into_data().iter::<f32>().collect();
        for i in 0..b {
            for p in 0..t {
                let row = &v[(i * t + p) * d..(i * t + p + 1) * d];
                let norm = row.iter().map(|&x| (x as f64).powi(2)).sum::<f64>().sqrt();
                let want = expected["norm"][l][i][p].as_f64().unwrap();
                worst = worst.max((norm - want).abs() / want);
                // Padding positions too: transformers computes them, and so do we.
                let at = ((l * b + i) * t + p) * d;
                for (c, (&x, &y)) in row.iter().zip(&full[at..at + d]).enumerate() {
                    let diff = (x as f64 - y as f64).abs();
                    worst_coordinate = worst_coordinate.max(diff / want.max(1.0));
                    worst_absolute = worst_absolute.max(diff);
                    assert!(
                        diff < 1e-4,
                        "layer {l} row {i} position {p} coordinate {c}: {x} vs {y}"
                    );
                }
                for c in 0..8 {
                    let want = expected["first8"][l][i][p][c].as_f64().unwrap();
                    assert!(
                        (row[c] as f64 - want).abs() < 1e-4,
                        "layer {l} row {i} position {p} coordinate {c}: {} vs {want}",
                        row[c]
                    );
                }
            }
        }
    }
    eprintln!("largest absolute difference of a coordinate {worst_absolute}, relative to its row's norm {worst_coordinate}");
    assert!(
        worst < 1e-5,
        "largest relative difference of a norm {worst}"
    );
    assert!(
        worst_coordinate < 1e-5,
        "largest difference of a coordinate relative to its row's norm {worst_coordinate}"
    );
}
