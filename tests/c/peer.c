/* One side of an interop exchange, built twice by tests/tests/c_interop.rs: once against
   ferromq, once against real libzmq. Usage:

       peer server PATTERN ENDPOINT   binds, prints the resolved endpoint on one line, serves
       peer client PATTERN ENDPOINT   connects and plays the other side

   PATTERN names the server's socket, then the client's: reqrep, pushpull, pullpush,
   xpubsub, subxpub, routerdealer, dealerrouter, pair. Each side checks every message it gets
   (content, multipart flags, a 100 KiB body, routing ids) and exits 0 only if all were right. */
#include "testutil.h"

#define TIMEOUT_MS 5000
#define ROUNDS 5
#define BIG (100 * 1024)

static char big[BIG];

static void fill_big (void)
{
    for (int i = 0; i < BIG; i++)
        big[i] = (char) ('a' + i % 26);
}

static int expect_str (void *s, const char *want)
{
    char buf[256];
    int n = recv_str (s, buf, sizeof buf, 0);
    if (n < 0 || strcmp (buf, want) != 0) {
        fprintf (stderr, "expected '%s', got %d '%s' (%s)\n", want, n,
                 n >= 0 ? buf : "", zmq_strerror (zmq_errno ()));
        failures++;
        return -1;
    }
    return 0;
}

static void expect_big (void *s)
{
    static char got[BIG + 1];
    int n = zmq_recv (s, got, sizeof got, 0);
    CHECK (n == BIG);
    CHECK (n == BIG && memcmp (got, big, BIG) == 0);
}

/* The data stream of the one-way patterns: numbered frames, a multipart, a big body. */
static void send_stream (void *s)
{
    char buf[32];
    for (int i = 0; i < ROUNDS; i++) {
        snprintf (buf, sizeof buf, "msg %d", i);
        CHECK (send_str (s, buf, 0) >= 0);
    }
    CHECK (send_str (s, "part 1", ZMQ_SNDMORE) == 6);
    CHECK (send_str (s, "part 2", 0) == 6);
    CHECK (zmq_send (s, big, BIG, 0) == BIG);
}

static void recv_stream (void *s)
{
    char want[32];
    for (int i = 0; i < ROUNDS; i++) {
        snprintf (want, sizeof want, "msg %d", i);
        expect_str (s, want);
    }
    expect_str (s, "part 1");
    CHECK (rcvmore (s));
    expect_str (s, "part 2");
    CHECK (!rcvmore (s));
    expect_big (s);
}

/* The socket types of each pattern: server first. */
static int types_of (const char *pattern, int *server, int *client)
{
    static const struct
    {
        const char *name;
        int server, client;
    } table[] = {{"reqrep", ZMQ_REP, ZMQ_REQ},
                 {"pushpull", ZMQ_PUSH, ZMQ_PULL},
                 {"pullpush", ZMQ_PULL, ZMQ_PUSH},
                 {"xpubsub", ZMQ_XPUB, ZMQ_SUB},
                 {"subxpub", ZMQ_SUB, ZMQ_XPUB},
                 {"routerdealer", ZMQ_ROUTER, ZMQ_DEALER},
                 {"dealerrouter", ZMQ_DEALER, ZMQ_ROUTER},
                 {"pair", ZMQ_PAIR, ZMQ_PAIR}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp (table[i].name, pattern) == 0) {
            *server = table[i].server;
            *client = table[i].client;
            return 0;
        }
    return -1;
}

/* XPUB side: wait for the subscription, then publish a filtered and a matching stream. */
static void publish (void *xpub)
{
    char sub[16];
    int n = zmq_recv (xpub, sub, sizeof sub, 0);
    CHECK (n == 3 && sub[0] == 1 && memcmp (sub + 1, "t1", 2) == 0);
    for (int i = 0; i < ROUNDS; i++) {
        CHECK (send_str (xpub, "t2 filtered", 0) == 11);
        CHECK (send_str (xpub, "t1 data", 0) == 7);
    }
    CHECK (send_str (xpub, "t1 end", 0) == 6);
}

static void subscribe_and_read (void *sub)
{
    CHECK (zmq_setsockopt (sub, ZMQ_SUBSCRIBE, "t1", 2) == 0);
    for (int i = 0; i < ROUNDS; i++)
        expect_str (sub, "t1 data");
    expect_str (sub, "t1 end");
}

static void play (int server, const char *pattern, void *s)
{
    char buf[256];
    if (strcmp (pattern, "reqrep") == 0) {
        for (int i = 0; i < ROUNDS; i++) {
            if (server) {
                expect_str (s, "request");
                CHECK (send_str (s, "reply", 0) == 5);
            } else {
                CHECK (send_str (s, "request", 0) == 7);
                expect_str (s, "reply");
            }
        }
    } else if (strcmp (pattern, "pushpull") == 0) {
        if (server)
            send_stream (s);
        else
            recv_stream (s);
    } else if (strcmp (pattern, "pullpush") == 0) {
        if (server)
            recv_stream (s);
        else
            send_stream (s);
    } else if (strcmp (pattern, "xpubsub") == 0) {
        if (server)
            publish (s);
        else
            subscribe_and_read (s);
    } else if (strcmp (pattern, "subxpub") == 0) {
        if (server)
            subscribe_and_read (s);
        else
            publish (s);
    } else if (strcmp (pattern, "routerdealer") == 0) {
        /* The DEALER names itself; the ROUTER answers through that routing id. */
        for (int i = 0; i < ROUNDS; i++) {
            if (server) {
                int n = zmq_recv (s, buf, sizeof buf, 0);
                CHECK (n == 8 && memcmp (buf, "dealer-1", 8) == 0 && rcvmore (s));
                expect_str (s, "hello");
                CHECK (zmq_send (s, "dealer-1", 8, ZMQ_SNDMORE) == 8);
                CHECK (send_str (s, "world", 0) == 5);
            } else {
                CHECK (send_str (s, "hello", 0) == 5);
                expect_str (s, "world");
            }
        }
    } else if (strcmp (pattern, "dealerrouter") == 0) {
        /* The DEALER speaks first; the ROUTER answers through the id it was given. */
        for (int i = 0; i < ROUNDS; i++) {
            if (server) {
                CHECK (send_str (s, "hello", 0) == 5);
                expect_str (s, "world");
            } else {
                int n = zmq_recv (s, buf, sizeof buf, 0);
                CHECK (n > 0 && rcvmore (s));
                expect_str (s, "hello");
                CHECK (zmq_send (s, buf, (size_t) n, ZMQ_SNDMORE) == n);
                CHECK (send_str (s, "world", 0) == 5);
            }
        }
    } else if (strcmp (pattern, "pair") == 0) {
        for (int i = 0; i < ROUNDS; i++) {
            if (server) {
                expect_str (s, "ping");
                CHECK (send_str (s, "pong", 0) == 4);
            } else {
                CHECK (send_str (s, "ping", 0) == 4);
                expect_str (s, "pong");
            }
        }
        if (server)
            expect_big (s);
        else
            CHECK (zmq_send (s, big, BIG, 0) == BIG);
        /* The last word goes back to the client, so the server leaves only after it. */
        if (server)
            CHECK (send_str (s, "bye", 0) == 3);
        else
            expect_str (s, "bye");
    }
}

int main (int argc, char **argv)
{
    int server_type, client_type;
    if (argc != 4 || types_of (argv[2], &server_type, &client_type) != 0) {
        fprintf (stderr, "usage: peer server|client PATTERN ENDPOINT\n");
        return 2;
    }
    int server = strcmp (argv[1], "server") == 0;
    fill_big ();
    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, server ? server_type : client_type);
    CHECK (s != NULL);
    int timeout = TIMEOUT_MS;
    zmq_setsockopt (s, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    zmq_setsockopt (s, ZMQ_SNDTIMEO, &timeout, sizeof timeout);
    int linger = TIMEOUT_MS; /* deliver what was sent before leaving, but never hang */
    zmq_setsockopt (s, ZMQ_LINGER, &linger, sizeof linger);
    if (server) {
        char bound[256];
        CHECK (bind_resolved (s, argv[3], bound, sizeof bound) == 0);
        printf ("%s\n", bound);
        fflush (stdout);
    } else {
        if (client_type == ZMQ_DEALER)
            CHECK (zmq_setsockopt (s, ZMQ_ROUTING_ID, "dealer-1", 8) == 0);
        CHECK (zmq_connect (s, argv[3]) == 0);
    }
    play (server, argv[2], s);
    zmq_close (s);
    zmq_ctx_term (ctx);
    if (failures) {
        fprintf (stderr, "%s %s: %d check(s) failed\n", argv[1], argv[2], failures);
        return 1;
    }
    return 0;
}
