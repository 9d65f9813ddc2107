//! zguide "Hello World" on tokio: the REP server is moved into a spawned task on the
//! multi-thread runtime (every `AsyncSocket` future is `Send`).
//!
//! Run: `cargo run --example hello_world_async`.

use ferromq::{AsyncSocket, Context, SendFlags, SocketType};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ferromq::Result<()> {
    let ctx = Context::new();
    let mut server = AsyncSocket::new(ctx.socket(SocketType::Rep)?)?;
    server.get_mut().bind("tcp://127.0.0.1:*")?;
    let endpoint = server.get_ref().last_endpoint()?;

    let task = tokio::spawn(async move {
        for _ in 0..10 {
            let request = server.recv().await?;
            println!(
                "server: received {}",
                String::from_utf8_lossy(&request.data)
            );
            server.send("World", SendFlags::empty()).await?;
        }
        Ok::<(), ferromq::Error>(())
    });

    let mut client = AsyncSocket::new(ctx.socket(SocketType::Req)?)?;
    client.get_mut().connect(&endpoint)?;
    for n in 0..10 {
        client.send("Hello", SendFlags::empty()).await?;
        let reply = client.recv().await?;
        println!(
            "client: reply {n}: {}",
            String::from_utf8_lossy(&reply.data)
        );
    }
    task.await.expect("server task")?;
    drop(client);
    // Waits for sockets to close without blocking a runtime worker.
    ctx.term_async().await;
    Ok(())
}
