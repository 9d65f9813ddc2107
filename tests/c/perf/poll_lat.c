/* Latency through zmq_poll, one process: two DEALER sockets on two threads ping-pong
   roundtrip-count messages of message-size bytes over <endpoint> (inproc, tcp or ipc), each
   side waiting in zmq_poll before every receive, as a CZMQ zpoller or zloop does; prints the
   mean one-way time in the shape of libzmq's perf/inproc_lat. libzmq has no such tool: this
   one measures the poll path its latency tools never take. */
#include "one_process.h"

static int poll_then_recv (void *s, zmq_msg_t *msg)
{
    zmq_pollitem_t item = {s, 0, ZMQ_POLLIN, 0};
    if (zmq_poll (&item, 1, -1) != 1 || !(item.revents & ZMQ_POLLIN))
        return -1;
    return zmq_msg_recv (msg, s, ZMQ_DONTWAIT);
}

static void worker (void *ctx)
{
    void *s = open_end (ctx, ZMQ_DEALER, 0);
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    for (int i = 0; i != message_count; i++) {
        if (poll_then_recv (s, &msg) < 0 || zmq_msg_send (&msg, s, 0) < 0) {
            printf ("error in zmq_poll/zmq_msg_recv/zmq_msg_send: %s\n",
                    zmq_strerror (zmq_errno ()));
            exit (1);
        }
    }
    zmq_msg_close (&msg);
    zmq_close (s);
}

int main (int argc, char *argv[])
{
    read_args (argc, argv, "poll_lat <endpoint> <message-size> <roundtrip-count>",
               "roundtrip-count", 1);
    void *ctx = zmq_ctx_new ();
    void *s = open_end (ctx, ZMQ_DEALER, 1);
    void *thread = zmq_threadstart (worker, ctx);
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    printf ("message size: %d [B]\n", (int) message_size);
    printf ("roundtrip count: %d\n", message_count);
    void *watch = zmq_stopwatch_start ();
    for (int i = 0; i != message_count; i++) {
        zmq_msg_close (&msg);
        if (zmq_msg_init_size (&msg, message_size) != 0 || zmq_msg_send (&msg, s, 0) < 0
            || poll_then_recv (s, &msg) < 0 || zmq_msg_size (&msg) != message_size) {
            printf ("error in a round trip or message of incorrect size\n");
            return 1;
        }
    }
    unsigned long elapsed = zmq_stopwatch_stop (watch);
    zmq_msg_close (&msg);
    zmq_threadclose (thread);

    double latency = (double) elapsed / (message_count * 2);
    printf ("average latency: %.3f [us]\n", latency);

    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
