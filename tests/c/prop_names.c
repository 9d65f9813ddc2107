/* The names zmq_msg_gets finds a message's properties under. libzmq 4.3.4 compiles a
   connection's properties into a std::map keyed by the exact name (metadata_t::get is a map
   find, with one alias: "Identity" falls back to "Routing-Id"), inserting Peer-Address first,
   then the ZAP handler's User-Id and metadata, then the peer's handshake properties; a name
   already in the map keeps its first value (stream_engine_base_t::mechanism_ready). So case
   matters, although RFC 23 and 37 say it SHALL NOT: "x-tag" and "X-Tag" are two properties.

   A ROUTER server with a ZAP domain (NULL mechanism) and a handler that admits everyone with
   User-Id "zap-user" and the metadata socket-type, x-tag, X-Tag, User-Id, Peer-Address and
   X-Zap. The peer is, by MODE:
     lib        a DEALER of the library under test, ZMQ_ROUTING_ID "client-id";
     raw        a raw ZMTP 3.1 peer whose READY carries Socket-Type, Identity, X-Tag, X-Hello,
                x-hello, X-Dup twice, User-Id and Peer-Address;
     raw-lower  a raw peer whose READY names its type "socket-type" and its id "identity" (no
                exact Socket-Type or Identity), plus Routing-Id and X-HELLO.
   Prints "routing-id VALUE" ("generated" for the ROUTER's own 5-byte id), then "gets NAME
   VALUE" for each name in `names` ("(null)" where zmq_msg_gets has none), or "no message".
   Exits 0 unless the program itself failed. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testutil.h"
#include "zap_admit.h"

static const char *names[] = {
  "Socket-Type", "socket-type", "SOCKET-TYPE", "Identity", "identity",
  "Routing-Id",  "routing-id",  "User-Id",     "user-id",  "Peer-Address",
  "peer-address", "X-Tag",      "x-tag",       "X-TAG",    "X-Hello",
  "x-hello",     "X-HELLO",     "X-Dup",       "X-Zap",    "x-zap",
  "Resource",
};

/* Admits every request: 200, User-Id "zap-user", and the metadata below. */
static void *zap_handler (void *h)
{
    unsigned char meta[256];
    size_t len = 0;
    len += put_property (meta + len, "socket-type", "zap-st");
    len += put_property (meta + len, "x-tag", "zap-lower");
    len += put_property (meta + len, "X-Tag", "zap-upper");
    len += put_property (meta + len, "User-Id", "zap-meta-user");
    len += put_property (meta + len, "Peer-Address", "zap-peer");
    len += put_property (meta + len, "X-Zap", "zap");
    zap_admit_all (h, "zap-user", meta, len);
    return NULL;
}

static int read_exactly (int fd, unsigned char *out, size_t len)
{
    for (size_t got = 0; got < len;) {
        ssize_t n = read (fd, out + got, len - got);
        if (n <= 0)
            return 0;
        got += (size_t) n;
    }
    return 1;
}

/* A raw ZMTP 3.1 NULL peer: greeting, then (after the server's) READY with `lower`'s
   properties, then (after the server's READY) one message "hi". Returns the fd, or -1. */
static int raw_peer (int port, int lower)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset (&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons ((uint16_t) port);
    a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    if (fd < 0 || connect (fd, (struct sockaddr *) &a, sizeof a) != 0)
        return -1;
    unsigned char greeting[64] = {0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 3, 1, 'N', 'U', 'L', 'L'};
    if (write (fd, greeting, sizeof greeting) != (ssize_t) sizeof greeting)
        return -1;
    unsigned char theirs[256];
    if (!read_exactly (fd, theirs, 64))
        return -1;
    unsigned char buf[512];
    size_t len = 2;
    memcpy (buf + len, "\x05READY", 6);
    len += 6;
    if (lower) {
        len += put_property (buf + len, "socket-type", "DEALER");
        len += put_property (buf + len, "identity", "lower-id");
        len += put_property (buf + len, "Routing-Id", "rid-prop");
        len += put_property (buf + len, "X-HELLO", "peer-upper");
    } else {
        len += put_property (buf + len, "Socket-Type", "DEALER");
        len += put_property (buf + len, "Identity", "raw-id");
        len += put_property (buf + len, "X-Tag", "peer-tag");
        len += put_property (buf + len, "X-Hello", "peer-hello");
        len += put_property (buf + len, "x-hello", "peer-lower");
        len += put_property (buf + len, "X-Dup", "first");
        len += put_property (buf + len, "X-Dup", "second");
        len += put_property (buf + len, "User-Id", "peer-user");
        len += put_property (buf + len, "Peer-Address", "peer-addr");
    }
    buf[0] = 0x04; /* a short command */
    buf[1] = (unsigned char) (len - 2);
    if (write (fd, buf, len) != (ssize_t) len)
        return -1;
    /* The message waits for the server's READY, sent once its handler admitted us, as a
       library peer's does: a message the server reads before then fails the handshake. */
    if (!read_exactly (fd, theirs, 2) || theirs[0] != 0x04
        || !read_exactly (fd, theirs + 2, theirs[1]))
        return -1;
    if (write (fd, "\x00\x02hi", 4) != 4) /* a short message, last frame */
        return -1;
    return fd;
}

int main (int argc, char **argv)
{
    if (argc != 2) {
        fprintf (stderr, "usage: %s lib|raw|raw-lower\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    void *ctx = zmq_ctx_new ();
    pthread_t thread;
    CHECK (zap_start (ctx, zap_handler, &thread) == 0);

    void *server = zmq_socket (ctx, ZMQ_ROUTER);
    set_timeouts (server, 3000);
    CHECK (zmq_setsockopt (server, ZMQ_ZAP_DOMAIN, "test", 4) == 0);
    char endpoint[64];
    CHECK (bind_resolved (server, "tcp://127.0.0.1:*", endpoint, sizeof endpoint) == 0);
    int port = atoi (strrchr (endpoint, ':') + 1);

    void *client = NULL;
    int fd = -1;
    if (strcmp (mode, "lib") == 0) {
        client = zmq_socket (ctx, ZMQ_DEALER);
        set_timeouts (client, 3000);
        CHECK (zmq_setsockopt (client, ZMQ_ROUTING_ID, "client-id", 9) == 0);
        CHECK (zmq_connect (client, endpoint) == 0);
        CHECK (zmq_send (client, "hi", 2, 0) == 2);
    } else {
        fd = raw_peer (port, strcmp (mode, "raw-lower") == 0);
        CHECK (fd >= 0);
    }

    char id[256];
    int id_len = zmq_recv (server, id, sizeof id, 0);
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    if (id_len < 0 || zmq_msg_recv (&msg, server, 0) < 0) {
        printf ("no message\n");
    } else {
        if (id_len == 5 && id[0] == 0)
            printf ("routing-id generated\n");
        else
            printf ("routing-id %.*s\n", id_len, id);
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            const char *value = zmq_msg_gets (&msg, names[i]);
            CHECK (value != NULL || zmq_errno () == EINVAL);
            printf ("gets %s %s\n", names[i], value ? value : "(null)");
        }
    }
    zmq_msg_close (&msg);

    if (fd >= 0)
        close (fd);
    if (client)
        zmq_close (client);
    zmq_close (server);
    zmq_ctx_term (ctx);
    pthread_join (thread, NULL);
    return failures ? 1 : 0;
}
