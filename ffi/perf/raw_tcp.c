/* The ceiling under libzmq's tcp and ipc throughput tools: the same bytes through loopback tcp
 * or a Unix socket with no ZMQ at all, two processes, blocking write()/read(), so each side can
 * be placed and measured (taskset, perf stat) as ffi/perf/compare.sh places local_thr and
 * remote_thr (its FLOOR=1 runs this beside them).
 *
 *   cc -O2 -o raw_tcp ffi/perf/raw_tcp.c
 *   taskset -c 0 ./raw_tcp recv 5555 262144 20000 &
 *   sleep 0.2; taskset -c 1 ./raw_tcp send 5555 262144 20000 [BUFFERS [WRITE]]
 *
 * 5555 may be any ENDPOINT of raw_socket.h: "tcp://127.0.0.1:5555", or "ipc:///tmp/raw.ipc"
 * for a Unix socket. The receiver prints "mean throughput: N [msg/s]" as local_thr does, timed
 * from the end of the first message to the end of the last. Each message is SIZE bytes; the
 * receiver reads each into one SIZE buffer with blocking reads (each returns what has
 * arrived). The sender writes message k from buffer k % BUFFERS (1000 by default: ZMQ's
 * default SNDHWM keeps up to that many bodies in flight, so a ZMQ sender reads from that
 * working set), WRITE bytes per write() call (default: the whole message). Buffers are
 * malloc'd and left unwritten, as remote_thr leaves its message bodies. MSGS=N (environment)
 * writes N messages per writev instead.
 *
 * Environment, to move the raw stream towards what a ZMQ library does (give both sides the
 * same HEAD): TOUCH=1 fills the send buffers first; SRC=N starts them N bytes into a page
 * (0); HEAD=N writes N header bytes before each message in the same writev and reads them
 * on their own, as a ZMTP frame header (9 for a long frame); OFFSET=N starts the receive
 * buffer N bytes into a page (2048, where ferromq puts large bodies); RBUFS=N receives
 * message k into buffer k % N (1); RAW_SNDBUF as in raw_socket.h.
 */
#include "raw_socket.h"

#include <sys/uio.h>

int main (int argc, char **argv)
{
    if (argc < 5) {
        fprintf (stderr, "usage: raw_tcp recv|send ENDPOINT SIZE COUNT [BUFFERS [WRITE]]\n");
        return 1;
    }
    int sending = strcmp (argv[1], "send") == 0;
    const char *endpoint = argv[2];
    size_t size = strtoul (argv[3], NULL, 10);
    long count = atol (argv[4]);
    long buffers = argc > 5 ? atol (argv[5]) : 1000;
    size_t chunk = argc > 6 ? strtoul (argv[6], NULL, 10) : size;
    if (size == 0 || count < 2 || buffers < 1 || chunk == 0)
        return 1;

    if (sending) {
        int s = raw_connect (endpoint);
        /* SRC: where in a page each buffer starts (default: page-aligned, as ferromq's
         * pooled bodies are). HEAD: bytes written before each message in the same writev
         * (as a ZMTP frame header goes before its body; 9 for a long frame). */
        size_t src = getenv ("SRC") ? strtoul (getenv ("SRC"), NULL, 10) % 4096 : 0;
        size_t head = getenv ("HEAD") ? strtoul (getenv ("HEAD"), NULL, 10) : 0;
        static char header[4096];
        if (head > sizeof header)
            return 1;
        char **bufs = malloc (buffers * sizeof *bufs);
        for (long i = 0; i < buffers; i++) {
            bufs[i] = raw_buffer (size, src);
            if (getenv ("TOUCH"))
                memset (bufs[i], 1, size);
        }
        /* MSGS=N: N messages (each with its HEAD) per writev, as a ZMQ engine that queues
         * several bodies by reference writes them (ferromq: up to 1 MiB per write); WRITE
         * is ignored then. */
        long per = getenv ("MSGS") ? atol (getenv ("MSGS")) : 1;
        if (per > 1) {
            struct iovec *iov = malloc (2 * per * sizeof *iov);
            if (!iov)
                die ("malloc");
            for (long k = 0; k < count; k += per) {
                int m = 0;
                for (long j = k; j < k + per && j < count; j++) {
                    if (head)
                        iov[m++] = (struct iovec){header, head};
                    iov[m++] = (struct iovec){bufs[j % buffers], size};
                }
                struct iovec *v = iov;
                while (m > 0) {
                    ssize_t n = writev (s, v, m);
                    if (n <= 0)
                        die ("write");
                    while (m > 0 && (size_t) n >= v->iov_len) {
                        n -= v->iov_len;
                        v++;
                        m--;
                    }
                    if (m > 0) {
                        v->iov_base = (char *) v->iov_base + n;
                        v->iov_len -= n;
                    }
                }
            }
            close (s);
            return 0;
        }
        for (long k = 0; k < count; k++) {
            char *p = bufs[k % buffers];
            size_t h = head;
            for (size_t off = 0; off < size;) {
                size_t len = size - off < chunk ? size - off : chunk;
                struct iovec iov[2] = {{header + head - h, h}, {p + off, len}};
                ssize_t n = writev (s, iov + (h == 0), 1 + (h != 0));
                if (n <= 0)
                    die ("write");
                if ((size_t) n < h) {
                    h -= n;
                    continue;
                }
                off += n - h;
                h = 0;
            }
        }
        close (s);
        return 0;
    }

    int s = raw_accept (endpoint);
    /* Where in a page the receive buffer starts (OFFSET, default 2048, where ferromq places
     * large bodies): the kernel's copy is slow at some distances between its source and
     * destination on some CPUs (see docs/performance.md, "tcp 256 KiB latency"). */
    size_t offset = getenv ("OFFSET") ? strtoul (getenv ("OFFSET"), NULL, 10) % 4096 : 2048;
    /* RBUFS: receive message k into buffer k % RBUFS (default 1), to see what a receive
     * buffer that is not the one just read costs (cache misses on the copy's stores). */
    long rbufs = getenv ("RBUFS") ? atol (getenv ("RBUFS")) : 1;
    if (rbufs < 1)
        return 1;
    char **bufs = malloc (rbufs * sizeof *bufs);
    for (long i = 0; i < rbufs; i++)
        bufs[i] = raw_buffer (size, offset);
    size_t head = getenv ("HEAD") ? strtoul (getenv ("HEAD"), NULL, 10) : 0;
    double t0 = 0;
    for (long k = 0; k < count; k++) {
        char *buf = bufs[k % rbufs];
        read_all (s, buf, head);
        read_all (s, buf, size);
        if (k == 0)
            t0 = now ();
    }
    double t = now () - t0;
    printf ("message size: %zu [B]\nmessage count: %ld\n", size, count);
    printf ("mean throughput: %d [msg/s]\n", (int) ((count - 1) / t));
    return 0;
}
