/* When zmq_connect fails for a tcp address and when it leaves the failure to the connecter.
   libzmq 4.3.4 checks only the address's syntax in zmq_connect (socket_base_t::connect_internal:
   a letter, digit, '[' or ':' first, then letters, digits and ".-:%;[]_*", and a port that
   starts with a digit) and resolves the name later, on each connect attempt
   (tcp_connecter_t::open). A failed lookup is a failed attempt: no CONNECT_DELAYED (no
   connect was started), CONNECT_RETRIED, and a retry after the interval.

   Port 0 passes the syntax check too: the connect is made, and the kernel refuses it.

   Prints "connect ADDRESS 0" or "connect ADDRESS -1 ERRNO" for each address below, then
   "events ADDRESS" and the names of the first three monitor events of a DEALER connecting to
   a name that does not resolve, and to port 0 (RECONNECT_IVL 50 ms), "timeout" where they do
   not come within 20 s. Exits 0 unless the program itself failed. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>

#include "testutil.h"

static const char *addresses[] = {
  "tcp://nonexistent.invalid:5555",       /* a name that does not resolve */
  "tcp://256.1.1.1:5555",                 /* not an IPv4 address: a name to look up */
  "tcp://[::1]:5555",                     /* IPv6 without ZMQ_IPV6 */
  "tcp://nonexistent.invalid;127.0.0.1:5555", /* an unresolvable source */
  "tcp://a_b:5555",                       /* '_' passes the syntax check */
  "tcp://127.0.0.1:0",                    /* port 0 */
  "tcp://*:5555",                         /* '*' may not come first */
  "tcp://127.0.0.1:*",                    /* the port must start with a digit */
  "tcp://local host:5555",                /* a space */
  "tcp://localhost",                      /* no port */
  "tcp://-x:5555",                        /* '-' may not come first */
};

static const char *errno_name (int e)
{
    switch (e) {
        case EINVAL: return "EINVAL";
        case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
        case ENODEV: return "ENODEV";
        case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
        default: return "other";
    }
}

static const char *event_name (uint16_t event)
{
    switch (event) {
        case ZMQ_EVENT_CONNECTED: return "CONNECTED";
        case ZMQ_EVENT_CONNECT_DELAYED: return "CONNECT_DELAYED";
        case ZMQ_EVENT_CONNECT_RETRIED: return "CONNECT_RETRIED";
        case ZMQ_EVENT_CLOSED: return "CLOSED";
        case ZMQ_EVENT_DISCONNECTED: return "DISCONNECTED";
        default: return "other";
    }
}

/* Prints "events ADDRESS" and the first three monitor events of a DEALER connecting there. */
static void events (void *ctx, const char *address)
{
    static int n_monitor = 0;
    char monitor[64];
    snprintf (monitor, sizeof monitor, "inproc://monitor-%d", n_monitor++);
    void *dealer = zmq_socket (ctx, ZMQ_DEALER);
    set_timeouts (dealer, 1000);
    int ivl = 50;
    CHECK (zmq_setsockopt (dealer, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl) == 0);
    CHECK (zmq_socket_monitor (dealer, monitor, ZMQ_EVENT_ALL) == 0);
    void *mon = zmq_socket (ctx, ZMQ_PAIR);
    set_timeouts (mon, 20000);
    CHECK (zmq_connect (mon, monitor) == 0);
    CHECK (zmq_connect (dealer, address) == 0);
    printf ("events %s", address);
    for (int n = 0; n < 3; n++) {
        zmq_msg_t m;
        zmq_msg_init (&m);
        if (zmq_msg_recv (&m, mon, 0) < 0) {
            printf (" timeout");
            zmq_msg_close (&m);
            break;
        }
        uint16_t event = 0;
        uint32_t value = 0;
        if (zmq_msg_size (&m) == 6) {
            memcpy (&event, zmq_msg_data (&m), 2);
            memcpy (&value, (char *) zmq_msg_data (&m) + 2, 4);
        }
        zmq_msg_close (&m);
        zmq_msg_init (&m);
        CHECK (zmq_msg_recv (&m, mon, 0) >= 0); /* the endpoint */
        zmq_msg_close (&m);
        /* libzmq adds a random jitter below RECONNECT_IVL to the interval. */
        if (event == ZMQ_EVENT_CONNECT_RETRIED)
            CHECK (value >= 50 && value < 100);
        printf (" %s", event_name (event));
    }
    printf ("\n");
    zmq_close (dealer);
    zmq_close (mon);
}

int main (void)
{
    void *ctx = zmq_ctx_new ();
    for (size_t i = 0; i < sizeof addresses / sizeof addresses[0]; i++) {
        void *s = zmq_socket (ctx, ZMQ_DEALER);
        set_timeouts (s, 1000);
        int rc = zmq_connect (s, addresses[i]);
        if (rc == 0)
            printf ("connect %s 0\n", addresses[i]);
        else
            printf ("connect %s -1 %s\n", addresses[i], errno_name (zmq_errno ()));
        zmq_close (s);
    }

    events (ctx, "tcp://nonexistent.invalid:5555");
    events (ctx, "tcp://127.0.0.1:0");
    zmq_ctx_term (ctx);
    return failures ? 1 : 0;
}
