#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static void movsb(void *d, const void *s, size_t n){ __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) :: "memory"); }
static double now(){ struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec*1e9+t.tv_nsec; }
int main(){
  size_t n = 253953; char *src = aligned_alloc(4096, 1<<20), *dst = aligned_alloc(4096, 1<<20);
  memset(src,1,1<<20); memset(dst,2,1<<20);
  int srcoffs[] = {0, 0x70};
  int deltas[] = {0, 1, 5, 8, 14, 24, 32, 63, 64, 100, 256, 2048, 4000, 4090};
  for (int so = 0; so < 2; so++) for (int i = 0; i < 14; i++) {
    char *s = src + srcoffs[so], *d = dst + srcoffs[so] + deltas[i];
    double best = 1e18;
    for (int r = 0; r < 200; r++) { double t0 = now(); movsb(d, s, n); double t = now() - t0; if (t < best) best = t; }
    printf("src off %#x, dst-src %4d mod 4096: %7.1f us\n", srcoffs[so], deltas[i], best/1000);
  }
}
