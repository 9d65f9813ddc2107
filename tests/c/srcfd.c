/* zmq_msg_get (msg, ZMQ_SRCFD) and zmq_msg_gets (msg, "Peer-Address" / "Socket-Type") as
   libzmq 4.3 gives them: a message that came over tcp or ipc names the descriptor of the
   connection it came in on (the accepted socket, whose local address is the bound endpoint),
   the peer's address and its socket type; an inproc message has none of them (-1 / NULL with
   EINVAL: libzmq attaches no metadata to inproc messages).
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

int main (void)
{
    void *ctx = zmq_ctx_new ();
    check_transport (ctx, "tcp://127.0.0.1:*", AF_INET, "127.0.0.1");
    check_transport (ctx, "ipc://*", AF_UNIX, "localhost");
    check_transport (ctx, "inproc://srcfd", 0, NULL);
    zmq_msg_t empty;
    zmq_msg_init (&empty);
    errno = 0;
    CHECK (zmq_msg_get (&empty, ZMQ_SRCFD) == -1 && errno == EINVAL);
    zmq_msg_close (&empty);
    CHECK (zmq_ctx_term (ctx) == 0);
    if (failures) {
        fprintf (stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf ("ok\n");
    return 0;
}
