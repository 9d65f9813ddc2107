//! zguide "Request-reply broker" with `proxy`: REQ clients connect to a ROUTER frontend, REP
//! workers to a DEALER backend, and `ferromq::proxy` shuttles messages between the two.
//!
//! The proxy runs until the context shuts down. Run: `cargo run --example rr_broker`.

use ferromq::{proxy, Context, Error, RecvFlags, SendFlags, SocketType};

fn main() -> ferromq::Result<()> {
    let ctx = Context::new();
    let mut frontend = ctx.socket(SocketType::Router)?;
    frontend.bind("tcp://127.0.0.1:*")?;
    let front = frontend.last_endpoint()?;
    let mut backend = ctx.socket(SocketType::Dealer)?;
    backend.bind("tcp://127.0.0.1:*")?;
    let back = backend.last_endpoint()?;

    let broker = std::thread::spawn(move || {
        // Returns ETERM once the context shuts down.
        let r = proxy(&mut frontend, &mut backend, None);
        println!("broker: proxy ended ({r:?})");
    });

    let workers: Vec<_> = (0..2)
        .map(|n| {
            let (ctx, back) = (ctx.clone(), back.clone());
            std::thread::spawn(move || -> ferromq::Result<()> {
                // A worker whose thread starts after the client is done finds the context
                // shut down (ETERM, as libzmq's zmq_socket and zmq_connect): nothing to do.
                let mut rep = match ctx.socket(SocketType::Rep).and_then(|mut rep| {
                    rep.connect(&back)?;
                    Ok(rep)
                }) {
                    Ok(rep) => rep,
                    Err(Error::Term) => return Ok(()),
                    Err(e) => return Err(e),
                };
                loop {
                    match rep.recv(RecvFlags::empty()) {
                        Ok(request) => {
                            let reply = format!("World from worker {n}");
                            println!("worker {n}: {}", String::from_utf8_lossy(&request.data));
                            rep.send(reply, SendFlags::empty())?;
                        }
                        Err(Error::Term) => return Ok(()),
                        Err(e) => return Err(e),
                    }
                }
            })
        })
        .collect();

    let mut client = ctx.socket(SocketType::Req)?;
    client.connect(&front)?;
    for n in 0..6 {
        client.send(format!("Hello {n}"), SendFlags::empty())?;
        let reply = client.recv(RecvFlags::empty())?;
        println!("client: {}", String::from_utf8_lossy(&reply.data));
    }
    ctx.shutdown();
    broker.join().expect("broker thread");
    for w in workers {
        w.join().expect("worker thread")?;
    }
    Ok(())
}
