//! A model-based test of `[[workspace.boundaries]]` (issue 39). Random
//! workspaces of 2–6 projects, each with random tags (some in `vx.toml`,
//! some in `package.json`'s `"vx": { "tags" }`) and random dependencies
//! (some in `depends-on`, some as workspace packages in `package.json`),
//! get 1–3 random rules (`from` absent, one pattern or two; `allow`,
//! `deny` or both; globs and `!`). A straightforward reference model here
//! says which dependency each rule refuses and why, and vx must agree:
//!
//! 1. `vx lock --check` lists exactly the model's violations, in its order
//!    (project, dependency, rule), each located in the file that declares
//!    the dependency, with the rule's line and the reason.
//! 2. `vx show` fails (exit 2) with the first of them exactly when there
//!    is one, and succeeds otherwise.
//!
//! `VX_MODEL_CASES` (default [`CI_CASES`]) and `VX_MODEL_SEED` (the first
//! seed, default 0) choose the cases; a failure names its seed and
//! replays with `VX_MODEL_SEED=<seed> VX_MODEL_CASES=1`.

use crate::common::TestEnv;

/// Cases a normal run checks: seeds 0..CI_CASES, the same every time.
const CI_CASES: u64 = 40;

const TAGS: [&str; 5] = ["scope:app", "scope:shared", "scope:admin", "type:app", "type:lib"];
const PATTERNS: [&str; 9] =
    ["scope:app", "scope:shared", "scope:*", "type:*", "type:app", "!scope:*", "!type:app", "*", "!scope:shared"];

struct Project {
    name: String,
    toml_tags: Vec<&'static str>,
    pkg_tags: Vec<&'static str>,
    /// Indices of dependencies, each with whether `depends-on` declares it
    /// (else `package.json`).
    deps: Vec<(usize, bool)>,
}

impl Project {
    /// Its tags as vx merges them: `vx.toml`'s, then `package.json`'s new ones.
    fn tags(&self) -> Vec<&'static str> {
        let mut tags = self.toml_tags.clone();
        for t in &self.pkg_tags {
            if !tags.contains(t) {
                tags.push(t);
            }
        }
        tags
    }
}

struct Rule {
    from: Vec<&'static str>,
    allow: Option<Vec<&'static str>>,
    deny: Vec<&'static str>,
    /// Its line in the root `vx.toml`.
    line: usize,
}

/// The model's glob: a trailing `*` is any suffix; anything else is exact.
fn matches(pattern: &str, tags: &[&str]) -> bool {
    let (negated, glob) = match pattern.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, pattern),
    };
    let hit = tags.iter().any(|t| match glob.strip_suffix('*') {
        Some(prefix) => t.starts_with(prefix),
        None => *t == glob,
    });
    hit != negated
}

/// `(project, dependency, rule line, reason)` in vx's order.
fn model(projects: &[Project], rules: &[Rule]) -> Vec<(String, String, usize, String)> {
    let mut out = Vec::new();
    for p in projects {
        let tags = p.tags();
        let mut deps: Vec<usize> = p.deps.iter().map(|(d, _)| *d).collect();
        deps.sort();
        for d in deps {
            let dep_tags = projects[d].tags();
            for rule in rules.iter().filter(|r| r.from.iter().all(|f| matches(f, &tags))) {
                let reason = match rule.deny.iter().find(|pat| matches(pat, &dep_tags)) {
                    Some(pat) => Some(format!("denies {pat}")),
                    None => match &rule.allow {
                        Some(allow) if !allow.iter().any(|pat| matches(pat, &dep_tags)) => Some(if allow.is_empty() {
                            "allows no dependencies".to_string()
                        } else {
                            format!("allows only {}", allow.join(", "))
                        }),
                        _ => None,
                    },
                };
                if let Some(reason) = reason {
                    out.push((p.name.clone(), projects[d].name.clone(), rule.line, reason));
                }
            }
        }
    }
    out
}

fn pick<T: Copy>(rng: &mut fastrand::Rng, items: &[T], most: usize) -> Vec<T> {
    let mut chosen: Vec<T> = Vec::new();
    for _ in 0..rng.usize(0..=most) {
        chosen.push(items[rng.usize(0..items.len())]);
    }
    chosen
}

fn random_projects(rng: &mut fastrand::Rng) -> Vec<Project> {
    let n = rng.usize(2..=6);
    let mut projects = Vec::new();
    for i in 0..n {
        let (toml_tags, pkg_tags) = (pick(rng, &TAGS, 2), pick(rng, &TAGS, 2));
        // Only on earlier projects, so the graph has no cycle.
        let mut deps = Vec::new();
        for d in 0..i {
            if rng.u8(0..3) == 0 {
                deps.push((d, rng.bool()));
            }
        }
        projects.push(Project { name: format!("p{i}"), toml_tags, pkg_tags, deps });
    }
    projects
}

fn random_rules(rng: &mut fastrand::Rng) -> Vec<Rule> {
    (0..rng.usize(1..=3))
        .map(|_| {
            let from = pick(rng, &PATTERNS, 2);
            let (allow, deny) = match rng.u8(0..3) {
                0 => (Some(pick(rng, &PATTERNS, 2)), Vec::new()),
                1 => (None, pick(rng, &PATTERNS, 2).into_iter().chain([PATTERNS[rng.usize(0..9)]]).collect()),
                _ => (Some(pick(rng, &PATTERNS, 2)), pick(rng, &PATTERNS, 2)),
            };
            Rule { from, allow, deny, line: 0 }
        })
        .collect()
}

fn quoted(items: &[&str]) -> String {
    format!("[{}]", items.iter().map(|i| format!("{i:?}")).collect::<Vec<_>>().join(", "))
}

/// Writes the workspace, and sets each rule's line.
fn write(env: &TestEnv, projects: &[Project], rules: &mut [Rule]) {
    let mut root = "[workspace]\nprojects = [\"p*\"]\n".to_string();
    for rule in rules.iter_mut() {
        root.push('\n');
        rule.line = root.lines().count() + 1;
        root.push_str("[[workspace.boundaries]]\n");
        match rule.from.as_slice() {
            [] => {}
            [one] => root.push_str(&format!("from = {one:?}\n")),
            many => root.push_str(&format!("from = {}\n", quoted(many))),
        }
        if let Some(allow) = &rule.allow {
            root.push_str(&format!("allow = {}\n", quoted(allow)));
        }
        if !rule.deny.is_empty() {
            root.push_str(&format!("deny = {}\n", quoted(&rule.deny)));
        }
    }
    env.write("vx.toml", &root);
    for p in projects {
        let declared: Vec<&str> = p.deps.iter().filter(|(_, t)| *t).map(|(d, _)| projects[*d].name.as_str()).collect();
        env.write(
            &format!("{}/vx.toml", p.name),
            &format!(
                "[project]\nname = {:?}\ntags = {}\ndepends-on = {}\n",
                p.name,
                quoted(&p.toml_tags),
                quoted(&declared)
            ),
        );
        let packages: Vec<String> =
            p.deps.iter().filter(|(_, t)| !*t).map(|(d, _)| format!("\"@m/{}\": \"*\"", projects[*d].name)).collect();
        env.write(
            &format!("{}/package.json", p.name),
            &format!(
                "{{\n  \"name\": \"@m/{}\",\n  \"dependencies\": {{ {} }},\n  \"vx\": {{ \"tags\": {} }}\n}}\n",
                p.name,
                packages.join(", "),
                quoted(&p.pkg_tags)
            ),
        );
    }
}

/// A line of vx's as `(project, dependency, rule line, reason)`, checking
/// that it is located in the file that declares the dependency.
fn parse(line: &str, projects: &[Project]) -> (String, String, usize, String) {
    let rest = line.strip_prefix("vx: error: ").unwrap_or_else(|| panic!("not an error line: {line}"));
    let (location, rest) = rest.split_once(": ").expect("a location");
    let project = rest.split(" (").next().expect("a project").to_string();
    let dep = rest.split(" may not depend on ").nth(1).and_then(|r| r.split(" (").next()).expect("a dependency");
    let (rule, reason) = rest.split(": the rule at vx.toml:").nth(1).and_then(|r| r.split_once(' ')).expect("a rule");
    let rule_line: usize = rule.split(':').next().and_then(|l| l.parse().ok()).expect("the rule's line");
    let reason = reason.split("; ").next().expect("a reason");
    let reason = reason.split(" (and ").next().expect("a reason").to_string();
    let p = projects.iter().find(|p| p.name == project).expect("a known project");
    let in_toml = p.deps.iter().any(|(d, t)| projects[*d].name == dep && *t);
    let file = if in_toml { "vx.toml" } else { "package.json" };
    assert!(location.starts_with(&format!("{project}/{file}:")), "{line}: declared in {file}");
    (project, dep.to_string(), rule_line, reason)
}

fn random_case(seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let projects = random_projects(&mut rng);
    let mut rules = random_rules(&mut rng);
    let env = TestEnv::new();
    write(&env, &projects, &mut rules);
    let expected = model(&projects, &rules);
    let replay = format!("seed {seed} (replay: VX_MODEL_SEED={seed} VX_MODEL_CASES=1)\n{}", env.read("vx.toml"));

    let out = env.vx(&["lock", "--check"]);
    let lines: Vec<&str> = out.stderr.lines().filter(|l| l.contains(" may not depend on ")).collect();
    let found: Vec<_> = lines.iter().map(|l| parse(l, &projects)).collect();
    assert_eq!(found, expected, "{replay}\n{out}");
    assert_eq!(out.code, if expected.is_empty() { 1 } else { 2 }, "no vx.lock, so exit 1 at best\n{replay}\n{out}");

    let show = env.vx(&["show"]);
    match expected.first() {
        None => assert_eq!(show.code, 0, "{replay}\n{show}"),
        Some(first) => {
            show.assert_code(2);
            let line = show.error_line();
            assert_eq!(parse(line, &projects), *first, "{replay}\n{show}");
            assert_eq!(line.contains(" more); "), expected.len() > 1, "{replay}\n{show}");
        }
    }
}

fn env_u64(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok().filter(|v| !v.is_empty())?;
    Some(value.parse().unwrap_or_else(|e| panic!("{name}={value:?} is not a number: {e}")))
}

#[test]
fn random_workspaces_and_rules_agree_with_the_model() {
    let first = env_u64("VX_MODEL_SEED").unwrap_or(0);
    let cases = env_u64("VX_MODEL_CASES").unwrap_or(CI_CASES);
    assert!(cases > 0, "VX_MODEL_CASES must be at least 1");
    let mut violating = 0;
    for seed in first..first + cases {
        random_case(seed);
        let mut rng = fastrand::Rng::with_seed(seed);
        let projects = random_projects(&mut rng);
        let rules = random_rules(&mut rng);
        violating += usize::from(!model(&projects, &rules).is_empty());
    }
    // The cases must exercise both outcomes, or the comparison is empty.
    if cases >= CI_CASES {
        assert!(violating > 0 && violating < cases as usize, "{violating} of {cases} cases have violations");
    }
}
