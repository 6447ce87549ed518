/* The two-layer MLP forward pass of bench/programs (y = relu(x W1 + b1) W2 + b2,
 * f32) in one process with OpenBLAS on T threads: the peer of the Megatron
 * sharded program, doing the same arithmetic.
 *   bench-mlp-blas BATCH MODEL HIDDEN THREADS REPEATS -> one "time S" per run */
#include "common.h"

#include <cblas.h>
#include <time.h>

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static float *filled(const char *program, size_t count, size_t offset) {
  float *p = peer_alloc(program, count * sizeof(float));
  for (size_t i = 0; i < count; ++i)
    p[i] = (float)peer_value(i + offset);
  return p;
}

int main(int argc, char **argv) {
  const char *program = "bench-mlp-blas";
  if (argc != 6) {
    fprintf(stderr, "usage: %s BATCH MODEL HIDDEN THREADS REPEATS\n", program);
    return 2;
  }
  long batch = peer_positive(program, "BATCH", argv[1]);
  long model = peer_positive(program, "MODEL", argv[2]);
  long hidden = peer_positive(program, "HIDDEN", argv[3]);
  long threads = peer_positive(program, "THREADS", argv[4]);
  long repeats = peer_positive(program, "REPEATS", argv[5]);
  openblas_set_num_threads((int)threads);
  float *x = filled(program, (size_t)(batch * model), 0);
  float *w1 = filled(program, (size_t)(model * hidden), 1);
  float *b1 = filled(program, (size_t)hidden, 2);
  float *w2 = filled(program, (size_t)(hidden * model), 3);
  float *b2 = filled(program, (size_t)model, 4);
  float *h = peer_alloc(program, (size_t)(batch * hidden) * sizeof(float));
  float *y = peer_alloc(program, (size_t)(batch * model) * sizeof(float));
  for (long run = 0; run < repeats; ++run) {
    double start = seconds();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)batch, (int)hidden, (int)model,
                1.0f, x, (int)model, w1, (int)hidden, 0.0f, h, (int)hidden);
    for (long i = 0; i < batch; ++i)
      for (long j = 0; j < hidden; ++j) {
        float v = h[i * hidden + j] + b1[j];
        h[i * hidden + j] = v > 0 ? v : 0;
      }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)batch, (int)model, (int)hidden,
                1.0f, h, (int)hidden, w2, (int)model, 0.0f, y, (int)model);
    for (long i = 0; i < batch; ++i)
      for (long j = 0; j < model; ++j)
        y[i * model + j] += b2[j];
    printf("time %.9f\n", seconds() - start);
  }
  free(x);
  free(w1);
  free(b1);
  free(w2);
  free(b2);
  free(h);
  free(y);
  return 0;
}
