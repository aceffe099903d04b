/* The machine's memory copy rate: what bounds a collective on shared memory.
 *
 * Each of 1 to T threads (argv[2], default 2) copies its own buffer of
 * argv[1] bytes (default 256 MiB) into another, all at once, with memcpy
 * and (on x86-64) with streaming stores that bypass the caches, as the
 * runtime's replay does for buffers larger than the caches; the best of 10
 * rounds of each is kept. Prints, per thread count, the bytes copied
 * per second by all threads together (10^9 bytes/s). The rate depends on
 * where the buffers live (caches or memory), so a collective is compared
 * with copies whose buffers add up to its own: a collective that must copy
 * B bytes takes at least B over the best rate.
 *
 *   gcc -O2 -pthread copy_bandwidth.c -o copy_bandwidth && ./copy_bandwidth 268435456 2
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __x86_64__
#include <emmintrin.h>
#endif

static size_t bytes;
static pthread_barrier_t start;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* dst = src with non-temporal stores (dst 16-byte aligned: malloc's). */
static void stream_copy(char *dst, const char *src, size_t n) {
#ifdef __x86_64__
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m128i a = _mm_loadu_si128((const __m128i *)(src + i));
    __m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
    __m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));
    _mm_stream_si128((__m128i *)(dst + i), a);
    _mm_stream_si128((__m128i *)(dst + i + 16), b);
    _mm_stream_si128((__m128i *)(dst + i + 32), c);
    _mm_stream_si128((__m128i *)(dst + i + 48), d);
  }
  memcpy(dst + i, src + i, n - i);
  _mm_sfence();
#else
  memcpy(dst, src, n);
#endif
}

static void *copier(void *out) {
  char *src = malloc(bytes), *dst = malloc(bytes);
  if (!src || !dst) {
    fprintf(stderr, "copy_bandwidth: out of memory\n");
    exit(2);
  }
  /* Touch both buffers first: page faults are not copies. */
  memset(src, 1, bytes);
  memset(dst, 2, bytes);
  double best = 1e30;
  for (int round = 0; round < 20; round++) {
    pthread_barrier_wait(&start);
    double t0 = now();
    if (round % 2)
      stream_copy(dst, src, bytes);
    else
      memcpy(dst, src, bytes);
    double dt = now() - t0;
    if (dt < best) best = dt;
  }
  *(double *)out = best;
  free(src);
  free(dst);
  return NULL;
}

int main(int argc, char **argv) {
  bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)256 << 20;
  int most = argc > 2 ? atoi(argv[2]) : 2;
  if (bytes == 0 || most < 1 || most > 64) {
    fprintf(stderr, "usage: copy_bandwidth [bytes per thread] [max threads]\n");
    return 2;
  }
  for (int t = 1; t <= most; t++) {
    pthread_t th[64];
    double best[64], slowest = 0;
    pthread_barrier_init(&start, NULL, t);
    for (int i = 0; i < t; i++) pthread_create(&th[i], NULL, copier, &best[i]);
    for (int i = 0; i < t; i++) {
      pthread_join(th[i], NULL);
      if (best[i] > slowest) slowest = best[i];
    }
    pthread_barrier_destroy(&start);
    printf("%d %.3f\n", t, t * (double)bytes / slowest / 1e9);
  }
  return 0;
}
