/* The floor under libzmq's latency tools: the same round trips through loopback tcp or a Unix
 * socket with no ZMQ at all, two processes, blocking write()/read(), placed as
 * ffi/perf/compare.sh places local_lat and remote_lat (its FLOOR=1 runs this beside them).
 *
 *   cc -O2 -o raw_lat ffi/perf/raw_lat.c
 *   taskset -c 0 ./raw_lat local ipc:///tmp/raw.ipc 262144 1000 &
 *   sleep 0.2; taskset -c 1 ./raw_lat remote ipc:///tmp/raw.ipc 262144 1000
 *
 * ENDPOINT as in raw_socket.h. As with local_lat/remote_lat, the remote side sends COUNT
 * messages of SIZE bytes, each answered by the local side with the same bytes, and prints
 * "average latency: N [us]": half the mean round trip. Each side reads a message whole
 * (blocking reads, each returning what has arrived) before it writes, so the receiver's copy
 * overlaps the sender's only as far as the kernel lets a blocked read run alongside a write,
 * which is what a ZMQ library gets too. Buffers start OFFSET bytes into a page (environment,
 * 2048, where ferromq puts large bodies: see raw_tcp.c).
 */
#include "raw_socket.h"

static void write_all (int s, const char *p, size_t size)
{
    for (size_t off = 0; off < size;) {
        ssize_t n = write (s, p + off, size - off);
        if (n <= 0)
            die ("write");
        off += n;
    }
}

int main (int argc, char **argv)
{
    if (argc != 5) {
        fprintf (stderr, "usage: raw_lat local|remote ENDPOINT SIZE COUNT\n");
        return 1;
    }
    int remote = strcmp (argv[1], "remote") == 0;
    size_t size = strtoul (argv[3], NULL, 10);
    long count = atol (argv[4]);
    if (size == 0 || count < 1)
        return 1;
    size_t offset = getenv ("OFFSET") ? strtoul (getenv ("OFFSET"), NULL, 10) : 2048;
    char *buf = raw_buffer (size, offset);
    memset (buf, 1, size);
    int s = remote ? raw_connect (argv[2]) : raw_accept (argv[2]);
    double t0 = now ();
    for (long k = 0; k < count; k++) {
        if (remote) {
            write_all (s, buf, size);
            read_all (s, buf, size);
        } else {
            read_all (s, buf, size);
            write_all (s, buf, size);
        }
    }
    if (remote) {
        double us = (now () - t0) * 1e6 / (2.0 * count);
        printf ("message size: %zu [B]\nroundtrip count: %ld\n", size, count);
        printf ("average latency: %.3f [us]\n", us);
    }
    close (s);
    return 0;
}
