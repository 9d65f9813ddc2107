/* One side of a secured connection, for tests/tests/c_security.rs: built against ferromq and
   against the system libzmq, so that a ferromq process and a libzmq process meet over tcp or
   ipc with the same code on both ends.

   security_peer <bind|connect> <endpoint> <pattern> <security> <expect>
     pattern:  reqrep | dealerrouter | pubsub (the binder is REP/ROUTER/PUB, the connecter
               REQ/DEALER/SUB; PUB publishes until its subscriber has one and leaves)
     security: null | plain-server (no ZAP handler) | plain-server-zap:USER:PASS (a ZAP
               handler admitting only USER:PASS, as User-Id USER) | plain-client:USER:PASS |
               curve-server,SECRET (no ZAP handler) | curve-server-zap,SECRET,CLIENTPUBLIC (a
               ZAP handler admitting only that client key, as User-Id "curve-user") |
               curve-client,SERVERPUBLIC,SECRET (keys in Z85; the public keys are derived) |
               null-zap:DOMAIN (NULL with ZAP_DOMAIN set and a ZAP handler admitting the
               domain "good" only, as User-Id "null-user"); any of these after the prefixes
               "enforce/" (ZMQ_ZAP_ENFORCE_DOMAIN = 1) and "domain=NAME/" (ZMQ_ZAP_DOMAIN, no
               handler of its own)
     expect:   ok (a request and its reply go through; behind a ZAP handler the request
               carries User-Id) | ok-unasked (they go through, and the ZAP handler bound
               was asked nothing: no User-Id) | auth:STATUS | protocol:HEXCODE | nodetail:ERRNO (that
               handshake-failed monitor event arrives, and no message does) | none (no
               message arrives) | mismatch (ZMTP_MECHANISM_MISMATCH, or the peer closing
               first, which its greeting timing decides; prints "protocol" or "closed")
   A binder prints its resolved endpoint on the first line; every side prints "ok" last. */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#ifndef ZMQ_ZAP_ENFORCE_DOMAIN
#define ZMQ_ZAP_ENFORCE_DOMAIN 93 /* draft in zmq.h; libzmq 4.3 takes it without the draft API */
#endif

static char zap_user[256], zap_pass[256];
static unsigned char zap_key[32];
static int zap_curve, zap_null, zap_asked;

/* RFC 27 handler: admits exactly zap_user/zap_pass (PLAIN) or zap_key (CURVE), 400 otherwise.
   `h` is the REP socket main bound to inproc://zeromq.zap.01 before it made the server socket:
   bound here instead, on a loaded machine the first handshake could come before this thread
   ran, and a server without a handler refuses (PLAIN) or admits unasked (NULL with a domain). */
static void *zap_handler (void *h)
{
    while (1) {
        char f[9][256];
        int len[9];
        int n = 0;
        int rc = 0;
        do {
            rc = recv_str (h, f[n < 9 ? n : 8], 256, 0);
            if (rc < 0)
                break;
            len[n < 9 ? n : 8] = rc;
            n++;
        } while (rcvmore (h));
        if (rc < 0)
            break;
        if (n == 1 && strcmp (f[0], "STOP") == 0)
            break;
        zap_asked++;
        int good = zap_null    ? n == 6 && strcmp (f[5], "NULL") == 0 && strcmp (f[2], "good") == 0
                   : zap_curve ? n == 7 && strcmp (f[5], "CURVE") == 0 && len[6] == 32
                                 && memcmp (f[6], zap_key, 32) == 0
                             : n == 8 && strcmp (f[5], "PLAIN") == 0
                                 && strcmp (f[6], zap_user) == 0
                                 && strcmp (f[7], zap_pass) == 0;
        send_str (h, "1.0", ZMQ_SNDMORE);
        send_str (h, f[1], ZMQ_SNDMORE);
        send_str (h, good ? "200" : "400", ZMQ_SNDMORE);
        send_str (h, good ? "OK" : "Bad credentials", ZMQ_SNDMORE);
        send_str (h, good ? zap_user : "", ZMQ_SNDMORE);
        send_str (h, "", 0);
    }
    zmq_close (h);
    return NULL;
}

/* The `i`th comma-separated field of `spec` (0 = the name) into `out` (41 bytes). */
static int field (const char *spec, int i, char *out)
{
    const char *p = spec;
    for (int k = 0; k < i; k++) {
        p = strchr (p, ',');
        if (p == NULL)
            return -1;
        p++;
    }
    size_t n = strcspn (p, ",");
    if (n != 40)
        return -1;
    memcpy (out, p, 40);
    out[40] = 0;
    return 0;
}

static void apply_security (void *s, const char *security)
{
    int one = 1;
    if (strcmp (security, "null") == 0)
        return;
    if (strncmp (security, "null-zap:", 9) == 0) {
        CHECK (zmq_setsockopt (s, ZMQ_ZAP_DOMAIN, security + 9, strlen (security + 9)) == 0);
        return;
    }
    if (strncmp (security, "curve-server", 12) == 0) {
        char secret[41], public_[41];
        CHECK (field (security, 1, secret) == 0);
        CHECK (zmq_curve_public (public_, secret) == 0);
        CHECK (zmq_setsockopt (s, ZMQ_CURVE_SERVER, &one, sizeof one) == 0);
        CHECK (zmq_setsockopt (s, ZMQ_CURVE_SECRETKEY, secret, 40) == 0);
        CHECK (zmq_setsockopt (s, ZMQ_CURVE_PUBLICKEY, public_, 41) == 0);
        return;
    }
    if (strncmp (security, "curve-client", 12) == 0) {
        char server[41], secret[41], public_[41];
        CHECK (field (security, 1, server) == 0);
        CHECK (field (security, 2, secret) == 0);
        CHECK (zmq_curve_public (public_, secret) == 0);
        CHECK (zmq_setsockopt (s, ZMQ_CURVE_SERVERKEY, server, 40) == 0);
        CHECK (zmq_setsockopt (s, ZMQ_CURVE_PUBLICKEY, public_, 40) == 0);
        CHECK (zmq_setsockopt (s, ZMQ_CURVE_SECRETKEY, secret, 40) == 0);
        return;
    }
    if (strncmp (security, "plain-server", 12) == 0) {
        CHECK (zmq_setsockopt (s, ZMQ_PLAIN_SERVER, &one, sizeof one) == 0);
        return;
    }
    char user[256] = "", pass[256] = "";
    if (sscanf (security, "plain-client:%255[^:]:%255s", user, pass) == 2) {
        CHECK (zmq_setsockopt (s, ZMQ_PLAIN_USERNAME, user, strlen (user)) == 0);
        CHECK (zmq_setsockopt (s, ZMQ_PLAIN_PASSWORD, pass, strlen (pass)) == 0);
        return;
    }
    fprintf (stderr, "unknown security %s\n", security);
    failures++;
}

static long long now_ms (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return (long long) t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Waits up to 15 s for an event in `mask`; returns its value (and its number in `which`), or
   -1. The bound only matters when an event is missing: on a loaded 2-CPU machine a 5 s bound
   was once reached by an event that did come. It bounds the whole wait, not each receive:
   a connecter retrying a gone peer sends an event every reconnect interval, forever. */
static long wait_events (void *mon, int mask, int *which)
{
    long long deadline = now_ms () + 15000;
    while (1) {
        long long left = deadline - now_ms ();
        if (left <= 0)
            return -1;
        int ms = (int) left;
        zmq_setsockopt (mon, ZMQ_RCVTIMEO, &ms, sizeof ms);
        unsigned char head[6];
        char addr[256];
        if (zmq_recv (mon, head, sizeof head, 0) != 6)
            return -1;
        if (zmq_recv (mon, addr, sizeof addr, 0) < 0)
            return -1;
        unsigned short e;
        unsigned int v;
        memcpy (&e, head, 2);
        memcpy (&v, head + 2, 4);
        if (e & mask) {
            if (which)
                *which = e;
            return (long) v;
        }
    }
}

static long wait_event (void *mon, int event)
{
    return wait_events (mon, event, NULL);
}

int main (int argc, char **argv)
{
    if (argc != 6) {
        fprintf (stderr, "usage: security_peer bind|connect ENDPOINT PATTERN SECURITY EXPECT\n");
        return 2;
    }
    int binder = strcmp (argv[1], "bind") == 0;
    int router = strcmp (argv[3], "dealerrouter") == 0;
    int pubsub = strcmp (argv[3], "pubsub") == 0;
    const char *security = argv[4], *expect = argv[5];
    int enforce = 0;
    char domain[256] = "";
    while (1) {
        if (strncmp (security, "enforce/", 8) == 0) {
            enforce = 1;
            security += 8;
        } else if (strncmp (security, "domain=", 7) == 0 && strchr (security, '/') != NULL) {
            const char *slash = strchr (security, '/');
            snprintf (domain, sizeof domain, "%.*s", (int) (slash - security - 7), security + 7);
            security = slash + 1;
        } else {
            break;
        }
    }
    int unasked = strcmp (expect, "ok-unasked") == 0;
    if (unasked)
        expect = "ok";
    void *ctx = zmq_ctx_new ();

    pthread_t zap;
    int with_zap = sscanf (security, "plain-server-zap:%255[^:]:%255s", zap_user, zap_pass) == 2;
    char client_key[41];
    if (strncmp (security, "curve-server-zap,", 17) == 0 && field (security, 2, client_key) == 0
        && zmq_z85_decode (zap_key, client_key) != NULL) {
        with_zap = 1;
        zap_curve = 1;
        strcpy (zap_user, "curve-user");
    }
    if (strncmp (security, "null-zap:", 9) == 0) {
        with_zap = 1;
        zap_null = 1;
        strcpy (zap_user, "null-user");
    }
    if (with_zap) {
        void *h = zmq_socket (ctx, ZMQ_REP);
        CHECK (zmq_bind (h, "inproc://zeromq.zap.01") == 0);
        int linger = 0;
        zmq_setsockopt (h, ZMQ_LINGER, &linger, sizeof linger);
        /* pthread_create is the full barrier libzmq asks of a socket moving between threads. */
        pthread_create (&zap, NULL, zap_handler, h);
    }

    int type = binder ? (router ? ZMQ_ROUTER : ZMQ_REP) : (router ? ZMQ_DEALER : ZMQ_REQ);
    if (pubsub)
        type = binder ? ZMQ_PUB : ZMQ_SUB;
    void *s = zmq_socket (ctx, type);
    set_timeouts (s, 15000);
    if (enforce)
        CHECK (zmq_setsockopt (s, ZMQ_ZAP_ENFORCE_DOMAIN, &enforce, sizeof enforce) == 0);
    if (domain[0])
        CHECK (zmq_setsockopt (s, ZMQ_ZAP_DOMAIN, domain, strlen (domain)) == 0);
    apply_security (s, security);
    if (pubsub && !binder)
        CHECK (zmq_setsockopt (s, ZMQ_SUBSCRIBE, "hel", 3) == 0);
    char mon_ep[64];
    snprintf (mon_ep, sizeof mon_ep, "inproc://monitor-%d", (int) getpid ());
    CHECK (zmq_socket_monitor (s, mon_ep, ZMQ_EVENT_ALL) == 0);
    void *mon = zmq_socket (ctx, ZMQ_PAIR);
    CHECK (zmq_connect (mon, mon_ep) == 0);

    if (binder) {
        char ep[256];
        CHECK (bind_resolved (s, argv[2], ep, sizeof ep) == 0);
        printf ("%s\n", ep);
        fflush (stdout);
    } else {
        CHECK (zmq_connect (s, argv[2]) == 0);
    }

    char buf[64];
    if (strcmp (expect, "ok") == 0 && pubsub) {
        if (binder) {
            /* Publish (a non-matching topic too) until the subscriber got one and left. */
            int ms = 20;
            zmq_setsockopt (mon, ZMQ_RCVTIMEO, &ms, sizeof ms);
            int left = 0;
            for (int i = 0; i < 500 && !left; i++) {
                CHECK (send_str (s, "other", 0) == 5);
                CHECK (send_str (s, "hello", 0) == 5);
                unsigned char head[6];
                char addr[256];
                while (zmq_recv (mon, head, sizeof head, 0) == 6) {
                    unsigned short e;
                    memcpy (&e, head, 2);
                    zmq_recv (mon, addr, sizeof addr, 0);
                    left |= e == ZMQ_EVENT_DISCONNECTED;
                }
            }
            CHECK (left);
        } else {
            CHECK (recv_str (s, buf, sizeof buf, 0) == 5 && strcmp (buf, "hello") == 0);
            CHECK (wait_event (mon, ZMQ_EVENT_HANDSHAKE_SUCCEEDED) == 0);
        }
    } else if (strcmp (expect, "ok") == 0) {
        if (binder) {
            char id[256];
            int n = 0;
            if (router) {
                n = zmq_recv (s, id, sizeof id, 0);
                CHECK (n > 0);
            }
            zmq_msg_t msg;
            zmq_msg_init (&msg);
            CHECK (zmq_msg_recv (&msg, s, 0) == 5 && memcmp (zmq_msg_data (&msg), "hello", 5) == 0);
            if (unasked) {
                const char *user = zmq_msg_gets (&msg, "User-Id");
                if (user != NULL || zap_asked != 0) {
                    fprintf (stderr, "asked %d times, User-Id: %s\n", zap_asked,
                             user ? user : "(none)");
                    failures++;
                }
            } else if (with_zap) {
                const char *user = zmq_msg_gets (&msg, "User-Id");
                if (user == NULL || strcmp (user, zap_user) != 0) {
                    fprintf (stderr, "User-Id: %s\n", user ? user : "(none)");
                    failures++;
                }
            }
            zmq_msg_close (&msg);
            if (router)
                CHECK (zmq_send (s, id, n > 0 ? (size_t) n : 0, ZMQ_SNDMORE) == n);
            CHECK (send_str (s, "world", 0) == 5);
            /* Let the reply leave before the context goes. */
            CHECK (wait_event (mon, ZMQ_EVENT_DISCONNECTED) >= 0);
        } else {
            CHECK (send_str (s, "hello", 0) == 5);
            CHECK (recv_str (s, buf, sizeof buf, 0) == 5 && strcmp (buf, "world") == 0);
            CHECK (wait_event (mon, ZMQ_EVENT_HANDSHAKE_SUCCEEDED) == 0);
        }
    } else {
        long want = -1;
        int event = 0;
        if (sscanf (expect, "auth:%ld", &want) == 1)
            event = ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
        else if (sscanf (expect, "protocol:%lx", &want) == 1)
            event = ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL;
        else if (sscanf (expect, "nodetail:%ld", &want) == 1)
            event = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
        long got = event ? wait_event (mon, event) : -1;
        if (strcmp (expect, "mismatch") == 0) {
            int which = 0;
            got = wait_events (
              mon, ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL,
              &which);
            event = which;
            want = which == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                     ? ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH
                     : got;
            if (got >= 0)
                printf ("%s\n", which == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ? "protocol"
                                                                         : "closed");
        }
        if (got != want || (got < 0 && event != 0)) {
            fprintf (stderr, "expected event %d value %ld, got %ld\n", event, want, got);
            failures++;
        }
        if (!binder)
            zmq_send (s, "hello", 5, ZMQ_DONTWAIT);
        /* Nothing may be delivered either way. */
        zmq_pollitem_t item = {s, 0, ZMQ_POLLIN, 0};
        CHECK (zmq_poll (&item, 1, 500) == 0);
    }

    zmq_close (mon);
    zmq_close (s);
    if (with_zap) {
        void *stop = zmq_socket (ctx, ZMQ_REQ);
        int linger = 0;
        zmq_setsockopt (stop, ZMQ_LINGER, &linger, sizeof linger);
        zmq_connect (stop, "inproc://zeromq.zap.01");
        send_str (stop, "STOP", 0);
        zmq_close (stop);
        pthread_join (zap, NULL);
    }
    zmq_ctx_term (ctx);
    return report ();
}
