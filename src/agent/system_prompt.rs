//! The default system prompt, in the shape of Pi's coding-agent prompt: a role line, the active
//! tools with their one-line snippets, and the tools' guidelines.
//!
//! Pi's own prompt also carries the date, the working directory and Pi's documentation paths;
//! those would make every request differ between runs and machines (and leak the host), so the
//! harness leaves them out. A task or suite can replace the whole prompt with `system_prompt`.

use crate::tools::definitions::pi_prompt_metadata;

/// The default system prompt for the given active tool names (in the order the model sees them).
pub fn default_system_prompt(tool_names: &[&str]) -> String {
    let mut out = String::from(
        "You are an expert coding assistant operating inside a coding agent harness. \
         You help users by reading files, executing commands, editing code, and writing new files.\n\n\
         Available tools:\n",
    );
    let mut guidelines: Vec<String> = Vec::new();
    for name in tool_names {
        let (snippet, tool_guidelines) = pi_prompt_metadata(name);
        out.push_str(&format!("- {name}: {snippet}\n"));
        for g in tool_guidelines {
            if !guidelines.contains(&g) {
                guidelines.push(g);
            }
        }
    }
    guidelines.push("Be concise in your responses".to_owned());
    guidelines.push("Show file paths clearly when working with files".to_owned());
    out.push_str("\nGuidelines:\n");
    for g in guidelines {
        out.push_str(&format!("- {g}\n"));
    }
    out.push_str(
        "\nThe working directory is the repository to work on. \
         Paths are relative to it unless absolute.",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_tools_in_order_with_their_guidelines() {
        let prompt = default_system_prompt(&["read", "bash", "edit", "write"]);
        let read = prompt.find("- read: Read file contents").unwrap();
        let bash = prompt.find("- bash: ").unwrap();
        let write = prompt.find("- write: Create or overwrite files").unwrap();
        assert!(read < bash && bash < write);
        assert!(prompt.contains("- Use read to examine files instead of cat or sed.\n"));
        assert!(prompt.contains("- Use write only for new files or complete rewrites.\n"));
    }

    #[test]
    fn read_only_tools_have_no_edit_guidelines() {
        let prompt = default_system_prompt(&["read", "grep"]);
        assert!(!prompt.contains("edits[].oldText"));
        assert!(prompt.contains("- grep: "));
    }
}
