//! `AsyncSocket` on tokio against a blocking ferromq peer and against real libzmq, over tcp;
//! many async sockets share one runtime thread (no thread per socket).

use std::time::Duration;

use bytes::Bytes;
use ferromq::{AsyncSocket, Context, RecvFlags, SendFlags, SocketType};

const LIMIT: Duration = Duration::from_secs(20);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

#[test]
fn async_dealer_against_a_blocking_router() {
    let ctx = Context::new();
    let mut router = ctx.socket(SocketType::Router).expect("router");
    router.bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = router.last_endpoint().expect("endpoint");
    router.set_rcvtimeo(10_000).expect("rcvtimeo");
    let server = std::thread::spawn(move || {
        for _ in 0..100 {
            let mut req = router.recv_multipart(RecvFlags::empty()).expect("request");
            req.push(Bytes::from_static(b"done"));
            router
                .send_multipart(req, SendFlags::empty())
                .expect("reply");
        }
    });
    let rt = runtime();
    rt.block_on(async {
        let mut dealer =
            AsyncSocket::new(ctx.socket(SocketType::Dealer).expect("dealer")).expect("async");
        dealer.get_mut().connect(&endpoint).expect("connect");
        let work = async {
            for i in 0..100u32 {
                // Owned bodies and copies of borrowed ones, alternately.
                if i % 2 == 0 {
                    dealer
                        .send(i.to_be_bytes().to_vec(), SendFlags::empty())
                        .await
                } else {
                    dealer
                        .send_slice(&i.to_be_bytes(), SendFlags::empty())
                        .await
                }
                .expect("send");
                let reply = dealer.recv_multipart().await.expect("recv");
                assert_eq!(
                    reply,
                    vec![Bytes::from(i.to_be_bytes().to_vec()), "done".into()]
                );
            }
        };
        tokio::time::timeout(LIMIT, work).await.expect("in time");
    });
    server.join().expect("server");
}

#[test]
fn async_pull_and_push_against_libzmq() {
    let zctx = zmq::Context::new();
    let zpush = zctx.socket(zmq::PUSH).expect("zmq push");
    zpush.bind("tcp://127.0.0.1:*").expect("zmq bind");
    let zpush_ep = zpush.get_last_endpoint().expect("ep").expect("utf8");
    let zpull = zctx.socket(zmq::PULL).expect("zmq pull");
    zpull.bind("tcp://127.0.0.1:*").expect("zmq bind");
    let zpull_ep = zpull.get_last_endpoint().expect("ep").expect("utf8");
    zpull.set_rcvtimeo(10_000).expect("rcvtimeo");

    let feeder = std::thread::spawn(move || {
        for i in 0..1000u32 {
            zpush.send(i.to_le_bytes().as_slice(), 0).expect("zmq send");
        }
        zpush
    });
    let ctx = Context::new();
    let rt = runtime();
    rt.block_on(async {
        let mut pull =
            AsyncSocket::new(ctx.socket(SocketType::Pull).expect("pull")).expect("async");
        pull.get_mut().connect(&zpush_ep).expect("connect");
        let mut push =
            AsyncSocket::new(ctx.socket(SocketType::Push).expect("push")).expect("async");
        push.get_mut().connect(&zpull_ep).expect("connect");
        let work = async {
            // Relay: libzmq -> async PULL -> async PUSH -> libzmq, all on one thread.
            for i in 0..1000u32 {
                let m = pull.recv().await.expect("recv");
                assert_eq!(m.as_slice(), i.to_le_bytes());
                push.send(m, SendFlags::empty()).await.expect("send");
            }
        };
        tokio::time::timeout(LIMIT, work).await.expect("in time");
    });
    let _zpush = feeder.join().expect("feeder");
    for i in 0..1000u32 {
        let m = zpull.recv_bytes(0).expect("relayed");
        assert_eq!(m, i.to_le_bytes());
    }
}

#[test]
fn send_waits_at_the_hwm_then_resumes() {
    let ctx = Context::new();
    let rt = runtime();
    rt.block_on(async {
        let mut push_sock = ctx.socket(SocketType::Push).expect("push");
        push_sock.set_sndhwm(5).expect("hwm");
        let mut push = AsyncSocket::new(push_sock).expect("async");
        let mut pull_sock = ctx.socket(SocketType::Pull).expect("pull");
        pull_sock.set_rcvhwm(5).expect("hwm");
        let mut pull = AsyncSocket::new(pull_sock).expect("async");
        pull.get_mut().bind("inproc://async-hwm").expect("bind");
        push.get_mut()
            .connect("inproc://async-hwm")
            .expect("connect");
        let sender = async {
            for i in 0..200u32 {
                push.send(i.to_le_bytes().to_vec(), SendFlags::empty())
                    .await
                    .expect("send");
            }
        };
        let receiver = async {
            // Start late so the sender has to wait on a full pipe.
            tokio::time::sleep(Duration::from_millis(50)).await;
            for i in 0..200u32 {
                let m = pull.recv().await.expect("recv");
                assert_eq!(m.as_slice(), i.to_le_bytes());
            }
        };
        tokio::time::timeout(LIMIT, async { tokio::join!(sender, receiver) })
            .await
            .expect("in time");
    });
}
