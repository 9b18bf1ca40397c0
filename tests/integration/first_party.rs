//! First-party plugins built into `vx`: listed by `vx plugin list
//! --available`, usable by `--report junit` without being added, added by
//! name with nothing but the binary, and loaded from the binary's copy when
//! a clone lacks the pinned file.

use crate::plugins::{app_ok_lib_failing, component};

#[test]
fn list_available_names_each_first_party_plugin_with_its_kind_and_grants() {
    let env = app_ok_lib_failing();
    let out = env.vx(&["plugin", "list", "--available"]);
    out.assert_success();
    for (name, kind) in
        [("junit", "reporter"), ("http-cache", "cache-backend"), ("otel", "subscriber"), ("sandbox", "executor")]
    {
        let line =
            out.stdout.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_else(|| panic!("{name}\n{out}"));
        assert!(line.contains(kind) && line.contains("available"), "{line}");
    }
    assert!(out.stdout.contains("vx plugin add sandbox --allow-program bwrap"), "the grants it needs\n{out}");
}

#[test]
fn report_junit_works_in_a_workspace_that_never_added_it() {
    let env = app_ok_lib_failing();
    let out = env.vx(&["run", "build", "--continue", "--report", "junit", "--report-file", "junit.xml"]);
    out.assert_code(1);
    let xml = env.read("junit.xml");
    assert!(xml.contains("<testsuites name=\"vx\" tests=\"2\" failures=\"1\""), "{xml}");
    assert!(xml.contains("oops"), "the failure's log tail\n{xml}");
    assert!(!env.root().join("vx.lock").exists(), "using it does not add it");
}

#[test]
fn add_by_name_pins_the_built_in_bytes_and_a_clone_without_the_file_still_loads_them() {
    let env = app_ok_lib_failing();
    let out = env.vx(&["plugin", "add", "junit"]);
    out.assert_success();
    assert!(out.stdout.contains("added `junit`: reporter"), "{out}");
    let dist = std::fs::read(component("junit")).unwrap();
    let lock = env.read("vx.lock");
    assert!(
        lock.contains(&format!("blake3 = \"{}\"", blake3::hash(&dist).to_hex())),
        "the pin is plugins/dist's\n{lock}"
    );
    assert_eq!(std::fs::read(env.root().join(".vx/plugins/junit.wasm")).unwrap(), dist);

    // A fresh clone: vx.toml and vx.lock are committed, .vx/ is not.
    std::fs::remove_dir_all(env.root().join(".vx")).unwrap();
    let list = env.vx(&["plugin", "list"]);
    list.assert_success();
    assert!(list.stdout.contains("vx's built-in copy is used"), "{list}");
    let run = env.vx(&["run", "build", "--continue", "--report", "junit", "--report-file", "junit.xml"]);
    run.assert_code(1);
    assert!(env.read("junit.xml").contains("failures=\"1\""), "{run}");
}

#[test]
fn a_name_that_is_neither_a_file_nor_first_party_lists_the_names() {
    let env = app_ok_lib_failing();
    let out = env.vx(&["plugin", "add", "jnuit"]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("no first-party plugin of that name")
            && out.stderr.contains("junit, http-cache, otel, sandbox"),
        "{out}"
    );
    assert!(!env.read("vx.toml").contains("[plugins"), "nothing was written");
}
