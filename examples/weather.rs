//! zguide "Weather update server/client": a PUB publishes "zipcode temperature humidity";
//! a SUB subscribes to one zip code and averages the temperature of 20 updates.
//!
//! The publisher stops once the client has its sample. Run: `cargo run --example weather`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ferromq::{Context, RecvFlags, SendFlags, SocketType};

fn main() -> ferromq::Result<()> {
    let ctx = Context::new();
    let mut publisher = ctx.socket(SocketType::Pub)?;
    publisher.bind("tcp://127.0.0.1:*")?;
    let endpoint = publisher.last_endpoint()?;

    let done = Arc::new(AtomicBool::new(false));
    let stop = Arc::clone(&done);
    let server = std::thread::spawn(move || -> ferromq::Result<()> {
        while !stop.load(Ordering::Relaxed) {
            let zipcode = fastrand::u32(10_000..10_010);
            let temperature = fastrand::i32(-80..135);
            let humidity = fastrand::u32(10..60);
            let update = format!("{zipcode:05} {temperature} {humidity}");
            publisher.send(update, SendFlags::empty())?;
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        Ok(())
    });

    let mut subscriber = ctx.socket(SocketType::Sub)?;
    subscriber.connect(&endpoint)?;
    let filter = "10001 ";
    subscriber.set_subscribe(filter.as_bytes())?;
    let mut total = 0i64;
    for _ in 0..20 {
        let update = subscriber.recv(RecvFlags::empty())?;
        let text = String::from_utf8_lossy(&update.data).into_owned();
        let temperature: i64 = text
            .split_whitespace()
            .nth(1)
            .and_then(|t| t.parse().ok())
            .unwrap_or_default();
        total += temperature;
    }
    println!(
        "average temperature for zipcode '{}' was {}F",
        filter.trim(),
        total / 20
    );
    done.store(true, Ordering::Relaxed);
    server.join().expect("publisher thread")?;
    Ok(())
}
