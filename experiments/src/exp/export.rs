//! `--exp export`: one representation of one study model written as word2vec vectors (binary
//! for a `.bin` path, text otherwise), so that gensim and other tools read exactly the table the
//! study scores under that name ([`Study::representation`]): word2vec's vectors, a transformer's
//! embedding matrix, an untied head's output matrix, or its decontextualized or aggregated
//! vectors at a layer.
//!
//! ```sh
//! cargo run -p experiments -- --exp export --model transformer-mlm --seed 1 \
//!     --representation aggregated --layer 2 --vectors mlm-aggregated-2.bin
//! ```
//!
//! The model's weights come from the run cache (`results/runs/`, not committed): a model whose
//! weights are not there is trained first, which for a transformer of the study takes about as
//! long as its line in `results/cost.csv`.

use anyhow::Context;

use super::settings::load_config;
use super::study::Study;
use crate::cli::Args;
use crate::paths;

pub fn run(args: &Args) -> anyhow::Result<()> {
    let id = super::jobs::model_arg(args)?;
    let representation = (args.representation.as_deref())
        .context("--representation is required (static for word2vec; embedding, lm_head, decontextualized or aggregated for a transformer)")?;
    let path = paths::resolve(
        args.vectors
            .as_ref()
            .context("--vectors FILE is required: where the vectors go (.bin: binary)")?,
    );
    let cfg = load_config(args, "export")?;
    let seed = cfg.seeds[0];
    let study = Study::load(args, cfg)?;
    let vectors = study.representation(id, seed, representation, args.layer)?;
    let format = word2vec::format::Format::from_path(&path);
    word2vec::format::write(&vectors, &path, format)
        .with_context(|| format!("{}: cannot write the vectors", path.display()))?;
    println!(
        "wrote {} ({} seed {seed}, {representation}{}: {} words x {} dimensions, {format:?})",
        path.display(),
        id.name(),
        args.layer.map_or(String::new(), |l| format!(" layer {l}")),
        vectors.len(),
        vectors.dim()
    );
    Ok(())
}
