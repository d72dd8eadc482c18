//! The binary's allocator never asks the kernel for transparent huge pages
//! (src/allocator.rs says why): no memory range of a running reference
//! server carries the `hg` flag that `madvise(MADV_HUGEPAGE)` sets. A
//! build that asked did so for the arena it reserves before `main`, so
//! the reference server, started and answering, shows what every process
//! of this binary does. (Where the system's transparent huge pages are
//! `never`, mimalloc asked for none either, so the check has something to
//! find only where they are `madvise` or `always`, as on most Linux
//! distributions.)

use libtest_mimic::{Completion, Trial};

use crate::common;

pub fn trials() -> Vec<Trial> {
    let name = "huge_pages::no_memory_of_the_binary_is_advised_for_huge_pages";
    vec![Trial::ignorable_test(name, || {
        if !cfg!(target_os = "linux") {
            return Ok(Completion::ignored_with(
                "needs Linux: /proc/PID/smaps shows which memory was advised for huge pages",
            ));
        }
        no_memory_of_the_binary_is_advised_for_huge_pages();
        Ok(Completion::Completed)
    })]
}

fn no_memory_of_the_binary_is_advised_for_huge_pages() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};

    let mut server = Command::new(common::bin())
        .arg("serve-reference")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start the reference server: {e}"));
    let mut stdin = server.stdin.take().expect("piped stdin");
    let stdout = server.stdout.take().expect("piped stdout");
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"huge-pages","version":"1"}}}"#;
    writeln!(stdin, "{initialize}").expect("the server reads its stdin");
    let mut answer = String::new();
    BufReader::new(stdout)
        .read_line(&mut answer)
        .expect("the server answers");
    assert!(
        answer.contains("\"result\""),
        "initialize answered: {answer}"
    );
    // Read while the server runs, after it has allocated for an answer.
    let smaps = std::fs::read_to_string(format!("/proc/{}/smaps", server.id()))
        .unwrap_or_else(|e| panic!("cannot read the server's smaps: {e}"));
    drop(stdin);
    let _ = server.wait();
    let ranges = smaps.lines().filter(|l| l.starts_with("VmFlags:")).count();
    let advised: Vec<&str> = smaps
        .lines()
        .filter(|l| l.starts_with("VmFlags:") && l.split_whitespace().any(|f| f == "hg"))
        .collect();
    assert!(ranges > 0, "smaps lists the server's memory ranges");
    assert!(
        advised.is_empty(),
        "{} of {ranges} memory ranges were advised for huge pages (VmFlags hg): {advised:?}",
        advised.len()
    );
}
