/* A peer's connection reaches a socket while the socket's thread polls it (issue 18).

   ferromq's zmq_poll and ZMQ_EVENTS take the socket's core as its owner, with no locked
   instruction, and a connection's Attach arriving meanwhile is applied by whichever side gets
   there: the deliverer at once when the thread is outside a call, else the thread on its way
   out of the call (src/pattern/mailbox.rs). Each round a SUB is bound and subscribed, and its
   thread polls it in a tight loop (zmq_poll with timeout 0, or ZMQ_EVENTS); an XPUB connects,
   and the thread stops polling as soon as it sees that the connect returned. Then:
   - block: the thread sits in a blocking zmq_poll; the XPUB must see the SUB's subscription
     (the Attach applied while the thread polls or sleeps in poll(2)), and the message it then
     publishes must wake the poll;
   - sleep (ferromq only): the thread sleeps outside any call until the XPUB has seen the
     subscription, so an Attach left to the poll's exit must have been applied on that exit.
     libzmq applies a bound socket's commands only inside its next call, so it is skipped there.
   A command left unapplied shows as a missing subscription (the XPUB's 5 s receive times out);
   a lost wake-up as a poll that never returns (10 s). Built by tests/tests/c_poll_race.rs
   against ferromq and against real libzmq (-DREAL_LIBZMQ). */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "testutil.h"

enum loop { POLL, EVENTS };
enum after { BLOCK, SLEEP };

struct round
{
    void *sub;
    enum loop loop;
    enum after after;
    atomic_int calling, connected, stopped, seen;
    /* Written by the SUB's thread, read by the main thread after joining it. */
    int spin_failed, polled, received;
};

static void spin_once (struct round *r)
{
    if (r->loop == POLL) {
        zmq_pollitem_t item = {r->sub, 0, ZMQ_POLLIN, 0};
        if (zmq_poll (&item, 1, 0) != 0)
            r->spin_failed = 1;
    } else {
        int events = -1;
        size_t len = sizeof events;
        /* Nothing was published yet. */
        if (zmq_getsockopt (r->sub, ZMQ_EVENTS, &events, &len) != 0 || (events & ZMQ_POLLIN))
            r->spin_failed = 1;
    }
}

static void sub_thread (void *arg)
{
    struct round *r = arg;
    spin_once (r);
    atomic_store (&r->calling, 1);
    while (!atomic_load (&r->connected))
        spin_once (r);
    atomic_store (&r->stopped, 1);
    if (r->after == SLEEP) {
        struct timespec tick = {0, 100 * 1000};
        for (int i = 0; i < 100000 && !atomic_load (&r->seen); i++)
            nanosleep (&tick, NULL);
    }
    zmq_pollitem_t item = {r->sub, 0, ZMQ_POLLIN, 0};
    r->polled = zmq_poll (&item, 1, 10000);
    char buf[16];
    r->received = r->polled == 1 ? recv_str (r->sub, buf, sizeof buf, ZMQ_DONTWAIT) : -1;
}

static void one_round (void *ctx, const char *bind_to, enum loop loop, enum after after)
{
    struct round r = {0};
    r.loop = loop;
    r.after = after;
    r.sub = zmq_socket (ctx, ZMQ_SUB);
    set_timeouts (r.sub, 5000);
    char endpoint[256];
    CHECK (bind_resolved (r.sub, bind_to, endpoint, sizeof endpoint) == 0);
    CHECK (zmq_setsockopt (r.sub, ZMQ_SUBSCRIBE, "topic", 5) == 0);
    void *thread = zmq_threadstart (sub_thread, &r);
    while (!atomic_load (&r.calling))
        ;
    void *xpub = zmq_socket (ctx, ZMQ_XPUB);
    set_timeouts (xpub, 5000);
    CHECK (zmq_connect (xpub, endpoint) == 0);
    atomic_store (&r.connected, 1);
    char sub[16];
    int n = recv_str (xpub, sub, sizeof sub, 0);
    CHECK (n == 6 && memcmp (sub, "\1topic", 6) == 0);
    atomic_store (&r.seen, 1);
    /* Published once the thread has stopped spinning, which expects nothing readable. */
    while (!atomic_load (&r.stopped))
        ;
    CHECK (send_str (xpub, "topic!", 0) == 6);
    zmq_threadclose (thread);
    CHECK (!r.spin_failed);
    CHECK (r.polled == 1);
    CHECK (r.received == 6);
    CHECK (zmq_close (xpub) == 0);
    CHECK (zmq_close (r.sub) == 0);
}

int main (void)
{
    void *ctx = zmq_ctx_new ();
    char name[64];
    for (int i = 0; i < 150 && !failures; i++) {
        for (int loop = POLL; loop <= EVENTS; loop++) {
            snprintf (name, sizeof name, "inproc://poll-race-%d-%d-b", i, loop);
            one_round (ctx, name, (enum loop) loop, BLOCK);
#ifndef REAL_LIBZMQ
            snprintf (name, sizeof name, "inproc://poll-race-%d-%d-s", i, loop);
            one_round (ctx, name, (enum loop) loop, SLEEP);
#endif
        }
    }
    for (int i = 0; i < 20 && !failures; i++) {
        for (int loop = POLL; loop <= EVENTS; loop++) {
            one_round (ctx, "tcp://127.0.0.1:*", (enum loop) loop, BLOCK);
#ifndef REAL_LIBZMQ
            one_round (ctx, "tcp://127.0.0.1:*", (enum loop) loop, SLEEP);
#endif
        }
    }
    CHECK (zmq_ctx_term (ctx) == 0);
    return report ();
}
