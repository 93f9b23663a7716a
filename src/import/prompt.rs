//! The prompt of an imported exercise, built the way the aider polyglot benchmark builds its
//! own (the instructions, then the files to change and the rule to keep the existing names),
//! in our own words. `--prompt-template FILE` replaces the words: the template is the prompt
//! with `{instructions}`, `{files}`, `{language}` and `{exercise}` where those go.

/// The built-in template.
pub const DEFAULT_TEMPLATE: &str = "{instructions}

# Your task

Solve this exercise in {language} by editing these files:

{files}

The tests are already in the folder. Keep the names of the functions, classes, types and \
other items that already exist in these files: the tests use them. Use only the standard \
library of the language and do not change the tests.
";

/// What fills a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptParts<'a> {
    /// `.docs/instructions.md`, then `.docs/instructions.append.md` when there is one.
    pub instructions: &'a str,
    /// The solution files, relative to the exercise folder.
    pub files: &'a [String],
    /// The language's display name (`Python`, `C++`).
    pub language: &'a str,
    /// The exercise slug.
    pub exercise: &'a str,
}

/// `template` with its placeholders filled in; other braces are left as written.
pub fn render(template: &str, parts: &PromptParts<'_>) -> String {
    let files = parts
        .files
        .iter()
        .map(|f| format!("- `{f}`"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = String::with_capacity(template.len() + parts.instructions.len());
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let value = [
            ("{instructions}", parts.instructions.trim_end()),
            ("{files}", files.as_str()),
            ("{language}", parts.language),
            ("{exercise}", parts.exercise),
        ]
        .into_iter()
        .find(|(name, _)| after.starts_with(name));
        match value {
            Some((name, value)) => {
                out.push_str(value);
                rest = &after[name.len()..];
            }
            None => {
                out.push('{');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The instructions of an exercise: `instructions.md`, then its append, a blank line between.
pub fn instructions(main: &str, append: Option<&str>) -> String {
    match append {
        Some(append) if !append.trim().is_empty() => {
            format!("{}\n\n{}\n", main.trim_end(), append.trim())
        }
        _ => format!("{}\n", main.trim_end()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_template_lists_the_files_after_the_instructions() {
        let files = vec!["src/lib.rs".to_owned(), "Cargo.toml".to_owned()];
        let text = instructions(
            "# Acronym\n\nMake an acronym.\n\n",
            Some("\n# Append\n\nNo crates.\n"),
        );
        let prompt = render(
            DEFAULT_TEMPLATE,
            &PromptParts {
                instructions: &text,
                files: &files,
                language: "Rust",
                exercise: "acronym",
            },
        );
        assert_eq!(
            prompt,
            "# Acronym\n\nMake an acronym.\n\n# Append\n\nNo crates.\n\n# Your task\n\n\
             Solve this exercise in Rust by editing these files:\n\n- `src/lib.rs`\n- `Cargo.toml`\n\n\
             The tests are already in the folder. Keep the names of the functions, classes, types \
             and other items that already exist in these files: the tests use them. Use only the \
             standard library of the language and do not change the tests.\n"
        );
    }

    #[test]
    fn unknown_braces_stay() {
        let prompt = render(
            "{exercise}: {x} {} {{language}}",
            &PromptParts {
                instructions: "",
                files: &[],
                language: "Go",
                exercise: "bob",
            },
        );
        assert_eq!(prompt, "bob: {x} {} {Go}");
    }
}
