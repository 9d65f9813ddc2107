/* The socket-free part of the libzmq C API, as a C program uses it: messages (zero copy with a
   free function called exactly once), Z85, atomic counters, timers, errno for NULL pointers and
   zmq_version. Prints "ok" and exits 0, or names the failed check and exits 1.
   Built against ferromq by tests/tests/c_msg.rs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

static int failures = 0;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf (stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,  \
                     #cond);                                                   \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static int free_calls = 0;
static void *freed_data = NULL;

static void count_free (void *data, void *hint)
{
    CHECK (hint == (void *) &free_calls);
    freed_data = data;
    free_calls++;
    free (data);
}

static void test_version (void)
{
    int major = 0, minor = 0, patch = 0;
    zmq_version (&major, &minor, &patch);
    CHECK (major == 4 && minor == 3 && patch == 5);
    CHECK (ZMQ_MAKE_VERSION (major, minor, patch) == ZMQ_VERSION);
    CHECK (zmq_has ("ipc") == 1);
    CHECK (zmq_has ("curve") == 1);
}

static void test_zero_copy_free_once (void)
{
    const size_t size = 1000;
    char *data = (char *) malloc (size);
    memset (data, 'x', size);
    zmq_msg_t a, b, c;
    CHECK (zmq_msg_init_data (&a, data, size, count_free, &free_calls) == 0);
    CHECK (zmq_msg_data (&a) == data);
    CHECK (zmq_msg_size (&a) == size);
    CHECK (zmq_msg_get (&a, ZMQ_SHARED) == 0);

    CHECK (zmq_msg_init (&b) == 0);
    CHECK (zmq_msg_copy (&b, &a) == 0);
    CHECK (zmq_msg_data (&b) == data);
    CHECK (zmq_msg_get (&a, ZMQ_SHARED) == 1);
    CHECK (zmq_msg_init (&c) == 0);
    CHECK (zmq_msg_move (&c, &b) == 0);
    CHECK (zmq_msg_size (&b) == 0);

    CHECK (zmq_msg_close (&a) == 0);
    CHECK (zmq_msg_close (&b) == 0);
    CHECK (free_calls == 0);
    CHECK (zmq_msg_close (&c) == 0);
    CHECK (free_calls == 1);
    CHECK (freed_data == data);

    /* A closed message is no longer a message: libzmq answers EFAULT. */
    CHECK (zmq_msg_close (&c) == -1 && zmq_errno () == EFAULT);
    CHECK (free_calls == 1);
}

static void test_init_size (void)
{
    zmq_msg_t m;
    CHECK (zmq_msg_init_size (&m, 5) == 0);
    memcpy (zmq_msg_data (&m), "hello", 5);
    CHECK (zmq_msg_size (&m) == 5);
    CHECK (memcmp (zmq_msg_data (&m), "hello", 5) == 0);
    CHECK (zmq_msg_more (&m) == 0);
    CHECK (zmq_msg_get (&m, ZMQ_MORE) == 0);
    CHECK (zmq_msg_get (&m, 12345) == -1 && errno == EINVAL);
    CHECK (zmq_msg_set (&m, ZMQ_MORE, 1) == -1 && errno == EINVAL);
    CHECK (zmq_msg_gets (&m, "Socket-Type") == NULL && errno == EINVAL);
    CHECK (zmq_msg_close (&m) == 0);

    zmq_msg_t zeroed;
    memset (&zeroed, 0, sizeof zeroed);
    CHECK (zmq_msg_close (&zeroed) == -1 && errno == EFAULT);
}

static void test_z85 (void)
{
    /* ZeroMQ RFC 32 test vector. */
    const uint8_t binary[8] = {0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B};
    char text[11];
    CHECK (zmq_z85_encode (text, binary, 8) == text);
    CHECK (strcmp (text, "HelloWorld") == 0);
    uint8_t decoded[8];
    CHECK (zmq_z85_decode (decoded, "HelloWorld") == decoded);
    CHECK (memcmp (decoded, binary, 8) == 0);
    CHECK (zmq_z85_encode (text, binary, 7) == NULL && errno == EINVAL);
    CHECK (zmq_z85_decode (decoded, "Hello") != NULL);
    CHECK (zmq_z85_decode (decoded, "Hell") == NULL && errno == EINVAL);
}

static void test_atomic_counter (void)
{
    void *counter = zmq_atomic_counter_new ();
    CHECK (counter != NULL);
    CHECK (zmq_atomic_counter_value (counter) == 0);
    CHECK (zmq_atomic_counter_inc (counter) == 0);
    CHECK (zmq_atomic_counter_inc (counter) == 1);
    CHECK (zmq_atomic_counter_dec (counter) == 1);
    CHECK (zmq_atomic_counter_dec (counter) == 0);
    zmq_atomic_counter_set (counter, 7);
    CHECK (zmq_atomic_counter_value (counter) == 7);
    zmq_atomic_counter_destroy (&counter);
    CHECK (counter == NULL);
}

static void on_timer (int timer_id, void *arg)
{
    (void) timer_id;
    (*(int *) arg)++;
}

static void test_timers (void)
{
    int fired = 0;
    void *timers = zmq_timers_new ();
    int id = zmq_timers_add (timers, 0, on_timer, &fired);
    CHECK (id > 0);
    CHECK (zmq_timers_timeout (timers) == 0);
    CHECK (zmq_timers_execute (timers) == 0);
    CHECK (fired == 1);
    CHECK (zmq_timers_cancel (timers, id) == 0);
    CHECK (zmq_timers_cancel (timers, id) == -1 && errno == EINVAL);
    CHECK (zmq_timers_execute (timers) == 0);
    CHECK (fired == 1);
    CHECK (zmq_timers_timeout (timers) == -1);
    CHECK (zmq_timers_destroy (&timers) == 0 && timers == NULL);
}

static void test_null_pointers (void)
{
    CHECK (zmq_msg_init (NULL) == -1 && zmq_errno () == EFAULT);
    CHECK (zmq_msg_init_size (NULL, 4) == -1 && errno == EFAULT);
    CHECK (zmq_msg_close (NULL) == -1 && errno == EFAULT);
    CHECK (zmq_msg_data (NULL) == NULL && errno == EFAULT);
    CHECK (zmq_z85_decode (NULL, NULL) == NULL && errno == EFAULT);
    CHECK (zmq_atomic_counter_inc (NULL) == -1 && errno == EFAULT);
    CHECK (zmq_timers_add (NULL, 1, on_timer, NULL) == -1 && errno == EFAULT);
    CHECK (zmq_curve_keypair (NULL, NULL) == -1 && errno == EFAULT);
    CHECK (strcmp (zmq_strerror (ETERM), "Context was terminated") == 0);
    CHECK (strcmp (zmq_strerror (EINVAL), strerror (EINVAL)) == 0);
}

static void worker (void *arg)
{
    zmq_atomic_counter_inc (arg);
}

static void test_thread (void)
{
    void *counter = zmq_atomic_counter_new ();
    void *thread = zmq_threadstart (worker, counter);
    CHECK (thread != NULL);
    zmq_threadclose (thread);
    CHECK (zmq_atomic_counter_value (counter) == 1);
    zmq_atomic_counter_destroy (&counter);

    void *watch = zmq_stopwatch_start ();
    CHECK (zmq_stopwatch_stop (watch) < 10UL * 1000 * 1000);
}

int main (void)
{
    test_version ();
    test_zero_copy_free_once ();
    test_init_size ();
    test_z85 ();
    test_atomic_counter ();
    test_timers ();
    test_null_pointers ();
    test_thread ();
    if (failures) {
        fprintf (stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    puts ("ok");
    return 0;
}
