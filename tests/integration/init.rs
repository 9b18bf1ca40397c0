//! `vx init`: workspaces written for Turborepo, Nx and moon become
//! `vx.toml` files that load and run; what does not translate is named,
//! one line per setting; existing files are kept unless `--force`.

use crate::common::TestEnv;

/// A file `vx init` wrote, after its first line, which must be the
/// `#:schema` comment naming this version's schema (taplo and Even Better
/// TOML read it; `schema::` checks the written files against the schema).
fn written(env: &TestEnv, path: &str) -> String {
    let text = env.read(path);
    let (first, rest) = text.split_once('\n').unwrap_or_default();
    let url =
        format!("https://raw.githubusercontent.com/vx-dev/vx/v{}/docs/schema/vx-toml.json", env!("CARGO_PKG_VERSION"));
    assert_eq!(first, format!("#:schema {url}"), "{path}");
    rest.to_string()
}

/// A shell command that logs `word` and writes `dist/out.txt`.
fn build_script(word: &str) -> String {
    format!("mkdir -p dist && echo {word} > dist/out.txt && echo {word} >> \\\"$VX_TEST_LOG\\\"")
}

fn turbo_workspace() -> TestEnv {
    let env = TestEnv::new();
    env.write(
        "package.json",
        r#"{ "name": "root", "private": true, "workspaces": ["packages/*"], "scripts": { "build": "turbo run build" } }"#,
    );
    env.write("tsconfig.base.json", "{}\n");
    env.write(
        "turbo.json",
        r#"{
  "$schema": "https://turborepo.com/schema.json",
  "ui": "stream",
  "globalDependencies": ["tsconfig.base.json"],
  "globalEnv": ["CI_MODE"],
  "globalPassThroughEnv": ["AWS_*"],
  "tasks": {
    "build": { "dependsOn": ["^build"], "inputs": ["$TURBO_DEFAULT$", "!README.md"], "outputs": ["dist/**"], "env": ["NODE_ENV", "NEXT_PUBLIC_*"], "passThroughEnv": ["HOME"] },
    "app#build": { "dependsOn": ["^build", "lib#gen", "missing"], "outputs": ["dist/**"], "outputLogs": "new-only" },
    "dev": { "persistent": true, "cache": false },
    "//#format": {}
  }
}"#,
    );
    env.write(
        "packages/lib/package.json",
        &format!(
            r#"{{ "name": "lib", "scripts": {{ "build": "{}", "gen": "echo lib-gen >> \"$VX_TEST_LOG\"" }} }}"#,
            build_script("lib-build")
        ),
    );
    env.write("packages/lib/src/index.js", "export const lib = 1;\n");
    env.write(
        "packages/app/package.json",
        &format!(
            r#"{{ "name": "app", "dependencies": {{ "lib": "*" }}, "scripts": {{ "build": "{}", "dev": "sleep 1" }} }}"#,
            build_script("app-build")
        ),
    );
    env
}

#[test]
fn turbo_tasks_become_vx_tasks_that_run() {
    let env = turbo_workspace();
    let out = env.vx(&["init"]);
    out.assert_success();
    assert!(out.stdout.contains("wrote vx.toml\n"), "{out}");
    assert!(out.stdout.contains("wrote packages/app/vx.toml\n"), "{out}");
    assert!(out.stdout.contains("wrote packages/lib/vx.toml\n"), "{out}");
    assert_eq!(
        written(&env, "vx.toml"),
        "# Written by `vx init` from turbo.json.\n[workspace]\nprojects = [\"packages/*\"]\nglobal-inputs = [\"tsconfig.base.json\"]\n\
         global-env = [\"CI_MODE\"]\nglobal-pass-env = [\"AWS_*\"]\n\
         \n[project]\nname = \"//\"\n\n[tasks.format]\ndepends-on = []\n",
        "the root package is `//`, as in turbo's `//#format`"
    );
    assert_eq!(
        written(&env, "packages/app/vx.toml"),
        "# Written by `vx init` from turbo.json.\n\
         [tasks.build]\ndepends-on = [\"^build\", \"lib#gen\"]\noutputs = [\"dist/**\"]\ncache = true\n\
         \n[tasks.dev]\ndepends-on = []\npersistent = true\ncache = false\n"
    );
    assert_eq!(
        written(&env, "packages/lib/vx.toml"),
        "# Written by `vx init` from turbo.json.\n\
         [tasks.build]\ndepends-on = [\"^build\"]\ninputs = [\"**\", \"!README.md\"]\noutputs = [\"dist/**\"]\nenv = [\"NODE_ENV\", \"NEXT_PUBLIC_*\"]\n\
         pass-env = [\"HOME\"]\ncache = true\n\
         \n[tasks.dev]\ndepends-on = []\n"
    );
    for line in [
        "not translated: turbo.json: ui: ",
        "not translated: turbo.json: tasks.app#build.outputLogs: vx sets this per run with `--output-logs`",
        "not translated: turbo.json: tasks.app#build.dependsOn: project `app` has no task `missing`; dropped",
    ] {
        assert!(out.stdout.lines().any(|l| l.starts_with(line)), "missing `{line}`\n{out}");
    }
    let notes = out.stdout.lines().filter(|l| l.starts_with("not translated: ")).count();
    assert!(
        out.stdout.ends_with(&format!("vx init: wrote 3 file(s) from turbo.json; {notes} setting(s) not translated\n")),
        "{out}"
    );

    env.vx(&["show"]).assert_success();
    let run = env.vx(&["run", "build"]);
    run.assert_success();
    crate::common::assert_before(&env.log(), "lib-build", "app-build");
    crate::common::assert_before(&env.log(), "lib-gen", "app-build");
    assert_eq!(env.read("packages/app/dist/out.txt"), "app-build\n");
    env.clear_log();
    let again = env.vx(&["run", "build"]);
    again.assert_success();
    assert!(again.stdout.contains("lib#build: cache hit"), "lib#build is cached the second time\n{again}");
}

#[test]
fn existing_files_are_kept_unless_forced() {
    let env = turbo_workspace();
    env.write("packages/lib/vx.toml", "# mine\n");
    let out = env.vx(&["init"]);
    out.assert_code(2);
    assert!(out.error_line().contains("packages/lib/vx.toml already exists; nothing was written"), "{out}");
    assert!(!env.path("vx.toml").exists(), "nothing may be written when a file would be refused");
    assert_eq!(env.read("packages/lib/vx.toml"), "# mine\n");

    let dry = env.vx(&["init", "--dry"]);
    dry.assert_success();
    assert!(dry.stdout.contains("--- packages/lib/vx.toml (would write)\n#:schema https://"), "{dry}");
    assert!(!env.path("vx.toml").exists(), "--dry writes nothing");
    assert_eq!(env.read("packages/lib/vx.toml"), "# mine\n");

    env.vx(&["init", "--force"]).assert_success();
    assert!(env.read("packages/lib/vx.toml").contains("[tasks.build]"));
}

#[test]
fn several_sources_need_from() {
    let env = turbo_workspace();
    env.write("nx.json", "{}");
    let out = env.vx(&["init"]);
    out.assert_code(2);
    assert!(
        out.error_line().contains("several configurations found (turbo.json, nx.json); pick one with --from"),
        "{out}"
    );
    env.vx(&["init", "--from", "turbo"]).assert_success();
}

#[test]
fn invalid_json_is_one_error_naming_the_file() {
    let env = TestEnv::new();
    env.write("turbo.json", "{ \"tasks\": ");
    let out = env.vx(&["init"]);
    out.assert_code(2);
    assert!(out.error_line().starts_with("vx: error: turbo.json:1:11: EOF while parsing"), "{out}");
}

fn nx_workspace() -> TestEnv {
    let env = TestEnv::new();
    env.write("package.json", r#"{ "name": "root", "private": true }"#);
    env.write(
        "nx.json",
        r#"{
  "$schema": "./node_modules/nx/schemas/nx-schema.json",
  "plugins": ["@nx/vite/plugin"],
  "namedInputs": {
    "default": ["{projectRoot}/**/*", "sharedGlobals"],
    "production": ["default", "!{projectRoot}/**/*.spec.ts", { "env": "NODE_ENV" }],
    "sharedGlobals": ["{workspaceRoot}/tsconfig.base.json"]
  },
  "targetDefaults": {
    "build": { "dependsOn": ["^build"], "cache": true, "inputs": ["production", "^production"], "outputs": ["{projectRoot}/dist"] }
  }
}"#,
    );
    env.write(
        "libs/ui/project.json",
        &format!(
            r#"{{ "name": "ui", "targets": {{
  "build": {{ "executor": "nx:run-commands", "options": {{ "command": "{}" }} }},
  "test": {{ "executor": "@nx/jest:jest", "options": {{ "jestConfig": "jest.config.ts" }} }}
}} }}"#,
            build_script("ui-build")
        ),
    );
    env.write(
        "apps/web/project.json",
        r#"{ "name": "web", "implicitDependencies": ["ui"], "tags": ["scope:app", "type:app"], "targets": {
  "build": { "executor": "nx:run-commands", "options": { "commands": ["echo web-build >> \"$VX_TEST_LOG\"", "mkdir -p ../../dist/apps/web"], "parallel": false }, "outputs": ["{workspaceRoot}/dist/apps/web"] },
  "serve": { "command": "sleep 1", "continuous": true }
} }"#,
    );
    env
}

#[test]
fn nx_targets_become_vx_tasks_that_run() {
    let env = nx_workspace();
    let out = env.vx(&["init"]);
    out.assert_success();
    assert_eq!(
        written(&env, "vx.toml"),
        "# Written by `vx init` from nx.json.\n[workspace]\nprojects = [\"apps/web\", \"libs/ui\"]\n"
    );
    assert_eq!(
        written(&env, "libs/ui/vx.toml"),
        format!(
            "# Written by `vx init` from nx.json.\n[project]\nname = \"ui\"\n\n\
             [tasks.build]\ncommand = \"{}\"\ndepends-on = [\"^build\"]\ninputs = [\"**/*\", \"!**/*.spec.ts\"]\noutputs = [\"dist\"]\nenv = [\"NODE_ENV\"]\ncache = true\n",
            build_script("ui-build")
        )
    );
    let web = env.read("apps/web/vx.toml");
    assert!(
        web.contains("[project]\nname = \"web\"\ndepends-on = [\"ui\"]\ntags = [\"scope:app\", \"type:app\"]\n"),
        "{web}"
    );
    assert!(
        web.contains("command = \"echo web-build >> \\\"$VX_TEST_LOG\\\" && mkdir -p ../../dist/apps/web\""),
        "{web}"
    );
    assert!(
        web.contains("[tasks.serve]\ncommand = \"sleep 1\"\ndepends-on = []\npersistent = true\ncache = false\n"),
        "{web}"
    );
    for line in [
        "not translated: nx.json: plugins `@nx/vite/plugin`: targets inferred by Nx plugins are not translated",
        "not translated: libs/ui/project.json: targets.test.executor: executor `@nx/jest:jest` has no vx equivalent",
        "not translated: nx.json: targetDefaults.build.inputs: `^production` (the inputs of dependencies)",
        "not translated: nx.json: targetDefaults.build.inputs: `tsconfig.base.json` is outside the project",
        "not translated: apps/web/project.json: targets.build.outputs: `{workspaceRoot}/dist/apps/web` is outside the project",
    ] {
        assert!(out.stdout.lines().any(|l| l.starts_with(line)), "missing `{line}`\n{out}");
    }
    assert!(!out.stdout.contains("not translated: apps/web/project.json: targets.build.options.parallel"), "{out}");

    let run = env.vx(&["run", "build"]);
    run.assert_success();
    crate::common::assert_before(&env.log(), "ui-build", "web-build");
    env.clear_log();
    env.vx(&["run", "build", "--filter", "tag:scope:app", "--only"]).assert_success();
    assert_eq!(env.log(), ["web-build"]);
}

fn moon_workspace() -> TestEnv {
    let env = TestEnv::new();
    env.write(
        ".moon/workspace.yml",
        "projects:\n  - 'packages/*'\nvcs:\n  client: 'git'\nrunner:\n  logRunningCommand: true\n",
    );
    env.write(".moon/toolchain.yml", "node:\n  version: '20.0.0'\n");
    env.write(
        ".moon/tasks.yml",
        "fileGroups:\n  sources: ['src/**/*']\ntasks:\n  check:\n    command: 'true'\n    options:\n      runInCI: false\n",
    );
    env.write(
        "packages/core/moon.yml",
        "language: 'javascript'\nplatform: 'node'\ntasks:\n  build:\n    script: 'echo core-build >> \"$VX_TEST_LOG\"'\n    inputs: ['@group(sources)', '/tsconfig.json', '$API_URL']\n    outputs: ['dist/**/*']\n",
    );
    env.write("packages/core/src/a.js", "1\n");
    env.write(
        "packages/app/moon.yml",
        "dependsOn: ['core']\ntasks:\n  build:\n    command: 'sh'\n    args: ['-c', 'echo app-build-$MODE >> \"$VX_TEST_LOG\"']\n    deps: ['^:build', '#lib:lint', 'core:check']\n    env:\n      MODE: prod\n    options:\n      cache: false\n  serve:\n    command: 'sleep 1'\n    local: true\n",
    );
    env
}

#[test]
fn moon_tasks_become_vx_tasks_that_run() {
    let env = moon_workspace();
    let out = env.vx(&["init"]);
    out.assert_success();
    assert_eq!(
        written(&env, "vx.toml"),
        "# Written by `vx init` from .moon/workspace.yml.\n[workspace]\nprojects = [\"packages/app\", \"packages/core\"]\n"
    );
    assert_eq!(
        written(&env, "packages/app/vx.toml"),
        "# Written by `vx init` from .moon/workspace.yml.\n[project]\nname = \"app\"\ndepends-on = [\"core\"]\n\n\
         [tasks.build]\ncommand = \"env MODE=prod sh -c 'echo app-build-$MODE >> \\\"$VX_TEST_LOG\\\"'\"\ndepends-on = [\"^build\", \"core#check\"]\ncache = false\n\n\
         [tasks.check]\ncommand = \"true\"\ndepends-on = []\ncache = true\n\n\
         [tasks.serve]\ncommand = \"sleep 1\"\ndepends-on = []\npersistent = true\ncache = false\n"
    );
    let core = env.read("packages/core/vx.toml");
    assert!(
        core.contains("[tasks.build]\ncommand = \"echo core-build >> \\\"$VX_TEST_LOG\\\"\"\ndepends-on = []\ninputs = [\"src/**/*\"]\noutputs = [\"dist/**/*\"]\nenv = [\"API_URL\"]\ncache = true\n"),
        "{core}"
    );
    for line in [
        "not translated: .moon/workspace.yml: runner: no vx equivalent",
        "not translated: .moon/toolchain.yml: (whole file): vx does not install or pin toolchains",
        "not translated: .moon/tasks.yml: tasks.check.options.runInCI: ",
        "not translated: packages/core/moon.yml: platform: ",
        "not translated: packages/core/moon.yml: tasks.build.inputs: `/tsconfig.json` is outside the project",
        "not translated: packages/app/moon.yml: tasks.build.deps: `#lib:lint` selects projects by tag",
    ] {
        assert!(out.stdout.lines().any(|l| l.starts_with(line)), "missing `{line}`\n{out}");
    }
    let run = env.vx(&["run", "build"]);
    run.assert_success();
    crate::common::assert_before(&env.log(), "core-build", "app-build-prod");
}

#[test]
fn turbo_env_mode_and_pass_through_env_translate_and_take_effect() {
    let env = TestEnv::new();
    env.write("package.json", r#"{ "name": "root", "private": true, "workspaces": ["packages/*"] }"#);
    env.write(
        "turbo.json",
        r#"{ "envMode": "strict", "globalPassThroughEnv": ["TOOL_*"],
  "tasks": { "build": { "env": ["NODE_ENV"], "passThroughEnv": ["AUTH_*", "!AUTH_SECRET"], "outputs": ["dist/**"] } } }"#,
    );
    env.write(
        "packages/lib/package.json",
        r#"{ "name": "lib", "scripts": { "build": "echo \"N=$NODE_ENV A=$AUTH_USER S=${AUTH_SECRET-unset} T=$TOOL_HOME O=${OTHER-unset}\"" } }"#,
    );
    env.vx(&["init"]).assert_success();
    assert!(
        env.read("vx.toml").contains("env-mode = \"strict\"\nglobal-pass-env = [\"TOOL_*\"]\n"),
        "{}",
        env.read("vx.toml")
    );
    assert!(
        env.read("packages/lib/vx.toml").contains("env = [\"NODE_ENV\"]\npass-env = [\"AUTH_*\", \"!AUTH_SECRET\"]\n"),
        "{}",
        env.read("packages/lib/vx.toml")
    );
    let mut cmd = env.vx_command(&["run", "build"]);
    for (k, v) in
        [("NODE_ENV", "production"), ("AUTH_USER", "u"), ("AUTH_SECRET", "s"), ("TOOL_HOME", "t"), ("OTHER", "o")]
    {
        cmd = cmd.env(k, v);
    }
    let out = cmd.output();
    out.assert_success();
    assert_eq!(out.task_lines("lib#build"), ["N=production A=u S=unset T=t O=unset"], "{out}");

    env.write("turbo.json", r#"{ "envMode": "lax", "tasks": {} }"#);
    let out = env.vx(&["init", "--force", "--dry"]);
    out.assert_success();
    assert!(out.stdout.contains("not translated: turbo.json: envMode: expected \"strict\" or \"loose\""), "{out}");
}

/// moon's `layer` (or the older `type`), `stack` and `language` become
/// tags; `constraints` (layers are enforced unless turned off, and
/// `tagRelationships`) become `[[workspace.boundaries]]` that vx enforces
/// as moon does: across stacks anything goes, within one only downwards.
#[test]
fn moon_layers_become_tags_and_constraints_boundaries() {
    let env = TestEnv::new();
    env.write(
        ".moon/workspace.yml",
        "projects:\n  - 'apps/*'\n  - 'packages/*'\nconstraints:\n  tagRelationships:\n    next: ['react']\n",
    );
    let project = |dir: &str, yml: &str| {
        let name = dir.rsplit('/').next().unwrap_or(dir);
        let build =
            format!("tasks:\n  build:\n    command: 'echo {name} >> \"$VX_TEST_LOG\"'\n    deps: ['^:build']\n");
        env.write(&format!("{dir}/moon.yml"), &format!("{yml}{build}"));
    };
    project(
        "apps/web",
        "layer: 'application'\nstack: 'frontend'\nlanguage: 'typescript'\ntags: ['next']\ndependsOn: ['ui', 'api']\n",
    );
    project("apps/api", "type: 'application'\nstack: 'backend'\ntags: ['next']\n");
    project("packages/ui", "layer: 'library'\nstack: 'frontend'\ntags: ['react']\n");
    env.vx(&["init"]).assert_success();

    let layers = "\"layer:tool\", \"layer:library\", \"layer:scaffolding\", \"layer:configuration\", \"!layer:*\"";
    assert_eq!(
        written(&env, "vx.toml"),
        format!(
            "# Written by `vx init` from .moon/workspace.yml.\n[workspace]\nprojects = [\"apps/api\", \"apps/web\", \"packages/ui\"]\n\n\
             [[workspace.boundaries]]\nfrom = [\"layer:application\", \"stack:backend\"]\n\
             allow = [{layers}, \"stack:frontend\", \"stack:infrastructure\", \"stack:systems\"]\n\n\
             [[workspace.boundaries]]\nfrom = [\"layer:application\", \"stack:frontend\"]\n\
             allow = [{layers}, \"stack:backend\", \"stack:infrastructure\", \"stack:systems\"]\n\n\
             [[workspace.boundaries]]\nfrom = [\"layer:library\", \"stack:frontend\"]\n\
             allow = [\"layer:library\", \"layer:scaffolding\", \"layer:configuration\", \"!layer:*\", \"stack:backend\", \"stack:infrastructure\", \"stack:systems\"]\n\n\
             [[workspace.boundaries]]\nfrom = \"next\"\nallow = [\"next\", \"react\"]\n"
        )
    );
    let web = env.read("apps/web/vx.toml");
    assert!(
        web.contains("tags = [\"next\", \"layer:application\", \"stack:frontend\", \"language:typescript\"]\n"),
        "{web}"
    );
    assert!(env.read("apps/api/vx.toml").contains("tags = [\"next\", \"layer:application\", \"stack:backend\"]\n"));

    // A frontend app may use a backend app and a library of its stack.
    env.vx(&["run", "build"]).assert_success();
    crate::common::assert_before(&env.log(), "api", "web");
    env.clear_log();
    env.vx(&["run", "build", "--filter", "tag:layer:application", "--only", "--force"]).assert_success();
    assert_eq!(env.log_set(), ["api", "web"]);

    // A library may not use an application of its stack, as moon's layers
    // have it.
    let web = web.replace("depends-on = [\"ui\", \"api\"]", "depends-on = [\"api\"]");
    env.write("apps/web/vx.toml", &web);
    let ui = env.read("packages/ui/vx.toml").replace("[project]\n", "[project]\ndepends-on = [\"web\"]\n");
    env.write("packages/ui/vx.toml", &ui);
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    assert!(
        out.error_line().starts_with(
            "vx: error: packages/ui/vx.toml:4:15: ui (layer:library, stack:frontend) may not depend on web \
             (next, layer:application, stack:frontend, language:typescript): the rule at vx.toml:14:1 allows only layer:library"
        ),
        "{out}"
    );
}
