/* What a ROUTER server makes of a ZAP reply's metadata: libzmq parses it with the same code as
   the peer's handshake properties (mechanism_t::parse_metadata), so an `Identity` there sets the
   peer's routing id, the last one parsed winning, and a `Socket-Type` there must name a type
   that can talk to the server, else the handshake fails (ZAP_INVALID_METADATA). Run once per
   library; both sockets use the library under test.

   usage: zap_metadata MECHANISM METADATA CLIENT_ID
     MECHANISM: plain | curve | null (NULL with ZMQ_ZAP_DOMAIN set)
     METADATA:  the handler's metadata as NAME=VALUE[,NAME=VALUE...], or - for none
     CLIENT_ID: the DEALER client's ZMQ_ROUTING_ID, or - for none

   Prints, one a line: "routing-id VALUE" (the frame the ROUTER prefixed; "generated" for
   libzmq's 5-byte [0, u32] form), then "gets NAME VALUE" for Identity, Socket-Type and
   User-Id (VALUE "(null)" where zmq_msg_gets has none), or, when the server's monitor reports a
   failed handshake first, or nothing comes within 3 s, "no message" and "server-event NAME
   VALUE" (or "server-event none"). Exits 0 unless the program itself failed. */
#define _POSIX_C_SOURCE 200809L /* strtok_r under -std=c11 */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "testutil.h"
#include "zap_admit.h"

static char metadata_arg[512];

/* RFC 27 handler: admits every request (200), User-Id "zap-user", metadata_arg's properties. */
static void *zap_handler (void *h)
{
    unsigned char meta[512];
    size_t len = 0;
    if (strcmp (metadata_arg, "-") != 0) {
        char copy[512];
        snprintf (copy, sizeof copy, "%s", metadata_arg);
        for (char *save = NULL, *p = strtok_r (copy, ",", &save); p;
             p = strtok_r (NULL, ",", &save)) {
            char *eq = strchr (p, '=');
            if (!eq)
                continue;
            *eq = '\0';
            if (len + 5 + strlen (p) + strlen (eq + 1) > sizeof meta)
                break;
            len += put_property (meta + len, p, eq + 1);
        }
    }
    zap_admit_all (h, "zap-user", meta, len);
    return NULL;
}

/* Reads one event from the monitor; returns its name if it is a failed handshake, else NULL. */
static const char *read_failure (void *mon, uint32_t *value)
{
    zmq_msg_t m;
    zmq_msg_init (&m);
    if (zmq_msg_recv (&m, mon, 0) < 0) {
        zmq_msg_close (&m);
        return NULL;
    }
    uint16_t event = 0;
    if (zmq_msg_size (&m) == 6) {
        memcpy (&event, zmq_msg_data (&m), 2);
        memcpy (value, (char *) zmq_msg_data (&m) + 2, 4);
    }
    int more = zmq_msg_more (&m);
    zmq_msg_close (&m);
    if (more) {
        zmq_msg_init (&m);
        zmq_msg_recv (&m, mon, 0); /* the endpoint */
        zmq_msg_close (&m);
    }
    switch (event) {
        case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL: return "HANDSHAKE_FAILED_NO_DETAIL";
        case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL: return "HANDSHAKE_FAILED_PROTOCOL";
        case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH: return "HANDSHAKE_FAILED_AUTH";
        default: return NULL;
    }
}

static long now_ms (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

int main (int argc, char **argv)
{
    if (argc != 4) {
        fprintf (stderr, "usage: %s plain|curve|null METADATA|- CLIENT_ID|-\n", argv[0]);
        return 2;
    }
    const char *mechanism = argv[1];
    snprintf (metadata_arg, sizeof metadata_arg, "%s", argv[2]);
    const char *client_id = argv[3];

    void *ctx = zmq_ctx_new ();
    pthread_t thread;
    CHECK (zap_start (ctx, zap_handler, &thread) == 0);

    void *server = zmq_socket (ctx, ZMQ_ROUTER);
    void *client = zmq_socket (ctx, ZMQ_DEALER);
    set_timeouts (server, 3000);
    set_timeouts (client, 3000);
    CHECK (zmq_socket_monitor (server, "inproc://monitor-server", ZMQ_EVENT_ALL) == 0);
    void *mon = zmq_socket (ctx, ZMQ_PAIR);
    CHECK (zmq_connect (mon, "inproc://monitor-server") == 0);

    int one = 1;
    if (strcmp (mechanism, "plain") == 0) {
        CHECK (zmq_setsockopt (server, ZMQ_PLAIN_SERVER, &one, sizeof one) == 0);
        CHECK (zmq_setsockopt (client, ZMQ_PLAIN_USERNAME, "user", 4) == 0);
        CHECK (zmq_setsockopt (client, ZMQ_PLAIN_PASSWORD, "pass", 4) == 0);
    } else if (strcmp (mechanism, "curve") == 0) {
        char server_public[41], server_secret[41], client_public[41], client_secret[41];
        CHECK (zmq_curve_keypair (server_public, server_secret) == 0);
        CHECK (zmq_curve_keypair (client_public, client_secret) == 0);
        CHECK (zmq_setsockopt (server, ZMQ_CURVE_SERVER, &one, sizeof one) == 0);
        CHECK (zmq_setsockopt (server, ZMQ_CURVE_SECRETKEY, server_secret, 40) == 0);
        CHECK (zmq_setsockopt (client, ZMQ_CURVE_SERVERKEY, server_public, 40) == 0);
        CHECK (zmq_setsockopt (client, ZMQ_CURVE_PUBLICKEY, client_public, 40) == 0);
        CHECK (zmq_setsockopt (client, ZMQ_CURVE_SECRETKEY, client_secret, 40) == 0);
    } else if (strcmp (mechanism, "null") == 0) {
        CHECK (zmq_setsockopt (server, ZMQ_ZAP_DOMAIN, "domain", 6) == 0);
    } else {
        fprintf (stderr, "unknown mechanism %s\n", mechanism);
        return 2;
    }
    if (strcmp (client_id, "-") != 0)
        CHECK (zmq_setsockopt (client, ZMQ_ROUTING_ID, client_id, strlen (client_id)) == 0);

    char endpoint[256];
    CHECK (bind_resolved (server, "tcp://127.0.0.1:*", endpoint, sizeof endpoint) == 0);
    CHECK (zmq_connect (client, endpoint) == 0);
    CHECK (zmq_send (client, "hello", 5, 0) == 5);

    /* The message, or the server's first failed handshake, whichever comes first. */
    const char *failure = NULL;
    uint32_t value = 0;
    int received = 0;
    for (long deadline = now_ms () + 3000; !received && !failure && now_ms () < deadline;) {
        zmq_pollitem_t items[] = {{server, 0, ZMQ_POLLIN, 0}, {mon, 0, ZMQ_POLLIN, 0}};
        if (zmq_poll (items, 2, 100) < 0)
            break;
        if (items[0].revents & ZMQ_POLLIN)
            received = 1;
        else if (items[1].revents & ZMQ_POLLIN)
            failure = read_failure (mon, &value);
    }
    zmq_msg_t id, body;
    zmq_msg_init (&id);
    zmq_msg_init (&body);
    if (received && zmq_msg_recv (&id, server, 0) >= 0 && zmq_msg_recv (&body, server, 0) >= 0) {
        const unsigned char *d = zmq_msg_data (&id);
        size_t n = zmq_msg_size (&id);
        if (n == 5 && d[0] == 0)
            printf ("routing-id generated\n");
        else
            printf ("routing-id %.*s\n", (int) n, (const char *) d);
        const char *names[] = {"Identity", "Socket-Type", "User-Id"};
        for (int i = 0; i < 3; i++) {
            const char *v = zmq_msg_gets (&body, names[i]);
            printf ("gets %s %s\n", names[i], v ? v : "(null)");
        }
    } else {
        printf ("no message\n");
        if (failure)
            printf ("server-event %s 0x%x\n", failure, value);
        else
            printf ("server-event none\n");
    }
    zmq_msg_close (&id);
    zmq_msg_close (&body);

    zmq_close (client);
    zmq_close (server);
    zmq_close (mon);
    zmq_ctx_term (ctx);
    pthread_join (thread, NULL);
    return failures ? 1 : 0;
}
