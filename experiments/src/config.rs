//! Experiment configs: TOML files in experiments/configs/, one per experiment, every field with a
//! default so a config only states what it changes. Unknown keys are errors (a typo must not be
//! silently ignored).
//!
//! A config may start with `extends = "other.toml"` (relative to its own directory): the other
//! file is read first and this one's tables are merged over it key by key. The paper's
//! experiments all extend `paper.toml`, so they train the same models and share the run cache.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::de::DeserializeOwned;

use crate::cli::Args;
use crate::paths;

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
    let config = load_file(&path)?;
    Ok((config, Some(path)))
}

/// Checks the transformer settings of a config before anything is created on disk; an error
/// names the file (or "defaults") and the key, e.g. `paper.toml: [model] dropout must be ...`.
pub fn check_transformer(
    path: Option<&Path>,
    model: &transformer::model::ModelSettings,
    training: &transformer::training::TrainingConfig,
) -> anyhow::Result<()> {
    let source = path.map_or("the built-in defaults".to_string(), |p| {
        p.display().to_string()
    });
    model
        .validate()
        .map_err(|e| anyhow::anyhow!("{source}: [model] {e}"))?;
    training
        .validate()
        .map_err(|e| anyhow::anyhow!("{source}: [training] {e}"))
}

/// Reads one config file, following `extends`.
/// The config at `path` with its `extends` chain merged in: one self-contained TOML text.
pub fn merged_text(path: &Path) -> anyhow::Result<String> {
    let table = read_merged(path, 0)?;
    toml::to_string(&table)
        .map_err(|e| anyhow::anyhow!("{}: cannot write back: {e}", path.display()))
}

pub fn load_file<C: DeserializeOwned>(path: &Path) -> anyhow::Result<C> {
    let table = read_merged(path, 0)?;
    toml::Value::Table(table)
        .try_into()
        .map_err(|e| anyhow::anyhow!("{}: invalid config: {e}", path.display()))
}

fn read_merged(path: &Path, depth: usize) -> anyhow::Result<toml::Table> {
    if depth > 8 {
        anyhow::bail!(
            "{}: `extends` nests more than 8 deep (a cycle?)",
            path.display()
        );
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read config", path.display()))?;
    let mut table: toml::Table = toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{}: invalid config: {e}", path.display()))?;
    let Some(base) = table.remove("extends") else {
        return Ok(table);
    };
    let base = base.as_str().with_context(|| {
        format!(
            "{}: `extends` must be a file name in quotes",
            path.display()
        )
    })?;
    let base_path = path.parent().unwrap_or(Path::new(".")).join(base);
    let mut merged = read_merged(&base_path, depth + 1)
        .with_context(|| format!("{}: extends {base}", path.display()))?;
    merge(&mut merged, table);
    Ok(merged)
}

/// `over`'s keys replace `base`'s; tables present in both merge recursively.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(key, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, serde::Deserialize, PartialEq)]
    #[serde(deny_unknown_fields, default)]
    struct Inner {
        a: u32,
        b: u32,
    }

    #[derive(Debug, Default, serde::Deserialize, PartialEq)]
    #[serde(deny_unknown_fields, default)]
    struct Outer {
        x: u32,
        inner: Inner,
    }

    #[test]
    fn extends_merges_tables_key_by_key() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("base.toml"),
            "x = 1\n[inner]\na = 2\nb = 3\n",
        )
        .unwrap();
        let child = dir.path().join("child.toml");
        std::fs::write(&child, "extends = \"base.toml\"\n[inner]\nb = 9\n").unwrap();
        let c: Outer = load_file(&child).unwrap();
        assert_eq!(
            c,
            Outer {
                x: 1,
                inner: Inner { a: 2, b: 9 }
            }
        );
    }

    #[test]
    fn extends_errors_name_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let child = dir.path().join("child.toml");
        std::fs::write(&child, "extends = \"missing.toml\"\n").unwrap();
        let e = format!("{:#}", load_file::<Outer>(&child).unwrap_err());
        assert!(
            e.contains("child.toml") && e.contains("missing.toml"),
            "{e}"
        );
        let cyclic = dir.path().join("self.toml");
        std::fs::write(&cyclic, "extends = \"self.toml\"\n").unwrap();
        let e = format!("{:#}", load_file::<Outer>(&cyclic).unwrap_err());
        assert!(e.contains("more than 8 deep"), "{e}");
        std::fs::write(&child, "extends = \"self.toml\"\n[inner]\nc = 1\n").unwrap();
        std::fs::write(&cyclic, "x = 2\n").unwrap();
        let e = format!("{:#}", load_file::<Outer>(&child).unwrap_err());
        assert!(e.contains("unknown field `c`"), "{e}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        /// Any text as a config file: a config or an error naming the file, never a panic.
        #[test]
        fn any_config_text_is_a_config_or_an_error_naming_the_file(
            text in "[a-z_\\[\\]=\". 0-9\n-]{0,120}"
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("fuzz.toml");
            std::fs::write(&path, &text).unwrap();
            if let Err(e) = load_file::<crate::exp::train::Config>(&path) {
                let msg = format!("{e:#}");
                proptest::prop_assert!(msg.contains("fuzz.toml"), "{}", msg);
            }
            if let Err(e) = load_file::<crate::exp::settings::Config>(&path) {
                let msg = format!("{e:#}");
                proptest::prop_assert!(msg.contains("fuzz.toml"), "{}", msg);
            }
        }
    }
}
