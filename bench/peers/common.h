/* What every peer shares: argument parsing that refuses bad input, and the
 * output format bench/run reads (one "time SECONDS" line per timed run, the
 * slowest rank's time for MPI peers). */
#ifndef SHARDC_BENCH_PEERS_COMMON_H
#define SHARDC_BENCH_PEERS_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline long peer_positive(const char *program, const char *what, const char *text) {
  char *end = NULL;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value <= 0) {
    fprintf(stderr, "%s: %s '%s' - expected a positive integer\n", program, what, text);
    exit(2);
  }
  return value;
}

/* "f32" -> 0, "f64" -> 1; anything else exits 2. */
static inline int peer_is_f64(const char *program, const char *text) {
  if (strcmp(text, "f32") == 0)
    return 0;
  if (strcmp(text, "f64") == 0)
    return 1;
  fprintf(stderr, "%s: dtype '%s' - expected f32 or f64\n", program, text);
  exit(2);
}

static inline void *peer_alloc(const char *program, size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) {
    fprintf(stderr, "%s: cannot allocate %zu bytes\n", program, bytes);
    exit(1);
  }
  return p;
}

/* Deterministic values in [-1, 1): the peers' inputs need only be finite and
 * not denormal; they are never compared with shardc's. */
static inline double peer_value(size_t i) {
  unsigned long x = (unsigned long)i * 2654435761ul + 12345ul;
  return (double)(x % 2000ul) / 1000.0 - 1.0;
}

/* `count` values of peer_value from `offset` on, as f64 or f32. */
static inline void peer_fill(void *p, size_t count, int f64, size_t offset) {
  for (size_t i = 0; i < count; ++i) {
    if (f64)
      ((double *)p)[i] = peer_value(i + offset);
    else
      ((float *)p)[i] = (float)peer_value(i + offset);
  }
}

/* The three n-element matrices of a gemm peer: A and B filled with distinct
 * peer_value runs, C zeroed. */
static inline void peer_gemm_operands(const char *program, size_t count, int f64, void **a,
                                      void **b, void **c) {
  size_t bytes = count * (f64 ? sizeof(double) : sizeof(float));
  *a = peer_alloc(program, bytes);
  *b = peer_alloc(program, bytes);
  *c = peer_alloc(program, bytes);
  peer_fill(*a, count, f64, 0);
  peer_fill(*b, count, f64, count);
  memset(*c, 0, bytes);
}

#endif
