//! The exact tool definitions Pi 0.73.1 sends to providers (name, description, parameter schema,
//! key order preserved), loaded from `pi-tool-schemas.json` beside this file.

use std::sync::OnceLock;

use serde_json::Value;

use crate::conversation::ToolDefinition;

const PI_TOOL_SCHEMAS: &str = include_str!("pi-tool-schemas.json");

fn schemas() -> &'static serde_json::Map<String, Value> {
    static SCHEMAS: OnceLock<serde_json::Map<String, Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        serde_json::from_str(PI_TOOL_SCHEMAS).expect("pi-tool-schemas.json is valid JSON")
    })
}

/// Pi's definition of the tool `name` (`read`, `write`, `edit`, `bash`, `grep`, `find`, `ls`).
///
/// # Panics
/// If `name` is not one of Pi's seven tools (a programming error).
pub fn pi_definition(name: &str) -> ToolDefinition {
    let entry = schemas()
        .get(name)
        .unwrap_or_else(|| panic!("no Pi tool named {name}"));
    ToolDefinition {
        name: entry["name"].as_str().expect("name").to_owned(),
        description: entry["description"]
            .as_str()
            .expect("description")
            .to_owned(),
        parameters: entry["parameters"].clone(),
    }
}

/// Pi's system-prompt metadata of a tool: the one-line snippet and the guidelines.
pub fn pi_prompt_metadata(name: &str) -> (String, Vec<String>) {
    let entry = &schemas()[name];
    let snippet = entry["promptSnippet"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let guidelines = entry["promptGuidelines"]
        .as_array()
        .map(|g| {
            g.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    (snippet, guidelines)
}

/// Declares one of Pi's tools: a struct holding Pi's definition of the tool `name`, with `new()`
/// and `Default`. The `Tool` impl (`definition()` returns the field) stays with the tool.
macro_rules! pi_tool {
    ($(#[$meta:meta])* $vis:vis struct $ty:ident = $name:literal;) => {
        $(#[$meta])*
        $vis struct $ty {
            definition: $crate::tools::ToolDefinition,
        }

        impl $ty {
            /// The tool with Pi's definition.
            pub fn new() -> Self {
                $ty {
                    definition: $crate::tools::definitions::pi_definition($name),
                }
            }
        }

        impl Default for $ty {
            fn default() -> Self {
                Self::new()
            }
        }
    };
}
pub(crate) use pi_tool;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pi_tool_has_a_definition_with_an_object_schema() {
        for name in ["read", "write", "edit", "bash", "grep", "find", "ls"] {
            let def = pi_definition(name);
            assert_eq!(def.name, name);
            assert_eq!(def.parameters["type"], "object", "{name}");
            assert!(!def.description.is_empty(), "{name}");
        }
    }

    #[test]
    fn schema_key_order_is_kept() {
        let def = pi_definition("read");
        let keys: Vec<&String> = def.parameters.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["type", "required", "properties"]);
    }
}
