/* One-off measurement for docs/performance.md (issue 16): seal+open with a precomputed key.
   cc -O2 curve_box_sodium.c -lsodium && ./a.out */
#include <sodium.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(void){
  if(sodium_init()<0)return 1;
  unsigned char pk1[32],sk1[32],pk2[32],sk2[32],k1[32],k2[32],n[24]={0};
  crypto_box_keypair(pk1,sk1);crypto_box_keypair(pk2,sk2);
  if(crypto_box_beforenm(k1,pk2,sk1)!=0||crypto_box_beforenm(k2,pk1,sk2)!=0)return 1;
  size_t sizes[2]={64,65536};
  for(int s=0;s<2;s++){size_t len=sizes[s];unsigned char*m=calloc(len,1),*c=malloc(len+16),*o=malloc(len);
    long iters= len==64? 2000000:20000;
    double t0=now();
    for(long i=0;i<iters;i++){n[0]=i;crypto_box_easy_afternm(c,m,len,n,k1); if(crypto_box_open_easy_afternm(o,c,len+16,n,k2)!=0)return 1;}
    double dt=now()-t0; printf("libsodium %zu B: %.1f ns per seal+open, %.0f MB/s\n",len,dt/iters*1e9,len*iters/dt/1e6);}
  return 0;}
