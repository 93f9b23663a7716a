//! Built-in normalisation rules for volatile tool output (interim).

use super::compare::NormalizeRule;

/// The rules every replay applies before the task's own.
pub fn default_rules() -> Vec<NormalizeRule> {
    vec![
        NormalizeRule::new(
            r"[^\s\]]*pi-bash-[0-9a-f]{16}\.log",
            "<bash-output>/pi-bash.log",
        )
        .expect("valid built-in rule"),
    ]
}
