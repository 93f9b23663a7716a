//! `harness.yaml`: named providers (wire format, base URL, key variable, extra headers,
//! compatibility switches, requests in flight) and models with their prices.
//!
//! The file sits at the project root or the tasks folder's root; its entries are laid over the
//! built-in ones ([`super::catalog::builtin_providers`]), so a file only needs what differs.
//! Unknown fields are errors, so a typo never passes silently.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ApiKind;

/// Prices in dollars per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    #[serde(default)]
    pub cache_read: f64,
    #[serde(default)]
    pub cache_write: f64,
}

impl Price {
    /// The cost in dollars of the given token counts.
    pub fn cost(&self, input: u64, output: u64, cache_read: u64, cache_write: u64) -> f64 {
        (self.input * input as f64
            + self.output * output as f64
            + self.cache_read * cache_read as f64
            + self.cache_write * cache_write as f64)
            / 1_000_000.0
    }
}

/// Switches for OpenAI-compatible servers that differ from OpenAI itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompatConfig {
    /// Send `max_tokens` instead of `max_completion_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens_field: Option<MaxTokensField>,
    /// Send `store: false` (OpenAI does; many compatible servers reject the field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<bool>,
    /// Use the `developer` role for the system prompt of reasoning models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub developer_role: Option<bool>,
}

/// Which field carries the output-token limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensField {
    MaxTokens,
    MaxCompletionTokens,
}

/// One model of a provider.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
    /// Output-token limit per request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Whether the model reasons (thinking settings are sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<bool>,
}

/// One named provider.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// Wire format; required for a new provider, optional when overriding a built-in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<ApiKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The environment variable that holds the key (none: no key is sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_env: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<CompatConfig>,
    /// Requests in flight at most, across all runs (backs off on 429).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<usize>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub models: BTreeMap<String, ModelConfig>,
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HarnessConfig {
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
}

/// A config file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("failed to read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("failed to parse {path}: {message}")]
    Parse { path: PathBuf, message: String },
}

impl HarnessConfig {
    /// Parses a config from YAML text; `path` only names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        crate::yaml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }

    /// Loads the first of `candidates` that exists; an empty config when none does.
    pub fn load_first(candidates: &[PathBuf]) -> Result<(Self, Option<PathBuf>), ConfigError> {
        for path in candidates {
            match std::fs::read_to_string(path) {
                Ok(text) => return Ok((Self::parse(&text, path)?, Some(path.clone()))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => {
                    return Err(ConfigError::Read {
                        path: path.clone(),
                        source,
                    });
                }
            }
        }
        Ok((Self::default(), None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_provider_with_models_and_prices() {
        let text = r#"
providers:
  local:
    api: openai-completions
    base_url: http://127.0.0.1:8000/v1
    key_env: LOCAL_KEY
    headers: {x-team: evals}
    compat: {max_tokens_field: max_tokens, store: false}
    max_in_flight: 4
    models:
      qwen:
        price: {input: 0.5, output: 1.5}
"#;
        let config = HarnessConfig::parse(text, Path::new("harness.yaml")).unwrap();
        let local = &config.providers["local"];
        assert_eq!(local.api, Some(ApiKind::OpenaiCompletions));
        assert_eq!(local.max_in_flight, Some(4));
        assert_eq!(
            local.compat.as_ref().unwrap().max_tokens_field,
            Some(MaxTokensField::MaxTokens)
        );
        let price = local.models["qwen"].price.unwrap();
        assert_eq!(price.cache_read, 0.0);
        assert!((price.cost(1_000_000, 2_000_000, 0, 0) - 3.5).abs() < 1e-9);
    }

    #[test]
    fn a_typo_is_an_error_naming_the_file_and_field() {
        let err = HarnessConfig::parse(
            "providers:\n  local:\n    base_ulr: http://x\n",
            Path::new("conf/harness.yaml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("failed to parse conf/harness.yaml"),
            "{err}"
        );
        assert!(err.contains("base_ulr"), "{err}");
    }

    #[test]
    fn load_first_skips_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let present = dir.path().join("harness.yaml");
        std::fs::write(&present, "providers: {}\n").unwrap();
        let (config, found) =
            HarnessConfig::load_first(&[dir.path().join("nope.yaml"), present.clone()]).unwrap();
        assert_eq!(found, Some(present));
        assert!(config.providers.is_empty());
        let (_, none) = HarnessConfig::load_first(&[dir.path().join("nope.yaml")]).unwrap();
        assert_eq!(none, None);
    }
}
