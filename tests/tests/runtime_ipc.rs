//! ipc:// file lifetime: a socket closed and its path bound again at once by another socket
//! keeps the new socket file (the old listener's cleanup runs later, on the runtime, and must
//! not remove a file it did not create); the file goes away when its own socket closes.

use std::path::Path;
use std::time::{Duration, Instant};

use ferromq::{Context, RecvFlags, SendFlags, SocketType};

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(5);
    while !done() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn rebinding_a_path_right_after_close_keeps_the_new_file() {
    let dir = std::env::temp_dir().join(format!("ferromq-ipc-rebind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let file = dir.join("rebind.sock");
    let endpoint = format!("ipc://{}", file.display());
    let ctx = Context::new();
    for round in 0..20 {
        let mut old = ctx.socket(SocketType::Pull).expect("pull");
        old.bind(&endpoint).expect("bind old");
        drop(old);
        let mut new = ctx.socket(SocketType::Pull).expect("pull");
        new.set_rcvtimeo(5000).expect("rcvtimeo");
        new.bind(&endpoint).expect("bind new");
        // Give the old listener's cleanup time to run.
        std::thread::sleep(Duration::from_millis(20));
        assert!(
            file.exists(),
            "round {round}: the new socket file was removed"
        );
        let mut push = ctx.socket(SocketType::Push).expect("push");
        push.connect(&endpoint).expect("connect");
        push.send("hello", SendFlags::empty()).expect("send");
        let got = new
            .recv(RecvFlags::empty())
            .expect("delivered through the new file");
        assert_eq!(got.as_slice(), b"hello");
        drop(new);
        wait_until("the file of a closed socket to go", || {
            !Path::new(&file).exists()
        });
    }
    ctx.term();
}
