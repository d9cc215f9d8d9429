// LeakSanitizer's crash on dynamic TLS at page offset 16, without packedfun: test_sanitize_dtls.py.
//
// Built twice: with -DDTLS_REPRO_LIBRARY as a shared library that has a thread-local variable, and
// as the program that dlopens it (so the variable lives in dynamic TLS, which glibc allocates with
// malloc on a thread's first access). gcc 12's libasan guesses the extent of each such block from
// its address: one that starts 16 bytes into a page is taken for glibc 2.19's layout, and the two
// words before it are read as that layout's header {size, start}. Under ASan those words are the
// allocator's own chunk header, so the "start" is a small number (the allocation's stack id) and
// the leak check at exit scans from there: "Tracer caught signal 11", "LeakSanitizer has
// encountered a fatal error". The program starts threads until one's block lands on such an
// address (one in 256 on average) and keeps that thread alive through the leak check.
// ASAN_OPTIONS=intercept_tls_get_addr=0 turns the guess off: the run is then clean.
#include <stdint.h>
#include <stdio.h>

#ifdef DTLS_REPRO_LIBRARY

// 24 bytes: glibc's malloc(24) for the block, which is this variable (offset 0).
static __thread struct {
  void* keep;
  char pad[16];
} tls;

void* dtls_repro_address(void) { return &tls; }
void dtls_repro_keep(void* p) { tls.keep = p; }

#else

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static void* (*address)(void);
static void (*keep)(void*);
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int probed, found;

static void* Probe(void* arg) {
  (void)arg;
  int hit = (uintptr_t)address() % 4096 == 16;
  pthread_mutex_lock(&mu);
  probed += 1;
  found = hit;
  pthread_cond_broadcast(&cv);
  while (hit) pthread_cond_wait(&cv, &mu);  // a hit stays alive, blocked, until the exit
  pthread_mutex_unlock(&mu);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (lib == NULL) return fprintf(stderr, "%s\n", dlerror()), 2;
  address = (void* (*)(void))dlsym(lib, "dtls_repro_address");
  keep = (void (*)(void*))dlsym(lib, "dtls_repro_keep");
  // A heap block reachable only through this thread's dynamic TLS: it must not be reported.
  keep(strcpy(malloc(32), "held by dynamic TLS"));
  for (int i = 0; i < 20000 && !found; ++i) {
    pthread_t t;
    if (pthread_create(&t, NULL, Probe, NULL) != 0) return 2;
    pthread_mutex_lock(&mu);
    while (probed == i) pthread_cond_wait(&cv, &mu);
    int hit = found;
    pthread_mutex_unlock(&mu);
    if (!hit) pthread_join(t, NULL);
  }
  if (argc > 2) {  // "leak": a block nothing references, which the leak check must report
    void* volatile lost = malloc(123);
    lost = NULL;
  }
  printf("found=%d after %d threads\n", found, probed);
  fflush(stdout);
  return 0;
}

#endif
