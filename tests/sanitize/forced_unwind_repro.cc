// ASan's report on a forced unwind, without packedfun: test_sanitize_forced_unwind.py builds it.
//
// A thread ends with pthread_exit called from code ASan did not instrument (CPython does so with a
// daemon thread that wants the GIL back at exit). The frames the forced unwind discards keep their
// poisoned redzones, and the cleanup below calls __asan_handle_no_return on top of them: ASan
// reports a stack-buffer-overflow in __interceptor_sigaltstack, called by __asan_handle_no_return.
// With forced_unwind.c preloaded (pthread_exit unpoisons the stack first) the program runs clean.
#include <pthread.h>

#include <cstdio>
#include <thread>

// Called through a pointer not declared noreturn, so the compiler puts no
// __asan_handle_no_return before the call, as in uninstrumented code.
void (*volatile exit_thread)(void*) = pthread_exit;

__attribute__((noinline)) void Use(char* p) { asm volatile("" ::"r"(p) : "memory"); }

struct Cleanup {
  ~Cleanup() { std::fputs("cleanup ran\n", stderr); }
};

// An instrumented frame with no cleanup of its own: the redzones around its buffers are poisoned
// while it runs, and nothing unpoisons them when the forced unwind discards it.
__attribute__((noinline)) void Inner() {
  char b0[24], b1[24], b2[24], b3[24], b4[24], b5[24], b6[24], b7[24];
  char b8[24], b9[24], b10[24], b11[24], b12[24], b13[24], b14[24], b15[24];
  Use(b0), Use(b1), Use(b2), Use(b3), Use(b4), Use(b5), Use(b6), Use(b7);
  Use(b8), Use(b9), Use(b10), Use(b11), Use(b12), Use(b13), Use(b14), Use(b15);
  exit_thread(nullptr);
}

int main() {
  std::thread([] {
    Cleanup cleanup;  // its landing pad calls __asan_handle_no_return, then resumes the unwind
    Inner();
  }).join();
  std::puts("joined");
}
