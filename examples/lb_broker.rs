//! zguide "Load-balancing broker" on tokio: REQ clients and REQ workers, each in its own
//! `tokio::spawn`ed task, meet at a broker with two ROUTERs. A worker announces itself with
//! "READY" and then with each reply; the broker hands each request to the longest idle worker,
//! and reads the frontend only while some worker is idle.
//!
//! The broker's `select!` drops the losing `recv_multipart` future every time, which is safe:
//! a receive that did not complete took nothing from its socket.
//! Run: `cargo run --example lb_broker`.

use std::collections::VecDeque;

use ferromq::{AsyncSocket, Bytes, Context, Error, Multipart, SendFlags, SocketType};

const CLIENTS: usize = 4;
const REQUESTS: usize = 5;
const WORKERS: usize = 3;

fn socket(ctx: &Context, kind: SocketType) -> ferromq::Result<AsyncSocket> {
    AsyncSocket::new(ctx.socket(kind)?)
}

async fn client(ctx: Context, frontend: String, n: usize) -> ferromq::Result<()> {
    let mut req = socket(&ctx, SocketType::Req)?;
    req.get_mut().connect(&frontend)?;
    for i in 0..REQUESTS {
        req.send(format!("request {i} from client {n}"), SendFlags::empty())
            .await?;
        let reply = req.recv().await?;
        println!("client {n}: {}", String::from_utf8_lossy(&reply.data));
    }
    Ok(())
}

async fn worker(ctx: Context, backend: String, n: usize) -> ferromq::Result<usize> {
    let mut req = socket(&ctx, SocketType::Req)?;
    req.get_mut().connect(&backend)?;
    req.send("READY", SendFlags::empty()).await?;
    let mut served = 0;
    loop {
        // [client id, "", request]
        let mut msg = match req.recv_multipart().await {
            Ok(msg) => msg,
            Err(Error::Term) => return Ok(served),
            Err(e) => return Err(e),
        };
        let request = msg.pop().unwrap_or_default();
        msg.push(format!(
            "{} handled by worker {n}",
            String::from_utf8_lossy(&request)
        ));
        req.send_multipart(msg, SendFlags::empty()).await?;
        served += 1;
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ferromq::Result<()> {
    let ctx = Context::new();
    let mut frontend = socket(&ctx, SocketType::Router)?;
    frontend.get_mut().bind("tcp://127.0.0.1:*")?;
    let front = frontend.get_ref().last_endpoint()?;
    let mut backend = socket(&ctx, SocketType::Router)?;
    backend.get_mut().bind("tcp://127.0.0.1:*")?;
    let back = backend.get_ref().last_endpoint()?;

    let workers: Vec<_> = (0..WORKERS)
        .map(|n| tokio::spawn(worker(ctx.clone(), back.clone(), n)))
        .collect();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|n| tokio::spawn(client(ctx.clone(), front.clone(), n)))
        .collect();

    let mut idle: VecDeque<Bytes> = VecDeque::new();
    let mut replies = 0;
    while replies < CLIENTS * REQUESTS {
        tokio::select! {
            msg = backend.recv_multipart() => {
                // [worker id, "", "READY"] or [worker id, "", client id, "", reply]
                let mut frames = msg?.into_frames();
                idle.push_back(frames.remove(0));
                if frames.len() == 4 {
                    let reply: Multipart = frames.into_iter().skip(1).collect();
                    frontend.send_multipart(reply, SendFlags::empty()).await?;
                    replies += 1;
                }
            }
            msg = frontend.recv_multipart(), if !idle.is_empty() => {
                // [client id, "", request] goes to the longest idle worker.
                let Some(worker) = idle.pop_front() else { continue };
                let mut routed = Multipart::from(vec![worker, Bytes::new()]);
                for frame in msg? {
                    routed.push(frame);
                }
                backend.send_multipart(routed, SendFlags::empty()).await?;
            }
        }
    }
    for c in clients {
        c.await.expect("client task")?;
    }
    // Workers block in a receive until the shutdown wakes them with ETERM.
    ctx.shutdown();
    for (n, w) in workers.into_iter().enumerate() {
        println!("worker {n} served {}", w.await.expect("worker task")?);
    }
    Ok(())
}
