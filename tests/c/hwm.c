/* HWMs on pipes that already exist (issue 13, defect 6), as libzmq 4.3 sets them:
   - inproc connect before bind: the pipe made at the connect takes the binder's HWM too when
     it binds (sender's SNDHWM + receiver's RCVHWM);
   - ZMQ_SNDHWM set after connect reaches the existing pipe: over inproc (plus the peer's
     RCVHWM) and on a tcp connect whose peer is not there yet (the pipe waits, nothing drains
     it).
   Each case counts the non-blocking sends a PUSH accepts before EAGAIN. */
#include "testutil.h"

#include <unistd.h>

static int sends_until_eagain (void *s)
{
    int n = 0;
    while (n < 100000) {
        if (zmq_send (s, "m", 1, ZMQ_DONTWAIT) != 1) {
            CHECK (zmq_errno () == EAGAIN);
            break;
        }
        n++;
    }
    return n;
}

static void set_int (void *s, int option, int value)
{
    CHECK (zmq_setsockopt (s, option, &value, sizeof value) == 0);
}

static void expect_count (const char *what, int got, int want)
{
    if (got != want) {
        fprintf (stderr, "%s: %d sends before EAGAIN, libzmq takes %d\n", what, got,
                 want);
        failures++;
    }
}

int main (void)
{
    void *ctx = zmq_ctx_new ();

    /* inproc, connect before bind: 5 + 7. */
    {
        void *push = zmq_socket (ctx, ZMQ_PUSH);
        void *pull = zmq_socket (ctx, ZMQ_PULL);
        set_int (push, ZMQ_SNDHWM, 5);
        set_int (pull, ZMQ_RCVHWM, 7);
        CHECK (zmq_connect (push, "inproc://hwm-before-bind") == 0);
        CHECK (zmq_bind (pull, "inproc://hwm-before-bind") == 0);
        expect_count ("inproc connect before bind", sends_until_eagain (push), 12);
        zmq_close (push);
        zmq_close (pull);
    }

    /* inproc, bind then connect, SNDHWM lowered after the connect: 4 + 3. */
    {
        void *push = zmq_socket (ctx, ZMQ_PUSH);
        void *pull = zmq_socket (ctx, ZMQ_PULL);
        set_int (pull, ZMQ_RCVHWM, 3);
        CHECK (zmq_bind (pull, "inproc://hwm-after-connect") == 0);
        CHECK (zmq_connect (push, "inproc://hwm-after-connect") == 0);
        set_int (push, ZMQ_SNDHWM, 4);
        expect_count ("inproc SNDHWM after connect", sends_until_eagain (push), 7);
        zmq_close (push);
        zmq_close (pull);
    }

    /* tcp to a port nobody listens on: the connect's pipe waits with SNDHWM messages. */
    {
        void *probe = zmq_socket (ctx, ZMQ_PULL);
        char endpoint[256];
        CHECK (bind_resolved (probe, "tcp://127.0.0.1:*", endpoint, sizeof endpoint) == 0);
        zmq_close (probe); /* the port is free again, and nothing will accept on it */
        void *push = zmq_socket (ctx, ZMQ_PUSH);
        int linger = 0;
        CHECK (zmq_setsockopt (push, ZMQ_LINGER, &linger, sizeof linger) == 0);
        CHECK (zmq_connect (push, endpoint) == 0);
        set_int (push, ZMQ_SNDHWM, 10);
        expect_count ("tcp SNDHWM after connect", sends_until_eagain (push), 10);
        zmq_close (push);
    }

    zmq_ctx_term (ctx);
    return report ();
}
