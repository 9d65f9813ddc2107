/* An RFC 27 ZAP handler for the C tests: admits every request with one User-Id and one
   metadata frame. Shared by zap_metadata.c and prop_names.c. Include after testutil.h. */
#ifndef FERROMQ_ZAP_ADMIT_H
#define FERROMQ_ZAP_ADMIT_H

#include <pthread.h>
#include <stdint.h>

/* Appends one property in the wire form (RFC 37: name length, name, 4-octet value length,
   value) and returns its length; the caller sees that it fits. */
static inline size_t put_property (unsigned char *out, const char *name, const char *value)
{
    size_t n = strlen (name), v = strlen (value), len = 0;
    out[len++] = (unsigned char) n;
    memcpy (out + len, name, n);
    len += n;
    out[len++] = 0;
    out[len++] = 0;
    out[len++] = (unsigned char) (v >> 8);
    out[len++] = (unsigned char) v;
    memcpy (out + len, value, v);
    return len + v;
}

/* Answers every request on the REP socket `h` with 200, `user_id` and `meta` until the context
   terminates; then closes `h`. */
static inline void zap_admit_all (void *h, const char *user_id, const unsigned char *meta,
                                  size_t meta_len)
{
    for (;;) {
        zmq_msg_t frames[16];
        int n = 0, more = 1;
        while (more && n < 16) {
            zmq_msg_init (&frames[n]);
            if (zmq_msg_recv (&frames[n], h, 0) < 0) {
                for (int i = 0; i <= n; i++)
                    zmq_msg_close (&frames[i]);
                zmq_close (h); /* the context is terminating */
                return;
            }
            more = zmq_msg_more (&frames[n]);
            n++;
        }
        /* frames[0] is the request's version, frames[1] its id. */
        zmq_send (h, "1.0", 3, ZMQ_SNDMORE);
        zmq_send (h, zmq_msg_data (&frames[1]), zmq_msg_size (&frames[1]), ZMQ_SNDMORE);
        zmq_send (h, "200", 3, ZMQ_SNDMORE);
        zmq_send (h, "OK", 2, ZMQ_SNDMORE);
        zmq_send (h, user_id, strlen (user_id), ZMQ_SNDMORE);
        zmq_send (h, meta, meta_len, 0);
        for (int i = 0; i < n; i++)
            zmq_msg_close (&frames[i]);
    }
}

/* Binds the context's ZAP endpoint and runs `handler` on it in a thread of its own. */
static inline int zap_start (void *ctx, void *(*handler) (void *), pthread_t *thread)
{
    void *h = zmq_socket (ctx, ZMQ_REP);
    if (zmq_bind (h, "inproc://zeromq.zap.01") != 0)
        return -1;
    return pthread_create (thread, NULL, handler, h);
}

#endif
