//! An async ROUTER server that handles each request in its own spawned task: the ROUTER
//! stays in one task, which `select!`s between new requests and finished replies coming
//! back over a channel, so slow requests never hold up fast ones.
//!
//! DEALER clients send 10 requests each without waiting; replies come back in the order
//! they finish. Run: `cargo run --example async_server`.

use std::time::Duration;

use ferromq::{AsyncSocket, Context, Multipart, SendFlags, SocketType};
use tokio::sync::mpsc;

const CLIENTS: usize = 3;
const REQUESTS: usize = 10;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ferromq::Result<()> {
    let ctx = Context::new();
    let mut router = AsyncSocket::new(ctx.socket(SocketType::Router)?)?;
    router.get_mut().bind("tcp://127.0.0.1:*")?;
    let endpoint = router.get_ref().last_endpoint()?;

    let server = tokio::spawn(async move {
        let (done, mut finished) = mpsc::channel::<Multipart>(64);
        let mut outstanding = CLIENTS * REQUESTS;
        while outstanding > 0 {
            tokio::select! {
                request = router.recv_multipart() => {
                    // [client id, request]: handled in a task of its own.
                    let request = request?;
                    let done = done.clone();
                    tokio::spawn(async move {
                        let body = request.last().cloned().unwrap_or_default();
                        let ms = u64::from(body.first().copied().unwrap_or(0) % 20);
                        tokio::time::sleep(Duration::from_millis(ms)).await;
                        let mut reply = Multipart::new();
                        reply.push(request[0].clone());
                        reply.push(format!("took {ms} ms"));
                        let _ = done.send(reply).await;
                    });
                }
                Some(reply) = finished.recv() => {
                    router.send_multipart(reply, SendFlags::empty()).await?;
                    outstanding -= 1;
                }
            }
        }
        Ok::<(), ferromq::Error>(())
    });

    let clients: Vec<_> = (0..CLIENTS)
        .map(|n| {
            let (ctx, endpoint) = (ctx.clone(), endpoint.clone());
            tokio::spawn(async move {
                let mut dealer = AsyncSocket::new(ctx.socket(SocketType::Dealer)?)?;
                dealer.get_mut().connect(&endpoint)?;
                for _ in 0..REQUESTS {
                    dealer
                        .send(vec![fastrand::u8(..)], SendFlags::empty())
                        .await?;
                }
                for _ in 0..REQUESTS {
                    let reply = dealer.recv().await?;
                    println!("client {n}: {}", String::from_utf8_lossy(&reply.data));
                }
                Ok::<(), ferromq::Error>(())
            })
        })
        .collect();
    for c in clients {
        c.await.expect("client task")?;
    }
    server.await.expect("server task")?;
    ctx.term_async().await;
    Ok(())
}
