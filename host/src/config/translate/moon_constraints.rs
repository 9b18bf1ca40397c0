//! moon's project metadata and constraints as vx tags and boundaries.
//!
//! A `moon.yml`'s `layer` (`type` before moon 1.39), `stack` and
//! `language` become the tags `layer:L`, `stack:S` and `language:X`
//! (none for `unknown`), which `--filter tag:…` selects. `.moon/workspace.yml`
//! `constraints` become `[[workspace.boundaries]]` on those tags:
//!
//! - `enforceLayerRelationships` (moon's default; `enforceProjectTypeRelationships`
//!   before 1.39): a project of a layer may depend only on the layers
//!   below it (and its own, but for `automation` and `application`) and on
//!   projects without a layer; across two different stacks anything goes.
//! - `tagRelationships: { T: [U, …] }`: a project tagged `T` may depend
//!   only on projects tagged `T` or one of `U, …`.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::model::{BoundarySpec, Plan, ProjectSpec};
use super::source::{describe, strings};

/// moon's layers from the top: each may depend on those after it; `true`
/// when it may also depend on its own layer.
const LAYERS: [(&str, bool); 6] = [
    ("automation", false),
    ("application", false),
    ("tool", true),
    ("library", true),
    ("scaffolding", true),
    ("configuration", true),
];

/// moon's stacks, besides `unknown`.
const STACKS: [&str; 4] = ["frontend", "backend", "infrastructure", "systems"];

/// The tags a `moon.yml`'s `layer` (or `type`), `stack` and `language` say.
pub(crate) fn metadata_tags(config: &Map<String, Value>) -> Vec<String> {
    let layer = config.get("layer").or_else(|| config.get("type"));
    [("layer", layer), ("stack", config.get("stack")), ("language", config.get("language"))]
        .into_iter()
        .filter_map(|(key, value)| match value.and_then(Value::as_str) {
            Some(v) if !v.is_empty() && v != "unknown" => Some(format!("{key}:{v}")),
            _ => None,
        })
        .collect()
}

/// `constraints` (absent: moon's defaults), as boundaries over the
/// projects' tags; the projects must be translated first.
pub(crate) fn translate_constraints(file: &str, constraints: Option<&Value>, plan: &mut Plan) {
    let mut layers = true;
    let mut tag_rules = Vec::new();
    match constraints {
        None => {}
        Some(Value::Object(constraints)) => {
            for (key, value) in constraints {
                match key.as_str() {
                    "enforceLayerRelationships" | "enforceProjectTypeRelationships" => {
                        layers = value.as_bool().unwrap_or(true);
                    }
                    "tagRelationships" => tag_rules = tag_relationships(file, value, plan),
                    _ => plan.note(file, format!("constraints.{key}"), "no vx equivalent"),
                }
            }
        }
        Some(other) => plan.note(file, "constraints", format!("unreadable value {}", describe(other))),
    }
    if layers {
        let rules = layer_rules(&plan.projects);
        plan.boundaries.extend(rules);
    }
    plan.boundaries.extend(tag_rules);
}

/// `tagRelationships`: `T: [U, …]` is a rule from `T` allowing `T, U, …`
/// (moon skips an empty list, and so does the translation).
fn tag_relationships(file: &str, value: &Value, plan: &mut Plan) -> Vec<BoundarySpec> {
    let mut rules = Vec::new();
    for (tag, required) in value.as_object().into_iter().flatten() {
        match strings(required) {
            Some(required) if required.is_empty() => {}
            Some(required) => {
                let mut allow = vec![tag.clone()];
                allow.extend(required.into_iter().filter(|r| r != tag));
                rules.push(BoundarySpec { from: vec![tag.clone()], allow });
            }
            None => plan.note(
                file,
                format!("constraints.tagRelationships.{tag}"),
                format!("unreadable value {}", describe(required)),
            ),
        }
    }
    rules
}

/// One rule per layer the projects use (and per stack, when any project
/// has one, since moon only enforces layers within a stack).
fn layer_rules(projects: &[ProjectSpec]) -> Vec<BoundarySpec> {
    let value = |p: &ProjectSpec, key: &str| -> Option<String> {
        p.tags.iter().find_map(|t| t.strip_prefix(key).and_then(|v| v.strip_prefix(':')).map(str::to_string))
    };
    let used: BTreeSet<(Option<String>, Option<String>)> =
        projects.iter().map(|p| (value(p, "layer"), value(p, "stack"))).collect();
    let any_stack = used.iter().any(|(_, stack)| stack.is_some());
    let mut rules = Vec::new();
    for (layer, may_use_self) in LAYERS.iter().copied() {
        let below = LAYERS.iter().skip_while(|(l, _)| *l != layer).skip(usize::from(!may_use_self));
        let mut allow: Vec<String> = below.map(|(l, _)| format!("layer:{l}")).collect();
        allow.push("!layer:*".to_string());
        let stacks: BTreeSet<&Option<String>> =
            used.iter().filter(|(l, _)| l.as_deref() == Some(layer)).map(|(_, s)| s).collect();
        for stack in stacks {
            let mut from = vec![format!("layer:{layer}")];
            let mut allow = allow.clone();
            match stack {
                Some(s) => {
                    from.push(format!("stack:{s}"));
                    allow.extend(STACKS.iter().filter(|other| *other != s).map(|other| format!("stack:{other}")));
                }
                None if any_stack => from.push("!stack:*".to_string()),
                None => {}
            }
            rules.push(BoundarySpec { from, allow });
        }
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(tags: &[&str]) -> ProjectSpec {
        ProjectSpec { tags: tags.iter().map(|t| t.to_string()).collect(), ..ProjectSpec::default() }
    }

    #[test]
    fn layer_type_stack_and_language_become_tags() {
        let config: Map<String, Value> =
            serde_json::from_str(r#"{ "type": "library", "stack": "frontend", "language": "typescript" }"#).unwrap();
        assert_eq!(metadata_tags(&config), ["layer:library", "stack:frontend", "language:typescript"]);
        let config: Map<String, Value> =
            serde_json::from_str(r#"{ "layer": "tool", "type": "library", "stack": "unknown" }"#).unwrap();
        assert_eq!(metadata_tags(&config), ["layer:tool"]);
    }

    #[test]
    fn layers_allow_what_is_below_them_within_a_stack() {
        let rules = layer_rules(&[project(&["layer:application"]), project(&["layer:library"]), project(&[])]);
        let text: Vec<(String, String)> = rules.iter().map(|r| (r.from.join(" "), r.allow.join(" "))).collect();
        assert_eq!(
            text,
            [
                (
                    "layer:application".to_string(),
                    "layer:tool layer:library layer:scaffolding layer:configuration !layer:*".to_string()
                ),
                (
                    "layer:library".to_string(),
                    "layer:library layer:scaffolding layer:configuration !layer:*".to_string()
                ),
            ]
        );
        let rules = layer_rules(&[project(&["layer:application", "stack:frontend"]), project(&["layer:application"])]);
        let text: Vec<(String, String)> = rules.iter().map(|r| (r.from.join(" "), r.allow.join(" "))).collect();
        assert_eq!(text[0].0, "layer:application !stack:*");
        assert!(!text[0].1.contains("stack:"), "{text:?}");
        assert_eq!(text[1].0, "layer:application stack:frontend");
        assert!(text[1].1.ends_with("!layer:* stack:backend stack:infrastructure stack:systems"), "{text:?}");
    }
}
