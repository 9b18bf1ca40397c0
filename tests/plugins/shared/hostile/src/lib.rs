//! Misbehaviour shared by the test plugins (testkit, testcache, testexec),
//! so each plugin kind is tested against the same hostile code: an endless
//! loop, a 1 GiB allocation, unbounded recursion, floods of output, text
//! that is not UTF-8, and every way out of the sandbox a plugin can try
//! without a grant ([`probe`]).
//!
//! [`probe`] reports one line per attempt, `probe NAME: ok: …` or `probe
//! NAME: refused: ERROR`, which each plugin logs as a warning so the host's
//! tests read them from vx's stderr whatever the plugin's kind.

use std::io::Read;
use std::time::{SystemTime, UNIX_EPOCH};

/// Loops forever without calling the host.
pub fn spin() -> ! {
    let mut n: u64 = 0;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
    }
}

/// Allocates and touches 1 GiB.
pub fn alloc_gib() -> u64 {
    let mut big = vec![0u8; 1 << 30];
    big[12345] = 1;
    big.iter().map(|b| u64::from(*b)).sum()
}

/// Recurses without end, each frame holding a buffer, until the stack is
/// exhausted.
#[inline(never)]
pub fn recurse(depth: u64) -> u64 {
    let frame = std::hint::black_box([depth; 64]);
    if std::hint::black_box(depth) == u64::MAX {
        return frame[1];
    }
    recurse(depth + 1).wrapping_add(frame[std::hint::black_box(depth as usize) % 64])
}

/// Logs `count` warnings of 1 MiB each.
pub fn flood_log(count: usize) {
    let message = "x".repeat(1 << 20);
    for _ in 0..count {
        vx_plugin_sdk::log::warn(&message);
    }
}

/// Prints to stdout without end.
pub fn flood_stdout() -> ! {
    let line = "y".repeat(1023);
    loop {
        println!("{line}");
    }
}

/// `len` bytes of something that is no vx cache entry (nor text).
pub fn big(len: usize) -> Vec<u8> {
    vec![0xff; len]
}

/// A `String` whose bytes are not UTF-8, as a guest not written in Rust
/// could pass one: the canonical ABI lowers it as raw bytes, and vx's side
/// must refuse it when lifting.
pub fn not_utf8() -> String {
    // SAFETY: deliberately not UTF-8. The string is only ever lowered to
    // the host as bytes (a log message, an error value); nothing in the
    // guest reads it as text.
    unsafe { String::from_utf8_unchecked(vec![b'b', b'a', b'd', 0xff, 0xfe, b'\n']) }
}

/// Logs `text` (not UTF-8) through vx's `log` import.
pub fn log_not_utf8() {
    vx_plugin_sdk::log::warn(&not_utf8());
}

fn line(name: &str, result: Result<String, String>) -> String {
    match result {
        Ok(what) => format!("probe {name}: ok: {what}"),
        Err(why) => format!("probe {name}: refused: {why}"),
    }
}

fn read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map(|t| t.lines().next().unwrap_or("").to_string()).map_err(|e| e.to_string())
}

/// Tries everything a plugin without grants must not do, plus a read of the
/// granted `data/in.txt` as a control. `port` is a TCP listener of the test
/// on 127.0.0.1. The workspace has `data/up -> ../app` and `data/root -> /`.
pub fn probe(port: u16) -> Vec<String> {
    let mut out = vec![
        line("read-granted", read("data/in.txt")),
        line("read-absolute", read("/etc/passwd")),
        line("read-outside", read("app/vx.toml")),
        line("read-dotdot", read("data/../app/vx.toml")),
        line("read-symlink-up", read("data/up/vx.toml")),
        line("read-symlink-root", read("data/root/etc/passwd")),
        line(
            "write-read-only",
            std::fs::write("data/new.txt", "x").map(|()| "written".into()).map_err(|e| e.to_string()),
        ),
    ];
    let vars: Vec<String> = std::env::vars().map(|(k, _)| k).collect();
    out.push(line("env", Ok(format!("[{}]", vars.join(",")))));
    out.push(line("args", Ok(format!("{}", std::env::args().count()))));
    let mut stdin = Vec::new();
    out.push(line(
        "stdin",
        std::io::stdin().read_to_end(&mut stdin).map(|n| format!("{n} bytes")).map_err(|e| e.to_string()),
    ));
    out.extend(sockets(port));
    #[expect(clippy::disallowed_methods, reason = "the escape attempt itself: WASI has no process to spawn")]
    let spawned = std::process::Command::new("sh").arg("-c").arg("true").status();
    out.push(line("spawn", spawned.map(|s| s.to_string()).map_err(|e| e.to_string())));
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    out.push(line("wall-clock", Ok(now.to_string())));
    let start = std::time::Instant::now();
    out.push(line("monotonic-clock", Ok(format!("{}", start.elapsed() < std::time::Duration::from_secs(1)))));
    out
}

/// Sockets through wasi:sockets itself (Rust's `std::net` does not link on
/// every wasip2 toolchain): a TCP connection to the test's listener, a TCP
/// listener, a UDP datagram and a name lookup.
fn sockets(port: u16) -> Vec<String> {
    use vx_plugin_sdk::bindings::imports::wasi::sockets::network::{
        IpAddressFamily, IpSocketAddress, Ipv4SocketAddress,
    };
    use vx_plugin_sdk::bindings::imports::wasi::sockets::{
        instance_network, ip_name_lookup, tcp_create_socket, udp_create_socket,
    };
    let network = instance_network::instance_network();
    let to = |port| IpSocketAddress::Ipv4(Ipv4SocketAddress { port, address: (127, 0, 0, 1) });
    let err = |e: vx_plugin_sdk::bindings::imports::wasi::sockets::network::ErrorCode| format!("{e:?}");
    let connect = tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4).map_err(err).and_then(|s| {
        s.start_connect(&network, to(port)).map_err(err)?;
        s.subscribe().block();
        let (_input, output) = s.finish_connect().map_err(err)?;
        output.blocking_write_and_flush(b"escaped\n").map_err(|e| format!("{e:?}"))?;
        Ok("connected".to_string())
    });
    let listen = tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4).map_err(err).and_then(|s| {
        s.start_bind(&network, to(0)).map_err(err)?;
        s.subscribe().block();
        s.finish_bind().map_err(err)?;
        Ok("bound".to_string())
    });
    let udp = udp_create_socket::create_udp_socket(IpAddressFamily::Ipv4).map_err(err).and_then(|s| {
        s.start_bind(&network, to(0)).map_err(err)?;
        s.subscribe().block();
        s.finish_bind().map_err(err)?;
        Ok("bound".to_string())
    });
    let dns = ip_name_lookup::resolve_addresses(&network, "localhost").map_err(err).and_then(|r| {
        r.subscribe().block();
        r.resolve_next_address().map(|a| format!("{a:?}")).map_err(err)
    });
    vec![line("tcp-connect", connect), line("tcp-listen", listen), line("udp-bind", udp), line("dns", dns)]
}

/// Logs each line of [`probe`] as a warning.
pub fn log_probe(port: u16) {
    for text in probe(port) {
        vx_plugin_sdk::log::warn(&text);
    }
}
