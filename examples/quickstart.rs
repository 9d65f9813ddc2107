//! A first ferromq program: a ROUTER serves a DEALER over TCP on loopback.
//!
//! The DEALER sends a two-part request; the ROUTER receives it with the DEALER's routing id in
//! front (that is how a ROUTER knows whom to answer), and replies by sending that id first.
//! Run it with `cargo run --example quickstart`.

use ferromq::{Context, RecvFlags, SendFlags, SocketType};

fn main() -> Result<(), ferromq::Error> {
    let ctx = Context::new();

    let mut server = ctx.socket(SocketType::Router)?;
    // Port 0 (`*`): the OS picks a free port; LAST_ENDPOINT tells which.
    server.bind("tcp://127.0.0.1:*")?;
    let endpoint = server.last_endpoint()?;
    println!("ROUTER bound to {endpoint}");

    let mut client = ctx.socket(SocketType::Dealer)?;
    client.set_routing_id(b"client-1")?;
    client.connect(&endpoint)?;
    println!("DEALER connected to {endpoint} as \"client-1\"");

    // Sent before the connection completes: queued in the DEALER's pipe, then delivered.
    client.send("hello", SendFlags::SNDMORE)?;
    client.send("world", SendFlags::empty())?;
    println!("DEALER sent [\"hello\", \"world\"]");

    let request = server.recv_multipart(RecvFlags::empty())?;
    let printable: Vec<String> = request
        .iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    println!("ROUTER received {printable:?} (routing id first)");

    let routing_id = request[0].clone();
    server.send(routing_id, SendFlags::SNDMORE)?;
    server.send("hi back", SendFlags::empty())?;

    let reply = client.recv(RecvFlags::empty())?;
    println!(
        "DEALER received \"{}\"",
        String::from_utf8_lossy(&reply.data)
    );
    Ok(())
}
