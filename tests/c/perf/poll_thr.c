/* Throughput through zmq_poll, one process: a PUSH on a second thread sends message-count
   messages of message-size bytes (zmq_msg_init_size + zmq_msg_send) over <endpoint>; the PULL
   in the main thread waits in zmq_poll before every zmq_msg_recv, as a CZMQ zpoller or zloop
   reader does, and prints messages per second from the first message on. libzmq has no such
   tool: its perf programs never call zmq_poll. */
#include <stdio.h>
#include <stdlib.h>
#include <zmq.h>

static const char *endpoint;
static size_t message_size;
static int message_count;

static void sender (void *ctx)
{
    void *s = zmq_socket (ctx, ZMQ_PUSH);
    if (!s || zmq_connect (s, endpoint) != 0) {
        printf ("error in zmq_socket/zmq_connect: %s\n", zmq_strerror (zmq_errno ()));
        exit (1);
    }
    for (int i = 0; i != message_count; i++) {
        zmq_msg_t msg;
        if (zmq_msg_init_size (&msg, message_size) != 0 || zmq_msg_send (&msg, s, 0) < 0) {
            printf ("error in zmq_msg_init_size/zmq_msg_send: %s\n", zmq_strerror (zmq_errno ()));
            exit (1);
        }
    }
    zmq_close (s);
}

int main (int argc, char *argv[])
{
    if (argc != 4) {
        printf ("usage: poll_thr <endpoint> <message-size> <message-count>\n");
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
    if (!s || zmq_bind (s, endpoint) != 0) {
        printf ("error in zmq_socket/zmq_bind: %s\n", zmq_strerror (zmq_errno ()));
        return 1;
    }
    void *thread = zmq_threadstart (sender, ctx);
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    zmq_pollitem_t item = {s, 0, ZMQ_POLLIN, 0};
    void *watch = NULL;
    for (int i = 0; i != message_count; i++) {
        if (zmq_poll (&item, 1, -1) != 1 || zmq_msg_recv (&msg, s, ZMQ_DONTWAIT) < 0
            || zmq_msg_size (&msg) != message_size) {
            printf ("error in zmq_poll/zmq_msg_recv or message of incorrect size\n");
            return 1;
        }
        if (i == 0)
            watch = zmq_stopwatch_start ();
    }
    unsigned long elapsed = zmq_stopwatch_stop (watch);
    zmq_msg_close (&msg);
    zmq_threadclose (thread);
    if (elapsed == 0)
        elapsed = 1;
    printf ("message size: %d [B]\n", (int) message_size);
    printf ("message count: %d\n", message_count);
    printf ("mean throughput: %d [msg/s]\n",
            (int) ((double) (message_count - 1) * 1000000 / elapsed));
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
