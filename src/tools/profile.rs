//! Tool profiles: what Pi's tools told the model in a given Pi version. `pi-0.73` is today's
//! tools (Pi 0.73.1, the default); `pi-0.14` (0.14.x, December 2025) and `pi-0.7` (0.7.x,
//! November 2025) are the versions that recorded the public Pi sessions. A profile is data
//! (the tool definitions that differ, in `profiles.json`) and a few small code paths in the
//! tools (edit's flat arguments and texts, read's notices, bash's status without output), never
//! a copy of a tool. What an older profile does not reproduce is listed in `DEVIATIONS.md`.

use std::sync::OnceLock;

use serde_json::Value;

use crate::conversation::ToolDefinition;

const PROFILES: &str = include_str!("profiles.json");

/// A Pi version's tool texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum ToolProfile {
    /// Pi 0.73.1: today's tools.
    #[default]
    Pi073,
    /// Pi 0.14.x (from 0.9.2 on, 2025-11-24, until fuzzy edits, 2026-01-14).
    Pi014,
    /// Pi 0.7.x and 0.8.x (before 0.9.2, 2025-11-24).
    Pi07,
}

impl ToolProfile {
    /// Every profile, newest first.
    pub const ALL: [ToolProfile; 3] = [ToolProfile::Pi073, ToolProfile::Pi014, ToolProfile::Pi07];

    /// The profile's name, as cassette headers and reports write it.
    pub fn name(self) -> &'static str {
        match self {
            ToolProfile::Pi073 => "pi-0.73",
            ToolProfile::Pi014 => "pi-0.14",
            ToolProfile::Pi07 => "pi-0.7",
        }
    }

    /// The profile named `name`: its name, a Pi version it covers (`pi-0.14.2`, `0.14.2`), or
    /// `pi` (what cassettes recorded before profiles had names say: today's tools).
    pub fn parse(name: &str) -> Result<ToolProfile, String> {
        let version = name
            .trim()
            .trim_start_matches("pi-")
            .trim_start_matches("pi");
        let version = version.trim_start_matches('-');
        if version.is_empty() {
            return Ok(ToolProfile::Pi073);
        }
        let mut parts = version.split('.').map(str::parse::<u32>);
        match (parts.next(), parts.next()) {
            (Some(Ok(0)), Some(Ok(minor))) if (9..=72).contains(&minor) && minor != 14 => {
                Err(format!(
                    "no profile for Pi 0.{minor}: the profiles are {} (give the nearest)",
                    Self::names()
                ))
            }
            (Some(Ok(0)), Some(Ok(73))) => Ok(ToolProfile::Pi073),
            (Some(Ok(0)), Some(Ok(14))) => Ok(ToolProfile::Pi014),
            (Some(Ok(0)), Some(Ok(7 | 8))) => Ok(ToolProfile::Pi07),
            _ => Err(format!(
                "unknown tool profile `{name}`: the profiles are {}",
                Self::names()
            )),
        }
    }

    /// The names, for messages.
    pub fn names() -> String {
        Self::ALL.map(Self::name).join(", ")
    }

    /// The profile of a session that began at `date` (RFC 3339), with why: the Pi releases that
    /// changed what the tools say. A guess from the date alone, said as one.
    pub fn for_date(date: &str) -> (ToolProfile, String) {
        let day = date.get(..10).unwrap_or(date);
        if day < "2025-11-24" {
            (
                ToolProfile::Pi07,
                format!("the session began {day}, before Pi 0.9.2 (2025-11-24)"),
            )
        } else if day < "2026-01-14" {
            (
                ToolProfile::Pi014,
                format!(
                    "the session began {day}, between Pi 0.9.2 (2025-11-24) and fuzzy edits (2026-01-14)"
                ),
            )
        } else {
            (
                ToolProfile::Pi073,
                format!(
                    "the session began {day}, after Pi's fuzzy edits (2026-01-14); today's tools are the nearest"
                ),
            )
        }
    }

    /// Whether `a` and `b` name the same profile (`pi` and `pi-0.73` do).
    pub fn same(a: &str, b: &str) -> bool {
        match (ToolProfile::parse(a), ToolProfile::parse(b)) {
            (Ok(a), Ok(b)) => a == b,
            _ => a == b,
        }
    }

    /// Edit takes Pi's old flat arguments (`path`, `oldText`, `newText`), matches exactly, and
    /// answers in the old words.
    pub fn flat_edit(self) -> bool {
        self != ToolProfile::Pi073
    }

    /// The definition of the tool `name` under this profile: today's, with what the profile's
    /// version said instead.
    pub fn definition(self, base: &ToolDefinition) -> ToolDefinition {
        let mut def = base.clone();
        let Some(over) = overrides().get(self.name()).and_then(|p| p.get(&base.name)) else {
            return def;
        };
        if let Some(description) = over.get("description").and_then(Value::as_str) {
            def.description = description.to_owned();
        }
        if let Some(parameters) = over.get("parameters") {
            def.parameters = parameters.clone();
        }
        def
    }

    /// Edit's answer when it applied: today's `Successfully replaced N block(s) in P.`, or the
    /// old `Successfully replaced text in P. Changed N characters to M characters.` (JavaScript
    /// string lengths: UTF-16 units).
    pub fn edit_success(self, path: &str, edits: &[(&str, &str)]) -> String {
        match (self.flat_edit(), edits) {
            (true, [(old, new)]) => format!(
                "Successfully replaced text in {path}. Changed {} characters to {} characters.",
                old.encode_utf16().count(),
                new.encode_utf16().count()
            ),
            _ => format!("Successfully replaced {} block(s) in {path}.", edits.len()),
        }
    }

    /// Read's continuation notices end `continue.]` from Pi 0.15 on, `continue]` before.
    pub fn read_notice_end(self) -> &'static str {
        match self {
            ToolProfile::Pi014 => "continue]",
            _ => "continue.]",
        }
    }
}

impl std::fmt::Display for ToolProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

fn overrides() -> &'static serde_json::Map<String, Value> {
    static OVERRIDES: OnceLock<serde_json::Map<String, Value>> = OnceLock::new();
    OVERRIDES.get_or_init(|| serde_json::from_str(PROFILES).expect("profiles.json is valid JSON"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::definitions::pi_definition;

    #[test]
    fn names_versions_and_the_old_name_parse() {
        for (given, want) in [
            ("pi", ToolProfile::Pi073),
            ("pi-0.73", ToolProfile::Pi073),
            ("pi-0.73.1", ToolProfile::Pi073),
            ("0.14.2", ToolProfile::Pi014),
            ("pi-0.14", ToolProfile::Pi014),
            ("pi-0.7.29", ToolProfile::Pi07),
            ("pi-0.8.0", ToolProfile::Pi07),
        ] {
            assert_eq!(ToolProfile::parse(given), Ok(want), "{given}");
        }
        assert!(
            ToolProfile::parse("pi-0.30")
                .unwrap_err()
                .contains("no profile for Pi 0.30")
        );
        assert!(
            ToolProfile::parse("claude")
                .unwrap_err()
                .contains("pi-0.73, pi-0.14, pi-0.7")
        );
        assert!(ToolProfile::same("pi", "pi-0.73"));
        assert!(!ToolProfile::same("pi", "pi-0.14"));
        for p in ToolProfile::ALL {
            assert_eq!(ToolProfile::parse(p.name()), Ok(p));
        }
    }

    #[test]
    fn old_profiles_send_the_old_definitions_and_keep_the_rest() {
        let edit = pi_definition("edit");
        let old = ToolProfile::Pi014.definition(&edit);
        assert!(
            old.description
                .starts_with("Edit a file by replacing exact text.")
        );
        assert_eq!(
            old.parameters["required"],
            serde_json::json!(["path", "oldText", "newText"])
        );
        assert_eq!(ToolProfile::Pi073.definition(&edit), edit);
        let bash = pi_definition("bash");
        assert_eq!(ToolProfile::Pi014.definition(&bash), bash);
        assert_ne!(ToolProfile::Pi07.definition(&bash), bash);
        let write = pi_definition("write");
        assert_eq!(ToolProfile::Pi07.definition(&write), write);
    }

    #[test]
    fn edit_answers_in_the_words_of_its_version() {
        assert_eq!(
            ToolProfile::Pi014.edit_success("a.txt", &[("héllo", "€1")]),
            "Successfully replaced text in a.txt. Changed 5 characters to 2 characters."
        );
        // An astral character is two UTF-16 units, as JavaScript counts it.
        assert_eq!(
            ToolProfile::Pi07.edit_success("a.txt", &[("😀", "")]),
            "Successfully replaced text in a.txt. Changed 2 characters to 0 characters."
        );
        assert_eq!(
            ToolProfile::Pi073.edit_success("a.txt", &[("a", "b")]),
            "Successfully replaced 1 block(s) in a.txt."
        );
    }

    #[test]
    fn the_date_of_a_session_names_its_profile() {
        assert_eq!(
            ToolProfile::for_date("2025-11-20T23:33:01Z").0,
            ToolProfile::Pi07
        );
        assert_eq!(
            ToolProfile::for_date("2025-12-08T22:41:05Z").0,
            ToolProfile::Pi014
        );
        assert_eq!(
            ToolProfile::for_date("2026-05-01T00:00:00Z").0,
            ToolProfile::Pi073
        );
    }

    /// One call through the tool set (validation included) under `profile`, in `dir`.
    async fn call(
        profile: ToolProfile,
        dir: &std::path::Path,
        tool: &str,
        args: Value,
    ) -> crate::tools::ToolResult {
        let tools = crate::tools::ToolSet::new(&crate::tools::ToolSetSpec::all())
            .unwrap()
            .with_profile(profile);
        let mut ctx = crate::tools::ToolContext::new(dir);
        ctx.profile = profile;
        tools.call(tool, args, &ctx).await
    }

    fn text(result: &crate::tools::ToolResult) -> String {
        result.content[0].as_text().unwrap_or_default().to_owned()
    }

    #[tokio::test]
    async fn an_old_edit_takes_flat_arguments_matches_exactly_and_answers_in_old_words() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one  two\n").unwrap();
        let flat = serde_json::json!({"path": "a.txt", "oldText": "one  two", "newText": "1 2"});
        let done = call(ToolProfile::Pi014, dir.path(), "edit", flat.clone()).await;
        assert!(!done.is_error);
        assert_eq!(
            text(&done),
            "Successfully replaced text in a.txt. Changed 8 characters to 3 characters."
        );
        // Today's array shape is not what the old schema takes.
        let array =
            serde_json::json!({"path": "a.txt", "edits": [{"oldText": "1 2", "newText": "x"}]});
        let refused = call(ToolProfile::Pi014, dir.path(), "edit", array).await;
        assert!(refused.is_error);
        assert!(text(&refused).contains("oldText"), "{}", text(&refused));
        // No fuzzy matching: a near miss is not found (today's tools apply it).
        std::fs::write(dir.path().join("b.txt"), "x = 1   \n").unwrap();
        let near = serde_json::json!({"path": "b.txt", "oldText": "x = 1\n", "newText": "x = 2\n"});
        let old = call(ToolProfile::Pi014, dir.path(), "edit", near.clone()).await;
        assert!(old.is_error, "{}", text(&old));
        let now = call(ToolProfile::Pi073, dir.path(), "edit", near).await;
        assert!(!now.is_error, "{}", text(&now));
        // A file that is not there.
        let missing = serde_json::json!({"path": "no.txt", "oldText": "a", "newText": "b"});
        let gone = call(ToolProfile::Pi07, dir.path(), "edit", missing).await;
        assert_eq!(text(&gone), "File not found: no.txt");
    }

    #[tokio::test]
    async fn old_reads_end_their_notices_as_their_versions_did() {
        let dir = tempfile::tempdir().unwrap();
        let lines: String = (1..=2005).map(|i| format!("L{i}\n")).collect();
        std::fs::write(dir.path().join("big.txt"), &lines).unwrap();
        let args = serde_json::json!({"path": "big.txt"});
        let now = text(&call(ToolProfile::Pi073, dir.path(), "read", args.clone()).await);
        assert!(now.ends_with("Use offset=2001 to continue.]"), "{now}");
        let dec = text(&call(ToolProfile::Pi014, dir.path(), "read", args.clone()).await);
        assert!(dec.ends_with("Use offset=2001 to continue]"), "{dec}");
        let nov = text(&call(ToolProfile::Pi07, dir.path(), "read", args).await);
        assert!(
            nov.ends_with(
                "L2000\n\n... (6 more lines not shown. Use offset=2001 to continue reading)"
            ),
            "{nov}"
        );
        let long = format!("{}\nshort", "é".repeat(2100));
        std::fs::write(dir.path().join("long.txt"), long).unwrap();
        let cut = text(
            &call(
                ToolProfile::Pi07,
                dir.path(),
                "read",
                serde_json::json!({"path": "long.txt"}),
            )
            .await,
        );
        assert_eq!(
            cut,
            format!(
                "{}\nshort\n\n... (Some lines were truncated to 2000 characters for display)",
                "é".repeat(2000)
            )
        );
        let missing = call(
            ToolProfile::Pi07,
            dir.path(),
            "read",
            serde_json::json!({"path": "no.txt"}),
        )
        .await;
        assert!(!missing.is_error);
        assert_eq!(text(&missing), "Error: File not found: no.txt");
    }

    #[tokio::test]
    async fn pi_0_7_bash_says_only_the_status_of_a_silent_failure() {
        let dir = tempfile::tempdir().unwrap();
        let args = serde_json::json!({"command": "exit 3"});
        let old = call(ToolProfile::Pi07, dir.path(), "bash", args.clone()).await;
        assert!(old.is_error);
        assert_eq!(text(&old), "Command exited with code 3");
        let now = call(ToolProfile::Pi073, dir.path(), "bash", args).await;
        assert_eq!(text(&now), "(no output)\n\nCommand exited with code 3");
    }
}
