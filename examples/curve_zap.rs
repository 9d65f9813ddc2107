//! A CURVE server with a ZAP handler: the server's long-term keys encrypt and authenticate
//! the connection (RFC 26), and the handler (RFC 27) decides which client keys may connect,
//! naming each admitted one with a User-Id that its messages carry.
//! Run it with `cargo run --example curve_zap`.

use ferromq::{Bytes, Context, CurveKeyPair, RecvFlags, SendFlags, SocketType};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = Context::new();
    let server_keys = CurveKeyPair::generate().ok_or("no randomness")?;
    let client_keys = CurveKeyPair::generate().ok_or("no randomness")?;

    // The ZAP handler: a REP bound at inproc://zeromq.zap.01 in the server's context, asked
    // once per handshake. Frames: version, request id, domain, address, identity, mechanism,
    // then the credentials (CURVE: the client's 32-byte public key).
    let mut zap = ctx.socket(SocketType::Rep)?;
    zap.bind("inproc://zeromq.zap.01")?;
    let allowed = client_keys.public;
    let handler = std::thread::spawn(move || -> Result<(), ferromq::Error> {
        let request = zap.recv_multipart(RecvFlags::empty())?;
        let known = request.get(5).is_some_and(|m| &m[..] == b"CURVE")
            && request.get(6).is_some_and(|key| key[..] == allowed[..]);
        let (status, user) = if known { ("200", "alice") } else { ("400", "") };
        println!(
            "ZAP: {} -> {status}",
            if known { "known key" } else { "unknown key" }
        );
        // version, request id echoed, status code, status text, user id, metadata
        let reply = [
            Bytes::from_static(b"1.0"),
            request[1].clone(),
            Bytes::from(status),
            Bytes::new(),
            Bytes::from(user),
            Bytes::new(),
        ];
        zap.send_multipart(reply, SendFlags::empty())?;
        Ok(())
    });

    let mut server = ctx.socket(SocketType::Router)?;
    server.set_curve_server(&server_keys)?;
    server.bind("tcp://127.0.0.1:*")?;
    let endpoint = server.last_endpoint()?;

    // The client knows the server's public key beforehand (out of band).
    let mut client = ctx.socket(SocketType::Dealer)?;
    client.set_curve_client(&client_keys, &server_keys.public)?;
    client.connect(&endpoint)?;
    client.send("hello over CURVE", SendFlags::empty())?;

    let _routing_id = server.recv(RecvFlags::empty())?;
    let msg = server.recv(RecvFlags::empty())?;
    let user = msg
        .metadata
        .as_ref()
        .and_then(|m| m.get("User-Id"))
        .map(|v| String::from_utf8_lossy(v).into_owned());
    println!(
        "server received {:?} from User-Id {user:?}",
        String::from_utf8_lossy(msg.as_slice())
    );
    assert_eq!(user.as_deref(), Some("alice"));
    handler.join().map_err(|_| "ZAP handler panicked")??;
    Ok(())
}
