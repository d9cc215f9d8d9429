/* The tvm-ffi bridge's own cost from C: one kernel called directly and through packedfun. */
#include <dlfcn.h>
#include <packedfun/c_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*SafeCall)(void*, const PFAny*, int32_t, PFAny*);

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* The fastest of `rounds` samples of n calls, in ns per call (on a loaded machine the minimum is
 * the sample least disturbed by other processes); `direct` picks the raw symbol. */
static double time_calls(SafeCall raw, PFObject* func, int direct, long n, int rounds) {
  double* samples = malloc(sizeof(double) * (size_t)rounds);
  PFAny args[2];
  memset(args, 0, sizeof(args));
  args[0].type_index = args[1].type_index = kPFTypeInt;
  for (int r = 0; r < rounds; ++r) {
    double start = now_ns();
    for (long i = 0; i < n; ++i) {
      PFAny result;
      memset(&result, 0, sizeof(result));
      args[0].v_int64 = i;
      args[1].v_int64 = 1;
      int rc = direct ? raw(NULL, args, 2, &result) : PFFunctionCall(func, args, 2, &result);
      if (rc != 0 || result.v_int64 != i + 1) {
        fprintf(stderr, "wrong result\n");
        exit(1);
      }
    }
    samples[r] = (now_ns() - start) / (double)n;
  }
  qsort(samples, (size_t)rounds, sizeof(double), cmp);
  double fastest = samples[0];
  free(samples);
  return fastest;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  PFByteArray path = {argv[1], strlen(argv[1])};
  PFObject* mod = NULL;
  PFObject* func = NULL;
  PFByteArray name = {"add", 3};
  if (PFModuleLoadFromFile(&path, &mod) != 0 || PFModuleGetFunction(mod, &name, 0, &func) != 0 ||
      func == NULL) {
    fprintf(stderr, "cannot load add from %s\n", argv[1]);
    return 1;
  }
  /* The library is loaded already: this handle is the same mapping packedfun uses. */
  void* handle = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
  SafeCall raw = handle ? (SafeCall)dlsym(handle, "__tvm_ffi_add") : NULL;
  if (raw == NULL) return 1;
  long n = 100000;
  double direct = 1e30, bridged = 1e30;
  for (int k = 0; k < 20; ++k) { /* interleaved rounds; the fastest sample of each */
    double d = time_calls(raw, func, 1, n, 5);
    double b = time_calls(raw, func, 0, n, 5);
    direct = d < direct ? d : direct;
    bridged = b < bridged ? b : bridged;
  }
  printf("| call of add(i, 1) from C | ns per call (fastest sample) |\n|---|---|\n");
  printf("| __tvm_ffi_add called directly | %.2f |\n", direct);
  printf("| the same through PFFunctionCall (packedfun bridge) | %.2f |\n", bridged);
  printf("| adapter cost | %.2f |\n", bridged - direct);
  PFObjectDecRef(func);
  PFObjectDecRef(mod);
  return 0;
}
