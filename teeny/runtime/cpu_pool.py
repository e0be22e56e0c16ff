"""The CPU device's worker threads, in C: a kernel's other cores, and a TinyJit capture's whole launch loop.

Every compiled CPU kernel exports `teeny_entry(void **args, int core, int ncores)` (the C renderer writes it after the
kernel: buffer pointers and variable values in one array), so one C function can run any kernel on n cores:
`teeny_pool_run` hands cores 1..n-1 to worker threads, runs core 0 itself and waits for the others, all without the GIL.
`teeny_graph_run` runs a list of launches (kernels and memory copies) the same way in one call from Python.

Why C: handing a kernel to a Python thread (a lock release, the thread waking in the kernel's futex) cost 18 us on a
2-core VM, more than the whole kernel for most of a small model's step. These workers spin (with the CPU's pause
instruction) for TEENY_CPU_SPIN_US microseconds (default 200) after each job before they sleep on a condition
variable, so kernels that follow each other closely find them awake: a hand-off is then about a microsecond. A
process that forks gets a fresh pool in the child (pthread_atfork), started on its first multi-core kernel.
"""
from __future__ import annotations
import ctypes, os
from teeny.device import ToolCompiler, load_library

POOL_SRC = r"""
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TEENY_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define TEENY_RELAX() __asm__ volatile("yield")
#else
#define TEENY_RELAX() ((void)0)
#endif

typedef void (*entry_t)(void **, int, int);
#define MAXT 512
/* one mailbox per worker, on its own cache line: the worker waits for `go` to move past what it last saw */
typedef struct { _Atomic unsigned long go; unsigned long first; entry_t fn; void **args; int n; char pad[64]; } mailbox;
static mailbox box[MAXT];
static int started;                                     /* workers 1..started exist */
static _Atomic int pending, sleepers;
static long spin_ns = 200000;
static pthread_mutex_t sleep_mu = PTHREAD_MUTEX_INITIALIZER, run_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sleep_cv = PTHREAD_COND_INITIALIZER;

static long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void *worker(void *p) {
  int id = (int)(intptr_t)p;
  mailbox *b = &box[id];
  unsigned long seen = b->first;   /* go's value before the creator could move it */
  for (;;) {
    long start = 0;
    int k = 0;
    while (atomic_load_explicit(&b->go, memory_order_acquire) == seen) {
      if ((++k & 255) == 0) {
        long t = now_ns();
        if (!start) start = t;
        else if (t - start > spin_ns) break;
      }
      TEENY_RELAX();
    }
    if (atomic_load_explicit(&b->go, memory_order_acquire) == seen) {
      pthread_mutex_lock(&sleep_mu);
      atomic_fetch_add(&sleepers, 1);
      while (atomic_load(&b->go) == seen) pthread_cond_wait(&sleep_cv, &sleep_mu);
      atomic_fetch_sub(&sleepers, 1);
      pthread_mutex_unlock(&sleep_mu);
    }
    seen = atomic_load_explicit(&b->go, memory_order_acquire);
    b->fn(b->args, id, b->n);
    atomic_fetch_sub_explicit(&pending, 1, memory_order_release);
  }
  return 0;
}

static void after_fork_child(void) {
  /* the child has only the thread that forked: no workers, fresh locks */
  started = 0;
  atomic_store(&pending, 0);
  atomic_store(&sleepers, 0);
  pthread_mutex_init(&sleep_mu, 0);
  pthread_mutex_init(&run_mu, 0);
  pthread_cond_init(&sleep_cv, 0);
  for (int i = 0; i < MAXT; i++) atomic_store(&box[i].go, 0);
}

__attribute__((constructor)) static void pool_init(void) { pthread_atfork(0, 0, after_fork_child); }

void teeny_pool_config(long spin_us) { spin_ns = spin_us * 1000L; }
int teeny_pool_max(void) { return MAXT; }

static int ensure(int n) {   /* workers 1..n-1 running; 0, or the pthread_create error */
  for (; started < n - 1; started++) {
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    box[started + 1].first = atomic_load(&box[started + 1].go);
    int err = pthread_create(&t, &at, worker, (void *)(intptr_t)(started + 1));
    pthread_attr_destroy(&at);
    if (err) return err;
  }
  return 0;
}

/* run fn on n cores: core 0 here, cores 1..n-1 on the workers; the caller holds run_mu */
static int run_locked(entry_t fn, void **args, int n) {
  if (n <= 1) { fn(args, 0, 1); return 0; }
  int err = ensure(n);
  if (err) return err;
  atomic_store(&pending, n - 1);
  for (int i = 1; i < n; i++) {
    box[i].fn = fn; box[i].args = args; box[i].n = n;
    atomic_fetch_add_explicit(&box[i].go, 1, memory_order_seq_cst);
  }
  if (atomic_load(&sleepers)) {
    pthread_mutex_lock(&sleep_mu);
    pthread_cond_broadcast(&sleep_cv);
    pthread_mutex_unlock(&sleep_mu);
  }
  fn(args, 0, n);
  while (atomic_load_explicit(&pending, memory_order_acquire)) TEENY_RELAX();
  return 0;
}

int teeny_pool_run(entry_t fn, void **args, int n) {
  if (n < 1 || n > MAXT) return -1;
  pthread_mutex_lock(&run_mu);
  int err = run_locked(fn, args, n);
  pthread_mutex_unlock(&run_mu);
  return err;
}

/* launches[i]: fns[i] (0: a memmove of args dst, src, nbytes) on nts[i] cores, its arguments codes[offs[i]..offs[i+1]):
   code >= 0 is slots[code] (a buffer's address), code < 0 is vals[-code-1] (a variable's value, a byte count) */
int teeny_graph_run(int n, const entry_t *fns, const int *nts, const int *offs, const int *codes, void *const *slots,
                    const int64_t *vals) {
  void *a[256];
  int err = 0;
  pthread_mutex_lock(&run_mu);
  for (int i = 0; i < n && !err; i++) {
    int na = offs[i + 1] - offs[i];
    const int *c = codes + offs[i];
    for (int j = 0; j < na; j++) a[j] = c[j] >= 0 ? slots[c[j]] : (void *)(intptr_t)vals[-c[j] - 1];
    if (!fns[i]) memmove(a[0], a[1], (size_t)(intptr_t)a[2]);
    else err = run_locked(fns[i], a, nts[i]);
  }
  pthread_mutex_unlock(&run_mu);
  return err;
}
"""
MAX_ARGS = 256   # the graph's argument array (a kernel has one per buffer and variable)

class CPUPool:
  """The compiled pool (see the module docstring); the CPU runtime makes one per process (ops_cpu._pool)."""
  def __init__(self, cc: str):
    comp = ToolCompiler(cc, ["-O2", "-fPIC", "-shared", "-pthread", "-x", "c"], ["-lpthread"])
    comp.what = "compile of the CPU worker pool"
    self.lib = load_library(comp.compile_cached(POOL_SRC), "the CPU worker pool")
    self.run_c, self.graph_c = self.lib.teeny_pool_run, self.lib.teeny_graph_run
    self.run_c.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
    self.graph_c.argtypes = [ctypes.c_int] + [ctypes.c_void_p] * 6
    self.max_threads = self.lib.teeny_pool_max()
    spin = os.environ.get("TEENY_CPU_SPIN_US", "200").strip()
    try:
      if (us := int(spin)) < 0: raise ValueError
    except ValueError:
      raise ValueError(f"TEENY_CPU_SPIN_US must be a non-negative int (microseconds a CPU worker thread waits awake "
                       f"for the next kernel), got {spin!r}") from None
    self.lib.teeny_pool_config(ctypes.c_long(us))

  def check(self, err: int, what: str):
    if err == -1: raise ValueError(f"{what}: a kernel runs on 1 to {self.max_threads} threads (CPU_THREADS)")
    if err: raise RuntimeError(f"{what}: could not start a CPU worker thread ({os.strerror(err)}); lower CPU_THREADS")

  def run(self, entry: int, args: ctypes.Array, n: int):
    """The kernel whose teeny_entry is at address `entry` on n cores, with its argument array."""
    self.check(self.run_c(entry, args, n), "CPU kernel launch")
