/* Connecting from a fixed source address (`tcp://src:port;dst:port`) as libzmq does: the
   connecting socket gets SO_REUSEADDR before it binds the source, so two sockets connecting
   from the same source port to two different servers both get through, and the servers see
   that port as the peer's.
   Prints "ok", or names the failed checks and exits 1. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testutil.h"

/* A port the kernel just handed out (and that is free again). */
static int free_port (void)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr;
    memset (&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind (fd, (struct sockaddr *) &addr, sizeof addr) != 0
        || getsockname (fd, (struct sockaddr *) &addr, &len) != 0) {
        close (fd);
        return -1;
    }
    close (fd);
    return ntohs (addr.sin_port);
}

int main (void)
{
    void *ctx = zmq_ctx_new ();
    int source_port = free_port ();
    CHECK (source_port > 0);
    void *servers[2], *clients[2];
    for (int i = 0; i < 2; i++) {
        servers[i] = zmq_socket (ctx, ZMQ_PULL);
        clients[i] = zmq_socket (ctx, ZMQ_PUSH);
        set_timeouts (servers[i], 5000);
        set_timeouts (clients[i], 5000);
        char ep[256], from[300];
        CHECK (bind_resolved (servers[i], "tcp://127.0.0.1:*", ep, sizeof ep) == 0);
        snprintf (from, sizeof from, "tcp://127.0.0.1:%d;%s", source_port,
                  ep + strlen ("tcp://"));
        CHECK (zmq_connect (clients[i], from) == 0);
    }
    for (int i = 0; i < 2; i++) {
        CHECK (send_str (clients[i], "hello", 0) == 5);
        zmq_msg_t msg;
        zmq_msg_init (&msg);
        CHECK (zmq_msg_recv (&msg, servers[i], 0) == 5);
        int fd = zmq_msg_get (&msg, ZMQ_SRCFD);
        struct sockaddr_in peer;
        socklen_t len = sizeof peer;
        CHECK (fd >= 0 && getpeername (fd, (struct sockaddr *) &peer, &len) == 0);
        CHECK (ntohs (peer.sin_port) == source_port);
        zmq_msg_close (&msg);
    }
    for (int i = 0; i < 2; i++) {
        zmq_close (servers[i]);
        zmq_close (clients[i]);
    }
    CHECK (zmq_ctx_term (ctx) == 0);
    return report ();
}
