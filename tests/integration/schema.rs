//! The JSON Schema of `vx.toml` (`docs/schema/vx-toml.json`, generated
//! from the configuration types; a unit test of the host checks the
//! committed copy), checked with taplo, the validator behind Even Better
//! TOML: every example `vx.toml` of the repository and every whole
//! `vx.toml` in the docs passes it, what vx refuses at load it refuses too,
//! and the files `vx init` writes name it and pass it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::common::{Output, TestEnv};

/// The repository's root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("the repository root")
}

/// The committed schema, as the `file://` URL taplo takes.
fn schema_url() -> String {
    format!("file://{}", repo().join("docs/schema/vx-toml.json").display())
}

/// taplo's CLI: `$VX_TEST_TAPLO`, else where `scripts/test` installs it
/// (npm `@taplo/cli`); `None` (the test is skipped, saying why) only when
/// neither is there and the variable is unset.
fn taplo() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("VX_TEST_TAPLO").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        assert!(path.is_file(), "VX_TEST_TAPLO points at {}, which is not a file", path.display());
        return Some(path);
    }
    let installed = PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
        .join(".cache/vx/taplo-0.7.0/node_modules/.bin/taplo");
    installed.is_file().then_some(installed)
}

const NO_TAPLO: &str = "skipped: no taplo installed; scripts/test installs it and sets VX_TEST_TAPLO";

/// `taplo check` of `files` (relative to the workspace) against the
/// committed schema, whatever `#:schema` comment they carry.
fn check(env: &TestEnv, taplo: &Path, files: &[String]) -> Output {
    let url = schema_url();
    let mut args = vec!["check", "--colors", "never", "--no-auto-config", "--schema", &url];
    args.extend(files.iter().map(String::as_str));
    env.tool_in(".", taplo, &args, &[])
}

/// Every `vx.toml` under `dir`, relative to the repository.
fn vx_tomls(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("read an examples directory").flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() && !matches!(entry.file_name().to_str(), Some("node_modules" | ".vx" | "target")) {
            vx_tomls(&path, out);
        } else if entry.file_name() == "vx.toml" {
            out.push(path);
        }
    }
}

/// The ```` ```toml ```` blocks of a markdown file that are whole `vx.toml`
/// files, with the line each starts on. A block whose first line is a
/// comment naming another file (`# vx.lock`) is an excerpt of that file.
fn toml_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in markdown.lines().enumerate() {
        match &mut current {
            None if line == "```toml" => current = Some((i + 2, String::new())),
            Some(_) if line == "```" => blocks.extend(current.take()),
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
            None => {}
        }
    }
    blocks.retain(|(_, text)| !text.starts_with("# vx.lock"));
    blocks
}

#[test]
fn every_example_and_documented_vx_toml_passes_the_schema() {
    let Some(taplo) = taplo() else {
        eprintln!("{NO_TAPLO}");
        return;
    };
    let repo = repo();
    let env = TestEnv::new();
    let mut files = Vec::new();
    let mut examples = Vec::new();
    vx_tomls(&repo.join("examples"), &mut examples);
    assert!(examples.len() >= 4, "the example workspaces have vx.toml files: {examples:?}");
    for path in &examples {
        let rel = path.strip_prefix(&repo).expect("inside the repository").display().to_string();
        env.write(&rel, &std::fs::read_to_string(path).expect("read an example"));
        files.push(rel);
    }
    let mut docs: Vec<PathBuf> =
        std::fs::read_dir(repo.join("docs")).expect("docs/").flatten().map(|e| e.path()).collect();
    docs.retain(|p| p.extension().is_some_and(|e| e == "md"));
    docs.push(repo.join("README.md"));
    docs.sort();
    let before = files.len();
    for doc in &docs {
        let name = doc.file_name().and_then(|n| n.to_str()).expect("a markdown file's name");
        for (line, text) in toml_blocks(&std::fs::read_to_string(doc).expect("read a doc")) {
            let rel = format!("docs/{name}-{line}/vx.toml");
            env.write(&rel, &text);
            files.push(rel);
        }
    }
    assert!(files.len() - before >= 10, "the docs have vx.toml blocks: {files:?}");
    let out = check(&env, &taplo, &files);
    // Each directory is named after the example, or the doc and the line its block starts on.
    assert_eq!(out.code, 0, "a vx.toml of the repository breaks docs/schema/vx-toml.json\n{out}");
}

/// A project's task table with one more line, and what makes vx refuse it.
const REFUSED: &[(&str, &str)] = &[
    ("comand = \"make\"\n", "an unknown key"),
    ("command = []\n", "an empty argv"),
    ("command = \"   \"\n", "a blank command"),
    ("command = 3\n", "a command that is neither a string nor an array"),
    ("command = \"make\"\ntimeout = \"10\"\n", "a duration without a unit"),
    ("command = \"make\"\npriority = \"urgent\"\n", "an unknown priority"),
    ("command = \"make\"\nmutex = \"a b\"\n", "a mutex that is not a word"),
    ("command = \"make\"\nsandbox = { network = \"yes\" }\n", "a sandbox network that is not true, false or loopback"),
    ("command = \"make\"\nsandbox = { allow-exec = [\"/bin\"] }\n", "an unknown sandbox key"),
    ("command = \"make\"\nresources = { cpus = 0 }\n", "no cpus"),
    ("command = \"make\"\nresources = { memory = \"lots\" }\n", "a memory that is not a size"),
    (
        "command = \"make\"\npersistent = true\ncache = false\nready = { log = \"up\", port = 3000 }\n",
        "two ready rules",
    ),
    ("command = \"make\"\nretries = -1\n", "negative retries"),
    ("command = \"make\"\nenv = [\"A=1\"]\n", "an env entry with a value"),
];

/// The same task table with a line vx reads: each shorthand and form.
const ACCEPTED: &[&str] = &[
    "command = [\"node\", \"build.js\"]\n",
    "command = \"make\"\nsandbox = true\n",
    "command = \"make\"\nsandbox = { allow-read = [\"/node_modules\"], network = \"loopback\" }\n",
    "command = \"make\"\nresources = { cpus = 0.5, memory = \"512MiB\" }\n",
    "command = \"make\"\npersistent = true\ncache = false\nready = { port = 3000 }\nready-timeout = \"1m30s\"\n",
    "command = \"make\"\ntimeout = \"250ms\"\nretries = 2\npriority = \"high\"\nmutex = \"db.main\"\n",
    "command = \"make\"\nenv = [\"NODE_ENV\", \"NEXT_PUBLIC_*\", \"!NEXT_PUBLIC_SECRET\"]\n",
];

/// Root files vx refuses, with a project `p` that is fine.
const REFUSED_ROOTS: &[(&str, &str)] = &[
    ("env-mode = \"lax\"\n", "an unknown env-mode"),
    ("[cache]\nmonitor = \"inotify\"\n", "an unknown monitor"),
    ("[cache]\nmax-age = \"2 weeks\"\n", "a max-age that is not a duration"),
    ("[remote]\nendpoint = \"tcp://cache:8080\"\n", "an endpoint that is not gRPC"),
    ("[remote]\ninstance-name = \"main\"\n", "a remote without its endpoint"),
    ("[[workspace.boundaries]]\nfrom = \"scope:app\"\n", "a boundary rule with neither allow nor deny"),
    ("[[workspace.boundaries]]\nfrom = []\ndeny = [\"type:app\"]\n", "a boundary rule from no pattern"),
    ("[[workspace.boundaries]]\ndeny = [\"!\"]\n", "a tag pattern that is only `!`"),
    ("[[workspace.boundaries]]\nto = \"type:app\"\ndeny = []\n", "an unknown key in a boundary rule"),
];

/// Root files vx reads: each form of a boundary rule.
const ACCEPTED_ROOTS: &[&str] = &[
    "[[workspace.boundaries]]\nfrom = \"scope:app\"\nallow = [\"scope:shared\", \"scope:app\"]\n",
    "[[workspace.boundaries]]\nfrom = [\"layer:application\", \"!stack:*\"]\nallow = []\ndeny = [\"type:*\"]\n",
    "[[workspace.boundaries]]\ndeny = [\"type:app\"]\n\n[[workspace.boundaries]]\nfrom = \"!type:app\"\nallow = [\"*\"]\n",
];

/// A workspace with one project `p`: `root` after the root's
/// `[workspace]` table, `task` in `p`'s `build` table.
fn workspace(root: &str, task: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", &format!("[workspace]\nprojects = [\"p\"]\n{root}"));
    env.write("p/vx.toml", &format!("[tasks.build]\n{task}"));
    env
}

/// The files taplo found invalid, from its report (one `invalid file`
/// line naming each).
fn invalid_files(out: &Output) -> BTreeSet<String> {
    out.stderr
        .lines()
        .chain(out.stdout.lines())
        .filter(|l| l.contains("invalid file"))
        .filter_map(|l| l.split("path=\"").nth(1)?.split('"').next().map(str::to_string))
        .collect()
}

#[test]
fn the_schema_refuses_what_vx_refuses_and_takes_what_it_takes() {
    let cases: Vec<(String, String, Option<&str>)> = REFUSED
        .iter()
        .map(|(task, why)| (String::new(), task.to_string(), Some(*why)))
        .chain(ACCEPTED.iter().map(|task| (String::new(), task.to_string(), None)))
        .chain(REFUSED_ROOTS.iter().map(|(root, why)| (root.to_string(), "command = \"make\"\n".into(), Some(*why))))
        .chain(ACCEPTED_ROOTS.iter().map(|root| (root.to_string(), "command = \"make\"\n".into(), None)))
        .collect();
    // vx itself, case by case: the schema must agree with these.
    for (root, task, refused) in &cases {
        let out = workspace(root, task).vx(&["show"]);
        match refused {
            Some(why) => assert_eq!(out.code, 2, "vx takes {why}\n{root}{task}\n{out}"),
            None => assert_eq!(out.code, 0, "vx refuses\n{root}{task}\n{out}"),
        }
    }
    let Some(taplo) = taplo() else {
        eprintln!("{NO_TAPLO}");
        return;
    };
    // One taplo run over every case (it takes seconds to start), each in a
    // directory of its own.
    let env = TestEnv::new();
    let mut files = Vec::new();
    for (i, (root, task, _)) in cases.iter().enumerate() {
        env.write(&format!("case-{i}/vx.toml"), &format!("[workspace]\nprojects = [\"p\"]\n{root}"));
        env.write(&format!("case-{i}/p/vx.toml"), &format!("[tasks.build]\n{task}"));
        files.push(format!("case-{i}/vx.toml"));
        files.push(format!("case-{i}/p/vx.toml"));
    }
    let out = check(&env, &taplo, &files);
    let invalid = invalid_files(&out);
    for (i, (root, task, refused)) in cases.iter().enumerate() {
        let dir = env.root().join(format!("case-{i}"));
        let flagged = invalid.iter().any(|f| Path::new(f).starts_with(&dir));
        match refused {
            Some(why) => assert!(flagged, "the schema takes {why}, which vx refuses\n{root}{task}\n{out}"),
            None => assert!(!flagged, "the schema refuses what vx takes\n{root}{task}\n{out}"),
        }
    }
}

#[test]
fn vx_init_writes_files_that_name_the_schema_and_pass_it() {
    let env = TestEnv::new();
    env.write("package.json", r#"{ "name": "root", "private": true, "workspaces": ["packages/*"] }"#);
    env.write(
        "turbo.json",
        r#"{ "tasks": { "build": { "dependsOn": ["^build"], "outputs": ["dist/**"] }, "dev": { "persistent": true, "cache": false } } }"#,
    );
    env.write("packages/lib/package.json", r#"{ "name": "lib", "scripts": { "build": "true", "dev": "true" } }"#);
    env.vx(&["init"]).assert_success();
    let url =
        format!("https://raw.githubusercontent.com/vx-dev/vx/v{}/docs/schema/vx-toml.json", env!("CARGO_PKG_VERSION"));
    let written = ["vx.toml".to_string(), "packages/lib/vx.toml".to_string()];
    for file in &written {
        let text = env.read(file);
        assert_eq!(text.lines().next(), Some(format!("#:schema {url}").as_str()), "{file}:\n{text}");
    }
    env.vx(&["show"]).assert_success();
    let Some(taplo) = taplo() else {
        eprintln!("{NO_TAPLO}");
        return;
    };
    let out = check(&env, &taplo, &written);
    assert_eq!(out.code, 0, "vx init wrote files that break the schema\n{out}");
}

#[test]
fn every_key_of_the_schema_is_described() {
    let text = std::fs::read_to_string(repo().join("docs/schema/vx-toml.json")).expect("the schema");
    let schema: serde_json::Value = serde_json::from_str(&text).expect("the schema is JSON");
    let mut tables = vec![("vx.toml".to_string(), &schema)];
    for (name, def) in schema["definitions"].as_object().expect("definitions") {
        tables.push((name.clone(), def));
    }
    let mut keys = 0;
    for (table, def) in tables {
        for (key, value) in def["properties"].as_object().into_iter().flatten() {
            keys += 1;
            let described = value["description"].as_str().is_some_and(|d| !d.is_empty());
            assert!(described, "{table}.{key} has no description: give its field a doc comment");
        }
    }
    assert!(keys > 40, "the schema describes vx.toml's keys ({keys} found)");
}
