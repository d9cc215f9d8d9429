/* The ctypes peer: the shared benchmark bodies as a plain C shared library with C types only. */
#include <string.h>

#include "../native/bodies.h"

#define BENCH_API __attribute__((visibility("default")))
#define BENCH_MAX_GLOBALS 16

typedef void (*bench_callback)(void);

static struct {
  char name[64];
  bench_callback func;
} g_globals[BENCH_MAX_GLOBALS];
static _Thread_local const char* g_last_error = "";

BENCH_API void bench_nop_c(void) { bench_nop(); }
BENCH_API int64_t bench_add_int_c(int64_t a, int64_t b) { return bench_add_int(a, b); }
BENCH_API int64_t bench_add3_int_c(int64_t a, int64_t b, int64_t c) {
  return bench_add3_int(a, b, c);
}
BENCH_API double bench_echo_float_c(double x) { return bench_echo_float(x); }
BENCH_API int64_t bench_str_len_c(const char* data, size_t size) {
  return bench_str_len(data, size);
}
BENCH_API void bench_apply_c(bench_callback f) { f(); }

/* Returns 0, or -1 when the table is full or the name too long. */
BENCH_API int bench_register_global_c(const char* name, bench_callback f) {
  if (strlen(name) >= sizeof(g_globals[0].name)) return -1;
  for (int i = 0; i < BENCH_MAX_GLOBALS; ++i) {
    if (g_globals[i].func == NULL || strcmp(g_globals[i].name, name) == 0) {
      strcpy(g_globals[i].name, name);
      g_globals[i].func = f;
      return 0;
    }
  }
  return -1;
}

/* Returns 0 after calling the function registered under `name`, -1 if there is none. */
BENCH_API int bench_call_global_c(const char* name) {
  for (int i = 0; i < BENCH_MAX_GLOBALS && g_globals[i].func != NULL; ++i) {
    if (strcmp(g_globals[i].name, name) == 0) {
      g_globals[i].func();
      return 0;
    }
  }
  g_last_error = "no such global";
  return -1;
}

/* Always fails with -1; the message is then in bench_last_error_c(). */
BENCH_API int bench_raise_error_c(const char* kind, const char* message) {
  (void)kind;
  (void)message;
  g_last_error = BENCH_ERROR_MESSAGE;
  return -1;
}

BENCH_API const char* bench_last_error_c(void) { return g_last_error; }
