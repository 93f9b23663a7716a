//! `bash`: Pi's bash tool (spec section 4).

/// The environment for agent commands: the given variables minus API keys and other secrets.
pub fn scrubbed_env(vars: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    vars.into_iter()
        .filter(|(k, _)| !is_secret_name(k))
        .collect()
}

/// Whether an environment variable name looks like it holds a credential.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "AUTH"]
        .iter()
        .any(|w| upper.contains(w))
}
