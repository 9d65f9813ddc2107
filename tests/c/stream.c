/* ZMQ_STREAM serving and dialling plain TCP peers (BSD sockets in this same program): an
   HTTP-like request/response with connect and disconnect notifications, a close requested
   with an empty frame, EHOSTUNREACH, ZMQ_ROUTING_ID after connect, ZMQ_CONNECT_ROUTING_ID
   and ZMQ_STREAM_NOTIFY off. Prints "ok" when every check holds; built against ferromq and
   against real libzmq, whose behaviour each check records. */
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define REQUEST "GET /index.html HTTP/1.0\r\nHost: localhost\r\n\r\n"
#define RESPONSE                                                               \
    "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nHello, World!"

static int port_of (const char *endpoint)
{
    const char *colon = strrchr (endpoint, ':');
    return colon ? atoi (colon + 1) : -1;
}

static void bsd_timeouts (int fd)
{
    struct timeval tv = {5, 0};
    setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static int bsd_connect (int port)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr;
    memset (&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons ((unsigned short) port);
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    bsd_timeouts (fd);
    if (connect (fd, (struct sockaddr *) &addr, sizeof addr) != 0) {
        close (fd);
        return -1;
    }
    return fd;
}

/* A plain listening socket on an OS-chosen port; writes the port to `port`. */
static int bsd_listen (int *port)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr;
    memset (&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind (fd, (struct sockaddr *) &addr, sizeof addr) != 0
        || listen (fd, 8) != 0
        || getsockname (fd, (struct sockaddr *) &addr, &len) != 0) {
        close (fd);
        return -1;
    }
    *port = ntohs (addr.sin_port);
    return fd;
}

/* Reads until EOF (or `size` bytes); returns the byte count, -1 on error or after 5 s.
   Meanwhile it asks `s` for ZMQ_EVENTS: libzmq closes a connection on [id, empty] only once
   the socket has processed the pipe-termination commands, which it does in API calls. */
static int bsd_read_all (int fd, char *buf, size_t size, void *s)
{
    struct timeval tv = {0, 20000};
    setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    size_t got = 0;
    for (int tries = 0; got < size && tries < 250;) {
        ssize_t n = read (fd, buf + got, size - got);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int events = 0;
            size_t len = sizeof events;
            zmq_getsockopt (s, ZMQ_EVENTS, &events, &len);
            tries++;
            continue;
        }
        if (n < 0)
            return -1;
        if (n == 0)
            return (int) got;
        got += (size_t) n;
    }
    return -1;
}

/* Receives [id, body] from a STREAM socket: the id into `id` (returns its size through
   `id_size`), the body into `body`; returns the body size or -1. */
static int recv_pair (void *s, unsigned char *id, size_t *id_size, char *body,
                      size_t size)
{
    int n = zmq_recv (s, id, 256, 0);
    if (n < 0)
        return -1;
    *id_size = (size_t) n;
    if (!rcvmore (s))
        return -1;
    n = zmq_recv (s, body, size, 0);
    if (n >= 0 && rcvmore (s))
        return -1;
    return n;
}

/* A tcp client asks, the STREAM socket answers and closes. */
static void serve_http (void *ctx)
{
    void *server = zmq_socket (ctx, ZMQ_STREAM);
    CHECK (server != NULL);
    set_timeouts (server, 5000);
    /* ZMQ_STREAM_NOTIFY is write-only in libzmq. */
    int notify = -1;
    size_t len = sizeof notify;
    CHECK_ERR (zmq_getsockopt (server, ZMQ_STREAM_NOTIFY, &notify, &len), EINVAL);
    char endpoint[256];
    CHECK (bind_resolved (server, "tcp://127.0.0.1:*", endpoint, sizeof endpoint)
           == 0);

    int client = bsd_connect (port_of (endpoint));
    CHECK (client >= 0);

    /* The connection first shows as [id, empty]. */
    unsigned char id[256], id2[256];
    size_t id_size = 0, id2_size = 0;
    char body[4096];
    CHECK (recv_pair (server, id, &id_size, body, sizeof body) == 0);
    CHECK (id_size == 5 && id[0] == 0);

    CHECK (write (client, REQUEST, strlen (REQUEST)) == (ssize_t) strlen (REQUEST));
    /* TCP may cut the request anywhere: gather chunks until it is whole. */
    size_t got = 0;
    while (got < strlen (REQUEST)) {
        int n = recv_pair (server, id2, &id2_size, body + got, sizeof body - got);
        CHECK (n > 0);
        if (n <= 0)
            break;
        CHECK (id2_size == id_size && memcmp (id, id2, id_size) == 0);
        got += (size_t) n;
    }
    CHECK (got == strlen (REQUEST) && memcmp (body, REQUEST, got) == 0);

    /* The reply goes out raw; an empty frame then closes the connection. The SNDMORE on the
       data frame is ignored: the message always ends there. */
    CHECK (zmq_send (server, id, id_size, ZMQ_SNDMORE) == (int) id_size);
    CHECK (send_str (server, RESPONSE, ZMQ_SNDMORE) == (int) strlen (RESPONSE));
    CHECK (zmq_send (server, id, id_size, ZMQ_SNDMORE) == (int) id_size);
    CHECK (zmq_send (server, "", 0, 0) == 0);

    char reply[4096];
    int n = bsd_read_all (client, reply, sizeof reply, server);
    CHECK (n == (int) strlen (RESPONSE));
    CHECK (n > 0 && memcmp (reply, RESPONSE, (size_t) n) == 0);
    close (client);

    /* The closed peer is gone. */
    CHECK_ERR (zmq_send (server, id, id_size, ZMQ_SNDMORE), EHOSTUNREACH);
    CHECK_ERR (zmq_send (server, "nobody", 6, ZMQ_SNDMORE), EHOSTUNREACH);

    /* A client that hangs up shows as [id, empty] after its data. */
    client = bsd_connect (port_of (endpoint));
    CHECK (client >= 0);
    CHECK (recv_pair (server, id, &id_size, body, sizeof body) == 0);
    CHECK (write (client, "bye", 3) == 3);
    CHECK (recv_pair (server, id2, &id2_size, body, sizeof body) == 3);
    CHECK (memcmp (body, "bye", 3) == 0);
    close (client);
    CHECK (recv_pair (server, id2, &id2_size, body, sizeof body) == 0);
    CHECK (id2_size == id_size && memcmp (id, id2, id_size) == 0);

    CHECK (zmq_close (server) == 0);
}

/* A STREAM socket dials a plain tcp server. */
static void dial (void *ctx)
{
    int port = 0;
    int listener = bsd_listen (&port);
    CHECK (listener >= 0);
    bsd_timeouts (listener);
    char endpoint[64];
    snprintf (endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", port);

    void *s = zmq_socket (ctx, ZMQ_STREAM);
    set_timeouts (s, 5000);
    CHECK (zmq_connect (s, endpoint) == 0);
    /* The id generated for the connection reads back as ZMQ_ROUTING_ID. */
    unsigned char id[256], got_id[256];
    size_t id_size = sizeof id, got_size = 0;
    CHECK (zmq_getsockopt (s, ZMQ_ROUTING_ID, id, &id_size) == 0);
    CHECK (id_size == 5 && id[0] == 0);

    int peer = accept (listener, NULL, NULL);
    CHECK (peer >= 0);
    bsd_timeouts (peer);
    char body[256];
    CHECK (recv_pair (s, got_id, &got_size, body, sizeof body) == 0);
    CHECK (got_size == id_size && memcmp (got_id, id, id_size) == 0);

    CHECK (zmq_send (s, id, id_size, ZMQ_SNDMORE) == (int) id_size);
    CHECK (send_str (s, "hello", 0) == 5);
    char buf[16];
    CHECK (read (peer, buf, sizeof buf) == 5 && memcmp (buf, "hello", 5) == 0);
    CHECK (write (peer, "world", 5) == 5);
    CHECK (recv_pair (s, got_id, &got_size, body, sizeof body) == 5);
    CHECK (memcmp (body, "world", 5) == 0);
    close (peer);

    /* A second connection named by ZMQ_CONNECT_ROUTING_ID. */
    CHECK (zmq_setsockopt (s, ZMQ_CONNECT_ROUTING_ID, "named", 5) == 0);
    char endpoint2[64];
    int port2 = 0;
    int listener2 = bsd_listen (&port2);
    bsd_timeouts (listener2);
    snprintf (endpoint2, sizeof endpoint2, "tcp://127.0.0.1:%d", port2);
    CHECK (zmq_connect (s, endpoint2) == 0);
    int peer2 = accept (listener2, NULL, NULL);
    CHECK (peer2 >= 0);
    bsd_timeouts (peer2);
    /* Notifications of the first peer's hang-up and the new connection, in either order (a
       connecting STREAM socket then reconnects, which may notify again). */
    int named = 0, others = 0;
    for (int i = 0; i < 5 && !(named && others); i++) {
        CHECK (recv_pair (s, got_id, &got_size, body, sizeof body) == 0);
        if (got_size == 5 && memcmp (got_id, "named", 5) == 0)
            named++;
        else if (got_size == id_size && memcmp (got_id, id, id_size) == 0)
            others++;
    }
    CHECK (named == 1 && others >= 1);
    CHECK (zmq_send (s, "named", 5, ZMQ_SNDMORE) == 5);
    CHECK (send_str (s, "to-named", 0) == 8);
    CHECK (read (peer2, buf, sizeof buf) == 8 && memcmp (buf, "to-named", 8) == 0);

    close (peer2);
    close (listener2);
    close (listener);
    CHECK (zmq_close (s) == 0);
}

/* With ZMQ_STREAM_NOTIFY off only data arrives. */
static void quiet (void *ctx)
{
    void *server = zmq_socket (ctx, ZMQ_STREAM);
    set_timeouts (server, 5000);
    int off = 0;
    CHECK (zmq_setsockopt (server, ZMQ_STREAM_NOTIFY, &off, sizeof off) == 0);
    char endpoint[256];
    CHECK (bind_resolved (server, "tcp://127.0.0.1:*", endpoint, sizeof endpoint)
           == 0);
    int client = bsd_connect (port_of (endpoint));
    CHECK (client >= 0);
    CHECK (write (client, "x", 1) == 1);
    unsigned char id[256];
    size_t id_size = 0;
    char body[64];
    CHECK (recv_pair (server, id, &id_size, body, sizeof body) == 1);
    close (client);
    /* No disconnect notification either. */
    int timeout = 300;
    zmq_setsockopt (server, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    CHECK_ERR (zmq_recv (server, body, sizeof body, 0), EAGAIN);
    CHECK (zmq_close (server) == 0);
}

int main (void)
{
    void *ctx = zmq_ctx_new ();
    serve_http (ctx);
    dial (ctx);
    quiet (ctx);
    CHECK (zmq_ctx_term (ctx) == 0);
    return report ();
}
