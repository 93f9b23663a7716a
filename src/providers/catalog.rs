//! Named providers: which wire format, base URL and key variable each one uses, and how the
//! command line's `provider/model` selectors resolve to a [`ModelSpec`]. The built-in entries
//! cover the common providers; `harness.yaml` ([`super::config`]) adds or overrides entries.
//!
//! The key is read from the environment only when a live request is about to be made, and it is
//! never stored anywhere but the [`ModelSpec`] that sends it.

use std::fmt;
use std::str::FromStr;

use std::collections::BTreeMap;

use super::config::{CompatConfig, HarnessConfig, ModelConfig, Price};
use super::{ApiKind, ModelSpec};

/// A provider the harness knows how to reach.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderEntry {
    pub name: String,
    pub api: ApiKind,
    pub base_url: String,
    /// Environment variables holding the key, tried in order; empty for keyless local servers.
    pub key_env: Vec<String>,
    pub headers: Vec<(String, String)>,
    pub compat: CompatConfig,
    /// Requests in flight at most for this provider, across all runs.
    pub max_in_flight: usize,
    /// Known models, with prices.
    pub models: BTreeMap<String, ModelConfig>,
}

impl ProviderEntry {
    fn new(name: &str, api: ApiKind, base_url: &str, key_env: &[&str]) -> Self {
        ProviderEntry {
            name: name.into(),
            api,
            base_url: base_url.into(),
            key_env: key_env.iter().map(|s| (*s).to_owned()).collect(),
            headers: Vec::new(),
            compat: CompatConfig::default(),
            max_in_flight: 8,
            models: BTreeMap::new(),
        }
    }

    fn price(
        mut self,
        model: &str,
        input: f64,
        output: f64,
        cache_read: f64,
        cache_write: f64,
    ) -> Self {
        self.models.insert(
            model.to_owned(),
            ModelConfig {
                price: Some(Price {
                    input,
                    output,
                    cache_read,
                    cache_write,
                }),
                ..Default::default()
            },
        );
        self
    }

    fn local(mut self) -> Self {
        self.compat.store = Some(false);
        self.compat.max_tokens_field = Some(super::config::MaxTokensField::MaxTokens);
        self.max_in_flight = 4;
        self
    }
}

/// The built-in providers, with list prices (dollars per million tokens) of common models.
pub fn builtin_providers() -> Vec<ProviderEntry> {
    use ApiKind::*;
    let compatible = |name: &str, url: &str, key: &str| {
        let mut entry = ProviderEntry::new(name, OpenaiCompletions, url, &[key]);
        entry.compat.store = Some(false);
        entry
    };
    // OpenAI's prices, the same over both of its APIs.
    let openai_prices = |entry: ProviderEntry| {
        entry
            .price("gpt-5", 1.25, 10.0, 0.125, 0.0)
            .price("gpt-5-mini", 0.25, 2.0, 0.025, 0.0)
            .price("gpt-4.1", 2.0, 8.0, 0.5, 0.0)
            .price("gpt-4.1-mini", 0.4, 1.6, 0.1, 0.0)
    };
    vec![
        ProviderEntry::new(
            "anthropic",
            AnthropicMessages,
            "https://api.anthropic.com",
            &["ANTHROPIC_API_KEY"],
        )
        .price("claude-opus-4-1", 15.0, 75.0, 1.5, 18.75)
        .price("claude-sonnet-4-5", 3.0, 15.0, 0.3, 3.75)
        .price("claude-haiku-4-5", 1.0, 5.0, 0.1, 1.25),
        openai_prices(ProviderEntry::new(
            "openai",
            OpenaiCompletions,
            "https://api.openai.com/v1",
            &["OPENAI_API_KEY"],
        )),
        openai_prices(ProviderEntry::new(
            "openai-responses",
            OpenaiResponses,
            "https://api.openai.com/v1",
            &["OPENAI_API_KEY"],
        )),
        // Pi reads GEMINI_API_KEY; Google's own SDKs and tools also read GOOGLE_API_KEY.
        ProviderEntry::new(
            "google",
            GoogleGenerativeAi,
            "https://generativelanguage.googleapis.com/v1beta",
            &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        )
        .price("gemini-2.5-pro", 1.25, 10.0, 0.31, 0.0)
        .price("gemini-2.5-flash", 0.3, 2.5, 0.075, 0.0),
        compatible(
            "openrouter",
            "https://openrouter.ai/api/v1",
            "OPENROUTER_API_KEY",
        ),
        compatible("groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
        compatible(
            "together",
            "https://api.together.xyz/v1",
            "TOGETHER_API_KEY",
        ),
        compatible(
            "deepseek",
            "https://api.deepseek.com/v1",
            "DEEPSEEK_API_KEY",
        ),
        compatible("xai", "https://api.x.ai/v1", "XAI_API_KEY"),
        compatible("mistral", "https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
        compatible("cerebras", "https://api.cerebras.ai/v1", "CEREBRAS_API_KEY"),
        compatible(
            "fireworks",
            "https://api.fireworks.ai/inference/v1",
            "FIREWORKS_API_KEY",
        ),
        ProviderEntry::new(
            "ollama",
            OpenaiCompletions,
            "http://127.0.0.1:11434/v1",
            &[],
        )
        .local(),
        ProviderEntry::new("vllm", OpenaiCompletions, "http://127.0.0.1:8000/v1", &[]).local(),
        ProviderEntry::new(
            "llamacpp",
            OpenaiCompletions,
            "http://127.0.0.1:8080/v1",
            &[],
        )
        .local(),
        oracle_entry(),
    ]
}

/// The oracle ([`super::oracle`]): runs in-process, so its wire format and base URL are never
/// used (the runner builds the oracle instead of an HTTP provider); it needs no key and costs
/// nothing.
fn oracle_entry() -> ProviderEntry {
    let mut entry = ProviderEntry::new(
        super::oracle::PROVIDER,
        ApiKind::OpenaiCompletions,
        super::oracle::API,
        &[],
    );
    for model in super::oracle::MODELS {
        entry = entry.price(model, 0.0, 0.0, 0.0, 0.0);
    }
    entry
}

/// The providers in effect: the built-in ones with `harness.yaml` laid over them.
#[derive(Debug, Clone)]
pub struct Catalog {
    pub providers: Vec<ProviderEntry>,
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog {
            providers: builtin_providers(),
        }
    }
}

impl Catalog {
    /// The built-in providers overlaid with `config`.
    pub fn with_config(config: &HarnessConfig) -> Result<Self, CatalogError> {
        let mut providers = builtin_providers();
        for (name, conf) in &config.providers {
            if super::oracle::is_oracle(name) {
                return Err(CatalogError::Config {
                    message: format!(
                        "provider `{name}` is the built-in oracle (it runs in-process); \
                         it cannot be configured, so name yours otherwise"
                    ),
                });
            }
            let index = match providers.iter().position(|p| &p.name == name) {
                Some(i) => i,
                None => {
                    let api = conf.api.ok_or_else(|| CatalogError::Config {
                        message: format!("provider `{name}` is not built in, so it needs `api`"),
                    })?;
                    let base_url = conf.base_url.clone().ok_or_else(|| CatalogError::Config {
                        message: format!(
                            "provider `{name}` is not built in, so it needs `base_url`"
                        ),
                    })?;
                    providers.push(ProviderEntry::new(name, api, &base_url, &[]));
                    providers.len() - 1
                }
            };
            let entry = &mut providers[index];
            if let Some(api) = conf.api {
                entry.api = api;
            }
            if let Some(url) = &conf.base_url {
                entry.base_url = url.clone();
            }
            if let Some(var) = &conf.key_env {
                entry.key_env = vec![var.clone()];
            }
            entry.headers.extend(
                conf.headers
                    .iter()
                    .map(|(k, v)| (k.to_ascii_lowercase(), v.clone())),
            );
            if let Some(compat) = &conf.compat {
                entry.compat = compat.clone();
            }
            if let Some(n) = conf.max_in_flight {
                entry.max_in_flight = n.max(1);
            }
            for (model, mc) in &conf.models {
                entry.models.insert(model.clone(), mc.clone());
            }
        }
        Ok(Catalog { providers })
    }

    /// The entry named `name`.
    pub fn provider(&self, name: &str) -> Result<&ProviderEntry, CatalogError> {
        self.providers
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| CatalogError::UnknownProvider {
                name: name.to_owned(),
                known: self
                    .providers
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// The price of `selector`, when known.
    pub fn price(&self, selector: &ModelSelector) -> Option<Price> {
        self.provider(&selector.provider)
            .ok()?
            .models
            .get(&selector.model)?
            .price
    }

    /// Resolves `selector` to a spec. `env` looks a variable up (the process environment in the
    /// CLI); when `need_key` is false (replaying a cassette) no key is looked up at all.
    pub fn resolve(
        &self,
        selector: &ModelSelector,
        base_url: Option<&str>,
        need_key: bool,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<ModelSpec, CatalogError> {
        let entry = self.provider(&selector.provider)?;
        let api_key = if need_key && !entry.key_env.is_empty() {
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
            base_url: base_url
                .unwrap_or(&entry.base_url)
                .trim_end_matches('/')
                .to_owned(),
            api_key,
            headers: entry.headers.clone(),
        })
    }
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
    #[error("invalid provider configuration: {message}")]
    Config { message: String },
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
        let spec = Catalog::default()
            .resolve(&sel, Some("http://127.0.0.1:9/v1/"), true, |k| {
                (k == "OPENAI_API_KEY").then(|| "sk-test".to_owned())
            })
            .unwrap();
        assert_eq!(spec.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(spec.api_key.as_deref(), Some("sk-test"));
        assert_eq!(spec.api, ApiKind::OpenaiCompletions);
    }

    #[test]
    fn resolves_the_responses_and_gemini_entries() {
        let sel: ModelSelector = "google/gemini-2.5-flash".parse().unwrap();
        let spec = Catalog::default()
            .resolve(&sel, None, true, |k| {
                (k == "GEMINI_API_KEY").then(|| "g-key".to_owned())
            })
            .unwrap();
        assert_eq!(spec.api, ApiKind::GoogleGenerativeAi);
        assert_eq!(
            spec.base_url,
            "https://generativelanguage.googleapis.com/v1beta"
        );
        assert_eq!(spec.api_key.as_deref(), Some("g-key"));
        assert_eq!(Catalog::default().price(&sel).unwrap().input, 0.3);
        // GOOGLE_API_KEY serves when GEMINI_API_KEY is unset (or empty); GEMINI_API_KEY wins.
        let google_only = |k: &str| match k {
            "GOOGLE_API_KEY" => Some("google-key".to_owned()),
            "GEMINI_API_KEY" => Some(String::new()),
            _ => None,
        };
        let spec = Catalog::default()
            .resolve(&sel, None, true, google_only)
            .unwrap();
        assert_eq!(spec.api_key.as_deref(), Some("google-key"));
        let both = |k: &str| Some(format!("{k}-value"));
        let spec = Catalog::default().resolve(&sel, None, true, both).unwrap();
        assert_eq!(spec.api_key.as_deref(), Some("GEMINI_API_KEY-value"));
        let err = Catalog::default()
            .resolve(&sel, None, true, |_| None)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "no API key for provider `google`: set GEMINI_API_KEY or GOOGLE_API_KEY"
        );
        let sel: ModelSelector = "openai-responses/gpt-5".parse().unwrap();
        let err = Catalog::default()
            .resolve(&sel, None, true, |_| None)
            .unwrap_err();
        assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
        let spec = Catalog::default()
            .resolve(&sel, None, false, |_| None)
            .unwrap();
        assert_eq!(spec.api, ApiKind::OpenaiResponses);
        assert_eq!(spec.base_url, "https://api.openai.com/v1");
    }

    #[test]
    fn missing_key_names_the_variable_and_replay_needs_none() {
        let sel: ModelSelector = "anthropic/claude".parse().unwrap();
        let err = Catalog::default()
            .resolve(&sel, None, true, |_| None)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "no API key for provider `anthropic`: set ANTHROPIC_API_KEY"
        );
        let spec = Catalog::default()
            .resolve(&sel, None, false, |_| None)
            .unwrap();
        assert_eq!(spec.api_key, None);
        assert_eq!(spec.base_url, "https://api.anthropic.com");
    }

    #[test]
    fn unknown_provider_lists_known_ones() {
        let sel: ModelSelector = "nope/m".parse().unwrap();
        let err = Catalog::default()
            .resolve(&sel, None, false, |_| None)
            .unwrap_err();
        assert!(err.to_string().contains("anthropic, openai"), "{err}");
    }

    #[test]
    fn config_overrides_builtins_and_adds_providers() {
        let config = HarnessConfig::parse(
            "providers:\n  openai:\n    base_url: http://127.0.0.1:1/v1\n    models:\n      mine: {price: {input: 1, output: 2}}\n  box:\n    api: openai-completions\n    base_url: http://127.0.0.1:2/v1\n    max_in_flight: 2\n",
            std::path::Path::new("harness.yaml"),
        )
        .unwrap();
        let catalog = Catalog::with_config(&config).unwrap();
        let openai = catalog.provider("openai").unwrap();
        assert_eq!(openai.base_url, "http://127.0.0.1:1/v1");
        assert!(openai.models.contains_key("gpt-5"), "built-in prices kept");
        let sel: ModelSelector = "openai/mine".parse().unwrap();
        assert_eq!(catalog.price(&sel).unwrap().output, 2.0);
        let boxed: ModelSelector = "box/m".parse().unwrap();
        let spec = catalog.resolve(&boxed, None, true, |_| None).unwrap();
        assert_eq!(
            spec.api_key, None,
            "a provider without key_env needs no key"
        );
        assert_eq!(catalog.provider("box").unwrap().max_in_flight, 2);

        let bad = HarnessConfig::parse(
            "providers:\n  newbie:\n    base_url: http://x\n",
            std::path::Path::new("harness.yaml"),
        )
        .unwrap();
        let err = Catalog::with_config(&bad).unwrap_err().to_string();
        assert!(err.contains("needs `api`"), "{err}");
    }
}
