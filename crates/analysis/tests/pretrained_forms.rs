//! The bilinear-form scores of real checkpoint layouts against a reference computed elsewhere:
//! the tiny BERT and GPT-2 checkpoints of crates/pretrained/tests/fixtures, whose expected.json
//! holds each head's symmetry, directionality and identity alignment computed by
//! scripts/pretrained_fixtures.py from transformers' own torch modules (BERT's query/key Linear
//! weights transposed, GPT-2's c_attn split in three), with Saponati et al.'s formulas.

use std::path::Path;

use analysis::bilinear::layer_forms;
use analysis::geometry::qkv_per_layer_pretrained;
use burn::tensor::Device;
use serde_json::Value;

#[test]
fn head_forms_of_bert_and_gpt2_checkpoints_match_torch() {
    for name in ["tiny-bert", "tiny-gpt2"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../pretrained/tests/fixtures")
            .join(name);
        let ckpt = pretrained::load(&dir, &Device::flex()).unwrap();
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                .unwrap();
        let layers = qkv_per_layer_pretrained(&ckpt.model);
        assert_eq!(layers.len(), 2, "{name}");
        let mut checked = 0;
        for (l, w) in layers.iter().enumerate() {
            assert_eq!(
                (w.d_in, w.d_out, w.n_heads, w.d_k),
                (16, 16, 2, 8),
                "{name}"
            );
            let forms = layer_forms(w);
            // The layer's whole form W_Q W_K^T (all heads).
            let all = expected["forms"][l][2]["all_symmetry"].as_f64().unwrap();
            assert!((forms.layer.symmetry - all).abs() < 1e-5, "{name}: {all}");
            for (h, f) in forms.heads.iter().enumerate() {
                let want = &expected["forms"][l][h];
                for (got, key) in [
                    (f.symmetry, "symmetry"),
                    (f.directionality, "directionality"),
                    (f.identity_alignment, "identity_alignment"),
                ] {
                    let w = want[key].as_f64().unwrap();
                    assert!(
                        (got - w).abs() < 1e-5,
                        "{name} layer {} head {h} {key}: {got} vs torch {w}",
                        l + 1
                    );
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 12);
    }
}
