//! A connecting endpoint (tcp or ipc): connect, handshake, run the engine, and when the
//! connection dies, reconnect after RECONNECT_IVL (with back-off) until the socket closes or
//! disconnects. As in libzmq, the pipes of a connecting socket exist from `connect()` on
//! (unless ZMQ_IMMEDIATE) and survive reconnects, so messages sent meanwhile are delivered.

use std::sync::Arc;

use crate::command::SocketCommand;
use crate::connection::{configure_tcp, handshake, run_engine, stream_fd, Backoff, SocketLink};
use crate::endpoint::TcpAddr;
use crate::engine::EngineEnd;
use crate::error::{Error, Result};
use crate::ipc::ipc_connect;
use crate::monitor::{EVENT_CONNECTED, EVENT_CONNECT_RETRIED, EVENT_DISCONNECTED};
use crate::option::Options;
use crate::peer::{pipe_pair, PipeId, SessionPipes};
use crate::session::{ActivityGuard, SessionCtl};
use crate::stream::AsyncStream;

/// Where a connecting endpoint goes.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    Tcp(TcpAddr),
    Ipc(String),
}

async fn open(target: &Target, options: &Options) -> Result<AsyncStream> {
    match target {
        Target::Tcp(addr) => {
            let dest = addr.connect_addr(options.ipv6)?;
            let socket = if dest.is_ipv4() {
                tokio::net::TcpSocket::new_v4()?
            } else {
                tokio::net::TcpSocket::new_v6()?
            };
            if let Some(src) = addr.source_addr(options.ipv6)? {
                socket.bind(src)?;
            }
            let stream = socket.connect(dest).await?;
            configure_tcp(&stream, options);
            Ok(AsyncStream::Tcp(stream))
        }
        Target::Ipc(path) => Ok(AsyncStream::Unix(ipc_connect(path)?)),
    }
}

/// The pipes held between connections, with their id.
type Held = Option<(SessionPipes, PipeId)>;

/// Runs one connecting endpoint until its socket closes or disconnects it.
pub(crate) async fn connect_loop(
    link: SocketLink,
    target: Target,
    ctl: Arc<SessionCtl>,
    mut held: Held,
    endpoint: String,
    _guard: ActivityGuard,
) {
    let mut backoff = Backoff::new(&link.options);
    loop {
        if ctl.is_done() {
            return;
        }
        let attempt = async {
            let mut stream = open(&target, &link.options).await?;
            link.monitor
                .emit_fd(EVENT_CONNECTED, stream_fd(&stream), &endpoint);
            let (peer, leftover) = handshake(&mut stream, &link, &endpoint).await?;
            Ok::<_, Error>((stream, peer, leftover))
        };
        let outcome = tokio::select! {
            r = attempt => r,
            () = ctl.done() => return,
        };
        let Ok((stream, peer, leftover)) = outcome else {
            if !retry_after(&link, &ctl, &mut backoff, &endpoint).await {
                return;
            }
            continue;
        };
        backoff.reset();
        let (pipes, id) = match held.take() {
            Some(h) => h,
            None => {
                // ZMQ_IMMEDIATE: the pipes exist only while connected.
                let id = link.next_pipe_id();
                let (peer_end, far) = pipe_pair(
                    id,
                    link.mailbox.signal(),
                    crate::option::hwm(link.options.sndhwm),
                    crate::option::hwm(link.options.rcvhwm),
                );
                let mut peer_end = peer_end;
                peer_end.assigned_id = link.options.connect_routing_id.clone();
                if !link.mailbox.send(SocketCommand::Attach(Box::new(peer_end))) {
                    return;
                }
                (far, id)
            }
        };
        link.mailbox.send(SocketCommand::Identify {
            id,
            metadata: Arc::new(peer.metadata),
        });
        let fd = stream_fd(&stream);
        let Some(exit) = run_engine(&link, stream, pipes, &ctl, leftover, peer.minor).await else {
            return;
        };
        match exit.end {
            EngineEnd::Finished => return,
            EngineEnd::Disconnected(_) => {
                link.monitor.emit_fd(EVENT_DISCONNECTED, fd, &endpoint);
                if !link.options.immediate && !exit.pipes.to_socket.is_closed() {
                    held = Some((exit.pipes, id));
                } else if !link.options.immediate {
                    return;
                }
            }
        }
        if !retry_after(&link, &ctl, &mut backoff, &endpoint).await {
            return;
        }
    }
}

/// Reports CONNECT_RETRIED with the interval and waits it out; returns whether to go on.
async fn retry_after(
    link: &SocketLink,
    ctl: &SessionCtl,
    backoff: &mut Backoff,
    endpoint: &str,
) -> bool {
    let delay = backoff.next_delay();
    let ms = u32::try_from(delay.as_millis()).unwrap_or(u32::MAX);
    link.monitor.emit(EVENT_CONNECT_RETRIED, ms, endpoint);
    sleep_or_done(ctl, delay).await
}

/// Sleeps unless the session ends first; returns whether to go on.
async fn sleep_or_done(ctl: &SessionCtl, delay: std::time::Duration) -> bool {
    tokio::select! {
        () = tokio::time::sleep(delay) => !ctl.is_done(),
        () = ctl.done() => false,
    }
}
