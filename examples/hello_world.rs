//! zguide "Hello World": a REP server answers "World" to each "Hello" from a REQ client.
//!
//! Blocking API; the server runs on its own thread. Run: `cargo run --example hello_world`.

use ferromq::{Context, RecvFlags, SendFlags, SocketType};

fn main() -> ferromq::Result<()> {
    let ctx = Context::new();
    let mut server = ctx.socket(SocketType::Rep)?;
    server.bind("tcp://127.0.0.1:*")?;
    let endpoint = server.last_endpoint()?;

    let worker = std::thread::spawn(move || -> ferromq::Result<()> {
        for _ in 0..10 {
            let request = server.recv(RecvFlags::empty())?;
            println!(
                "server: received {}",
                String::from_utf8_lossy(&request.data)
            );
            server.send("World", SendFlags::empty())?;
        }
        Ok(())
    });

    let mut client = ctx.socket(SocketType::Req)?;
    client.connect(&endpoint)?;
    for n in 0..10 {
        client.send("Hello", SendFlags::empty())?;
        let reply = client.recv(RecvFlags::empty())?;
        println!(
            "client: reply {n}: {}",
            String::from_utf8_lossy(&reply.data)
        );
    }
    worker.join().expect("server thread")?;
    Ok(())
}
