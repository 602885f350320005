/*
 * sattolo.c - a plain, full-random pointer chase: the reference for cxlchar's
 * `--order random` latency (used by ci/compare-anchors.sh; not part of cxlchar).
 *
 *   gcc -O2 -std=c99 -o sattolo ci/anchors/sattolo.c
 *   sattolo SPAN [STRIDE [SAMPLES]] [--thp]
 *
 *   SPAN     bytes of memory to chase through (K/M/G suffixes, binary: 1K = 1024)
 *   STRIDE   distance between chased elements in bytes (default 256); one pointer
 *            sits at offset 0 of each STRIDE-byte slot, so SPAN/STRIDE elements
 *   SAMPLES  number of timed batches (default 10)
 *   --thp    back the buffer with transparent huge pages (madvise MADV_HUGEPAGE on a
 *            2 MiB-aligned mapping); without it MADV_NOHUGEPAGE (4 KiB pages)
 *
 * Method: one Sattolo cycle (a uniformly random permutation with a single cycle)
 * over all elements, so every load goes to a random element of the whole span: no
 * TLB locality, page walks included. All pages are touched first, one full lap runs
 * untimed, then SAMPLES batches of max(n, 2^22) dependent loads are timed with
 * clock_gettime(CLOCK_MONOTONIC).
 *
 * Output: stdout gets one number, the MEDIAN over the batches of ns per load.
 * stderr gets a line describing the run and the share of the buffer backed by huge
 * pages (AnonHugePages in /proc/self/smaps / buffer size), as "thp_share=F" so a
 * script can parse it. The program pins nothing: run it under taskset.
 */
#define _GNU_SOURCE /* MADV_HUGEPAGE / MADV_NOHUGEPAGE on glibc */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define HUGE_2M ((size_t)2 << 20)
#define MIN_LOADS ((uint64_t)1 << 22)

/* Result of the chase, kept so that the compiler cannot drop the loads. */
static void *volatile sink;

static void usage(const char *prog) {
  fprintf(stderr, "usage: %s SPAN[K|M|G] [STRIDE [SAMPLES]] [--thp]\n", prog);
  exit(2);
}

/* Parses "123", "64K", "512m", "4G" (binary suffixes); 0 on error. */
static size_t parse_size(const char *s) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s) return 0;
  switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
  }
  if (*end == 'i' || *end == 'I') end++; /* accept 4Gi / 4GiB */
  if (*end == 'b' || *end == 'B') end++;
  return *end ? 0 : (size_t)v;
}

/* splitmix64: a small, good-enough generator for shuffling (fixed seed, so the
 * same arguments give the same chain). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rng_next(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Follows the chain for `loads` dependent loads (unrolled by 8; the loop count is a
 * multiple of 8 so the batch length is exact). */
static void *chase(void *p, uint64_t loads) {
  for (uint64_t i = 0; i < loads; i += 8) {
    p = *(void **)p; p = *(void **)p; p = *(void **)p; p = *(void **)p;
    p = *(void **)p; p = *(void **)p; p = *(void **)p; p = *(void **)p;
  }
  return p;
}

/* Sum of AnonHugePages (bytes) over the mappings of /proc/self/smaps that overlap
 * [lo, hi); -1 if smaps cannot be read. */
static long long anon_huge_bytes(uintptr_t lo, uintptr_t hi) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[512];
  int inside = 0;
  long long total = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long long a, b, kb;
    /* A mapping header starts with "start-end" in hex; no field name ("Size:",
     * "AnonHugePages:", ...) parses as that. */
    if (sscanf(line, "%llx-%llx", &a, &b) == 2) {
      inside = a < hi && b > lo;
    } else if (inside && sscanf(line, "AnonHugePages: %llu kB", &kb) == 1) {
      total += (long long)kb * 1024;
    }
  }
  fclose(f);
  return total;
}

int main(int argc, char **argv) {
  int thp = 0;
  const char *pos[3] = {0, 0, 0};
  int npos = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--thp") == 0) thp = 1;
    else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) usage(argv[0]);
    else if (npos < 3) pos[npos++] = argv[i];
    else usage(argv[0]);
  }
  if (npos < 1) usage(argv[0]);
  size_t span = parse_size(pos[0]);
  size_t stride = npos > 1 ? parse_size(pos[1]) : 256;
  long samples = npos > 2 ? strtol(pos[2], NULL, 10) : 10;
  if (!span || !stride || samples < 1 || stride < sizeof(void *) || stride % sizeof(void *)) {
    fprintf(stderr, "sattolo: bad SPAN, STRIDE (a multiple of %zu) or SAMPLES\n", sizeof(void *));
    return 2;
  }
  size_t n = span / stride;
  if (n < 2) {
    fprintf(stderr, "sattolo: SPAN must hold at least two STRIDE slots\n");
    return 2;
  }
  span = n * stride;

  /* Map 2 MiB more than needed and trim to a 2 MiB-aligned buffer, so that huge
   * pages can back all of it (and so it is its own mapping in smaps). */
  size_t len = span + HUGE_2M;
  char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    perror("sattolo: mmap");
    return 1;
  }
  uintptr_t base_u = ((uintptr_t)raw + HUGE_2M - 1) & ~(uintptr_t)(HUGE_2M - 1);
  char *base = (char *)base_u;
  size_t head = (size_t)(base - raw), tail = len - head - span;
  if (head) munmap(raw, head);
  if (tail) munmap(base + span, tail);
  if (madvise(base, span, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0)
    perror("sattolo: madvise (continuing)");

  /* Touch every page (so the page faults, and huge page allocation, happen here),
   * then write the identity chain: slot i points at itself. */
  for (size_t off = 0; off < span; off += 4096) base[off] = 1;
  for (size_t i = 0; i < n; i++) *(void **)(base + i * stride) = base + i * stride;

  /* Sattolo's algorithm on the pointer values in place: for i = n-1 .. 1 swap
   * slot i with a slot j drawn from [0, i). The result, read as "slot i points at
   * the slot its value names", is one cycle through all n slots. (The modulo bias is
   * below n / 2^64, negligible.) */
  for (size_t i = n - 1; i > 0; i--) {
    size_t j = (size_t)(rng_next() % i);
    void **a = (void **)(base + i * stride), **b = (void **)(base + j * stride);
    void *t = *a;
    *a = *b;
    *b = t;
  }

  uint64_t loads = n > MIN_LOADS ? n : MIN_LOADS;
  loads = (loads + 7) & ~(uint64_t)7;
  void *p = chase(base, (n + 7) & ~(size_t)7); /* one untimed lap (warms caches and TLB) */

  double *ns = malloc((size_t)samples * sizeof *ns);
  if (!ns) return 1;
  for (long s = 0; s < samples; s++) {
    double t0 = now_ns();
    p = chase(p, loads);
    ns[s] = (now_ns() - t0) / (double)loads;
  }
  sink = p;
  qsort(ns, (size_t)samples, sizeof *ns, cmp_double);
  double med = samples % 2 ? ns[samples / 2] : (ns[samples / 2 - 1] + ns[samples / 2]) / 2;

  long long huge = anon_huge_bytes(base_u, base_u + span);
  double share = huge < 0 ? -1.0 : (double)huge / (double)span;
  if (share > 1.0) share = 1.0;
  fprintf(stderr,
          "sattolo: span %zu B, stride %zu B, %zu elements, %s, %llu loads x %ld batches, "
          "min %.2f max %.2f ns; AnonHugePages %lld of %zu kB; thp_share=%.3f\n",
          span, stride, n, thp ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE", (unsigned long long)loads,
          samples, ns[0], ns[samples - 1], huge < 0 ? -1LL : huge / 1024, span / 1024, share);
  printf("%.2f\n", med);
  free(ns);
  munmap(base, span);
  return 0;
}
