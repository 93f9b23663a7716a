//! Named providers: which wire format, base URL and key variable each one uses, and how the
//! command line's `provider/model` selectors resolve to a [`ModelSpec`].
//!
//! The key is read from the environment only when a live request is about to be made, and it is
//! never stored anywhere but the [`ModelSpec`] that sends it.

use std::fmt;
use std::str::FromStr;

use super::{ApiKind, ModelSpec};

/// A provider the harness knows how to reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderEntry {
    pub name: String,
    pub api: ApiKind,
    pub base_url: String,
    /// Environment variables holding the key, tried in order.
    pub key_env: Vec<String>,
}

/// The built-in providers.
pub fn builtin_providers() -> Vec<ProviderEntry> {
    vec![
        ProviderEntry {
            name: "anthropic".into(),
            api: ApiKind::AnthropicMessages,
            base_url: "https://api.anthropic.com".into(),
            key_env: vec!["ANTHROPIC_API_KEY".into()],
        },
        ProviderEntry {
            name: "openai".into(),
            api: ApiKind::OpenaiCompletions,
            base_url: "https://api.openai.com/v1".into(),
            key_env: vec!["OPENAI_API_KEY".into()],
        },
    ]
}

/// A `provider/model` pair as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModelSelector {
    pub provider: String,
    pub model: String,
}

impl fmt::Display for ModelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.provider, self.model)
    }
}

impl FromStr for ModelSelector {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split_once('/') {
            Some((provider, model)) if !provider.is_empty() && !model.is_empty() => {
                Ok(ModelSelector {
                    provider: provider.to_owned(),
                    model: model.to_owned(),
                })
            }
            _ => Err(format!(
                "`{s}` is not a model selector: expected PROVIDER/MODEL, for example anthropic/claude-sonnet-4-5"
            )),
        }
    }
}

/// Why a selector could not become a [`ModelSpec`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    #[error("unknown provider `{name}`; known providers: {known}")]
    UnknownProvider { name: String, known: String },
    #[error("no API key for provider `{provider}`: set {vars}")]
    MissingKey { provider: String, vars: String },
}

/// Resolves `selector` against the built-in providers.
///
/// `env` looks a variable up (pass `|k| std::env::var(k).ok()` in the CLI). When `need_key` is
/// false (replaying a cassette) no key is looked up at all.
pub fn resolve(
    selector: &ModelSelector,
    base_url: Option<&str>,
    need_key: bool,
    env: impl Fn(&str) -> Option<String>,
) -> Result<ModelSpec, CatalogError> {
    let providers = builtin_providers();
    let entry = providers
        .iter()
        .find(|p| p.name == selector.provider)
        .ok_or_else(|| CatalogError::UnknownProvider {
            name: selector.provider.clone(),
            known: providers
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    let api_key = if need_key {
        let key = entry
            .key_env
            .iter()
            .find_map(|var| env(var).filter(|v| !v.trim().is_empty()));
        Some(key.ok_or_else(|| CatalogError::MissingKey {
            provider: entry.name.clone(),
            vars: entry.key_env.join(" or "),
        })?)
    } else {
        None
    };
    Ok(ModelSpec {
        provider: entry.name.clone(),
        api: entry.api,
        model: selector.model.clone(),
        base_url: base_url.unwrap_or(&entry.base_url).trim_end_matches('/').to_owned(),
        api_key,
        headers: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_selectors() {
        let sel: ModelSelector = "anthropic/claude-sonnet-4-5".parse().unwrap();
        assert_eq!(sel.provider, "anthropic");
        assert_eq!(sel.model, "claude-sonnet-4-5");
        // Model ids may contain slashes (OpenRouter style): only the first one splits.
        let sel: ModelSelector = "openai/org/model".parse().unwrap();
        assert_eq!(sel.model, "org/model");
        assert!("claude".parse::<ModelSelector>().is_err());
        assert!("/x".parse::<ModelSelector>().is_err());
    }

    #[test]
    fn resolves_key_and_base_url() {
        let sel: ModelSelector = "openai/gpt-test".parse().unwrap();
        let spec = resolve(&sel, Some("http://127.0.0.1:9/v1/"), true, |k| {
            (k == "OPENAI_API_KEY").then(|| "sk-test".to_owned())
        })
        .unwrap();
        assert_eq!(spec.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(spec.api_key.as_deref(), Some("sk-test"));
        assert_eq!(spec.api, ApiKind::OpenaiCompletions);
    }

    #[test]
    fn missing_key_names_the_variable_and_replay_needs_none() {
        let sel: ModelSelector = "anthropic/claude".parse().unwrap();
        let err = resolve(&sel, None, true, |_| None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no API key for provider `anthropic`: set ANTHROPIC_API_KEY"
        );
        let spec = resolve(&sel, None, false, |_| None).unwrap();
        assert_eq!(spec.api_key, None);
        assert_eq!(spec.base_url, "https://api.anthropic.com");
    }

    #[test]
    fn unknown_provider_lists_known_ones() {
        let sel: ModelSelector = "nope/m".parse().unwrap();
        let err = resolve(&sel, None, false, |_| None).unwrap_err();
        assert!(err.to_string().contains("anthropic, openai"), "{err}");
    }
}
