/* Options conformance: for every socket type and every stable socket option of zmq.h (plus the
 * numbers a non-draft libzmq 4.3 accepts anyway), and for every context option, prints what
 * getsockopt/zmq_ctx_get return on a fresh object and after setting valid and invalid values.
 * One line per observation, deterministic, so the output built against real libzmq and against
 * ferromq can be compared line by line (tests/tests/c_options.rs).
 *
 * Line format: "<TYPE> <OPTION> <action> -> <result>"; the part before " -> " is the key. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

enum kind { INT, I64, U64, BYTES, KEY };

struct opt {
    const char *name;
    int number;
    enum kind kind;
};

/* Numbers, not macros, so the same table builds against any zmq.h. */
static const struct opt OPTS[] = {
    {"AFFINITY", 4, U64},
    {"ROUTING_ID", 5, BYTES},
    {"SUBSCRIBE", 6, BYTES},
    {"UNSUBSCRIBE", 7, BYTES},
    {"RATE", 8, INT},
    {"RECOVERY_IVL", 9, INT},
    {"SNDBUF", 11, INT},
    {"RCVBUF", 12, INT},
    {"RCVMORE", 13, INT},
    {"FD", 14, INT},
    {"EVENTS", 15, INT},
    {"TYPE", 16, INT},
    {"LINGER", 17, INT},
    {"RECONNECT_IVL", 18, INT},
    {"BACKLOG", 19, INT},
    {"RECONNECT_IVL_MAX", 21, INT},
    {"MAXMSGSIZE", 22, I64},
    {"SNDHWM", 23, INT},
    {"RCVHWM", 24, INT},
    {"MULTICAST_HOPS", 25, INT},
    {"RCVTIMEO", 27, INT},
    {"SNDTIMEO", 28, INT},
    {"IPV4ONLY", 31, INT},
    {"LAST_ENDPOINT", 32, BYTES},
    {"ROUTER_MANDATORY", 33, INT},
    {"TCP_KEEPALIVE", 34, INT},
    {"TCP_KEEPALIVE_CNT", 35, INT},
    {"TCP_KEEPALIVE_IDLE", 36, INT},
    {"TCP_KEEPALIVE_INTVL", 37, INT},
    {"TCP_ACCEPT_FILTER", 38, BYTES},
    {"IMMEDIATE", 39, INT},
    {"XPUB_VERBOSE", 40, INT},
    {"ROUTER_RAW", 41, INT},
    {"IPV6", 42, INT},
    {"MECHANISM", 43, INT},
    {"PLAIN_SERVER", 44, INT},
    {"PLAIN_USERNAME", 45, BYTES},
    {"PLAIN_PASSWORD", 46, BYTES},
    {"CURVE_SERVER", 47, INT},
    {"CURVE_PUBLICKEY", 48, KEY},
    {"CURVE_SECRETKEY", 49, KEY},
    {"CURVE_SERVERKEY", 50, KEY},
    {"PROBE_ROUTER", 51, INT},
    {"REQ_CORRELATE", 52, INT},
    {"REQ_RELAXED", 53, INT},
    {"CONFLATE", 54, INT},
    {"ZAP_DOMAIN", 55, BYTES},
    {"ROUTER_HANDOVER", 56, INT},
    {"TOS", 57, INT},
    {"IPC_FILTER_PID", 58, INT},
    {"IPC_FILTER_UID", 59, INT},
    {"IPC_FILTER_GID", 60, INT},
    {"CONNECT_ROUTING_ID", 61, BYTES},
    {"GSSAPI_SERVER", 62, INT},
    {"GSSAPI_PRINCIPAL", 63, BYTES},
    {"GSSAPI_SERVICE_PRINCIPAL", 64, BYTES},
    {"GSSAPI_PLAINTEXT", 65, INT},
    {"HANDSHAKE_IVL", 66, INT},
    {"SOCKS_PROXY", 68, BYTES},
    {"XPUB_NODROP", 69, INT},
    {"BLOCKY", 70, INT},
    {"XPUB_MANUAL", 71, INT},
    {"XPUB_WELCOME_MSG", 72, BYTES},
    {"STREAM_NOTIFY", 73, INT},
    {"INVERT_MATCHING", 74, INT},
    {"HEARTBEAT_IVL", 75, INT},
    {"HEARTBEAT_TTL", 76, INT},
    {"HEARTBEAT_TIMEOUT", 77, INT},
    {"XPUB_VERBOSER", 78, INT},
    {"CONNECT_TIMEOUT", 79, INT},
    {"TCP_MAXRT", 80, INT},
    {"THREAD_SAFE", 81, INT},
    {"MULTICAST_MAXTPDU", 84, INT},
    {"VMCI_BUFFER_SIZE", 85, U64},
    {"VMCI_BUFFER_MIN_SIZE", 86, U64},
    {"VMCI_BUFFER_MAX_SIZE", 87, U64},
    {"VMCI_CONNECT_TIMEOUT", 88, INT},
    {"USE_FD", 89, INT},
    {"GSSAPI_PRINCIPAL_NAMETYPE", 90, INT},
    {"GSSAPI_SERVICE_PRINCIPAL_NAMETYPE", 91, INT},
    {"BINDTODEVICE", 92, BYTES},
    /* Draft numbers that a non-draft libzmq 4.3 still answers. */
    {"ZAP_ENFORCE_DOMAIN", 93, INT},
    {"LOOPBACK_FASTPATH", 94, INT},
    {"MULTICAST_LOOP", 96, INT},
    {"SOCKS_USERNAME", 99, BYTES},
    {"SOCKS_PASSWORD", 100, BYTES},
};

static const char *TYPES[] = {"PAIR",   "PUB",  "SUB",  "REQ",  "REP",  "DEALER",
                              "ROUTER", "PULL", "PUSH", "XPUB", "XSUB", "STREAM"};

static const char *errname (int e)
{
    static char buf[32];
    switch (e) {
        case EINVAL: return "EINVAL";
        case EFAULT: return "EFAULT";
        case ENOTSUP: return "ENOTSUP";
        case EMFILE: return "EMFILE";
        case ETERM: return "ETERM";
        case ENOTSOCK: return "ENOTSOCK";
        case ENODEV: return "ENODEV";
        default: snprintf (buf, sizeof buf, "errno%d", e); return buf;
    }
}

/* "0" or the errno's name. */
static const char *rcname (int rc)
{
    return rc == 0 ? "0" : errname (errno);
}

/* Prints bytes readably: printable ASCII as is, the rest as \xNN. */
static void print_bytes (const unsigned char *p, size_t n)
{
    putchar ('"');
    for (size_t i = 0; i < n; i++) {
        if (p[i] >= 0x21 && p[i] < 0x7f && p[i] != '"' && p[i] != '\\')
            putchar (p[i]);
        else
            printf ("\\x%02x", p[i]);
    }
    putchar ('"');
}

/* What happened to the caller's buffer past the value: all zero, untouched, or both. */
static const char *tail_state (const unsigned char *p, size_t from, size_t to)
{
    int zero = 0, kept = 0, other = 0;
    for (size_t i = from; i < to; i++) {
        if (p[i] == 0)
            zero++;
        else if (p[i] == 0xAA)
            kept++;
        else
            other++;
    }
    if (from >= to)
        return "none";
    if (other)
        return "garbled";
    if (zero && kept)
        return "mixed";
    return zero ? "zeroed" : "kept";
}

static int is_dynamic (int number)
{
    return number == 14 /* FD */;
}

/* One getsockopt with a buffer of `size` bytes pre-filled with 0xAA. */
static void get (void *s, const char *type, const struct opt *o, const char *action, size_t size)
{
    unsigned char buf[512];
    memset (buf, 0xAA, sizeof buf);
    size_t len = size;
    int rc = zmq_getsockopt (s, o->number, buf, &len);
    printf ("%s %s %s -> %s", type, o->name, action, rcname (rc));
    if (rc == 0) {
        printf (" len=%zu", len);
        if (is_dynamic (o->number)) {
            int fd;
            memcpy (&fd, buf, sizeof fd);
            printf (" v=%s", fd >= 0 ? "fd" : "badfd");
        } else if (len == sizeof (int) && size == sizeof (int)
                   && (o->kind == INT)) {
            int v;
            memcpy (&v, buf, sizeof v);
            printf (" v=%d", v);
        } else if (len == 8 && (o->kind == I64 || o->kind == U64)) {
            int64_t v;
            memcpy (&v, buf, sizeof v);
            printf (" v=%lld", (long long) v);
        } else {
            printf (" v=");
            print_bytes (buf, len < size ? len : size);
        }
        printf (" tail=%s", tail_state (buf, len, size));
    } else {
        printf (" len=%zu buf=%s", len, tail_state (buf, 0, size));
    }
    putchar ('\n');
}

static void set (void *s, const char *type, const struct opt *o, const char *what,
                 const void *val, size_t len)
{
    int rc = zmq_setsockopt (s, o->number, val, len);
    printf ("%s %s set%s -> %s\n", type, o->name, what, rcname (rc));
}

/* The value read back after a set, with the usual buffer for the kind. */
static void get_back (void *s, const char *type, const struct opt *o, const char *what)
{
    char action[80];
    snprintf (action, sizeof action, "get-after-set%s", what);
    size_t size = o->kind == INT ? sizeof (int) : o->kind == BYTES || o->kind == KEY ? 300 : 8;
    get (s, type, o, action, size);
}

static void check_int (void *s, const char *type, const struct opt *o)
{
    static const int values[] = {0, 1, 2, 100, 1000, 6553500, -1, -2, INT_MAX, INT_MIN};
    get (s, type, o, "get4", sizeof (int));
    get (s, type, o, "get8", 8);
    get (s, type, o, "get2", 2);
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        char what[32];
        snprintf (what, sizeof what, "(%d)", values[i]);
        set (s, type, o, what, &values[i], sizeof (int));
        get_back (s, type, o, what);
    }
    int64_t wide = 1;
    set (s, type, o, "(int64 1)", &wide, sizeof wide);
    set (s, type, o, "(short)", &wide, 2);
    set (s, type, o, "(NULL,0)", NULL, 0);
    get_back (s, type, o, "(NULL,0)");
}

static void check_64 (void *s, const char *type, const struct opt *o)
{
    static const int64_t values[] = {0, 1, 1000, -1, -2, (int64_t) 1 << 40, INT64_MAX};
    get (s, type, o, "get8", 8);
    get (s, type, o, "get4", 4);
    get (s, type, o, "get16", 16);
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        char what[40];
        snprintf (what, sizeof what, "(%lld)", (long long) values[i]);
        set (s, type, o, what, &values[i], sizeof values[i]);
        get_back (s, type, o, what);
    }
    int narrow = 1;
    set (s, type, o, "(int 1)", &narrow, sizeof narrow);
    get_back (s, type, o, "(int 1)");
}

static void check_bytes (void *s, const char *type, const struct opt *o)
{
    char big[300];
    memset (big, 'x', sizeof big);
    get (s, type, o, "get300", 300);
    get (s, type, o, "get1", 1);
    get (s, type, o, "get0", 0);
    static const struct {
        const char *what;
        const char *val;
        size_t len;
    } values[] = {
        {"(\"a\")", "a", 1},
        {"(\"lo\")", "lo", 2},
        {"(\"127.0.0.1\")", "127.0.0.1", 9},
        {"(\"\\0ab\")", "\0ab", 3},
        {"(\"tcp://127.0.0.1:1\")", "tcp://127.0.0.1:1", 17},
        {"(\"\",0)", "", 0},
        {"(NULL,0)", NULL, 0},
    };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        set (s, type, o, values[i].what, values[i].val, values[i].len);
        get_back (s, type, o, values[i].what);
    }
    set (s, type, o, "(x*15)", big, 15);
    get_back (s, type, o, "(x*15)");
    get (s, type, o, "get15-after-x*15", 15);
    get (s, type, o, "get16-after-x*15", 16);
    set (s, type, o, "(x*16)", big, 16);
    get_back (s, type, o, "(x*16)");
    set (s, type, o, "(x*17)", big, 17);
    get_back (s, type, o, "(x*17)");
    set (s, type, o, "(x*255)", big, 255);
    get_back (s, type, o, "(x*255)");
    set (s, type, o, "(x*256)", big, 256);
    get_back (s, type, o, "(x*256)");
}

static void check_key (void *s, const char *type, const struct opt *o)
{
    /* The public key of zmq_curve's man page, and its binary form's length. */
    static const char z85[] = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
    unsigned char bin[32];
    memset (bin, 7, sizeof bin);
    get (s, type, o, "get32", 32);
    get (s, type, o, "get41", 41);
    get (s, type, o, "get300", 300);
    set (s, type, o, "(bin32)", bin, 32);
    get (s, type, o, "get32-after-bin32", 32);
    set (s, type, o, "(z85 40)", z85, 40);
    get (s, type, o, "get41-after-z85", 41);
    set (s, type, o, "(z85 41)", z85, 41);
    set (s, type, o, "(bad 10)", z85, 10);
    set (s, type, o, "(NULL,0)", NULL, 0);
}

static void socket_options (void *ctx)
{
    for (int t = 0; t < (int) (sizeof TYPES / sizeof TYPES[0]); t++) {
        void *probe = zmq_socket (ctx, t);
        printf ("%s socket -> %s\n", TYPES[t], probe ? "0" : errname (errno));
        if (!probe)
            continue;
        zmq_close (probe);
        for (size_t i = 0; i < sizeof OPTS / sizeof OPTS[0]; i++) {
            /* A fresh socket per option, so one option's value cannot leak into another's. */
            void *s = zmq_socket (ctx, t);
            /* LINGER 0 so that closing never waits; not on LINGER's own socket, whose fresh
               value is part of the check (0 for SUB and XSUB, -1 for the others). */
            int zero = 0;
            if (OPTS[i].number != 17)
                zmq_setsockopt (s, ZMQ_LINGER, &zero, sizeof zero);
            switch (OPTS[i].kind) {
                case INT: check_int (s, TYPES[t], &OPTS[i]); break;
                case I64:
                case U64: check_64 (s, TYPES[t], &OPTS[i]); break;
                case BYTES: check_bytes (s, TYPES[t], &OPTS[i]); break;
                case KEY: check_key (s, TYPES[t], &OPTS[i]); break;
            }
            zmq_close (s);
        }
    }
}

/* Options that change others: the mechanism follows the security options. */
static const int ONE = 1;
static const int ZERO = 0;

static void mechanism_follows (void *ctx)
{
    static const struct {
        const char *what;
        int option;
        const void *val;
        size_t len;
    } steps[] = {
        {"PLAIN_SERVER(1)", 44, &ONE, sizeof (int)},
        {"PLAIN_SERVER(0)", 44, &ZERO, sizeof (int)},
        {"PLAIN_USERNAME(\"u\")", 45, "u", 1},
        {"PLAIN_PASSWORD(NULL,0)", 46, NULL, 0},
        {"CURVE_SERVER(1)", 47, &ONE, sizeof (int)},
        {"GSSAPI_SERVER(1)", 62, &ONE, sizeof (int)},
        {"ROUTER_RAW(1)", 41, &ONE, sizeof (int)},
    };
    void *s = zmq_socket (ctx, ZMQ_ROUTER);
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        int rc = zmq_setsockopt (s, steps[i].option, steps[i].val, steps[i].len);
        int mech = -1, srv = -1;
        size_t len = sizeof mech;
        zmq_getsockopt (s, 43, &mech, &len);
        len = sizeof srv;
        int rc2 = zmq_getsockopt (s, 44, &srv, &len);
        printf ("ROUTER mechanism after %s -> %s mechanism=%d plain_server=%d/%s\n", steps[i].what,
                rcname (rc), mech, srv, rc2 == 0 ? "0" : "err");
    }
    zmq_close (s);
}

static void ctx_option (const char *name, int number)
{
    static const int values[] = {0, 1, 2, 5, 1023, 65535, 65536, -1, INT_MAX};
    void *ctx = zmq_ctx_new ();
    errno = 0;
    int v = zmq_ctx_get (ctx, number);
    printf ("CTX %s get -> %d%s%s\n", name, v, v == -1 && errno ? " " : "",
            v == -1 && errno ? errname (errno) : "");
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        int rc = zmq_ctx_set (ctx, number, values[i]);
        errno = 0;
        int back = zmq_ctx_get (ctx, number);
        printf ("CTX %s set(%d) -> %s get=%d%s%s\n", name, values[i], rcname (rc), back,
                back == -1 && errno ? " " : "", back == -1 && errno ? errname (errno) : "");
    }
    zmq_ctx_term (ctx);
}

static void context_options (void)
{
    static const struct {
        const char *name;
        int number;
    } opts[] = {
        {"IO_THREADS", 1},
        {"MAX_SOCKETS", 2},
        {"SOCKET_LIMIT", 3},
        /* THREAD_PRIORITY shares number 3 with SOCKET_LIMIT: zmq_ctx_get answers the latter. */
        {"THREAD_SCHED_POLICY", 4},
        {"MAX_MSGSZ", 5},
        {"MSG_T_SIZE", 6},
        {"THREAD_AFFINITY_CPU_ADD", 7},
        {"THREAD_AFFINITY_CPU_REMOVE", 8},
        {"THREAD_NAME_PREFIX", 9},
        {"ZERO_COPY_RECV", 10},
        {"IPV6", 42},
        {"BLOCKY", 70},
        {"UNKNOWN", 99},
    };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        ctx_option (opts[i].name, opts[i].number);
    /* CPU_REMOVE of a CPU that was added succeeds once. */
    void *ctx = zmq_ctx_new ();
    int rc1 = zmq_ctx_set (ctx, 7, 1);
    int rc2 = zmq_ctx_set (ctx, 8, 1);
    int rc3 = zmq_ctx_set (ctx, 8, 1);
    printf ("CTX AFFINITY add(1) remove(1) remove(1) -> %d %d %d\n", rc1, rc2, rc3);
    zmq_ctx_term (ctx);
}

int main (void)
{
    void *ctx = zmq_ctx_new ();
    socket_options (ctx);
    mechanism_follows (ctx);
    zmq_ctx_term (ctx);
    context_options ();
    return 0;
}
