//! Experiment configs: TOML files in experiments/configs/, one per experiment, every field with a
//! default so a config only states what it changes. Unknown keys are errors (a typo must not be
//! silently ignored).

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::de::DeserializeOwned;

use crate::{paths, Args};

/// Loads `--config`, or experiments/configs/<name>.toml when it exists, or the defaults.
pub fn load<C: DeserializeOwned + Default>(
    args: &Args,
    name: &str,
) -> anyhow::Result<(C, Option<PathBuf>)> {
    let path = match &args.config {
        Some(p) => Some(paths::resolve(p)),
        None => {
            let p = paths::resolve(&Path::new("experiments/configs").join(format!("{name}.toml")));
            p.exists().then_some(p)
        }
    };
    let Some(path) = path else {
        return Ok((C::default(), None));
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("{}: cannot read config", path.display()))?;
    let config = toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{}: invalid config: {e}", path.display()))?;
    Ok((config, Some(path)))
}
