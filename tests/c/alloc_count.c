/* Allocation counts of the message calls in steady state (issue 18): a CI guard that cannot
   flake, since it counts allocations instead of timing them.

   The program interposes malloc and its kin (an executable's definitions come first in the
   dynamic linker's search, so the library's allocations land here too) and counts, per
   thread, the allocations each call makes on the calling thread. Over inproc, tcp and ipc, for
   64 B, 1 KiB, 64 KiB and 256 KiB, one thread sends a window of WINDOW messages and receives
   them back before the next window, so what a library can reuse never depends on scheduling.
   After a warm-up, the checks:
     - zmq_msg_init_size: at most one allocation (its body);
     - zmq_msg_send, zmq_msg_recv, zmq_msg_close, zmq_send, zmq_recv: none (they may free).
   Prints "ok", or one line per broken check. With the argument "report" it prints the most
   and the total per call and checks nothing (tests/tests/c_alloc.rs runs that against libzmq,
   whose zmq_send allocates per message: proof that the counting sees what it must). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

extern void *__libc_malloc (size_t size);
extern void *__libc_calloc (size_t n, size_t size);
extern void *__libc_realloc (void *p, size_t size);
extern void *__libc_memalign (size_t align, size_t size);
extern void __libc_free (void *p);

static __thread unsigned long allocs;

void *malloc (size_t size)
{
    allocs++;
    return __libc_malloc (size);
}

void *calloc (size_t n, size_t size)
{
    allocs++;
    return __libc_calloc (n, size);
}

void *realloc (void *p, size_t size)
{
    allocs++;
    return __libc_realloc (p, size);
}

void *memalign (size_t align, size_t size)
{
    allocs++;
    return __libc_memalign (align, size);
}

void *aligned_alloc (size_t align, size_t size)
{
    allocs++;
    return __libc_memalign (align, size);
}

int posix_memalign (void **out, size_t align, size_t size)
{
    allocs++;
    void *p = __libc_memalign (align, size);
    if (!p)
        return 12; /* ENOMEM */
    *out = p;
    return 0;
}

void free (void *p)
{
    __libc_free (p);
}

enum { INIT_SIZE, MSG_SEND, MSG_RECV, MSG_CLOSE, SEND, RECV, CALLS };
static const char *names[CALLS] = {"zmq_msg_init_size", "zmq_msg_send", "zmq_msg_recv",
                                   "zmq_msg_close",     "zmq_send",     "zmq_recv"};
/* Allocations allowed per call: init_size its body, the others none. */
static const unsigned long allowed[CALLS] = {1, 0, 0, 0, 0, 0};

struct cost {
    unsigned long most, total;
};
static struct cost costs[CALLS];
static int counting;
static int failures;

/* Runs `call` (an int expression), counting what it allocates on this thread. */
#define COUNTED(which, call, rc)                                               \
    do {                                                                       \
        unsigned long before_ = allocs;                                        \
        rc = (call);                                                           \
        unsigned long cost_ = allocs - before_;                                \
        if (counting) {                                                        \
            costs[which].total += cost_;                                       \
            if (cost_ > costs[which].most)                                     \
                costs[which].most = cost_;                                     \
        }                                                                      \
    } while (0)

#define REQUIRE(cond)                                                          \
    do {                                                                       \
        if (!(cond)) {                                                         \
            printf ("%s:%d: %s failed (%s)\n", __FILE__, __LINE__, #cond,      \
                    zmq_strerror (zmq_errno ()));                              \
            exit (1);                                                          \
        }                                                                      \
    } while (0)

enum { WINDOW = 4, WARM_UP = 300, MEASURED = 100, MAX_SIZE = 256 * 1024 };

static char *out_buf, *in_buf;

/* One window through the zmq_msg_* calls, then one through zmq_send / zmq_recv. */
static void window (void *tx, void *rx, size_t size)
{
    int rc;
    for (int i = 0; i < WINDOW; i++) {
        zmq_msg_t msg;
        COUNTED (INIT_SIZE, zmq_msg_init_size (&msg, size), rc);
        REQUIRE (rc == 0);
        memset (zmq_msg_data (&msg), 'a' + i, size);
        COUNTED (MSG_SEND, zmq_msg_send (&msg, tx, 0), rc);
        REQUIRE (rc == (int) size);
        COUNTED (MSG_CLOSE, zmq_msg_close (&msg), rc);
        REQUIRE (rc == 0);
    }
    for (int i = 0; i < WINDOW; i++) {
        zmq_msg_t msg;
        REQUIRE (zmq_msg_init (&msg) == 0);
        COUNTED (MSG_RECV, zmq_msg_recv (&msg, rx, 0), rc);
        REQUIRE (rc == (int) size);
        const char *data = zmq_msg_data (&msg);
        REQUIRE (data[0] == 'a' + i && data[size - 1] == 'a' + i);
        COUNTED (MSG_CLOSE, zmq_msg_close (&msg), rc);
        REQUIRE (rc == 0);
    }
    for (int i = 0; i < WINDOW; i++) {
        memset (out_buf, 'A' + i, size);
        COUNTED (SEND, zmq_send (tx, out_buf, size, 0), rc);
        REQUIRE (rc == (int) size);
    }
    for (int i = 0; i < WINDOW; i++) {
        COUNTED (RECV, zmq_recv (rx, in_buf, size, 0), rc);
        REQUIRE (rc == (int) size);
        REQUIRE (in_buf[0] == 'A' + i && in_buf[size - 1] == 'A' + i);
    }
}

/* Brings each buffer pool a library keeps to its full size, so that whether the steady state
   makes a new one never depends on when the I/O thread lets go of a sent body: eight bodies
   of the largest size alive at once, from zmq_msg_init_size and from zmq_send. */
static void fill_pools (void *tx, void *rx)
{
    zmq_msg_t held[8];
    for (int i = 0; i < 8; i++)
        REQUIRE (zmq_msg_init_size (&held[i], MAX_SIZE) == 0);
    for (int i = 0; i < 8; i++)
        REQUIRE (zmq_msg_close (&held[i]) == 0);
    for (int i = 0; i < 8; i++)
        REQUIRE (zmq_send (tx, out_buf, MAX_SIZE, 0) == MAX_SIZE);
    for (int i = 0; i < 8; i++)
        REQUIRE (zmq_recv (rx, in_buf, MAX_SIZE, 0) == MAX_SIZE);
}

static void run (void *ctx, const char *transport, size_t size, int report)
{
    char endpoint[256];
    void *rx = zmq_socket (ctx, ZMQ_PAIR);
    void *tx = zmq_socket (ctx, ZMQ_PAIR);
    int linger = 0, timeout = 10000;
    REQUIRE (zmq_setsockopt (rx, ZMQ_RCVTIMEO, &timeout, sizeof timeout) == 0);
    REQUIRE (zmq_setsockopt (tx, ZMQ_LINGER, &linger, sizeof linger) == 0);
    REQUIRE (zmq_setsockopt (rx, ZMQ_LINGER, &linger, sizeof linger) == 0);
    if (strcmp (transport, "tcp") == 0)
        snprintf (endpoint, sizeof endpoint, "tcp://127.0.0.1:*");
    else
        snprintf (endpoint, sizeof endpoint, "%s:///tmp/ferromq-alloc-%d-%zu", transport,
                  (int) getpid (), size);
    if (strcmp (transport, "inproc") == 0)
        snprintf (endpoint, sizeof endpoint, "inproc://alloc-%zu", size);
    REQUIRE (zmq_bind (rx, endpoint) == 0);
    size_t len = sizeof endpoint;
    REQUIRE (zmq_getsockopt (rx, ZMQ_LAST_ENDPOINT, endpoint, &len) == 0);
    REQUIRE (zmq_connect (tx, endpoint) == 0);

    fill_pools (tx, rx);
    memset (costs, 0, sizeof costs);
    counting = 0;
    for (int w = 0; w < WARM_UP; w++)
        window (tx, rx, size);
    counting = 1;
    for (int w = 0; w < MEASURED; w++)
        window (tx, rx, size);
    counting = 0;

    for (int c = 0; c < CALLS; c++) {
        if (report)
            printf ("%s %zu %s most %lu total %lu\n", transport, size, names[c],
                    costs[c].most, costs[c].total);
        else if (costs[c].most > allowed[c]) {
            printf ("%s %zu B: %s allocated %lu times in one call (%lu in all), at most "
                    "%lu allowed\n",
                    transport, size, names[c], costs[c].most, costs[c].total, allowed[c]);
            failures++;
        }
    }
    REQUIRE (zmq_close (tx) == 0);
    REQUIRE (zmq_close (rx) == 0);
}

int main (int argc, char *argv[])
{
    int report = argc > 1 && strcmp (argv[1], "report") == 0;
    /* The counter sees allocations made inside the library: a body over any pool's size is
       one allocation of its own in either library. */
    zmq_msg_t big;
    unsigned long before = allocs;
    REQUIRE (zmq_msg_init_size (&big, 4 * MAX_SIZE) == 0);
    REQUIRE (allocs - before >= 1);
    zmq_msg_close (&big);

    out_buf = malloc (MAX_SIZE);
    in_buf = malloc (MAX_SIZE);
    REQUIRE (out_buf && in_buf);
    memset (out_buf, 0, MAX_SIZE);
    void *ctx = zmq_ctx_new ();
    const char *transports[] = {"inproc", "tcp", "ipc"};
    const size_t sizes[] = {64, 1024, 64 * 1024, MAX_SIZE};
    for (int t = 0; t < 3; t++)
        for (int s = 0; s < 4; s++)
            run (ctx, transports[t], sizes[s], report);
    REQUIRE (zmq_ctx_term (ctx) == 0);
    free (out_buf);
    free (in_buf);
    if (!report && failures == 0)
        printf ("ok\n");
    return failures ? 1 : 0;
}
