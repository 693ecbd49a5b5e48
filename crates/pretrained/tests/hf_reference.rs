//! The reader against Hugging Face transformers itself: tiny random BERT and GPT-2 checkpoints
//! saved by `save_pretrained`, and the hidden states transformers computed from them on fixed
//! token ids (scripts/pretrained_fixtures.py wrote both). Then every way a checkpoint directory
//! can be wrong, each refused with the file and the tensor or key named.

use std::path::{Path, PathBuf};

use burn::tensor::{Bool, DType, Device, Int, Tensor, TensorData};
use pretrained::{load, Architecture, PretrainedError};
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Largest absolute difference between our hidden states and transformers', over every layer,
/// position and coordinate (padding positions included: both compute them the same way).
fn worst_difference(dir: &Path) -> (f32, usize) {
    let device = Device::flex();
    let ckpt = load(dir, &device).unwrap();
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
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
    let ours = ckpt.model.hidden_states(ids, Some(pad));
    let theirs = expected["hidden_states"].as_array().unwrap();
    assert_eq!(ours.len(), theirs.len(), "{}: layers", dir.display());
    let mut worst = 0f32;
    let mut n = 0;
    for (mine, want) in ours.into_iter().zip(theirs) {
        let want: Vec<f32> = want
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r.as_array().unwrap().iter())
            .flat_map(|p| p.as_array().unwrap().iter())
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        let mine: Vec<f32> = mine.into_data().iter::<f32>().collect();
        assert_eq!(mine.len(), want.len());
        for (a, b) in mine.iter().zip(&want) {
            worst = worst.max((a - b).abs());
            n += 1;
        }
    }
    (worst, n)
}

#[test]
fn bert_and_gpt2_hidden_states_are_transformers_own() {
    for (name, dtype) in [
        ("tiny-bert", DType::F32),
        ("tiny-bert-f16", DType::F16),
        ("tiny-gpt2", DType::F32),
        ("tiny-gpt2-bf16", DType::BF16),
    ] {
        let dir = fixture(name);
        let (worst, n) = worst_difference(&dir);
        // 3 layers x 2 rows x 8 positions x 16 coordinates.
        assert_eq!(n, 3 * 2 * 8 * 16, "{name}");
        assert!(worst < 1e-5, "{name}: largest difference {worst}");
        eprintln!("{name}: largest difference {worst}");
        let ckpt = load(&dir, &Device::flex()).unwrap();
        assert_eq!(ckpt.stored_dtype, dtype, "{name}");
        assert_eq!(ckpt.model.causal(), name.contains("gpt2"));
    }
}

/// A checkpoint directory rewritten: tensors renamed, dropped, replaced; config.json edited.
struct Rewrite {
    dir: tempfile::TempDir,
}

/// Reads a safetensors file: (name, dtype, shape, bytes) in file order.
fn read_safetensors(path: &Path) -> Vec<(String, String, Vec<usize>, Vec<u8>)> {
    let bytes = std::fs::read(path).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Map<String, Value> = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let data = &bytes[8 + n..];
    let mut out: Vec<_> = header
        .into_iter()
        .filter(|(k, _)| k != "__metadata__")
        .map(|(k, v)| {
            let off: Vec<usize> = v["data_offsets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap() as usize)
                .collect();
            let shape = v["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap() as usize)
                .collect();
            (
                k,
                v["dtype"].as_str().unwrap().to_string(),
                shape,
                data[off[0]..off[1]].to_vec(),
            )
        })
        .collect();
    out.sort_by_key(|t| t.0.clone());
    out
}

fn write_safetensors(path: &Path, tensors: &[(String, String, Vec<usize>, Vec<u8>)]) {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        header.insert(
            name.clone(),
            serde_json::json!({"dtype": dtype, "shape": shape,
                "data_offsets": [data.len(), data.len() + bytes.len()]}),
        );
        data.extend_from_slice(bytes);
    }
    let mut h = serde_json::to_vec(&Value::Object(header)).unwrap();
    while h.len() % 8 != 0 {
        h.push(b' ');
    }
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend(h);
    out.extend(data);
    std::fs::write(path, out).unwrap();
}

impl Rewrite {
    fn of(name: &str) -> Rewrite {
        let dir = tempfile::tempdir().unwrap();
        for f in ["config.json", "model.safetensors", "expected.json"] {
            std::fs::copy(fixture(name).join(f), dir.path().join(f)).unwrap();
        }
        Rewrite { dir }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn tensors(&self, f: impl FnOnce(&mut Vec<(String, String, Vec<usize>, Vec<u8>)>)) -> &Self {
        let p = self.path().join("model.safetensors");
        let mut t = read_safetensors(&p);
        f(&mut t);
        write_safetensors(&p, &t);
        self
    }
    fn config(&self, f: impl FnOnce(&mut serde_json::Map<String, Value>)) -> &Self {
        let p = self.path().join("config.json");
        let mut c: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        f(c.as_object_mut().unwrap());
        std::fs::write(&p, serde_json::to_string(&c).unwrap()).unwrap();
        self
    }
    fn error(&self) -> String {
        match load(self.path(), &Device::flex()) {
            Ok(_) => panic!("{} loaded", self.path().display()),
            Err(e) => e.to_string(),
        }
    }
}

#[test]
fn task_model_prefixes_and_tensorflow_layernorm_names_are_read() {
    // BertForMaskedLM-style `bert.` keys with gamma/beta, GPT2LMHeadModel-style
    // `transformer.` keys, plus tensors this reader has no use for: the same hidden states.
    let bert = Rewrite::of("tiny-bert");
    bert.tensors(|t| {
        for x in t.iter_mut() {
            x.0 = format!("bert.{}", x.0)
                .replace("LayerNorm.weight", "LayerNorm.gamma")
                .replace("LayerNorm.bias", "LayerNorm.beta");
        }
        t.push((
            "cls.predictions.bias".into(),
            "F32".into(),
            vec![60],
            vec![0; 240],
        ));
        t.push((
            "bert.embeddings.position_ids".into(),
            "I64".into(),
            vec![1, 16],
            vec![0; 128],
        ));
    });
    let gpt = Rewrite::of("tiny-gpt2");
    gpt.tensors(|t| {
        for x in t.iter_mut() {
            x.0 = format!("transformer.{}", x.0);
        }
        t.push((
            "lm_head.weight".into(),
            "F32".into(),
            vec![60, 16],
            vec![0; 3840],
        ));
        // Old hub files keep the causal-mask buffers, some as bytes: not weights, and of layers
        // the config has, so neither the layer check nor the dtype check may refuse them.
        t.push((
            "transformer.h.0.attn.bias".into(),
            "U8".into(),
            vec![1, 1, 16, 16],
            vec![1; 256],
        ));
        t.push((
            "transformer.h.1.attn.masked_bias".into(),
            "F32".into(),
            vec![],
            vec![0; 4],
        ));
    });
    for dir in [bert.path(), gpt.path()] {
        let (worst, _) = worst_difference(dir);
        assert!(worst < 2e-5, "{}: {worst}", dir.display());
    }
}

/// A square weight stored the other way round has the right shape, so only the numbers can
/// tell: the reader transposes BERT's `nn.Linear` weights (stored output x input) and not
/// GPT-2's `Conv1D` ones (input x output). Each square matrix below, transposed in the file, is
/// what a reader that got that wrong would see: the hidden states must then leave
/// transformers' by far more than the tolerance of `bert_and_gpt2_hidden_states_are_transformers_own`.
#[test]
fn a_square_weight_read_the_wrong_way_round_is_caught_by_the_reference() {
    fn transposed(bytes: &[u8], n: usize) -> Vec<u8> {
        let mut out = vec![0u8; bytes.len()];
        for r in 0..n {
            for c in 0..n {
                let (from, to) = ((r * n + c) * 4, (c * n + r) * 4);
                out[to..to + 4].copy_from_slice(&bytes[from..from + 4]);
            }
        }
        out
    }
    for (fixture_name, tensor) in [
        ("tiny-bert", "encoder.layer.0.attention.self.query.weight"),
        ("tiny-bert", "encoder.layer.1.attention.self.value.weight"),
        ("tiny-bert", "encoder.layer.0.attention.output.dense.weight"),
        ("tiny-gpt2", "h.0.attn.c_proj.weight"),
    ] {
        let dir = Rewrite::of(fixture_name);
        dir.tensors(|t| {
            let x = t.iter_mut().find(|x| x.0 == tensor).unwrap();
            assert_eq!((x.1.as_str(), x.2.as_slice()), ("F32", &[16, 16][..]));
            let flipped = transposed(&x.3, 16);
            assert_ne!(flipped, x.3, "{tensor} is not symmetric");
            x.3 = flipped;
        });
        let (worst, _) = worst_difference(dir.path());
        eprintln!("{fixture_name} {tensor} read transposed: largest difference {worst}");
        assert!(
            worst > 1e-2,
            "{fixture_name} {tensor} read transposed: {worst}"
        );
    }
}

#[test]
fn a_wrong_tensor_is_named_with_its_file() {
    let cases: Vec<(Rewrite, &str)> = vec![
        (
            {
                let r = Rewrite::of("tiny-bert");
                r.tensors(|t| t.retain(|x| x.0 != "encoder.layer.1.attention.self.key.weight"));
                r
            },
            "tensor `encoder.layer.1.attention.self.key.weight` is missing",
        ),
        (
            {
                let r = Rewrite::of("tiny-gpt2");
                r.tensors(|t| {
                    let x = t.iter_mut().find(|x| x.0 == "h.0.mlp.c_fc.weight").unwrap();
                    // [16, 64] stored as [64, 16]: a PyTorch-layout Linear where Conv1D belongs.
                    x.2 = vec![64, 16];
                });
                r
            },
            "tensor `h.0.mlp.c_fc.weight` has shape [64, 16], config.json's sizes give [16, 64]",
        ),
        (
            {
                let r = Rewrite::of("tiny-bert");
                r.tensors(|t| {
                    let x = t.iter_mut().find(|x| x.0 == "embeddings.LayerNorm.bias").unwrap();
                    x.1 = "I32".into();
                });
                r
            },
            "tensor `embeddings.LayerNorm.bias` is I32; float weights",
        ),
        (
            {
                let r = Rewrite::of("tiny-bert");
                r.tensors(|t| {
                    for x in t.iter_mut() {
                        x.0 = format!("encoder.{}", x.0);
                    }
                });
                r
            },
            "no tensor `embeddings.word_embeddings.weight` (nor with a `bert.` prefix): not a BertModel checkpoint",
        ),
        (
            {
                let r = Rewrite::of("tiny-gpt2");
                std::fs::write(r.path().join("model.safetensors"), b"not a safetensors file").unwrap();
                r
            },
            "not a readable safetensors file",
        ),
    ];
    let more: Vec<(Rewrite, &str)> =
        vec![
        (
            {
                // A 1-layer config over 2 layers of weights: layer 1 would be dropped unread.
                let r = Rewrite::of("tiny-gpt2");
                r.config(|c| {
                    c.insert("n_layer".into(), 1.into());
                });
                r
            },
            "tensor `h.1.attn.c_attn.bias` is of layer 1, and config.json has 1 layers",
        ),
        (
            {
                let r = Rewrite::of("tiny-bert");
                r.tensors(|t| {
                    let x = t.iter().find(|x| x.0 == "embeddings.LayerNorm.bias").unwrap().clone();
                    t.push((format!("bert.{}", x.0), x.1, x.2, x.3));
                });
                r
            },
            "both `embeddings.LayerNorm.bias` and `bert.embeddings.LayerNorm.bias` are in the file",
        ),
        (
            {
                let r = Rewrite::of("tiny-gpt2");
                r.tensors(|t| {
                    // f64 weights are read (cast to f32): this one is not a float at all.
                    let x = t.iter_mut().find(|x| x.0 == "wpe.weight").unwrap();
                    x.1 = "BOOL".into();
                    x.3.truncate(x.2.iter().product());
                });
                r
            },
            "tensor `wpe.weight` is Bool",
        ),
    ];
    for (r, needle) in cases.into_iter().chain(more) {
        let e = r.error();
        assert!(
            e.contains("model.safetensors: ") && e.contains(needle),
            "{e}"
        );
    }
}

#[test]
fn a_directory_that_is_not_one_checkpoint_of_a_known_kind_is_refused_naming_the_file() {
    let cases: Vec<(Rewrite, &str, &str)> = vec![
        (
            {
                let r = Rewrite::of("tiny-bert");
                r.config(|c| {
                    c.insert("model_type".into(), "t5".into());
                });
                r
            },
            "config.json",
            "model_type \"t5\" is not read: BERT-family encoders (\"bert\") and GPT-2 (\"gpt2\") are",
        ),
        (
            {
                let r = Rewrite::of("tiny-bert");
                r.config(|c| {
                    c.insert("hidden_act".into(), "relu".into());
                });
                r
            },
            "config.json",
            "hidden_act \"relu\"",
        ),
        (
            {
                let r = Rewrite::of("tiny-gpt2");
                r.config(|c| {
                    c.insert("n_head".into(), 3.into());
                });
                r
            },
            "config.json",
            "n_head (3) does not divide n_embd (16)",
        ),
        (
            {
                let r = Rewrite::of("tiny-gpt2");
                r.config(|c| {
                    c.remove("n_embd");
                });
                r
            },
            "config.json",
            "no \"n_embd\" key",
        ),
        (
            {
                let r = Rewrite::of("tiny-gpt2");
                std::fs::rename(
                    r.path().join("model.safetensors"),
                    r.path().join("model-00001-of-00002.safetensors"),
                )
                .unwrap();
                std::fs::write(r.path().join("model.safetensors.index.json"), "{}").unwrap();
                r
            },
            "model.safetensors",
            "a sharded checkpoint",
        ),
        (
            {
                let r = Rewrite::of("tiny-bert");
                std::fs::remove_file(r.path().join("model.safetensors")).unwrap();
                r
            },
            "model.safetensors",
            "no such file",
        ),
        (
            {
                let r = Rewrite::of("tiny-bert");
                std::fs::remove_file(r.path().join("config.json")).unwrap();
                r
            },
            "config.json",
            "cannot read",
        ),
    ];
    let more: Vec<(Rewrite, &str, &str)> = vec![
        (
            {
                let r = Rewrite::of("tiny-bert");
                r.config(|c| {
                    c.insert("is_decoder".into(), true.into());
                });
                r
            },
            "config.json",
            "only BERT's bidirectional encoder is read",
        ),
        (
            {
                let r = Rewrite::of("tiny-gpt2");
                r.config(|c| {
                    c.insert("activation_function".into(), "relu".into());
                });
                r
            },
            "config.json",
            "activation_function \"relu\"",
        ),
        (
            {
                let r = Rewrite::of("tiny-gpt2");
                r.config(|c| {
                    c.insert("n_layer".into(), (-2).into());
                });
                r
            },
            "config.json",
            "\"n_layer\" must be a whole number > 0, got -2",
        ),
        (
            {
                let r = Rewrite::of("tiny-bert");
                std::fs::rename(
                    r.path().join("model.safetensors"),
                    r.path().join("pytorch_model.bin"),
                )
                .unwrap();
                r
            },
            "model.safetensors",
            "only safetensors weights are read",
        ),
        (
            {
                let r = Rewrite::of("tiny-bert");
                std::fs::write(r.path().join("config.json"), "{not json").unwrap();
                r
            },
            "config.json",
            "not JSON",
        ),
    ];
    for (r, file, needle) in cases.into_iter().chain(more) {
        let e = r.error();
        assert!(
            e.contains(&format!("{}: ", r.path().join(file).display())) && e.contains(needle),
            "{e}"
        );
    }
}

#[test]
fn config_json_is_read_with_transformers_defaults() {
    let p = Path::new("config.json");
    let a = Architecture::parse(
        r#"{"model_type": "gpt2", "vocab_size": 50257, "n_embd": 768, "n_layer": 12, "n_head": 12}"#,
        p,
    )
    .unwrap();
    match a {
        Architecture::Gpt2(c) => {
            assert_eq!((c.n_inner, c.n_positions), (3072, 1024));
            assert_eq!(c.layer_norm_epsilon, 1e-5);
        }
        other => panic!("{other:?}"),
    }
    let e = Architecture::parse("[1, 2]", p).unwrap_err();
    assert!(matches!(e, PretrainedError::Config { .. }), "{e}");
}
