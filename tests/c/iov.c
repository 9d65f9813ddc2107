/* zmq_sendiov / zmq_recviov as libzmq 4.3 has them: sendiov sends each element as a part with
   the caller's flags but never SNDMORE on the last, and returns the last part's size; recviov
   fills at most *count elements with malloc'ed copies (the caller frees them), stops after a
   part without MORE, leaves further parts queued, and returns (and writes to *count) the number
   of parts. Checks first the socket (ENOTSOCK), then the arguments (EINVAL).
   Prints "ok", or names the failed checks and exits 1. */
#define _POSIX_C_SOURCE 200809L
#include <sys/uio.h>

#include "testutil.h"

int main (void)
{
    void *ctx = zmq_ctx_new ();
    void *out = zmq_socket (ctx, ZMQ_PAIR);
    void *in = zmq_socket (ctx, ZMQ_PAIR);
    set_timeouts (in, 2000);
    CHECK (zmq_bind (in, "inproc://iov") == 0);
    CHECK (zmq_connect (out, "inproc://iov") == 0);

    char a[] = "first", b[] = "", c[] = "third part";
    struct iovec parts[3] = {{a, 5}, {b, 0}, {c, 10}};
    CHECK (zmq_sendiov (out, parts, 3, ZMQ_SNDMORE) == 10);

    struct iovec got[2];
    size_t count = 2;
    CHECK (zmq_recviov (in, got, &count, 0) == 2);
    CHECK (count == 2);
    CHECK (got[0].iov_len == 5 && memcmp (got[0].iov_base, "first", 5) == 0);
    CHECK (got[1].iov_len == 0);
    CHECK (rcvmore (in) == 1); /* the third part is still queued */
    free (got[0].iov_base);
    free (got[1].iov_base);
    count = 2;
    CHECK (zmq_recviov (in, got, &count, 0) == 1);
    CHECK (count == 1);
    CHECK (got[0].iov_len == 10 && memcmp (got[0].iov_base, "third part", 10) == 0);
    free (got[0].iov_base);

    /* Without SNDMORE every element is a message of its own. */
    CHECK (zmq_sendiov (out, parts, 2, 0) == 0);
    count = 2;
    CHECK (zmq_recviov (in, got, &count, 0) == 1);
    CHECK (count == 1 && got[0].iov_len == 5);
    free (got[0].iov_base);
    count = 2;
    CHECK (zmq_recviov (in, got, &count, 0) == 1);
    CHECK (count == 1 && got[0].iov_len == 0);
    free (got[0].iov_base);

    count = 2;
    CHECK_ERR (zmq_recviov (in, got, &count, ZMQ_DONTWAIT), EAGAIN);
    CHECK (count == 0);
    count = 0;
    CHECK_ERR (zmq_recviov (in, got, &count, 0), EINVAL);
    count = 1;
    CHECK_ERR (zmq_recviov (in, NULL, &count, 0), EINVAL);
    CHECK_ERR (zmq_recviov (in, got, NULL, 0), EINVAL);
    CHECK_ERR (zmq_sendiov (out, parts, 0, 0), EINVAL);
    CHECK_ERR (zmq_sendiov (out, NULL, 1, 0), EINVAL);
    CHECK_ERR (zmq_sendiov (NULL, NULL, 0, 0), ENOTSOCK);
    CHECK_ERR (zmq_recviov (NULL, NULL, NULL, 0), ENOTSOCK);

    zmq_close (out);
    zmq_close (in);
    CHECK (zmq_ctx_term (ctx) == 0);
    return report ();
}
