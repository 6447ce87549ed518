/* The GEMMs of one rank's share of a model layer, called alone in OpenBLAS:
 * the ceiling of the model workloads' "matmul FLOPs per core" (shardc calls
 * the same GEMMs, with the layer's other ops between them). PROCESSES
 * processes (one per rank, one OpenBLAS thread each) run the list at once,
 * every run started together; a run's time is the slowest process's.
 *   bench-blas-shapes PROCESSES REPEATS SHAPE...   -> one "time S" per run
 * SHAPE is BATCHxMxNxK, f32: C[b] (M x N) = A[b] (M x K) * B[b] (K x N), each
 * GEMM of the list on operands of its own; a trailing "t" stores B as N x K
 * and reads it transposed (attention's Q K^T). */
#define _GNU_SOURCE
#include "common.h"

#include <cblas.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kMaxShapes = 32, kMaxRepeats = 1000, kMaxProcesses = 64 };

struct shape {
  long batch, m, n, k;
  int transposed;
  float *a, *b, *c;
};

/* What the processes share: the start barrier and every process's run times. */
struct shared {
  pthread_barrier_t start;
  double times[kMaxProcesses][kMaxRepeats];
};

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void parse(const char *program, const char *text, struct shape *s) {
  char t = 0;
  int used = 0;
  if (sscanf(text, "%ldx%ldx%ldx%ld%n%c", &s->batch, &s->m, &s->n, &s->k, &used, &t) < 4 ||
      s->batch <= 0 || s->m <= 0 || s->n <= 0 || s->k <= 0 ||
      (text[used] && strcmp(text + used, "t"))) {
    fprintf(stderr, "%s: shape '%s' - expected BATCHxMxNxK, optionally followed by t\n", program,
            text);
    exit(2);
  }
  s->transposed = text[used] == 't';
}

static float *filled(const char *program, size_t count, size_t offset) {
  float *p = peer_alloc(program, count * sizeof(float));
  peer_fill(p, count, 0, offset);
  return p;
}

/* Pins the calling process to the `index`th CPU it may run on (modulo their
 * number): forked processes start on their parent's CPU, and with runs of a
 * few milliseconds the scheduler may leave two of them sharing one core. */
static void pin(long index) {
  cpu_set_t allowed, one;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) == 0)
    return;
  long wanted = index % CPU_COUNT(&allowed);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed) && wanted-- == 0) {
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      sched_setaffinity(0, sizeof one, &one);
      return;
    }
}

static void run(struct shape *shapes, int count, long repeats, struct shared *shared, int process) {
  pin(process);
  openblas_set_num_threads(1);
  size_t offset = 0;
  for (int i = 0; i < count; ++i) {
    struct shape *s = &shapes[i];
    size_t a = (size_t)(s->batch * s->m * s->k), b = (size_t)(s->batch * s->k * s->n);
    s->a = filled("bench-blas-shapes", a, offset);
    s->b = filled("bench-blas-shapes", b, offset + a);
    s->c = filled("bench-blas-shapes", (size_t)(s->batch * s->m * s->n), 0);
    offset += a + b;
  }
  for (long r = 0; r < repeats; ++r) {
    pthread_barrier_wait(&shared->start);
    double begin = seconds();
    for (int i = 0; i < count; ++i) {
      const struct shape *s = &shapes[i];
      for (long j = 0; j < s->batch; ++j)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, s->transposed ? CblasTrans : CblasNoTrans,
                    (int)s->m, (int)s->n, (int)s->k, 1.0f, s->a + j * s->m * s->k, (int)s->k,
                    s->b + j * s->k * s->n, s->transposed ? (int)s->k : (int)s->n, 0.0f,
                    s->c + j * s->m * s->n, (int)s->n);
    }
    shared->times[process][r] = seconds() - begin;
  }
}

int main(int argc, char **argv) {
  const char *program = "bench-blas-shapes";
  if (argc < 4 || argc - 3 > kMaxShapes) {
    fprintf(stderr, "usage: %s PROCESSES REPEATS SHAPE... (1 to %d shapes)\n", program, kMaxShapes);
    return 2;
  }
  long processes = peer_positive(program, "PROCESSES", argv[1]);
  long repeats = peer_positive(program, "REPEATS", argv[2]);
  if (processes > kMaxProcesses || repeats > kMaxRepeats) {
    fprintf(stderr, "%s: at most %d processes and %d repeats\n", program, kMaxProcesses,
            kMaxRepeats);
    return 2;
  }
  struct shape shapes[kMaxShapes];
  int count = argc - 3;
  for (int i = 0; i < count; ++i)
    parse(program, argv[i + 3], &shapes[i]);

  struct shared *shared =
      mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  pthread_barrierattr_t attr;
  if (shared == MAP_FAILED || pthread_barrierattr_init(&attr) ||
      pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED) ||
      pthread_barrier_init(&shared->start, &attr, (unsigned)processes)) {
    fprintf(stderr, "%s: cannot set up the processes' shared barrier\n", program);
    return 1;
  }
  fflush(stdout);
  for (long p = 0; p < processes; ++p) {
    pid_t child = fork();
    if (child < 0) {
      fprintf(stderr, "%s: fork failed\n", program);
      return 1;
    }
    if (child == 0) {
      run(shapes, count, repeats, shared, (int)p);
      _exit(0);
    }
  }
  int failed = 0;
  for (long p = 0; p < processes; ++p) {
    int status = 0;
    if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      failed = 1;
  }
  if (failed) {
    fprintf(stderr, "%s: a process failed\n", program);
    return 1;
  }
  for (long r = 0; r < repeats; ++r) {
    double slowest = 0;
    for (long p = 0; p < processes; ++p)
      slowest = shared->times[p][r] > slowest ? shared->times[p][r] : slowest;
    printf("time %.9f\n", slowest);
  }
  return 0;
}
