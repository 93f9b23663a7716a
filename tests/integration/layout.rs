//! The house rule that no two files of `src/` import each other, directly or through others.
//!
//! The graph is read from the sources: a file depends on the file of every item it names
//! through `crate::`, `super::` or `self::` paths (grouped imports included), and a `mod.rs`
//! also on the children whose items its own code names. A name a `mod.rs` re-exports
//! (`pub use child::Name`) leads to the file it comes from, so a re-export is a facade, never
//! a dependency of the folder on its children. Doc comments and test modules are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `src/` relative path → module path (`tools/edit/mod.rs` → `["tools", "edit"]`).
fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

fn sources(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            // Test modules and comments are not the architecture.
            let code = text
                .split("#[cfg(test)]\nmod tests")
                .next()
                .unwrap_or_default();
            let code: String = code
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .map(|l| format!("{l}\n"))
                .collect();
            out.insert(rel, code);
        }
    }
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every `head::a::b` path (and each name of a `head::a::{b, c}` group) in `code`, as segments
/// after `head`.
fn paths_after(code: &str, head: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let needle = format!("{head}::");
    let mut from = 0;
    while let Some(at) = code[from..].find(&needle) {
        let start = from + at;
        from = start + needle.len();
        if code[..start].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        let mut segs = Vec::new();
        let mut rest = &code[from..];
        loop {
            let ident: String = rest.chars().take_while(|c| is_ident(*c)).collect();
            if ident.is_empty() {
                if let Some(group) = rest.strip_prefix('{') {
                    let inner = group.split('}').next().unwrap_or_default();
                    for name in inner.split(',') {
                        let name = name.split(" as ").next().unwrap_or_default().trim();
                        let name: String = name.chars().take_while(|c| is_ident(*c)).collect();
                        if !name.is_empty() && name != "self" {
                            let mut with = segs.clone();
                            with.push(name);
                            out.push(with);
                        }
                    }
                }
                break;
            }
            rest = &rest[ident.len()..];
            segs.push(ident);
            match rest.strip_prefix("::") {
                Some(r) => rest = r,
                None => break,
            }
        }
        if !segs.is_empty() {
            out.push(segs);
        }
    }
    out
}

#[test]
fn no_two_files_of_src_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    sources(&root, &root, &mut files);
    let modules: BTreeMap<Vec<String>, String> = files
        .keys()
        .map(|rel| (module_of(rel), rel.clone()))
        .collect();
    // (folder module, name) → the file a mod.rs re-exports it from.
    let mut reexports: BTreeMap<(Vec<String>, String), String> = BTreeMap::new();
    for (rel, code) in &files {
        if !(rel.ends_with("mod.rs") || rel.ends_with("lib.rs")) {
            continue;
        }
        let here = module_of(rel);
        for line in code.lines() {
            let Some(used) = line
                .trim()
                .strip_prefix("pub use ")
                .or_else(|| line.trim().strip_prefix("pub(crate) use "))
            else {
                continue;
            };
            let Some((child, names)) = used.split_once("::") else {
                continue;
            };
            let mut child_module = here.clone();
            child_module.push(child.to_owned());
            let Some(file) = modules.get(&child_module) else {
                continue;
            };
            for name in names
                .trim_matches(|c| c == '{' || c == '}' || c == ';')
                .split(',')
            {
                let name = name.split(" as ").last().unwrap_or_default().trim();
                if !name.is_empty() {
                    reexports.insert((here.clone(), name.to_owned()), file.clone());
                }
            }
        }
    }
    let resolve = |path: &[String]| -> Option<&String> {
        (0..=path.len()).rev().find_map(|n| {
            let prefix = path[..n].to_vec();
            let file = modules.get(&prefix)?;
            match path
                .get(n)
                .and_then(|next| reexports.get(&(prefix, next.clone())))
            {
                Some(source) => Some(source),
                None => Some(file),
            }
        })
    };
    let mut edges: BTreeMap<&String, BTreeSet<&String>> = BTreeMap::new();
    for (rel, code) in &files {
        let here = module_of(rel);
        let mut targets = Vec::new();
        for segs in paths_after(code, "crate") {
            targets.push(segs);
        }
        for head in ["super", "self"] {
            for segs in paths_after(code, head) {
                let mut base = here.clone();
                if head == "super" {
                    base.pop();
                }
                let mut segs = segs.as_slice();
                while segs.first().is_some_and(|s| s == "super") {
                    base.pop();
                    segs = &segs[1..];
                }
                base.extend(segs.iter().cloned());
                targets.push(base);
            }
        }
        // A folder's own code naming its children (`child::item`), re-exports aside.
        if rel.ends_with("mod.rs") || rel.ends_with("lib.rs") {
            for line in code.lines() {
                let t = line.trim();
                let declaration = [
                    "pub use ",
                    "pub(crate) use ",
                    "mod ",
                    "pub mod ",
                    "pub(crate) mod ",
                ]
                .iter()
                .any(|d| t.starts_with(d));
                if declaration {
                    continue;
                }
                for (module, _) in modules
                    .iter()
                    .filter(|(m, _)| m.len() == here.len() + 1 && m[..here.len()] == here[..])
                {
                    let child = module.last().unwrap();
                    for segs in paths_after(line, child) {
                        let mut path = module.clone();
                        path.extend(segs);
                        targets.push(path);
                    }
                }
            }
        }
        let from = files.get_key_value(rel).unwrap().0;
        for target in targets {
            if let Some(to) = resolve(&target)
                && to != rel
            {
                edges.entry(from).or_default().insert(to);
            }
        }
    }
    // Every file that reaches itself again.
    let mut circles = Vec::new();
    for start in files.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<(&String, Vec<&String>)> = vec![(start, vec![start])];
        while let Some((at, trail)) = stack.pop() {
            for &next in edges.get(at).into_iter().flatten() {
                if next == start {
                    let mut circle: Vec<&str> = trail.iter().map(|s| s.as_str()).collect();
                    circle.push(start);
                    circles.push(circle.join(" -> "));
                } else if seen.insert(next) {
                    let mut longer = trail.clone();
                    longer.push(next);
                    stack.push((next, longer));
                }
            }
        }
    }
    // Sanity: the graph is really read (a file that names another is found to).
    let run = "runner/run.rs".to_owned();
    assert!(
        edges
            .get(&run)
            .is_some_and(|e| e.contains(&"tools/context.rs".to_owned())),
        "the import graph was not read: {:?}",
        edges.get(&run)
    );
    assert!(
        circles.is_empty(),
        "import circles in src/:\n{}",
        circles.join("\n")
    );
}
