/* zmq_msg_get (msg, ZMQ_SRCFD) and zmq_msg_gets (msg, "Peer-Address" / "Socket-Type") as
   libzmq 4.3 gives them: a message that came over tcp or ipc names the descriptor of the
   connection it came in on (the accepted socket, whose local address is the bound endpoint),
   the peer's address and its socket type; an inproc message has none of them (-1 / NULL with
   EINVAL: libzmq attaches no metadata to inproc messages). A STREAM socket's messages, its
   connect notification and the raw data alike, carry Peer-Address and ZMQ_SRCFD too (libzmq's
   raw engine attaches the same connection properties), and no Socket-Type (a raw peer
   announces nothing).
   Prints "ok", or names the failed checks and exits 1. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "testutil.h"

static void check_transport (void *ctx, const char *endpoint, int family,
                             const char *peer_address)
{
    void *pull = zmq_socket (ctx, ZMQ_PULL);
    void *push = zmq_socket (ctx, ZMQ_PUSH);
    set_timeouts (pull, 2000);
    set_timeouts (push, 2000);
    char ep[256];
    CHECK (bind_resolved (pull, endpoint, ep, sizeof ep) == 0);
    CHECK (zmq_connect (push, ep) == 0);
    CHECK (send_str (push, "x", 0) == 1);
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    CHECK (zmq_msg_recv (&msg, pull, 0) == 1);
    errno = 0;
    int fd = zmq_msg_get (&msg, ZMQ_SRCFD);
    const char *address = zmq_msg_gets (&msg, "Peer-Address");
    errno = 0;
    const char *kind = zmq_msg_gets (&msg, "Socket-Type");
    if (family == 0) {
        CHECK (fd == -1 && errno == EINVAL);
        CHECK (address == NULL);
        CHECK (kind == NULL && errno == EINVAL);
    } else {
        CHECK (kind != NULL && strcmp (kind, "PUSH") == 0);
        CHECK (fd >= 0);
        struct sockaddr_storage local;
        socklen_t len = sizeof local;
        CHECK (getsockname (fd, (struct sockaddr *) &local, &len) == 0);
        CHECK (local.ss_family == family);
        if (family == AF_INET) {
            char port[16];
            snprintf (port, sizeof port, "%d",
                      ntohs (((struct sockaddr_in *) &local)->sin_port));
            CHECK (strcmp (strrchr (ep, ':') + 1, port) == 0);
        } else {
            CHECK (strcmp (((struct sockaddr_un *) &local)->sun_path,
                           ep + strlen ("ipc://"))
                   == 0);
        }
        CHECK (address != NULL && strcmp (address, peer_address) == 0);
    }
    zmq_msg_close (&msg);
    zmq_close (pull);
    zmq_close (push);
}

/* A STREAM server's messages from a raw STREAM client over tcp: the notification's two
   frames and the data's. */
static void check_stream (void *ctx)
{
    void *server = zmq_socket (ctx, ZMQ_STREAM);
    void *client = zmq_socket (ctx, ZMQ_STREAM);
    set_timeouts (server, 2000);
    set_timeouts (client, 2000);
    char ep[256];
    CHECK (bind_resolved (server, "tcp://127.0.0.1:*", ep, sizeof ep) == 0);
    CHECK (zmq_connect (client, ep) == 0);
    /* The client's notification names the connection: send data back along it. */
    unsigned char id[256];
    int id_size = zmq_recv (client, id, sizeof id, 0);
    CHECK (id_size > 0 && rcvmore (client));
    char buf[16];
    CHECK (zmq_recv (client, buf, sizeof buf, 0) == 0);
    CHECK (zmq_send (client, id, (size_t) id_size, ZMQ_SNDMORE) == id_size);
    CHECK (send_str (client, "data", 0) == 4);
    /* Server: id + empty (connected), then id + "data". */
    int sizes[4] = {-1, 0, -1, 4};
    for (int i = 0; i < 4; i++) {
        zmq_msg_t msg;
        zmq_msg_init (&msg);
        int size = zmq_msg_recv (&msg, server, 0);
        CHECK (size >= 0 && (sizes[i] < 0 || size == sizes[i]));
        const char *address = zmq_msg_gets (&msg, "Peer-Address");
        CHECK (address != NULL && strcmp (address, "127.0.0.1") == 0);
        CHECK (zmq_msg_get (&msg, ZMQ_SRCFD) >= 0);
        errno = 0;
        CHECK (zmq_msg_gets (&msg, "Socket-Type") == NULL && errno == EINVAL);
        zmq_msg_close (&msg);
    }
    zmq_close (client);
    zmq_close (server);
}

int main (void)
{
    void *ctx = zmq_ctx_new ();
    check_transport (ctx, "tcp://127.0.0.1:*", AF_INET, "127.0.0.1");
    check_transport (ctx, "ipc://*", AF_UNIX, "localhost");
    check_transport (ctx, "inproc://srcfd", 0, NULL);
    check_stream (ctx);
    zmq_msg_t empty;
    zmq_msg_init (&empty);
    errno = 0;
    CHECK (zmq_msg_get (&empty, ZMQ_SRCFD) == -1 && errno == EINVAL);
    zmq_msg_close (&empty);
    CHECK (zmq_ctx_term (ctx) == 0);
    return report ();
}
