/* Throughput through zmq_send and zmq_recv, one process: a PUSH on a second thread sends
   message-count messages of message-size bytes from one buffer of its own (zmq_send copies
   it), and the PULL in the main thread receives each into a buffer of its own (zmq_recv),
   printing messages per second from the first message on. Most C programs send this way;
   libzmq's perf programs use zmq_msg_t only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

static const char *endpoint;
static size_t message_size;
static int message_count;

static void sender (void *ctx)
{
    void *s = zmq_socket (ctx, ZMQ_PUSH);
    char *buf = malloc (message_size ? message_size : 1);
    if (!s || !buf || zmq_connect (s, endpoint) != 0) {
        printf ("error in zmq_socket/zmq_connect: %s\n", zmq_strerror (zmq_errno ()));
        exit (1);
    }
    memset (buf, 'x', message_size);
    for (int i = 0; i != message_count; i++) {
        if (zmq_send (s, buf, message_size, 0) != (int) message_size) {
            printf ("error in zmq_send: %s\n", zmq_strerror (zmq_errno ()));
            exit (1);
        }
    }
    free (buf);
    zmq_close (s);
}

int main (int argc, char *argv[])
{
    if (argc != 4) {
        printf ("usage: send_thr <endpoint> <message-size> <message-count>\n");
        return 1;
    }
    endpoint = argv[1];
    message_size = (size_t) atoi (argv[2]);
    message_count = atoi (argv[3]);
    if (message_count < 2) {
        printf ("message-count must be at least 2\n");
        return 1;
    }
    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_PULL);
    char *buf = malloc (message_size ? message_size : 1);
    if (!s || !buf || zmq_bind (s, endpoint) != 0) {
        printf ("error in zmq_socket/zmq_bind: %s\n", zmq_strerror (zmq_errno ()));
        return 1;
    }
    void *thread = zmq_threadstart (sender, ctx);
    void *watch = NULL;
    for (int i = 0; i != message_count; i++) {
        if (zmq_recv (s, buf, message_size, 0) != (int) message_size
            || (message_size && buf[message_size - 1] != 'x')) {
            printf ("error in zmq_recv or message of incorrect size\n");
            return 1;
        }
        if (i == 0)
            watch = zmq_stopwatch_start ();
    }
    unsigned long elapsed = zmq_stopwatch_stop (watch);
    zmq_threadclose (thread);
    if (elapsed == 0)
        elapsed = 1;
    printf ("message size: %d [B]\n", (int) message_size);
    printf ("message count: %d\n", message_count);
    printf ("mean throughput: %d [msg/s]\n",
            (int) ((double) (message_count - 1) * 1000000 / elapsed));
    free (buf);
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
