/* The C bodies every benchmark peer wraps, so the peers differ only in their calling machinery. */
#ifndef PACKEDFUN_BENCH_BODIES_H_
#define PACKEDFUN_BENCH_BODIES_H_

#include <stddef.h>
#include <stdint.h>

/* Message of the error the raise case reports (the floor and ctypes raise ValueError with it). */
#define BENCH_ERROR_MESSAGE "benchmark error"

static inline void bench_nop(void) {}

static inline int64_t bench_add_int(int64_t a, int64_t b) { return a + b; }

static inline int64_t bench_add3_int(int64_t a, int64_t b, int64_t c) { return a + b + c; }

static inline double bench_echo_float(double x) { return x; }

/* Takes the UTF-8 bytes as received; the work is in getting them across. */
static inline int64_t bench_str_len(const char* data, size_t size) {
  (void)data;
  return (int64_t)size;
}

#endif /* PACKEDFUN_BENCH_BODIES_H_ */
